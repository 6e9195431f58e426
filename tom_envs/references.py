"""Best-response references: the value a focal seat can reach against a fixed, known partner.

Functional ToM is regret against the best response to the *actual* partner, never against the best
agent that happened to be evaluated. :func:`reference_for` gives that reference per (game, partner,
seat, seed) and says what kind of number it is:

| game | partner | solver | kind |
|---|---|---|---|
| RockPaperScissors, BattleOfSexes, PrisonersDilemma | every bot; a switching partner ``a`` then ``b`` | :class:`~tom_envs.games.matrix.planner.OptimalResponse` over the partner's finite-state machine (for a switch: :class:`~tom_envs.games.matrix.planner.SwitchingPolicy`, clairvoyant, the round known; or :class:`~tom_envs.games.matrix.planner.BayesSwitchingPolicy`, the round uniform in a known window) | ``exact`` |
| CollabCapture, CollabEscape | ``greedy``, ``optimal``, ``random``, any :class:`~tom_envs.games.joint_planner.MarkovPartner` | :class:`~tom_envs.games.joint_planner.BestResponsePlanner` on the joint planner's tables | ``exact`` |
| BombDefusal | ``cbs`` (both partners) | the mission's centralised optimum (CBS plan; the focal's CBS part attains it, no focal policy beats it) | ``exact`` per mission |
| BombDefusal | any other bot | upper: the centralised optimum (privileged, always valid); lower: the best declared candidate focal, chosen on selection seeds disjoint from the evaluation seeds and played on the evaluation seeds | ``bracket`` |
| any game without one of the above (Hanabi, Overcooked, learned partners) | a partner with a cached trained best response for this exact configuration (:mod:`tom_envs.best_responses`) | the trained BR played on the seeds | ``lower_bound``, labelled ``"trained lower bound"`` (:attr:`Reference.label`) |
| Guandan, CoBlock; any other partner | - | none yet (candidate references belong elsewhere) | raises :class:`NoReference` |

The value is the game's functional objective ``U`` of one episode, from the focal seat:

* matrix games: the focal's return over the ``T`` rounds (``V_T(s_1)``, expected over a stochastic
  partner);
* CollabCapture: ``captured - turns / (max_turns + 1)`` (capture first, then speed), expected;
* CollabEscape: ``escaped`` (its expectation: the escape probability within the turn limit);
* BombDefusal: ``team_score - 0.3 * rounds`` (one phase, 10 points, outweighs all 30 rounds).

An oracle that *plays* the exact best response: :class:`OracleAgent` (matrix games, CollabCapture,
CollabEscape), e.g. ``make_agent("tom_envs.references:OracleAgent:partner=greedy", spec,
trusted=True)`` or :func:`oracle_agent`.

The table of every reference, and the oracle played against it
(``docs/results/functional_references.md``)::

    python -m tom_envs.references --table
    python -m tom_envs.references --oracle-check
"""

from __future__ import annotations

import argparse
import importlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from tom_envs.core.agents import AgentAction, BaseAgent, EpisodeInfo, Turn
from tom_envs.games.bomb_defusal import metrics as bomb_metrics
from tom_envs.games.matrix.bots import last_round
from tom_envs.registration import GameSpec, game_spec

#: Kinds of reference: the exact best-response value; a value no higher than it; both ends.
KINDS = ("exact", "lower_bound", "bracket")
MATRIX_GAMES = ("RockPaperScissors", "BattleOfSexes", "PrisonersDilemma")
ROOM_GAMES = ("CollabCapture", "CollabEscape")
#: Games with no reference yet, and where theirs will come from.
NOT_YET = {
    "Hanabi": "a best response trained against the fixed partner (a lower bound)",
    "Overcooked": "a best response trained against the fixed partner (a lower bound)",
    "Guandan": "the best candidate teammate as focal (a weak lower bound)",
    "CoBlock": "the best persona as focal, with the team bound above (a bracket)",
}
#: BombDefusal's ``U = team_score - BOMB_ROUND_WEIGHT * rounds`` (the game's own objective).
BOMB_ROUND_WEIGHT = bomb_metrics.ROUND_WEIGHT
#: BombDefusal's default candidate focals for the lower end of a bracket: every rule member of the
#: zoo but ``random`` (the role splits best-respond to their own convention, issue #35), in
#: declared order (the first of equal selection means wins).
BOMB_CANDIDATES = ("heuristic", "cbs", "split_even", "split_odd", "heuristic_silent", "passive")
#: Default selection seeds of the bracket's candidate (disjoint from the usual evaluation seeds).
BOMB_SELECTION_SEEDS = tuple(range(10_000, 10_010))


class NoReference(LookupError):
    """No best-response reference exists (yet) for this game or partner."""


@dataclass(frozen=True)
class Reference:
    """The best-response reference of one (game, partner, seat) on a list of seeds.

    Attributes:
        game: the registered game name.
        partner: the partner spec (every seat but the focal's).
        seat: the focal seat.
        kind: ``"exact"`` (the best-response value), ``"lower_bound"`` (a value some focal policy
            reaches, so at most the best response's) or ``"bracket"`` (``values`` the lower end,
            ``upper`` the upper end; the best response lies between).
        objective: what the value measures (the game's functional objective ``U``).
        seeds: the seeds (episodes) the values belong to.
        values: per seed, the exact value (``exact``) or the lower end.
        upper: per seed, the upper end (``bracket`` only).
        source: how the value was obtained, in words.
        details: further exact figures (success probability, expected turns, team optimum, ...).
        env_kwargs: the game arguments the values hold for.
        trained: for a trained best response (a lower bound), what it is: its manifest name,
            trainer, budget in steps, seed, file hash, curve (``None`` for a solver's value).
    """

    game: str
    partner: str
    seat: int
    kind: str
    objective: str
    seeds: tuple[int, ...]
    values: tuple[float, ...]
    source: str
    upper: tuple[float, ...] | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    trained: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.trained is not None and self.kind != "lower_bound":
            raise ValueError(f"a trained best response is a lower bound, not {self.kind!r}")
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if len(self.values) != len(self.seeds):
            raise ValueError(f"{len(self.values)} values for {len(self.seeds)} seeds")
        if (self.kind == "bracket") != (self.upper is not None):
            raise ValueError("a bracket (and only a bracket) has an upper end")
        if self.upper is not None and len(self.upper) != len(self.seeds):
            raise ValueError(f"{len(self.upper)} upper values for {len(self.seeds)} seeds")

    @property
    def mean(self) -> float:
        """The mean value over the seeds (the lower end of a bracket)."""
        return float(np.mean(self.values))

    @property
    def upper_mean(self) -> float | None:
        """The mean upper end over the seeds (brackets only)."""
        return None if self.upper is None else float(np.mean(self.upper))

    @property
    def label(self) -> str:
        """What a page calls it: ``"exact"``, ``"bracket"``, ``"lower bound"`` or ``"trained
        lower bound"`` (a trained best response: never exact)."""
        if self.trained is not None:
            return "trained lower bound"
        return self.kind.replace("_", " ")

    def value(self, seed: int) -> float:
        """The value of one seed (the lower end of a bracket)."""
        return self.values[self.seeds.index(seed)]


def reference_for(
    game: str | GameSpec,
    partner: Any,
    seat: int = 0,
    seeds: Sequence[int] = (0,),
    trained: bool = True,
    **kwargs: Any,
) -> Reference:
    """The best-response reference of ``seat`` against ``partner`` in ``game`` on ``seeds``.

    Args:
        game: a registered game name or id.
        partner: the partner spec of every other seat: a bot name; in the matrix games also a
            switching partner ``"switch:a=A:b=B:at=LO-HI:key=K"`` (the switching agent's spec:
            the round of each seed drawn as it draws it) or ``"switch:a=A:b=B"`` with
            ``switch_at`` (below); in CollabCapture/CollabEscape also a
            :class:`~tom_envs.games.joint_planner.MarkovPartner` (e.g. a learned actor tabulated
            with :func:`~tom_envs.games.joint_planner.partner_from_view`).
        seat: the focal seat.
        seeds: the episode seeds the values are for.
        **kwargs: game arguments (``scenario=``, ``horizon=``, ...), and per game:
            ``switch_at`` (matrix switch: the 0-based round from which ``b`` plays, an int or a
            function of the seed: the clairvoyant reference) or ``switch_window=(lo, hi)`` (the
            round uniform in ``lo..hi`` and unknown to the focal: the Bayes reference, for
            deterministic members; ``bayes=True`` takes the window from the spec's ``at``);
            ``markov=True`` (room games: any agent spec, e.g. ``zoo/<member>``, vouched Markov in
            (state, turns left)); ``candidates`` and ``selection_seeds`` (BombDefusal brackets).
        trained: where no solver gives a reference, use a cached best response trained against
            this partner for exactly this configuration (game arguments, seat, partner by content:
            :func:`tom_envs.best_responses.find`), played on ``seeds``: kind ``lower_bound``,
            :attr:`Reference.label` ``"trained lower bound"``. ``False``: solvers only.

    The values are per seed. CollabCapture and CollabEscape start without chance, so every seed
    has the same exact (expected) value; in BombDefusal each seed is its own mission; in the
    matrix games only a switching partner's round depends on the seed.

    Raises:
        NoReference: the game (or this partner in it) has no reference yet; the message says
            what will provide one.
    """
    spec = game if isinstance(game, GameSpec) else game_spec(game)
    seeds = tuple(int(s) for s in seeds)
    if not seeds:
        raise ValueError("seeds must name at least one episode seed")
    if isinstance(seat, bool) or not isinstance(seat, int):
        raise ValueError(f"seat must be an int, got {seat!r}")
    try:
        if spec.name in MATRIX_GAMES:
            return _matrix_reference(spec, partner, seat, seeds, **kwargs)
        if spec.name in ROOM_GAMES:
            return _room_reference(spec, partner, seat, seeds, **kwargs)
        if spec.name == "BombDefusal":
            return _bomb_reference(spec, partner, seat, seeds, **kwargs)
        later = NOT_YET.get(spec.name, "none planned")
        raise NoReference(
            f"{spec.name} has no best-response reference here yet (planned: {later}); exact "
            f"references exist for {', '.join((*MATRIX_GAMES, *ROOM_GAMES, 'BombDefusal'))}"
        )
    except NoReference:
        ref = _trained_reference(spec, partner, seat, seeds, kwargs) if trained else None
        if ref is None:
            raise
        return ref


def _trained_reference(spec: GameSpec, partner: Any, seat: int, seeds: tuple[int, ...],
                       kwargs: Mapping[str, Any]) -> Reference | None:  # fmt: skip
    """The cached trained BR for this exact configuration played on ``seeds`` (``None``: none
    matches): a lower bound, labelled "trained lower bound"."""
    from tom_envs import best_responses as brs

    if not isinstance(partner, str):
        return None
    params = {p.name for p in getattr(spec.load(), "PARAMS", ())}
    game_kwargs = {k: v for k, v in _game_kwargs(spec, kwargs).items() if k in params}
    br = brs.find(spec, partner, seat, game_kwargs)
    if br is None:
        return None
    from tom_envs.agents import make_agent

    values = brs.trained_values(spec, br, partner, seeds, game_kwargs, make_agent)
    objective = spec.load().functional_objective(**{**spec.kwargs, **game_kwargs})
    o = br.origin
    trained = {"name": br.name, "sha256": br.sha256, "algo": o.get("algo"),
               "steps": o.get("steps"), "seed": o.get("seed"), "command": o.get("command"),
               "curve": o.get("curve"), "agent_spec": br.agent_spec}  # fmt: skip
    return Reference(
        spec.name, partner, seat, "lower_bound", objective.name, seeds,
        tuple(values[s] for s in seeds), br.describe(), env_kwargs=game_kwargs, trained=trained,
    )


def _check_seat(spec: GameSpec, seat: int, players: int) -> None:
    if not 0 <= seat < players:
        raise ValueError(f"seat must be in [0, {players}) for {spec.name}, got {seat}")


def _game_kwargs(spec: GameSpec, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    return {**spec.kwargs, **kwargs}


# ------------------------------------------------------------------------------- matrix
def _switch_fields(partner: str) -> dict[str, str]:
    """``"switch:a=A:b=B:at=30-60:key=1"`` -> ``{"a": "A", "b": "B", "at": "30-60", "key": "1"}``."""
    fields: dict[str, str] = {}
    for item in partner.split(":")[1:]:
        key, _, value = item.partition("=")
        fields[key] = value
    return fields


def _parse_switch(partner: str) -> tuple[str, str]:
    """``"switch:a=A:b=B[:...]"`` -> ``(A, B)``."""
    fields = _switch_fields(partner)
    if not fields.get("a") or not fields.get("b"):
        raise ValueError(f"a switching partner names a=A and b=B, got {partner!r}")
    return fields["a"], fields["b"]


def _spec_window(partner: str) -> tuple[int, int] | None:
    """The ``at=LO-HI`` window of a switch spec (``None`` without one)."""
    fields = _switch_fields(partner)
    if "at_episode" in fields:
        raise ValueError(
            f"{partner!r} switches across episodes; a matrix reference is per episode (give "
            "at=LO-HI, or switch_at)"
        )
    at = fields.get("at")
    if at is None:
        return None
    lo, _, hi = at.partition("-")
    try:
        window = (int(lo), int(hi or lo))
    except ValueError as exc:
        raise ValueError(f"{partner!r}: at must be N or LO-HI, got {at!r}") from exc
    if not 0 <= window[0] <= window[1]:
        raise ValueError(f"{partner!r}: at needs 0 <= LO <= HI, got {at!r}")
    return window


def spec_switch_point(partner: str) -> Callable[[int], int] | None:
    """The switch round per episode seed of ``switch:a=A:b=B:at=LO-HI:key=K``, drawn exactly as
    the switching agent draws it (:func:`tom_envs.partners.switching.switch_point`); ``None``
    when the spec names no ``at``."""
    window = _spec_window(partner)
    if window is None:
        return None
    fields = _switch_fields(partner)
    try:
        key = int(fields["key"])
    except (KeyError, ValueError) as exc:
        raise ValueError(f"{partner!r}: a switch spec names key=<int>") from exc
    try:
        switching = importlib.import_module("tom_envs.partners.switching")
    except ImportError as exc:
        raise NoReference(
            f"{partner!r}: the switch round is drawn by tom_envs.partners.switching, which is "
            "not installed here; give switch_at explicitly"
        ) from exc
    lo, hi = window
    return lambda seed: int(switching.switch_point(seed, key, lo, hi))


def _switch_round(switch_at: Any, seed: int, partner: str) -> int:
    if switch_at is None:
        raise ValueError(
            f"partner {partner!r} switches: give switch_at (the 0-based round from which b "
            "plays, an int or a function of the seed) so the reference is the clairvoyant one"
        )
    value = switch_at(seed) if callable(switch_at) else switch_at
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise ValueError(f"switch_at must give an int >= 0, got {value!r} for seed {seed}")
    return int(value)


@lru_cache(maxsize=64)
def _bayes_value(config: Any, partner: str, seat: int, window: tuple[int, int]) -> float:
    """The Bayes reference of a switching partner: the switch round uniform in ``window``,
    unknown to the focal."""
    from tom_envs.games.matrix.bots import make_partner
    from tom_envs.games.matrix.planner import BayesSwitchingPolicy, OptimalResponse

    a, b = _parse_switch(partner)
    if "random" in (a, b):
        raise NoReference(
            f"{partner!r}: the Bayes reference needs deterministic members (with a random one "
            "the posterior over the switch round depends on the whole history); use switch_at"
        )
    other = 1 - seat
    policy = BayesSwitchingPolicy(
        config, other, make_partner(a, config, other), make_partner(b, config, other), *window
    )
    return OptimalResponse(config, policy, seat).optimal_return()


@lru_cache(maxsize=256)
def _matrix_value(config: Any, partner: str, seat: int, switch_at: int | None) -> float:
    from tom_envs.games.matrix.bots import make_partner
    from tom_envs.games.matrix.planner import OptimalResponse, SwitchingPolicy

    other = 1 - seat
    if switch_at is None:
        policy = make_partner(partner, config, other)
    else:
        a, b = _parse_switch(partner)
        policy = SwitchingPolicy(
            config, other, make_partner(a, config, other), make_partner(b, config, other), switch_at
        )
    return OptimalResponse(config, policy, seat).optimal_return()


def _matrix_reference(
    spec: GameSpec, partner: Any, seat: int, seeds: tuple[int, ...], switch_at: Any = None,
    switch_window: tuple[int, int] | None = None, bayes: bool = False, **kwargs: Any,
) -> Reference:  # fmt: skip
    from tom_envs.games.matrix.rules import MatrixConfig

    _check_seat(spec, seat, 2)
    if not isinstance(partner, str):
        raise ValueError(f"a matrix partner is a bot name or 'switch:a=A:b=B', got {partner!r}")
    game_kwargs = _game_kwargs(spec, kwargs)
    config = MatrixConfig(
        **{k: v for k, v in game_kwargs.items() if k in MatrixConfig.__dataclass_fields__}
    )
    switching = partner.startswith("switch:")
    if not switching and (switch_at is not None or switch_window is not None or bayes):
        raise ValueError(
            f"switch_at/switch_window/bayes are for a switching partner, not {partner!r}"
        )
    if bayes and switch_window is None:
        switch_window = _spec_window(partner)
        if switch_window is None:
            raise ValueError(
                f"bayes=True needs the window: at=LO-HI in {partner!r} or switch_window"
            )
    if switching and switch_at is None and switch_window is None:
        switch_at = spec_switch_point(partner)  # as the switching agent draws it, per seed
    if switch_window is not None:
        if switch_at is not None:
            raise ValueError("give switch_at (clairvoyant) or switch_window (Bayes), not both")
        lo, hi = (int(x) for x in switch_window)
        value = _bayes_value(config, partner, seat, (lo, hi))
        clair = [_matrix_value(config, partner, seat, r) for r in range(lo, hi + 1)]
        return Reference(
            spec.name, partner, seat, "exact",
            f"focal return over {config.horizon} rounds, expected over the switch round",
            seeds, (value,) * len(seeds),
            "OptimalResponse over BayesSwitchingPolicy: the switch round uniform in "
            f"{lo}-{hi} and unknown to the focal (Bayes reference)",
            details={"horizon": config.horizon, "switch_window": (lo, hi),
                     "clairvoyant_mean": float(np.mean(clair))},
            env_kwargs=game_kwargs,
        )  # fmt: skip
    rounds = [_switch_round(switch_at, s, partner) if switching else None for s in seeds]
    values = tuple(_matrix_value(config, partner, seat, r) for r in rounds)
    source = "OptimalResponse: dynamic programme over the partner's finite-state machine"
    details: dict[str, Any] = {"horizon": config.horizon}
    if switching:
        source += " (SwitchingPolicy: b in shadow from the start, switch round known)"
        details["switch_at"] = tuple(rounds)
    return Reference(
        spec.name, partner, seat, "exact", f"focal return over {config.horizon} rounds", seeds,
        values, source, details=details, env_kwargs=game_kwargs,
    )  # fmt: skip


# -------------------------------------------------------------------- Capture and Escape
def _room_step_cost(spec: GameSpec, game: Any) -> float:
    """CollabCapture's ``U`` counts turns (1/(H+1) each); CollabEscape's does not."""
    if spec.name == "CollabCapture":
        return 1.0 / (game.config.max_turns + 1)
    return 0.0


def room_objective(spec: GameSpec, game: Any) -> str:
    """The words for a room game's ``U``."""
    if spec.name == "CollabCapture":
        return f"captured - turns/{game.config.max_turns + 1}"
    return "escaped (probability within the turn limit)"


#: Room games whose views are a function of the planner's (canonical state, turns left): the
#: canonical state drops only the turn counter, which the tabulation restores. A learned zoo member
#: (a feed-forward actor of its turn, no memory within the episode) is then Markov there, and its
#: exact reference needs no ``markov=True`` (checked against its play in tests/test_references.py).
VIEW_OF_STATE = frozenset({"CollabCapture"})
#: Why a learned member of the other room games is not Markov in the planner's state.
NOT_MARKOV = {
    "CollabEscape": " (a learned actor reads the 'fixing' flags of the last actions, which the "
    "planner's canonical state drops: its policy is not a function of the planner's state)",
}


def markov_bots(spec: GameSpec) -> tuple[str, ...]:
    """A room game's rule bots that are deterministic and read only what the planner's state
    keeps (the game's ``bots.MARKOV_BOTS``: ``greedy`` and the conventions), besides ``optimal``
    (tabulated from the planner) and ``random``."""
    if spec.name not in ROOM_GAMES:
        return ()
    bots = importlib.import_module(spec.module.rpartition(".")[0] + ".bots")
    return tuple(getattr(bots, "MARKOV_BOTS", ("greedy",)))


def markov_partner(spec: GameSpec, bundle: Any, name: str, seat: int, markov: bool = False) -> Any:
    """A room game's partner as a :class:`~tom_envs.games.joint_planner.MarkovPartner` in
    ``seat``.

    ``greedy`` and the conventions (:func:`markov_bots`) are the bots themselves, asked on the
    turn of every state (they read only what the state keeps);
    ``optimal`` is the joint planner's choice tabulated exactly as the bot computes it;
    ``random`` is uniform over the options. Any other agent spec (``zoo/<member>``, a checkpoint)
    only with ``markov=True``: the caller vouches that it is Markov in (state, turns left) (a
    learned zoo member of a game in :data:`VIEW_OF_STATE` is, without it), and it is read through
    its ``action_probs`` or, without one, as deterministic
    (:func:`~tom_envs.games.joint_planner.partner_from_agent`).
    """
    from tom_envs.agents import make_agent
    from tom_envs.games.joint_planner import (
        optimal_partner,
        partner_from_agent,
        planner_for,
        uniform_partner,
    )

    game = bundle.game
    if name == "random":
        return uniform_partner(game, seat)
    if name == "optimal":
        return optimal_partner(planner_for(type(game), game.config), seat)
    if name in markov_bots(spec):  # rule bots of the view the planner's state restores
        agent = spec.load().bot_table(**_config_kwargs(spec, game.config)).make(name, bundle)
        return partner_from_agent(name, bundle, seat, agent, stationary=True)
    if not markov and not (name.startswith("zoo/") and spec.name in VIEW_OF_STATE):
        why = NOT_MARKOV.get(spec.name, "") if name.startswith("zoo/") else ""
        raise NoReference(
            f"{spec.name}: no exact reference for partner {name!r}{why}; give one of "
            f"{[*markov_bots(spec), 'optimal', 'random']}, a MarkovPartner, or markov=True for an "
            "agent that is Markov in (state, turns left)"
        )
    agent = make_agent(name, spec, bundle)
    agent.reset(_tabulation_info(spec, bundle, seat))
    return partner_from_agent(name, bundle, seat, agent)


def _tabulation_info(spec: GameSpec, bundle: Any, seat: int) -> EpisodeInfo:
    """The episode info an agent tabulated over states is reset with (no seed: one policy)."""
    game = bundle.game
    return EpisodeInfo(
        env_id=spec.id, agent=f"player_{seat}", player=seat, num_players=game.num_players,
        num_actions=game.num_actions, seed=None, reward_range=(0.0, 1.0),
        max_steps=game.config.max_turns, env_kwargs=_config_kwargs(spec, game.config),
        game_config=game.config,
    )  # fmt: skip


def _config_kwargs(spec: GameSpec, cfg: Any) -> dict[str, Any]:
    """The game arguments (the module's ``PARAMS``) a frozen config dataclass holds."""
    names = {p.name for p in getattr(spec.load(), "PARAMS", ())}
    return {k: getattr(cfg, k) for k in cfg.__dataclass_fields__ if k in names}


@lru_cache(maxsize=64)
def best_response_planner(
    game_name: str, config: Any, partner: str, seat: int, markov: bool = False
) -> Any:
    """A cached :class:`~tom_envs.games.joint_planner.BestResponsePlanner` for a room game's
    configuration (its frozen config object) with a named bot partner, built once per process."""
    from tom_envs.games.joint_planner import BestResponsePlanner, planner_for

    spec = game_spec(game_name)
    bundle = spec.load().make_bundle(**_config_kwargs(spec, config))
    game = bundle.game
    if game.config != config:
        raise ValueError(f"{game_name}: could not rebuild the configuration {config}")
    mp = markov_partner(spec, bundle, partner, 1 - seat, markov)
    return BestResponsePlanner(
        game, mp, seat, _room_step_cost(spec, game), planner_for(type(game), game.config)
    )


def _room_reference(
    spec: GameSpec, partner: Any, seat: int, seeds: tuple[int, ...], markov: bool = False,
    **kwargs: Any,
) -> Reference:  # fmt: skip
    from tom_envs.games.joint_planner import BestResponsePlanner, MarkovPartner, planner_for

    _check_seat(spec, seat, 2)
    game_kwargs = _game_kwargs(spec, kwargs)
    if isinstance(partner, MarkovPartner):
        bundle = spec.load().make_bundle(**game_kwargs)
        game = bundle.game
        br = BestResponsePlanner(
            game, partner, seat, _room_step_cost(spec, game), planner_for(type(game), game.config)
        )
        name = partner.name
    elif isinstance(partner, str):
        game = spec.load().make_bundle(**game_kwargs).game
        br = best_response_planner(spec.name, game.config, partner, seat, markov)
        game, name = br.game, partner
    else:
        raise ValueError(f"a {spec.name} partner is a bot name or a MarkovPartner, got {partner!r}")
    value = br.value()
    outcome = br.outcome()
    team = br.planner
    start = br.start()
    details = {
        "success": outcome["success"],
        "expected_turns": outcome["expected_turns"],
        "team_optimum_success": team.value(start),
        "team_optimum_turns": team.optimal_turns(start),
        "states": team.num_states,
        "best_first_action": br.best_action(),
    }
    return Reference(
        spec.name, name, seat, "exact", room_objective(spec, game), seeds, (value,) * len(seeds),
        "BestResponsePlanner: backward induction on the joint planner's tables with the "
        "partner's action distribution (chance enumerated)", details=details,
        env_kwargs=game_kwargs,
    )  # fmt: skip


# ------------------------------------------------------------------------ bomb defusal
def bomb_objective(team_score: float, rounds: float) -> float:
    """BombDefusal's ``U = team_score - 0.3 * rounds``."""
    return float(team_score) - BOMB_ROUND_WEIGHT * float(rounds)


@lru_cache(maxsize=512)
def bomb_team_optimum(config: Any, seed: int) -> tuple[float, int, int]:
    """``(U, points, rounds)`` of the mission of ``seed`` under the centralised optimum (the CBS
    plan the ``cbs`` bots execute: best return, then fewest rounds; ``rounds`` is the round limit
    when some bomb cannot be defused in time)."""
    from tom_envs.games.bomb_defusal.bots import _cached_plan

    _, plan = _cached_plan(config, int(seed))
    complete = plan.return_ >= sum(plan.problem.values)
    rounds = plan.rounds if complete else config.max_rounds
    return bomb_objective(plan.return_, rounds), int(plan.return_), int(rounds)


def _bomb_check(game: Any, seed: int, points: int, rounds: int) -> bool:
    """Confirm a complete mission's optimal rounds by breadth-first search
    (:func:`~tom_envs.games.bomb_defusal.planner.exhaustive_optimum`); ``False`` when the mission
    is incomplete or too large to search. A disagreement raises: an exact value is never wrong
    silently."""
    from gymnasium.utils import seeding

    from tom_envs.games.bomb_defusal.planner import exhaustive_optimum

    rng, _ = seeding.np_random(int(seed))
    state = game.initial_state(rng)
    if points < state.mission.max_score:
        return False
    try:
        found = exhaustive_optimum(game, state)
    except ValueError:  # too many joint states for the breadth-first check
        return False
    if found != rounds:
        raise RuntimeError(
            f"BombDefusal seed {seed}: CBS plan takes {rounds} rounds, exhaustive search {found}"
        )
    return True


def _bomb_play(spec: GameSpec, game_kwargs: Mapping[str, Any], focal: str, partner: str,
               seat: int, seed: int) -> tuple[float, float, float]:  # fmt: skip
    """``(U, team_score, rounds)`` of one played episode (focal in ``seat``, ``partner``
    elsewhere)."""
    from tom_envs.agents import make_agent
    from tom_envs.runner import play_episode

    bundle = spec.load().make_bundle(**game_kwargs)
    players = bundle.game.num_players
    agents = [make_agent(focal if s == seat else partner, spec, bundle) for s in range(players)]
    ep = play_episode(spec, agents, seed, {**game_kwargs, "probes": "none"})
    if ep.status != "ok":
        raise RuntimeError(f"BombDefusal seed {seed} ({focal} with {partner}): status {ep.status}")
    score, rounds = ep.metrics["team_score"], ep.metrics["rounds"]
    return bomb_objective(score, rounds), float(score), float(rounds)


def _bomb_reference(
    spec: GameSpec, partner: Any, seat: int, seeds: tuple[int, ...],
    candidates: Sequence[str] = BOMB_CANDIDATES,
    selection_seeds: Sequence[int] = BOMB_SELECTION_SEEDS, **kwargs: Any,
) -> Reference:  # fmt: skip
    from tom_envs.games.bomb_defusal.rules import BombConfig

    game_kwargs = _game_kwargs(spec, kwargs)
    bundle = spec.load().make_bundle(**game_kwargs)
    config: BombConfig = bundle.game.config  # type: ignore[attr-defined]
    _check_seat(spec, seat, bundle.game.num_players)
    if not isinstance(partner, str):
        raise ValueError(f"a BombDefusal partner is a bot name, got {partner!r}")
    table = spec.load().bot_table(**game_kwargs)
    if partner not in table:
        raise NoReference(f"BombDefusal: unknown partner {partner!r}; bots: {table.names()}")
    optimum = [bomb_team_optimum(config, s) for s in seeds]
    upper = tuple(u for u, _, _ in optimum)
    details: dict[str, Any] = {
        "team_optimum_points": tuple(p for _, p, _ in optimum),
        "team_optimum_rounds": tuple(r for _, _, r in optimum),
    }
    objective = f"team_score - {BOMB_ROUND_WEIGHT} x rounds"
    if partner == "cbs":
        details["checked_by_exhaustive_search"] = sum(
            _bomb_check(bundle.game, s, p, r) for s, (_, p, r) in zip(seeds, optimum, strict=True)
        )
        return Reference(
            spec.name, partner, seat, "exact", objective, seeds, upper,
            "centralised optimum of each mission (CBS plan; CBS partners with the focal's CBS "
            "part attain it, and no focal policy beats the team optimum)", details=details,
            env_kwargs=game_kwargs,
        )  # fmt: skip
    selection = tuple(int(s) for s in selection_seeds)
    if set(selection) & set(seeds):
        raise ValueError(
            f"selection_seeds {sorted(set(selection) & set(seeds))} overlap the evaluation "
            "seeds: the candidate must be chosen on other episodes"
        )
    if not candidates:
        raise ValueError("candidates must name at least one focal bot")
    chosen_scores = {}
    for cand in candidates:
        if cand not in table:
            raise ValueError(f"candidate {cand!r} is not a BombDefusal bot ({table.names()})")
        chosen_scores[cand] = float(np.mean(
            [_bomb_play(spec, game_kwargs, cand, partner, seat, s)[0] for s in selection]
        ))  # fmt: skip
    best = max(candidates, key=lambda c: (chosen_scores[c], -list(candidates).index(c)))
    lower = tuple(_bomb_play(spec, game_kwargs, best, partner, seat, s)[0] for s in seeds)
    details.update(
        {"candidate": best, "selection_means": chosen_scores, "selection_seeds": selection}
    )
    return Reference(
        spec.name, partner, seat, "bracket", objective, seeds, lower,
        f"lower: candidate focal {best!r} (best mean U over {len(selection)} selection seeds "
        f"among {list(candidates)}), played on these seeds; upper: centralised optimum "
        "(privileged: reads the mission)", upper=upper, details=details, env_kwargs=game_kwargs,
    )  # fmt: skip


# ------------------------------------------------------------------------------ oracle
class OracleAgent(BaseAgent):
    """Plays the exact best response to a named partner (matrix games, CollabCapture,
    CollabEscape): the functional-ToM page's oracle, whose regret is 0 against a deterministic
    partner.

    Args:
        partner: the partner bot in the other seat (``"greedy"``, ``"tit_for_tat"``, ...), or in
            the matrix games a switching partner's own spec (``"switch:a=A:b=B:at=LO-HI:key=K"``:
            the oracle draws the same switch round from the episode seed).
        b: matrix games: the partner it switches to (with ``switch_at``), for a clairvoyant oracle
            of a switching partner.
        switch_at: the 0-based round from which ``b`` plays.

    The game and its arguments come from the episode (``EpisodeInfo``); the partner's state is
    tracked from the views (matrix) or read from the fully observable state (room games). It
    predicts the partner's likeliest action from the known policy (``prediction``), so the oracle
    is also the ceiling of next-action prediction.
    """

    name = "oracle"
    description = "plays the exact best response to the named partner (knows its policy)"

    def __init__(self, partner: str, b: str | None = None, switch_at: int | None = None) -> None:
        super().__init__()
        if not isinstance(partner, str) or not partner:
            raise ValueError(f"partner must name a bot, got {partner!r}")
        if (b is None) != (switch_at is None):
            raise ValueError("b and switch_at go together (a switching partner)")
        if partner.startswith("switch:") and b is not None:
            raise ValueError("a switch spec already names b and its round; drop b/switch_at")
        self.partner = partner
        self.b = b
        self.switch_at = switch_at
        self._solver: Any = None

    def reset(self, info: EpisodeInfo) -> None:
        """Build (or reuse, from the process cache) the exact solver of this episode's game."""
        super().reset(info)
        spec = game_spec(info.env_id)
        self.kind = "matrix" if spec.name in MATRIX_GAMES else "room"
        if spec.name not in (*MATRIX_GAMES, *ROOM_GAMES):
            raise NoReference(
                f"OracleAgent plays only {MATRIX_GAMES + ROOM_GAMES}, not {spec.name}"
            )
        if self.kind == "matrix":
            from tom_envs.games.matrix.bots import make_partner
            from tom_envs.games.matrix.planner import SwitchingPolicy
            from tom_envs.games.matrix.rules import MatrixConfig

            config = _info_config(info, spec, MatrixConfig)
            other = 1 - info.player
            a, b, switch_at = self.partner, self.b, self.switch_at
            if a.startswith("switch:"):  # the switching agent's own spec: its round per seed
                a, b = _parse_switch(self.partner)
                draw = spec_switch_point(self.partner)
                if draw is None or info.seed is None:
                    raise ValueError(f"oracle: {self.partner!r} needs at=LO-HI, key= and a seed")
                switch_at = draw(int(info.seed))
            policy = make_partner(a, config, other)
            if b is not None:
                assert switch_at is not None
                policy = SwitchingPolicy(
                    config, other, policy, make_partner(b, config, other), switch_at
                )
            self._solver = _matrix_solver(config, policy.name, info.player, policy)
            self.policy = policy
            self.state = policy.initial_state()
            self.rounds_seen = 0
            self.horizon = config.horizon
        else:
            if self.b is not None:
                raise ValueError("switching oracles exist only in the matrix games")
            config, self._from_view = room_setup(info, spec)
            self._solver = best_response_planner(spec.name, config, self.partner, info.player)

    def act(self, turn: Turn) -> int | AgentAction:
        """The best-response action now."""
        if self._solver is None:
            raise RuntimeError("OracleAgent.act before reset")
        view = turn.view
        if self.kind == "room":
            state = self._from_view(view)
            br = self._solver
            k = br.horizon - int(state.turn) if br.horizon is not None else None
            probs = br.partner.probs(br.game.canonical(state), k)
            return AgentAction(int(br.best_action(state)), prediction=_likeliest(probs))
        played = last_round(view, self.rounds_seen, "oracle")
        if played is not None:
            mine, theirs = played
            self.state = self.policy.next_state(self.state, theirs, mine)
            self.rounds_seen = view.round
        k = self.horizon - view.round
        q = self._solver.q_values(k, self.state)
        probs = dict(enumerate(self.policy.action_probs(self.state)))
        return AgentAction(int(np.argmax(q)), prediction=_likeliest(probs))


def _likeliest(probs: Mapping[int, float]) -> dict[str, int]:
    """The oracle's prediction: the partner's likeliest action (lowest on ties), from its known
    policy."""
    top = max(probs.values())
    return {"partner_action": min(a for a, p in probs.items() if p >= top - 1e-12)}


def room_setup(info: EpisodeInfo, spec: GameSpec) -> tuple[Any, Callable[[Any], Any]]:
    """A room game's configuration of the episode and its ``state_from_view`` (the planners'
    state read from a view: both games are fully observable), for the agents that plan in it.
    ``spec`` is a registered game's (never a name read from a file)."""
    if spec.name not in ROOM_GAMES:
        raise ValueError(f"a room game's planner plays {ROOM_GAMES}, not {spec.name}")
    package = spec.module.rpartition(".")[0]
    module = importlib.import_module(package + ".rules")
    cls = {"CollabCapture": "CaptureConfig", "CollabEscape": "EscapeConfig"}[spec.name]
    bots = importlib.import_module(package + ".bots")
    return _info_config(info, spec, getattr(module, cls)), bots.state_from_view


def _info_config(info: EpisodeInfo, spec: GameSpec, cls: type) -> Any:
    """The episode's game configuration: ``info.game_config``, else rebuilt from its kwargs."""
    if isinstance(info.game_config, cls):
        return info.game_config
    names = {p.name for p in getattr(spec.load(), "PARAMS", ())}
    kwargs = {k: v for k, v in dict(info.env_kwargs or spec.kwargs).items() if k in names}
    return spec.load().make_bundle(**kwargs).game.config  # type: ignore[attr-defined]


_MATRIX_SOLVERS: dict[tuple[Any, str, int], Any] = {}


def _matrix_solver(config: Any, name: str, seat: int, policy: Any) -> Any:
    from tom_envs.games.matrix.planner import OptimalResponse

    key = (config, name, seat)
    solver = _MATRIX_SOLVERS.get(key)
    if solver is None:
        if len(_MATRIX_SOLVERS) > 256:
            _MATRIX_SOLVERS.clear()
        solver = _MATRIX_SOLVERS[key] = OptimalResponse(config, policy, seat)
    return solver


def oracle_agent(partner: str, b: str | None = None, switch_at: int | None = None) -> OracleAgent:
    """An :class:`OracleAgent` (the small factory the functional page seats as its oracle)."""
    return OracleAgent(partner, b, switch_at)


# ------------------------------------------------------------------------------- table
def table_rows(bomb_seeds: Sequence[int] = tuple(range(10))) -> list[dict[str, Any]]:
    """Every reference of the built-in partners (the rows of ``--table``)."""
    from tom_envs.games.matrix.bots import partner_names
    from tom_envs.games.matrix.rules import MatrixConfig

    rows: list[dict[str, Any]] = []

    def add(ref: Reference, scenario: str, seconds: float, **extra: Any) -> None:
        rows.append({"ref": ref, "scenario": scenario, "cpu_s": seconds, **extra})

    for name in MATRIX_GAMES:
        spec = game_spec(name)
        config = MatrixConfig(**{k: v for k, v in spec.kwargs.items()
                                 if k in MatrixConfig.__dataclass_fields__})  # fmt: skip
        for partner in partner_names(config):
            c0 = time.process_time()
            ref = reference_for(spec, partner, 0, (0,))
            add(ref, f"T={config.horizon}", time.process_time() - c0)
    for name, pair in SWITCH_PAIRS:
        c0 = time.process_time()
        ref = reference_for(name, pair, 0, (0,), switch_window=SWITCH_WINDOW)
        add(ref, f"rounds {SWITCH_WINDOW[0]}-{SWITCH_WINDOW[1]}", time.process_time() - c0)
    from tom_envs.games.collab_capture.rules import SCENARIOS as CAPTURE
    from tom_envs.games.collab_escape.rules import SCENARIOS as ESCAPE

    for name, scenarios in (("CollabCapture", CAPTURE), ("CollabEscape", ESCAPE)):
        conventions = [b for b in markov_bots(game_spec(name)) if b != "greedy"]
        for scenario in scenarios:
            for partner in ("greedy", "optimal", *conventions, "random"):
                c0 = time.process_time()
                ref = reference_for(name, partner, 0, (0,), scenario=scenario)
                add(ref, scenario, time.process_time() - c0)
    for partner in ("cbs", *[c for c in BOMB_CANDIDATES if c != "cbs"], "random"):
        c0 = time.process_time()
        ref = reference_for("BombDefusal", partner, 0, tuple(bomb_seeds))
        add(ref, f"seeds {bomb_seeds[0]}-{bomb_seeds[-1]}", time.process_time() - c0)
    return rows


#: Switching partners of the table (deterministic members; window of the design's matrix row).
SWITCH_PAIRS = (
    ("PrisonersDilemma", "switch:a=always_0:b=tit_for_tat"),
    ("BattleOfSexes", "switch:a=always_0:b=always_1"),
    ("RockPaperScissors", "switch:a=tit_for_tat:b=always_0"),
    ("RockPaperScissors", "switch:a=alternating:b=always_1"),
)
SWITCH_WINDOW = (30, 70)


def _fmt(x: float) -> str:
    return f"{x:.4f}"


def _matrix_row(r: Mapping[str, Any]) -> str:
    ref = r["ref"]
    t = ref.details["horizon"]
    return (f"| {ref.game} | {ref.partner} | {ref.kind} | {ref.mean:.2f} | "
            f"{ref.mean / t:.4f} | {r['cpu_s']:.3f} |")  # fmt: skip


def _switching_row(r: Mapping[str, Any]) -> str:
    ref = r["ref"]
    clair = ref.details["clairvoyant_mean"]
    return (f"| {ref.game} | {ref.partner} | {r['scenario']} | {ref.mean:.4f} | "
            f"{clair:.4f} | {clair - ref.mean:.4f} | {r['cpu_s']:.2f} |")  # fmt: skip


def _room_row(r: Mapping[str, Any]) -> str:
    ref, d = r["ref"], r["ref"].details
    turns = d["team_optimum_turns"]
    return (
        f"| {ref.game} | {r['scenario']} | {ref.partner} | {ref.kind} | {_fmt(ref.mean)} | "
        f"{_fmt(d['success'])} | {d['expected_turns']:.3f} | "
        f"{d['team_optimum_success']:.4f} / {'-' if turns is None else turns} | "
        f"{d['best_first_action']} | {r['cpu_s']:.2f} |"
    )


def _bomb_row(r: Mapping[str, Any]) -> str:
    ref = r["ref"]
    up = ref.upper_mean
    return (
        f"| {ref.partner} | {r['scenario']} | {ref.kind} | {ref.mean:.2f} | "
        f"{'=' if up is None else f'{up:.2f}'} | "
        f"{_bomb_source(ref)} | "
        f"{r['cpu_s']:.1f} |"
    )


def _section(
    head: Sequence[str], rows: Sequence[Mapping[str, Any]], row: Callable[[Mapping[str, Any]], str]
) -> list[str]:
    """One family's table: its heading lines, a line per row, a blank line (nothing if no rows)."""
    return [*head, *map(row, rows), ""] if rows else []


#: Each family's table heading: title, note, column names, rule.
_MATRIX_HEAD = ("### Matrix games (focal seat 0; value = optimal expected return over T rounds)",
                "", "| game | partner | kind | V_T(s_1) | per round | CPU s |",
                "|---|---|---|---|---|---|")  # fmt: skip
_SWITCHING_HEAD = ("### Matrix games, switching partners (focal seat 0, T = 100)", "",
                   "Switch round uniform in the window. Bayes: the round unknown to the focal "
                   "(exact); clairvoyant: the round known, mean over the window (exact per round). "
                   "Their gap is regret no agent can avoid.", "",
                   "| game | partner | window | Bayes V_T | clairvoyant mean | gap | CPU s |",
                   "|---|---|---|---|---|---|---|")  # fmt: skip
_ROOM_HEAD = ("### CollabCapture and CollabEscape (focal seat 0, partner in seat 1)", "",
              "U: CollabCapture `captured - turns/31`, CollabEscape `escaped`. Team optimum: "
              "the joint planner's (both seats planned together).", "",
              "| game | scenario | partner | kind | U of the BR | P(success) | E[turns] | "
              "team optimum P / turns | first BR action | CPU s |",
              "|---|---|---|---|---|---|---|---|---|---|")  # fmt: skip
_BOMB_HEAD = ("### BombDefusal (focal seat 0, the partner bot in seats 1 and 2)", "",
              "U = `team_score - 0.3 x rounds`, mean over the seeds (per-seed values in "
              "`reference_for`).", "",
              "| partners | seeds | kind | U (lower) | U (upper) | lower end from | CPU s |",
              "|---|---|---|---|---|---|---|")  # fmt: skip


def format_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The rows as markdown tables, one per game family."""
    matrix = [r for r in rows if r["ref"].game in MATRIX_GAMES and "switch_window" not in
              r["ref"].details]  # fmt: skip
    switching = [r for r in rows if "switch_window" in r["ref"].details]
    room = [r for r in rows if r["ref"].game in ROOM_GAMES]
    bomb = [r for r in rows if r["ref"].game == "BombDefusal"]
    out = [
        *_section(_MATRIX_HEAD, matrix, _matrix_row),
        *_section(_SWITCHING_HEAD, switching, _switching_row),
        *_section(_ROOM_HEAD, room, _room_row),
        *_section(_BOMB_HEAD, bomb, _bomb_row),
    ]
    return "\n".join(out)


def oracle_check(escape_seeds: int = 200) -> str:
    """The oracle beside the ``optimal`` and ``greedy`` bots as focal (seat 0) with a ``greedy``
    partner: played episodes against the exact reference (a markdown table)."""
    from tom_envs.agents import make_agent
    from tom_envs.records import mean_ci95
    from tom_envs.runner import play_episode

    lines = ["| game | scenario | reference U | focal | episodes | U played (95% CI) | regret |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    cases = [("CollabCapture", s, (0,)) for s in ("both_open", "door12_closed", "door34_closed",
             "both_closed")] + [("CollabEscape", s, tuple(range(escape_seeds)))
                                for s in ("together", "split")]  # fmt: skip
    for game, scenario, seeds in cases:
        spec = game_spec(game)
        ref = reference_for(spec, "greedy", 0, seeds, scenario=scenario)
        for focal in ("oracle", "optimal", "greedy"):
            values = []
            for seed in seeds:
                bundle = spec.load().make_bundle(scenario=scenario)
                me = OracleAgent("greedy") if focal == "oracle" else make_agent(focal, spec, bundle)
                agents = [me, make_agent("greedy", spec, bundle)]
                m = play_episode(spec, agents, seed, {"scenario": scenario}).metrics
                values.append(
                    m["captured"] - m["turns"] / 31 if game == "CollabCapture" else m["escaped"]
                )
            mean, half = mean_ci95(values)
            ci = "" if len(values) < 2 else f" ± {half:.4f}"
            lines.append(f"| {game} | {scenario} | {ref.mean:.4f} | {focal} | {len(values)} | "
                         f"{mean:.4f}{ci} | {ref.mean - mean:.4f} |")  # fmt: skip
    return "\n".join(lines)


def _bomb_source(ref: Reference) -> str:
    if ref.kind == "exact":
        checked = ref.details.get("checked_by_exhaustive_search", 0)
        return f"team optimum ({checked}/{len(ref.seeds)} confirmed by exhaustive search)"
    return f"candidate {ref.details.get('candidate')}"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tom_envs.references --table``: print every built-in reference."""
    parser = argparse.ArgumentParser(prog="python -m tom_envs.references",
                                     description=(__doc__ or "").split("\n")[0])  # fmt: skip
    parser.add_argument("--table", action="store_true", help="print the reference table")
    parser.add_argument("--bomb-seeds", type=int, default=10, help="BombDefusal seeds 0..N-1")
    parser.add_argument("--oracle-check", action="store_true",
                        help="play the oracle, optimal and greedy focals with a greedy partner")  # fmt: skip
    parser.add_argument("--escape-seeds", type=int, default=200,
                        help="CollabEscape episodes per focal in --oracle-check")  # fmt: skip
    args = parser.parse_args(argv)
    if not (args.table or args.oracle_check):
        parser.print_help()
        return 2
    if args.bomb_seeds < 1 or args.escape_seeds < 2:
        parser.error("--bomb-seeds must be >= 1 and --escape-seeds >= 2")
    if args.table:
        print(format_table(table_rows(tuple(range(args.bomb_seeds)))))
    if args.oracle_check:
        print(oracle_check(args.escape_seeds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
