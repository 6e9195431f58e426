"""Vector rendering of a CollabEscape view (no game logic).

Layout (named pieces, in order)::

    my_room            one-hot over rooms 1-10
    partner_room       one-hot over rooms 1-10
    killer_room        one-hot over rooms 1-10
    killer_intent      one-hot: unaware, coming for me, coming for my partner
    killer_memory      one-hot: saw nobody, me, my partner, both (chased me), both (chased partner)
    generator_fixes    per generator (room 1, room 6): fixes done / fixes needed
    gate_open          1 when both generators are repaired
    fixing             my last action was a fix, my partner's was
    time               turn / max_turns (0 without a limit)
    outcome            escaped, caught

``state()`` is player_0's (Alice's) vector: nothing is private.
"""

from __future__ import annotations

import numpy as np

from tom_envs.core.game import piece_offsets
from tom_envs.games.collab_escape.rules import GENERATORS, ROOMS, EscapeState
from tom_envs.games.collab_escape.view import EscapeView
from tom_envs.games.room_maze import RoomEncoder

PIECES: tuple[tuple[str, int], ...] = (
    ("my_room", len(ROOMS)),
    ("partner_room", len(ROOMS)),
    ("killer_room", len(ROOMS)),
    ("killer_intent", 3),
    ("killer_memory", 5),
    ("generator_fixes", len(GENERATORS)),
    ("gate_open", 1),
    ("fixing", 2),
    ("time", 1),
    ("outcome", 2),
)
#: Where each piece starts (the batched engine writes at these offsets), and the total size.
OFFSETS, SIZE = piece_offsets(PIECES)


class EscapeEncoder(RoomEncoder[EscapeView, EscapeState]):
    """One-hot rooms and killer facts, generator progress, flags and time (the state: Alice's vector)."""

    obs_size = state_size = SIZE  # 46; the state has the observation's layout (Alice's side)

    def encode(self, view: EscapeView) -> np.ndarray:
        """The view as a float32 vector."""
        out = np.zeros(SIZE, dtype=np.float32)
        out[OFFSETS["my_room"] + ROOMS.index(view.my_room)] = 1.0
        out[OFFSETS["partner_room"] + ROOMS.index(view.partner_room)] = 1.0
        out[OFFSETS["killer_room"] + ROOMS.index(view.killer_room)] = 1.0
        out[OFFSETS["killer_intent"] + view.killer_intent] = 1.0
        out[OFFSETS["killer_memory"] + view.killer_memory] = 1.0
        for g, (_, done, needed) in enumerate(view.generators):
            out[OFFSETS["generator_fixes"] + g] = min(done / needed, 1.0)
        out[OFFSETS["gate_open"]] = float(view.gate_open)
        out[OFFSETS["fixing"]] = float(view.i_was_fixing)
        out[OFFSETS["fixing"] + 1] = float(view.partner_was_fixing)
        if view.max_turns is not None:
            out[OFFSETS["time"]] = min(view.turn / view.max_turns, 1.0)
        out[OFFSETS["outcome"]] = float(view.escaped)
        out[OFFSETS["outcome"] + 1] = float(view.caught)
        return out
