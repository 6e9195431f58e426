"""Vector rendering of a CollabCapture view (no game logic).

Layout (named pieces, in order)::

    my_room       one-hot over rooms 1-9
    partner_room  one-hot over rooms 1-9
    thief_room    one-hot over rooms 1-9
    doors_open    1 per door (door 1-2, door 3-4)
    time          turn / max_turns
    captured      1 once the thief is caught

``state()`` is player_0's (Alice's) vector: the game has no private information.
"""

from __future__ import annotations

import numpy as np

from tom_envs.core.game import piece_offsets
from tom_envs.games.collab_capture.rules import DOORS, ROOMS, CaptureState
from tom_envs.games.collab_capture.view import CaptureView
from tom_envs.games.room_maze import RoomEncoder

PIECES: tuple[tuple[str, int], ...] = (
    ("my_room", len(ROOMS)),
    ("partner_room", len(ROOMS)),
    ("thief_room", len(ROOMS)),
    ("doors_open", len(DOORS)),
    ("time", 1),
    ("captured", 1),
)
#: Where each piece starts (the batched engine writes at these offsets), and the total size.
OFFSETS, SIZE = piece_offsets(PIECES)


class CaptureEncoder(RoomEncoder[CaptureView, CaptureState]):
    """One-hot rooms, door flags, time and the capture flag (the state: Alice's vector)."""

    obs_size = state_size = SIZE  # 31; the state has the observation's layout (Alice's side)

    def encode(self, view: CaptureView) -> np.ndarray:
        """The view as a float32 vector."""
        out = np.zeros(SIZE, dtype=np.float32)
        o = OFFSETS
        out[o["my_room"] + ROOMS.index(view.my_room)] = 1.0
        out[o["partner_room"] + ROOMS.index(view.partner_room)] = 1.0
        out[o["thief_room"] + ROOMS.index(view.thief_room)] = 1.0
        for i, is_open in enumerate(view.doors_open):
            out[o["doors_open"] + i] = float(is_open)
        out[o["time"]] = min(view.turn / view.max_turns, 1.0)
        out[o["captured"]] = float(view.captured)
        return out
