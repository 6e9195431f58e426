"""Partner policies for the iterated matrix games, written as finite-state machines.

Every partner is a :class:`PartnerPolicy`: an initial state, an action distribution per state and
a deterministic state update from the joint action. That one definition serves twice: as a bot
that plays any seat (:class:`PartnerAgent`), and as an exact model for dynamic programming, so the
optimal T-step response to it, and therefore ΔFunctional, is computed exactly
(:mod:`tom_envs.games.matrix.planner`), never estimated by simulation.

:func:`bot_table` lists them for a configuration (the ``always_k`` partners depend on the game's
action count) with the populations ``single_action`` (the paper's), ``tit_for_tat`` and ``all``.

Partners (``own`` is the partner's action, ``other`` its opponent's):

| name | rule |
|---|---|
| ``always_0`` … ``always_{n-1}`` | single-action: always the same action (paper: "single action") |
| ``tit_for_tat`` | the paper's tit-for-tat style (Sec. C.3): RPS best-responds to the other's last action; IBS copies it; IPD is classic tit-for-tat. Opens with action 0 |
| ``random`` | uniform over actions every round |
| ``win_stay_lose_shift`` | repeats its action after a payoff above its table mean, else moves to the next action (cyclically). Opens with action 0 |
| ``alternating`` | cycles 0, 1, …, n-1, 0, … |
| ``fictitious_play`` | best response to the empirical frequencies of the other's past actions (ties: lowest action). Opens with action 0 |
"""

from __future__ import annotations

import abc
from collections.abc import Hashable
from functools import partial
from typing import Any

import numpy as np

from tom_envs.core.agents import BaseAgent, EpisodeInfo, Turn
from tom_envs.core.contract import Bot, BotTable
from tom_envs.core.game import GameBundle
from tom_envs.games.matrix.rules import MatrixConfig, payoff_matrix


class PartnerPolicy(abc.ABC):
    """A finite-state policy for one seat of a two-player matrix game.

    ``matrix[own, other]`` is this seat's payoff table (egocentric), for rules that need payoffs.
    """

    name = "partner"
    description = ""

    def __init__(self, config: MatrixConfig, player: int = 1) -> None:
        self.config = config
        self.n = config.num_actions
        self.matrix = payoff_matrix(config, player)

    @abc.abstractmethod
    def initial_state(self) -> Hashable:
        """State before the first round."""

    @abc.abstractmethod
    def action_probs(self, state: Hashable) -> tuple[float, ...]:
        """Probability of each action in ``state``."""

    @abc.abstractmethod
    def next_state(self, state: Hashable, own: int, other: int) -> Hashable:
        """State after a round where this seat played ``own`` and its opponent ``other``."""

    def best_response(self, other: int) -> int:
        """This seat's best reply to ``other`` (lowest action on ties)."""
        return int(np.argmax(self.matrix[:, other]))

    def _deterministic(self, action: int) -> tuple[float, ...]:
        probs = [0.0] * self.n
        probs[action] = 1.0
        return tuple(probs)


class AlwaysAction(PartnerPolicy):
    """Always plays ``action``."""

    def __init__(self, config: MatrixConfig, player: int = 1, action: int = 0) -> None:
        super().__init__(config, player)
        if not 0 <= action < self.n:
            raise ValueError(f"action must be in [0, {self.n}), got {action}")
        self.action = action
        self.name = f"always_{action}"
        self.description = f"always plays action {action}"

    def initial_state(self) -> Hashable:
        """Stateless."""
        return 0

    def action_probs(self, state: Hashable) -> tuple[float, ...]:
        """All mass on the fixed action."""
        return self._deterministic(self.action)

    def next_state(self, state: Hashable, own: int, other: int) -> Hashable:
        """Stateless."""
        return 0


class NextActionPolicy(PartnerPolicy):
    """A deterministic policy whose state is the action it plays next (action 0 first); a
    subclass gives only :meth:`next_state`."""

    def initial_state(self) -> Hashable:
        """The action to play next."""
        return 0

    def action_probs(self, state: Hashable) -> tuple[float, ...]:
        """Deterministic: the stored action."""
        return self._deterministic(int(state))  # type: ignore[arg-type]


class TitForTat(NextActionPolicy):
    """The paper's tit-for-tat style partner: reacts to the other's previous action."""

    name = "tit_for_tat"

    def __init__(self, config: MatrixConfig, player: int = 1, rule: str | None = None) -> None:
        super().__init__(config, player)
        self.rule = rule or config.preset.tit_for_tat
        if self.rule not in ("copy", "best_response"):
            raise ValueError(f"rule must be 'copy' or 'best_response', got {self.rule!r}")
        self.description = (
            "copies the other's last action"
            if self.rule == "copy"
            else "best-responds to the other's last action"
        ) + "; opens with action 0"

    def next_state(self, state: Hashable, own: int, other: int) -> Hashable:
        """Copy or best-respond to ``other``."""
        return other if self.rule == "copy" else self.best_response(other)


class UniformRandom(PartnerPolicy):
    """Uniform over actions every round."""

    name = "random"
    description = "uniformly random every round"

    def initial_state(self) -> Hashable:
        """Stateless."""
        return 0

    def action_probs(self, state: Hashable) -> tuple[float, ...]:
        """Uniform."""
        return tuple([1.0 / self.n] * self.n)

    def next_state(self, state: Hashable, own: int, other: int) -> Hashable:
        """Stateless."""
        return 0


class WinStayLoseShift(NextActionPolicy):
    """Pavlov: keep the action after a payoff above the table mean, else move to the next one."""

    name = "win_stay_lose_shift"
    description = "repeats after a payoff above its mean payoff, else shifts to the next action"

    def next_state(self, state: Hashable, own: int, other: int) -> Hashable:
        """Stay on a win, shift cyclically otherwise."""
        won = self.matrix[own, other] > self.matrix.mean()
        return own if won else (own + 1) % self.n


class Alternating(NextActionPolicy):
    """Cycles through the actions in order."""

    name = "alternating"
    description = "cycles 0, 1, ..., n-1, 0, ..."

    def next_state(self, state: Hashable, own: int, other: int) -> Hashable:
        """Next in the cycle."""
        return (int(state) + 1) % self.n  # type: ignore[arg-type]


class FictitiousPlay(PartnerPolicy):
    """Best response to the empirical frequencies of the other's past actions."""

    name = "fictitious_play"
    description = "best-responds to the other's empirical action frequencies; opens with 0"

    def initial_state(self) -> Hashable:
        """Counts of the other's actions."""
        return (0,) * self.n

    def action_probs(self, state: Hashable) -> tuple[float, ...]:
        """Deterministic best response to the counts (action 0 before any count)."""
        counts = np.asarray(state, dtype=float)
        if counts.sum() == 0:
            return self._deterministic(0)
        values = self.matrix @ counts
        return self._deterministic(int(np.argmax(values)))

    def next_state(self, state: Hashable, own: int, other: int) -> Hashable:
        """Count ``other``."""
        counts = list(state)  # type: ignore[call-overload]
        counts[other] += 1
        return tuple(counts)


def partner_names(config: MatrixConfig) -> list[str]:
    """Names of every partner available for ``config``'s game."""
    singles = [f"always_{a}" for a in range(config.num_actions)]
    return [
        *singles,
        "tit_for_tat",
        "random",
        "win_stay_lose_shift",
        "alternating",
        "fictitious_play",
    ]


def make_partner(name: str, config: MatrixConfig, player: int = 1) -> PartnerPolicy:
    """Build a partner policy by name for ``player``'s seat."""
    if name.startswith("always_") and name in partner_names(config):
        return AlwaysAction(config, player, int(name[7:]))
    classes: dict[str, type[PartnerPolicy]] = {
        "tit_for_tat": TitForTat,
        "random": UniformRandom,
        "win_stay_lose_shift": WinStayLoseShift,
        "alternating": Alternating,
        "fictitious_play": FictitiousPlay,
    }
    if name not in classes:
        raise KeyError(f"unknown matrix partner {name!r}; choose from {partner_names(config)}")
    return classes[name](config, player)


def last_round(view: Any, seen: int, who: str) -> tuple[int, int] | None:
    """The actions ``(own, other)`` of the round just played when ``view`` is the round after
    ``seen`` (``None`` while it is still round ``seen``): how an agent that holds a partner
    machine's state advances it once per round. Any other round is an error naming ``who``."""
    if view.round == seen:
        return None
    if view.round != seen + 1 or view.last_actions is None:
        raise RuntimeError(f"{who}: expected to see round {seen + 1}, got {view.round}")
    own, other = view.last_actions
    return own, other


class PartnerAgent(BaseAgent):
    """Plays a :class:`PartnerPolicy` at any seat, tracking its state from the views it is shown.

    Exposes ``policy`` (the finite-state machine) so evaluation can compute exact optimal responses.
    """

    def __init__(self, policy_name: str, config: MatrixConfig) -> None:
        super().__init__()
        self.policy_name = policy_name
        self.game_config = config
        self.name = policy_name
        self.policy: PartnerPolicy = make_partner(policy_name, config)

    def reset(self, info: EpisodeInfo) -> None:
        """Rebuild the policy for this seat and return to its initial state."""
        super().reset(info)
        self.policy = make_partner(self.policy_name, self.game_config, info.player)
        self.state = self.policy.initial_state()
        self.rounds_seen = 0

    def _sync(self, view: Any) -> None:
        """Update the state with the last round (from the view); idempotent within a round."""
        played = last_round(view, self.rounds_seen, self.name)
        if played is not None:
            self.state = self.policy.next_state(self.state, *played)
            self.rounds_seen = view.round

    def action_probs(self, turn: Turn) -> dict[int, float]:
        """The policy's distribution for ``turn`` (its known policy, for prediction scoring)."""
        self._sync(turn.view)
        return dict(enumerate(self.policy.action_probs(self.state)))

    def act(self, turn: Turn) -> int:
        """Update the state with the last round (from the view), then sample the action."""
        self._sync(turn.view)
        probs = self.policy.action_probs(self.state)
        if max(probs) == 1.0:
            return int(np.argmax(probs))
        return int(self.rng.choice(len(probs), p=probs))


class PartnerModel:
    """A model of a matrix-game partner: the finite-state policy ``policy`` (by name) tracked
    from the asker's egocentric history; predicts its most likely next action (the model a
    :class:`tom_envs.partners.prediction.PredictorAgent` answers next-action questions with)."""

    def __init__(self, policy: str) -> None:
        self.policy_name = policy

    def reset(self, info: EpisodeInfo) -> None:
        """Start the partner's policy at the other seat."""
        self.policy = make_partner(self.policy_name, info.game_config, 1 - info.player)
        self.state = self.policy.initial_state()
        self.rounds = 0

    def observe(self, turn: Turn) -> None:
        """Advance the partner's state by the round just played (from its side)."""
        view = turn.view
        if view.round != self.rounds and view.last_actions is not None:
            mine, theirs = view.last_actions
            self.state = self.policy.next_state(self.state, theirs, mine)
            self.rounds = view.round

    def predict(self, turn: Turn, target: str) -> int | None:
        """The partner's most likely action in its tracked state."""
        return int(np.argmax(self.policy.action_probs(self.state)))  # ties: lowest


def _partner_agent(name: str, bundle: GameBundle) -> PartnerAgent:
    return PartnerAgent(name, bundle.game.config)  # type: ignore[attr-defined]


def bot_table(**config: Any) -> BotTable:
    """The partner bots for this configuration (every partner of :func:`partner_names`) and the
    populations ``single_action`` (one ``always_k`` per episode, the paper's), ``tit_for_tat``
    and ``all``."""
    cfg = MatrixConfig(**config)
    names = partner_names(cfg)
    bots = tuple(
        Bot(name, partial(_partner_agent, name), make_partner(name, cfg).description)
        for name in names
    )
    populations = {
        "single_action": tuple(f"always_{a}" for a in range(cfg.num_actions)),
        "tit_for_tat": ("tit_for_tat",),
        "all": tuple(names),
    }
    return BotTable(bots, populations, game="matrix")
