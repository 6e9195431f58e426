"""A model-based planner for Overcooked: short rollouts of every mid-level option.

Whenever its chef must choose a mid-level action, :class:`RolloutPlanner` simulates each option
with the exact rules for ``depth`` steps: its chef carries out the option and then continues with
the greedy rules of :mod:`~tom_envs.games.overcooked.bots`, the partner follows the greedy rules
throughout (the planner's model of any partner), unless the partner has stayed put for a while,
in which case it is modelled as staying put. An option's value is the discounted reward collected
in the rollout plus the progress left at its end (:func:`progress`: onions in pots, cooking and cooked
soups, plates and soups in hand, each worth a share of a delivery), averaged over ``rollouts``
simulations with common random numbers; the best option is taken when it beats the greedy
choice by more than ``margin`` points, else the greedy choice. This is one step of policy improvement over the greedy rules, with a model that is exact
for the kitchen and approximate for the partner.
"""

from __future__ import annotations

import numpy as np

from tom_envs.core.agents import BaseAgent, Turn
from tom_envs.games.overcooked.bots import choose
from tom_envs.games.overcooked.kitchen import kitchen
from tom_envs.games.overcooked.midlevel import (
    MOVE_AWAY_ACTION,
    MidAction,
    MidLevelController,
    MidLevelView,
    mid_level_actions,
)
from tom_envs.games.overcooked.rules import (
    ONIONS_PER_SOUP,
    Item,
    OvercookedConfig,
    OvercookedGame,
    OvercookedState,
    is_soup,
)
from tom_envs.games.overcooked.view import view_state


def progress(config: OvercookedConfig, state: OvercookedState) -> float:
    """Points already "earned" by work in progress, as a share of a delivery's reward."""
    r, ct = config.delivery_reward, config.cook_time
    value = 0.0
    cooking = False
    for n, tick in state.pots:
        if tick < 0:
            value += 0.1 * r * n
        elif tick < ct:
            cooking = True
            value += r * (0.1 * ONIONS_PER_SOUP + 0.25 * tick / ct) * (n == ONIONS_PER_SOUP)
        else:
            cooking = True
            value += 0.6 * r * (n == ONIONS_PER_SOUP)
    for chef in state.chefs:
        h = chef.held
        if h == Item.SOUP_3:
            value += 0.8 * r
        elif h == Item.ONION or (h == Item.DISH and cooking):
            value += 0.05 * r
    for item in state.counters:
        if item == Item.SOUP_3:
            value += 0.75 * r
        elif item == Item.ONION:
            value += 0.03 * r
    return value


class RolloutPlanner:
    """Chooses mid-level actions by simulating each option (see the module docstring).

    Args:
        config: the game's configuration.
        depth: steps simulated per rollout.
        rollouts: simulations per option (the greedy rules draw random tie-breaks).
    """

    def __init__(
        self,
        config: OvercookedConfig,
        depth: int = 20,
        rollouts: int = 1,
        gamma: float = 0.98,
        margin: float = 0.5,
    ) -> None:
        self.config = config
        self.game = OvercookedGame(config)
        self.k = kitchen(config.kitchen)
        self.depth = depth
        self.rollouts = rollouts
        self.gamma = gamma
        self.margin = margin

    def value(
        self,
        state: OvercookedState,
        player: int,
        option: MidAction,
        seed: int,
        partner_idle: bool = False,
    ) -> float:
        """Discounted reward plus final progress of one rollout where ``player`` starts with
        ``option``; the partner follows the greedy rules, or stays put if ``partner_idle``."""
        cfg, k, game = self.config, self.k, self.game
        rng = np.random.default_rng(seed)
        ctrls = [MidLevelController(cfg, p, rng=rng) for p in (0, 1)]
        ctrls[player].set(option)
        total = 0.0
        s = state
        end = min(state.timestep + self.depth, cfg.horizon)
        acts = [0, 0]
        discount, gamma = 1.0, self.gamma
        while s.timestep < end:
            for p in (0, 1):
                ctrl = ctrls[p]
                if partner_idle and p != player:
                    acts[p] = 4
                    continue
                if ctrl.needs_choice(s):
                    opts = mid_level_actions(k, s, p, cfg.cooking)
                    ctrl.set(choose(k, cfg, s, p, opts, "any", ctrl.status, rng))
                acts[p] = ctrl.primitive(s)
            s, r, _ = game.transition(s, acts[0], acts[1])
            total += discount * r
            discount *= gamma
        return total + discount * progress(cfg, s)

    def choose(
        self,
        state: OvercookedState,
        player: int,
        options: tuple[MidAction, ...] | list[MidAction],
        status: str = "",
        rng: np.random.Generator | None = None,
        partner_idle: bool = False,
    ) -> MidAction:
        """The option with the best simulated value; the greedy choice unless another option is
        better by more than ``margin`` points (rollouts are noisy)."""
        greedy = choose(self.k, self.config, state, player, options, "any", status, rng)
        candidates = [o for o in options if o != MOVE_AWAY_ACTION or "blocked" in status]
        if len(candidates) <= 1:
            return greedy
        base = hash((state.timestep, player)) & 0xFFFF
        n = self.rollouts
        values = {
            o: sum(self.value(state, player, o, base * 31 + r, partner_idle) for r in range(n)) / n
            for o in [greedy] + [o for o in candidates if o != greedy]
        }
        best = max(values, key=lambda o: values[o])
        return best if values[best] > values[greedy] + self.margin else greedy


class PlannerChooser(BaseAgent):
    """An inner agent of :class:`~tom_envs.games.overcooked.midlevel.MidLevelAgent` that plans."""

    name = "planner"
    #: Steps without any change of the partner after which it is modelled as idle.
    IDLE_AFTER = 12

    def __init__(self, **planner_kwargs: float) -> None:
        super().__init__()
        self.planner_kwargs = planner_kwargs
        self.planner: RolloutPlanner | None = None
        self._partner: tuple[object, int] | None = None

    def partner_idle(self, view: MidLevelView) -> bool:
        """Whether the partner has not moved, turned or picked anything up for
        :data:`IDLE_AFTER` steps: the planner then models it as staying put, not as greedy
        (a first-order guess about the partner, from what it has been seen doing)."""
        game = view.game
        if self._partner is None or self._partner[0] != game.partner or game.timestep == 0:
            self._partner = (game.partner, game.timestep)
            return False
        return game.timestep - self._partner[1] >= self.IDLE_AFTER

    def act(self, turn: Turn) -> int:
        """The index of the planned option (the kitchen and rules are read from the view)."""
        view: MidLevelView = turn.view
        config = view.game.config
        if self.planner is None or self.planner.config != config:
            self.planner = RolloutPlanner(config, **self.planner_kwargs)  # type: ignore[arg-type]
        state = view_state(view.game)
        idle = self.partner_idle(view)
        choice = self.planner.choose(
            state, view.player, view.options, view.status, self.rng, partner_idle=idle
        )
        return view.options.index(choice)


__all__ = ["PlannerChooser", "RolloutPlanner", "is_soup", "progress"]
