"""What one chef sees: the only place that decides it.

Overcooked is fully observable: a chef sees the whole kitchen, both chefs, every pot and counter,
the time and the score. It also carries the game's configuration (the kitchen and
the rules are common knowledge). The view is egocentric: ``me`` is the observing chef and ``partner`` the
other, so a policy (or a prompt) written for one seat works in the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tom_envs.games.overcooked.rules import (
        Chef,
        OvercookedConfig,
        OvercookedGame,
        OvercookedState,
    )


@dataclass(frozen=True, slots=True)
class OvercookedView:
    """One chef's view.

    Attributes:
        player: the seat (0 or 1).
        timestep: steps played so far.
        horizon: steps in the episode.
        me: my chef (cell, facing, held item).
        partner: the other chef.
        pots: ``(onions, cooking tick)`` per pot, tick -1 before cooking.
        counters: the item on each counter cell.
        score: points delivered so far (shared).
        legal_actions: my legal primitive actions (all six until the end, then none).
        config: the game's configuration (kitchen, cooking rule, horizon...): common knowledge,
            so that partners and planners configure themselves from what they are shown.
    """

    player: int
    timestep: int
    horizon: int
    me: Chef
    partner: Chef
    pots: tuple[tuple[int, int], ...]
    counters: tuple[int, ...]
    score: float
    legal_actions: tuple[int, ...]
    config: OvercookedConfig

    @property
    def chefs(self) -> tuple[Chef, Chef]:
        """Both chefs in seat order (player_0 first), whichever seat observes."""
        return (self.me, self.partner) if self.player == 0 else (self.partner, self.me)


def observe(game: OvercookedGame, state: OvercookedState, player: int) -> OvercookedView:
    """Build ``player``'s view of ``state``."""
    if player not in (0, 1):
        raise ValueError(f"player must be 0 or 1, got {player}")
    chefs = state.chefs
    config = game.config
    t = state.timestep
    return OvercookedView(
        player,
        t,
        config.horizon,
        chefs[player],
        chefs[1 - player],
        state.pots,
        state.counters,
        state.score,
        game.legal_actions(state, player) if t >= config.horizon else _ALL,
        config,
    )


#: Every primitive action (legal until the horizon, in every state).
_ALL = (0, 1, 2, 3, 4, 5)


def view_state(view: OvercookedView) -> OvercookedState:
    """The full state behind a view (possible because the game is fully observable)."""
    from tom_envs.games.overcooked.rules import OvercookedState

    return OvercookedState(view.timestep, view.chefs, view.pots, view.counters, view.score)
