"""What one CollabEscape player sees: the only place that decides it.

As in the paper, players see every room and the killer. They are told where the killer is and what
he will do this turn (the authors' "intel": "the killer will certainly move to the room where Bob
is", or "he is unaware of our current location"), and the view also carries what the killer saw
when he last decided, which decides whom he chases when both players are in sight (a function of
the public history, so nothing is hidden; it is what a player with perfect recall would know).
Where a roaming killer goes next is chance, drawn when the turn is applied: it is in no state.
The partner's choice for the current turn is never seen (simultaneous moves). Egocentric: "me"
first, then the partner.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tom_envs.games.collab_escape.rules import (
    GATE,
    GENERATORS,
    MEM_BOTH_ALICE,
    MEM_BOTH_BOB,
    MEM_NONE,
    MEM_SAW_ALICE,
    MEM_SAW_BOB,
    killer_decision,
)
from tom_envs.games.room_maze import RoomView, check_player

if TYPE_CHECKING:
    from tom_envs.games.collab_escape.rules import EscapeGame, EscapeState

# Egocentric killer memory (what he saw when he last decided).
SAW_NOBODY, SAW_ME, SAW_PARTNER, SAW_BOTH_CHASED_ME, SAW_BOTH_CHASED_PARTNER = range(5)
#: Egocentric killer intent this turn.
INTENT_UNAWARE, INTENT_ME, INTENT_PARTNER = range(3)


@dataclass(frozen=True)
class EscapeView(RoomView):
    """One player's view (``player``, ``my_room``, ``partner_room`` and the names: :class:`RoomView`).

    Attributes:
        killer_room: the killer's room.
        killer_intent: ``INTENT_UNAWARE`` (he roams at random), ``INTENT_ME`` or ``INTENT_PARTNER``
            (he moves to that player's current room this turn).
        killer_memory: ``SAW_*``: whom he saw when he last decided.
        generators: ``((room, fixes done, fixes needed), ...)``.
        gate_room: the exit gate's room.
        gate_open: both generators repaired.
        i_was_fixing: my last action was a fix.
        partner_was_fixing: my partner's last action was a fix.
        turn: turns played.
        max_turns: the turn limit (``None``: none).
        escaped: a player escaped (we won).
        caught: the killer caught a player (we lost).
        legal_actions: my actions now, in display order (empty once the game is over).
    """

    killer_room: int
    killer_intent: int
    killer_memory: int
    generators: tuple[tuple[int, int, int], ...]
    gate_room: int
    gate_open: bool
    i_was_fixing: bool
    partner_was_fixing: bool
    turn: int
    max_turns: int | None
    escaped: bool
    caught: bool
    legal_actions: tuple[int, ...]


def egocentric_memory(memory: int, player: int) -> int:
    """Absolute killer memory (``MEM_*``) from ``player``'s side (``SAW_*``)."""
    if memory == MEM_NONE:
        return SAW_NOBODY
    mine = {0: (MEM_SAW_ALICE, MEM_BOTH_ALICE), 1: (MEM_SAW_BOB, MEM_BOTH_BOB)}[player]
    if memory in (MEM_SAW_ALICE, MEM_SAW_BOB):
        return SAW_ME if memory == mine[0] else SAW_PARTNER
    return SAW_BOTH_CHASED_ME if memory == mine[1] else SAW_BOTH_CHASED_PARTNER


def absolute_memory(saw: int, player: int) -> int:
    """Inverse of :func:`egocentric_memory`."""
    for memory in (MEM_NONE, MEM_SAW_ALICE, MEM_SAW_BOB, MEM_BOTH_ALICE, MEM_BOTH_BOB):
        if egocentric_memory(memory, player) == saw:
            return memory
    raise ValueError(f"unknown killer memory {saw}")


def observe(game: EscapeGame, state: EscapeState, player: int) -> EscapeView:
    """Build ``player``'s view of ``state``."""
    check_player(player)
    target, _ = killer_decision(game.maze, state)
    intent = INTENT_UNAWARE if target is None else INTENT_ME if target == player else INTENT_PARTNER
    needed = game.config.fixes_needed
    return EscapeView(
        player=player,
        my_room=state.rooms[player],
        partner_room=state.rooms[1 - player],
        killer_room=state.killer,
        killer_intent=intent,
        killer_memory=egocentric_memory(state.memory, player),
        generators=tuple((room, state.fixes[g], needed) for g, room in enumerate(GENERATORS)),
        gate_room=GATE,
        gate_open=game.gate_open(state),
        i_was_fixing=state.fixing[player],
        partner_was_fixing=state.fixing[1 - player],
        turn=state.turn,
        max_turns=game.config.max_turns,
        escaped=game.succeeded(state),
        caught=game.failed(state),
        legal_actions=game.legal_actions(state, player),
    )
