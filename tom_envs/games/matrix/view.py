"""What one player of an iterated matrix game sees: the only place that decides it.

The view is egocentric: each past round is ``(my action, partner's action)``, and scores are
"mine" first. Both players see the same public history; a player never sees the action its partner
is choosing in the current round (simultaneous moves).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tom_envs.games.matrix.rules import MatrixGame, MatrixState


@dataclass(frozen=True)
class MatrixView:
    """One player's view.

    Attributes:
        player: the seat (0 or 1).
        round: rounds already played (the current round is ``round + 1`` in 1-based text).
        horizon: total rounds T.
        history: the last ``window`` rounds as ``(mine, partner's)``, oldest first.
        first_round: 1-based number of ``history[0]`` (so text can name rounds correctly).
        my_score: my total so far.
        partner_score: the partner's total so far.
        legal_actions: actions I may take now (empty once the game is over).
    """

    player: int
    round: int
    horizon: int
    history: tuple[tuple[int, int], ...]
    first_round: int
    my_score: float
    partner_score: float
    legal_actions: tuple[int, ...]

    @property
    def last_actions(self) -> tuple[int, int] | None:
        """``(my last action, partner's last action)``, or ``None`` before the first round.

        Partner-modelling agents (RMax's frequency model, for instance) read the partner's moves here.
        """
        return self.history[-1] if self.history else None


def observe(game: MatrixGame, state: MatrixState, player: int) -> MatrixView:
    """Build ``player``'s view of ``state``."""
    if player not in (0, 1):
        raise ValueError(f"player must be 0 or 1, got {player}")
    k = game.config.seen_rounds
    history = state.history_of(player)
    window = history if len(history) <= k else history[-k:]
    other = 1 - player
    return MatrixView(
        player=player,
        round=state.round,
        horizon=game.config.horizon,
        history=tuple(window),
        first_round=state.round - len(window) + 1,
        my_score=state.scores[player],
        partner_score=state.scores[other],
        legal_actions=game.legal_actions(state, player),
    )
