"""What one player sees: the only place that decides it (text, vector and board read the view)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tom_envs.games.example.rules import ExampleGame, ExampleState


@dataclass(frozen=True)
class ExampleView:
    """One player's view: last round's colours (mine first, ``None`` before round 1)."""

    player: int
    round: int
    rounds: int
    my_last: int | None
    partner_last: int | None
    matches: int
    legal_actions: tuple[int, ...]


def observe(game: ExampleGame, state: ExampleState, player: int) -> ExampleView:
    """``player``'s view of ``state`` (never the colour the partner is naming now)."""
    last = state.history[-1] if state.history else None
    mine, theirs = (None, None) if last is None else (last[player], last[1 - player])
    return ExampleView(
        player, state.round, game.config.rounds, mine, theirs, state.matches,
        game.legal_actions(state, player),
    )  # fmt: skip
