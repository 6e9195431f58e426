"""What one CollabCapture agent sees: the only place that decides it.

The game is fully observable, as in the paper ("The environment is fully visible to all three
entities"): every room, both doors and the thief. What is not seen is the partner's choice for the
current turn (simultaneous moves); it is never in the state before the turn is applied. The view
is egocentric: "my" room first, then the partner's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tom_envs.games.collab_capture.rules import DOORS
from tom_envs.games.room_maze import RoomView, check_player

if TYPE_CHECKING:
    from tom_envs.games.collab_capture.rules import CaptureGame, CaptureState


@dataclass(frozen=True)
class CaptureView(RoomView):
    """One agent's view (``player``, ``my_room``, ``partner_room`` and the names: :class:`RoomView`).

    Attributes:
        thief_room: the thief's room.
        doors: ``((room_a, room_b, button_room, is_open), ...)`` for the two doors.
        turn: turns played.
        max_turns: the turn limit.
        captured: the thief has been caught.
        legal_actions: my actions now, in display order (empty once the game is over).
    """

    thief_room: int
    doors: tuple[tuple[int, int, int, bool], ...]
    turn: int
    max_turns: int
    captured: bool
    legal_actions: tuple[int, ...]

    @property
    def doors_open(self) -> tuple[bool, ...]:
        """Open flags in door order."""
        return tuple(d[3] for d in self.doors)


def observe(game: CaptureGame, state: CaptureState, player: int) -> CaptureView:
    """Build ``player``'s view of ``state``."""
    check_player(player)
    return CaptureView(
        player=player,
        my_room=state.rooms[player],
        partner_room=state.rooms[1 - player],
        thief_room=state.thief,
        doors=tuple(
            (d.rooms[0], d.rooms[1], d.button, is_open)
            for d, is_open in zip(DOORS, state.doors, strict=True)
        ),
        turn=state.turn,
        max_turns=game.config.max_turns,
        captured=state.captured,
        legal_actions=game.legal_actions(state, player),
    )
