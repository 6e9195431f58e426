"""Many CollabCapture games stepped at once with numpy: the batched engine.

:class:`CaptureVectorEnv` plays ``num_envs`` copies of one configured game under the
batched-engine contract of :mod:`tom_envs.core.vector`: the rules of
:class:`~tom_envs.games.collab_capture.rules.CaptureGame` (both agents choose, the thief plans from
their planned rooms and the doors at the start of the turn, presses toggle doors, capture by
meeting or by swap) on arrays. The thief's move for every (doors, thief room, planned rooms) and
the legal actions for every (doors, room) are tables filled at construction by the rules' own
functions (:func:`~tom_envs.games.collab_capture.rules.thief_plan`, ``legal_actions``). Observations are exactly
:class:`~tom_envs.games.collab_capture.encode.CaptureEncoder`'s, masks the rules' legal actions;
``tests/games/collab_capture/test_vector.py`` checks both, rewards and episode ends step by step
against the PettingZoo env on random, greedy and optimal play in every scenario.

Episodes end at capture or at ``max_turns`` (``terminated``, as in the single env) and restart in
the same step (autoreset); each env runs on its own clock.

Example::

    venv = CaptureVectorEnv(1024, scenario="both_closed")
    obs = venv.reset(seed=0)                      # (1024, 2, 31) float32
    obs, rewards, terminated, truncated = venv.step(sample_legal(venv.action_masks(), rng))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tom_envs.games.collab_capture.encode import OFFSETS, CaptureEncoder
from tom_envs.games.collab_capture.rules import (
    DOORS,
    NUM_ACTIONS,
    ROOMS,
    Action,
    CaptureConfig,
    CaptureGame,
    CaptureState,
    button_door,
    thief_plan,
)
from tom_envs.games.room_vector import RoomPartner, RoomVectorGame

_R = len(ROOMS)
PRESS = int(Action.PRESS)


class CaptureVectorEnv(RoomVectorGame):
    """``num_envs`` CollabCapture games of one configuration, stepped with numpy.

    Args:
        num_envs: batch size B.
        **kwargs: the engine's options (``autoreset``, ``max_cycles``, ``keep_final_obs``,
            ``observations``, ``check_actions``: see :class:`~tom_envs.core.vector.VectorGame`)
            and the keyword arguments of :class:`CaptureConfig` (``scenario``, ``doors_open``,
            ``starts``, ``max_turns``, ``swap_capture``, ``thief_distance``).
    """

    num_actions = NUM_ACTIONS
    state_type = CaptureState

    def __init__(self, num_envs: int, **kwargs: Any) -> None:
        cfg = self._init_rooms(num_envs, kwargs, CaptureConfig, CaptureGame, CaptureEncoder)
        game = self.game
        codes = [(bool(c & 1), bool(c & 2)) for c in range(4)]  # door code -> (door 1-2, 3-4)
        # Legal masks per door code and room.
        self._mask = np.zeros((4, _R + 1, NUM_ACTIONS), dtype=bool)
        # The thief's move for every (door code, thief room, planned rooms), from the rules.
        self._thief = np.zeros((4, _R + 1, _R + 1, _R + 1), dtype=np.int64)
        # Door toggles of one player's action in a room.
        self._toggle = np.zeros((_R + 1, NUM_ACTIONS, len(DOORS)), dtype=bool)
        for room in ROOMS:
            for c, doors in enumerate(codes):
                state = CaptureState(rooms=(room, room), thief=room, doors=doors)
                self._mask[c, room, list(game.legal_actions(state, 0))] = True
                for p0 in ROOMS:
                    for p1 in ROOMS:
                        self._thief[c, room, p0, p1] = thief_plan(cfg, state, (p0, p1))
            door = button_door(room)
            if door is not None:
                self._toggle[room, PRESS, door] = True
        self._moves_to = np.array([a if a in ROOMS else 0 for a in range(NUM_ACTIONS)])
        self._swap = cfg.swap_capture
        self._T = cfg.max_turns
        self._time = np.array([np.float32(min(t / self._T, 1.0)) for t in range(self._T + 1)])
        a, b, t = cfg.start_rooms
        self._start_rooms = np.array([a, b])
        self._start_thief, self._start_doors = t, np.array(cfg.start_doors)
        B = self.num_envs
        self.rooms = np.zeros((B, 2), dtype=np.int64)
        self.thief = np.zeros(B, dtype=np.int64)
        self.doors = np.zeros((B, 2), dtype=bool)
        self.turn = np.zeros(B, dtype=np.int64)
        self.captured = np.zeros(B, dtype=bool)
        self._rows = np.arange(B)
        self._seat_base = (np.arange(2 * B, dtype=np.int64) * self.obs_size).reshape(B, 2)
        self.reset()

    # ------------------------------------------------------------------ contract
    def _start(self, rows: np.ndarray) -> None:
        self.rooms[rows] = self._start_rooms
        self.thief[rows] = self._start_thief
        self.doors[rows] = self._start_doors
        self.turn[rows] = 0
        self.captured[rows] = False

    def _codes(self) -> np.ndarray:
        return self.doors[:, 0] + 2 * self.doors[:, 1].astype(np.int64)

    def _advance(self, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rooms, thief = self.rooms, self.thief
        dest = self._moves_to[a]
        planned = np.where(dest > 0, dest, rooms)
        # The thief plans from the planned rooms and the doors at the start of the turn.
        thief_next = self._thief[self._codes(), thief, planned[:, 0], planned[:, 1]]
        # Presses toggle doors (two presses of one button cancel).
        self.doors ^= self._toggle[rooms[:, 0], a[:, 0]] ^ self._toggle[rooms[:, 1], a[:, 1]]
        captured = (thief_next == planned[:, 0]) | (thief_next == planned[:, 1])
        if self._swap:
            captured |= ((planned[:, 0] == thief) & (thief_next == rooms[:, 0])) | (
                (planned[:, 1] == thief) & (thief_next == rooms[:, 1])
            )
        self.rooms = planned
        self.thief = thief_next
        self.captured = captured
        self.turn += 1
        r = captured.astype(np.float64)
        return np.stack([r, r], axis=1), captured | (self.turn >= self._T)

    def _observe(self) -> np.ndarray:
        B, o = self.num_envs, OFFSETS
        obs = np.zeros((B, 2, self.obs_size), dtype=np.float32)
        flat = obs.reshape(-1)
        rooms = self.rooms - 1  # rooms 1-9 -> one-hot slots 0-8
        idx = np.empty((B, 2, 3), dtype=np.int64)
        idx[:, :, 0] = rooms + o["my_room"]
        idx[:, :, 1] = rooms[:, ::-1] + o["partner_room"]
        idx[:, :, 2] = (self.thief - 1 + o["thief_room"])[:, None]
        flat[(idx + self._seat_base[:, :, None]).reshape(-1)] = 1.0
        doors = o["doors_open"]
        obs[:, :, doors : doors + len(DOORS)] = self.doors[:, None, :]
        obs[:, :, o["time"]] = self._time[self.turn][:, None]
        obs[:, :, o["captured"]] = self.captured[:, None]
        return obs

    def _masks(self) -> np.ndarray:
        return self._mask[self._codes()[:, None], self.rooms]



class CapturePartner(RoomPartner):
    """The ``greedy`` bot (:mod:`tom_envs.games.collab_capture.bots`) playing seats of every env.

    A :data:`~tom_envs.core.vector.Partner` for :class:`~tom_envs.core.vector.GymVectorEnv`: its
    move for every (doors, own room, thief's room) is a table filled by the bot's own
    :func:`~tom_envs.games.collab_capture.bots.greedy_action` on the rules' views, read from the
    engine's state each step. (``optimal`` is a search, not tabulated here.)
    """

    GAME = "CollabCapture"
    engine: CaptureVectorEnv

    def _tabulate(self, engine: CaptureVectorEnv) -> np.ndarray:
        """The move for every (door code, own room, thief's room)."""
        from tom_envs.games.collab_capture.bots import greedy_action

        table = np.zeros((4, _R + 1, _R + 1), dtype=np.int64)
        for c in range(4):
            doors = (bool(c & 1), bool(c & 2))
            for room in ROOMS:
                for thief in ROOMS:
                    state = CaptureState(rooms=(room, room), thief=thief, doors=doors)
                    table[c, room, thief] = greedy_action(engine.game.observe(state, 0))
        return table

    def __call__(self, obs: np.ndarray | None, masks: np.ndarray) -> np.ndarray:
        """``(B, 2)``: the bot's actions in its seats (0 elsewhere)."""
        e = self.engine
        out = np.zeros((e.num_envs, 2), dtype=np.int64)
        code = e._codes()
        for seat in self.seats:
            out[:, seat] = self._table[code, e.rooms[:, seat], e.thief]
        return out
