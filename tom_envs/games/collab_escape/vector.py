"""Many CollabEscape games stepped at once with numpy: the batched engine.

:class:`EscapeVectorEnv` plays ``num_envs`` copies of one configured game under the
batched-engine contract of :mod:`tom_envs.core.vector`: the rules of
:class:`~tom_envs.games.collab_escape.rules.EscapeGame` on arrays. The killer's decision for every
(killer room, players' rooms, memory) and the legal actions for every (room, generator repaired)
are tables filled at construction by the rules' own functions
(:func:`~tom_envs.games.collab_escape.rules.killer_decision`, ``legal_actions``); generator
progress, the roaming killer's move, capture and escape are computed on arrays as the rules
compute them. Observations are exactly
:class:`~tom_envs.games.collab_escape.encode.EscapeEncoder`'s.

Chance: a roaming killer moves to a uniformly random neighbour, drawn from the engine's generator
(one uniform per env and step), so a batch does not replay a single env's seeded episodes draw for
draw; ``tests/games/collab_escape/test_vector.py`` checks every step against the rules' list of
outcomes (the engine's next state must be one of them, and everything but the killer's roaming
room is determined), the observations, masks, rewards and ends against the PettingZoo env, and
the roaming draws' frequencies against uniform.

Episodes end when a player escapes or is caught, or at ``max_turns`` (``terminated``, as in the
single env) and restart in the same step (autoreset); each env runs on its own clock.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tom_envs.games.collab_escape.encode import OFFSETS, EscapeEncoder
from tom_envs.games.collab_escape.rules import (
    GATE,
    GENERATORS,
    MEM_NONE,
    NUM_ACTIONS,
    OUTCOME_CAUGHT,
    OUTCOME_ESCAPED,
    OUTCOME_RUNNING,
    ROOMS,
    Action,
    EscapeConfig,
    EscapeGame,
    EscapeState,
    killer_decision,
)
from tom_envs.games.collab_escape.view import (
    INTENT_ME,
    INTENT_PARTNER,
    INTENT_UNAWARE,
    egocentric_memory,
)
from tom_envs.games.room_vector import RoomPartner, RoomVectorGame

_R = len(ROOMS)
FIX = int(Action.FIX)
_MEMS = 5


class EscapeVectorEnv(RoomVectorGame):
    """``num_envs`` CollabEscape games of one configuration, stepped with numpy.

    Args:
        num_envs: batch size B.
        **kwargs: the engine's options (``autoreset``, ``max_cycles``, ``keep_final_obs``,
            ``observations``, ``check_actions``: see :class:`~tom_envs.core.vector.VectorGame`)
            and the keyword arguments of :class:`EscapeConfig` (``scenario``, ``map``, ``starts``,
            ``max_turns``, ``fixes_needed``).
    """

    num_actions = NUM_ACTIONS
    state_type = EscapeState

    def __init__(self, num_envs: int, **kwargs: Any) -> None:
        cfg = self._init_rooms(num_envs, kwargs, EscapeConfig, EscapeGame, EscapeEncoder)
        game = self.game
        maze = cfg.maze
        self._needed = need = cfg.fixes_needed
        # The killer's decision (target: -1 none, 0 Alice, 1 Bob; new memory), from the rules.
        shape = (_R + 1, _R + 1, _R + 1, _MEMS)
        self._target = np.full(shape, -1, dtype=np.int64)
        self._memory = np.zeros(shape, dtype=np.int64)
        for k in ROOMS:
            for r0 in ROOMS:
                for r1 in ROOMS:
                    for m in range(_MEMS):
                        t, mem = killer_decision(maze, EscapeState((r0, r1), k, memory=m))
                        self._target[k, r0, r1, m] = -1 if t is None else t
                        self._memory[k, r0, r1, m] = mem
        # Legal actions per (room, the generator in this room is repaired).
        self._mask = np.zeros((_R + 1, 2, NUM_ACTIONS), dtype=bool)
        for room in ROOMS:
            for repaired in (0, 1):
                fixes = tuple(need if (repaired and room == g) else 0 for g in GENERATORS)
                state = EscapeState((room, room), room, fixes=fixes)  # type: ignore[arg-type]
                self._mask[room, repaired, list(game.legal_actions(state, 0))] = True
        self._gen_of = np.full(_R + 1, -1, dtype=np.int64)
        for g, room in enumerate(GENERATORS):
            self._gen_of[room] = g
        width = max(len(maze.out(r)) for r in ROOMS)
        self._out = np.zeros((_R + 1, width), dtype=np.int64)
        self._count = np.ones(_R + 1, dtype=np.int64)
        for r in ROOMS:
            self._out[r, : len(maze.out(r))] = maze.out(r)
            self._count[r] = len(maze.out(r))
        self._moves_to = np.array([a if a in ROOMS else 0 for a in range(NUM_ACTIONS)])
        # Observation tables.
        self._T = cfg.max_turns
        self._time = (
            np.zeros(1, dtype=np.float32)
            if self._T is None
            else np.array([np.float32(min(t / self._T, 1.0)) for t in range(self._T + 1)])
        )
        self._fixv = np.array([np.float32(min(f / need, 1.0)) for f in range(need + 1)])
        self._ego = np.array([[egocentric_memory(m, p) for p in (0, 1)] for m in range(_MEMS)])
        self._intent = np.array(  # [target + 1, player]
            [[INTENT_UNAWARE] * 2, [INTENT_ME, INTENT_PARTNER], [INTENT_PARTNER, INTENT_ME]]
        )
        a, b, k = cfg.start_rooms
        self._starts = (np.array([a, b]), k)
        B = self.num_envs
        self.rooms = np.zeros((B, 2), dtype=np.int64)
        self.killer = np.zeros(B, dtype=np.int64)
        self.fixes = np.zeros((B, 2), dtype=np.int64)
        self.memory = np.zeros(B, dtype=np.int64)
        self.fixing = np.zeros((B, 2), dtype=bool)
        self.turn = np.zeros(B, dtype=np.int64)
        self.outcome = np.zeros(B, dtype=np.int64)
        self._rows = np.arange(B)
        self._dec: tuple[np.ndarray, np.ndarray] | None = None
        self._target_flat, self._memory_flat = self._target.reshape(-1), self._memory.reshape(-1)
        self._bob_tail = np.array([0, 1, 2, 4, 3, 5, 6, 7])
        tail = ("generator_fixes", "generator_fixes", "gate_open", "fixing", "fixing", "time",
                "outcome", "outcome")  # fmt: skip
        assert [OFFSETS[k] + (i in (1, 4, 7)) for i, k in enumerate(tail)] == list(
            range(OFFSETS["generator_fixes"], OFFSETS["generator_fixes"] + 8)
        ), "the observation tail must be contiguous in this order"
        self._seat_base = (np.arange(2 * B, dtype=np.int64) * self.obs_size).reshape(B, 2)
        self.reset()

    # ------------------------------------------------------------------ contract
    def _start(self, rows: np.ndarray) -> None:
        self.rooms[rows] = self._starts[0]
        self.killer[rows] = self._starts[1]
        self.fixes[rows] = 0
        self.memory[rows] = MEM_NONE
        self.fixing[rows] = False
        self.turn[rows] = 0
        self.outcome[rows] = OUTCOME_RUNNING
        self._dec = None

    def _decision(self) -> tuple[np.ndarray, np.ndarray]:
        """The killer's decision this turn (target, new memory), cached until the state changes."""
        if self._dec is None:
            n = _R + 1
            idx = (
                (self.killer * n + self.rooms[:, 0]) * n + self.rooms[:, 1]
            ) * _MEMS + self.memory
            self._dec = (self._target_flat[idx], self._memory_flat[idx])
        return self._dec

    def _advance(self, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rooms, killer, need = self.rooms, self.killer, self._needed
        target, memory = self._decision()
        dest = self._moves_to[a]
        moved = np.where(dest > 0, dest, rooms)
        fix = a == FIX
        fixes = self.fixes
        for g, groom in enumerate(GENERATORS):
            at = rooms == groom
            fixers = (fix[:, 0] & at[:, 0]).astype(np.int64) + (fix[:, 1] & at[:, 1])
            f = fixes[:, g]
            fixes[:, g] = np.where(
                f >= need, f, np.where(fixers == 0, 0, np.minimum(need, f + fixers))
            )
        gate = (fixes[:, 0] >= need) & (fixes[:, 1] >= need)
        u = self.rng.random(self.num_envs)
        roam = self._out[killer, (u * self._count[killer]).astype(np.int64)]
        chase = rooms[self._rows, np.maximum(target, 0)]  # the chased player's current room
        killer_next = np.where(target >= 0, chase, roam)
        caught = (killer_next == moved[:, 0]) | (killer_next == moved[:, 1])
        escaped = ~caught & gate & ((moved[:, 0] == GATE) | (moved[:, 1] == GATE))
        self._dec = None
        self.rooms = moved
        self.killer = killer_next
        self.memory = memory
        self.fixing = fix
        self.turn += 1
        self.outcome = np.where(caught, OUTCOME_CAUGHT, np.where(escaped, OUTCOME_ESCAPED, 0))
        done = caught | escaped
        if self._T is not None:
            done = done | (self.turn >= self._T)
        r = escaped.astype(np.float64)
        return np.stack([r, r], axis=1), done

    def _observe(self) -> np.ndarray:
        B = self.num_envs
        obs = np.zeros((B, 2, self.obs_size), dtype=np.float32)
        target, _ = self._decision()
        rooms = self.rooms - 1
        idx = np.empty((B, 2, 5), dtype=np.int64)
        idx[:, :, 0] = rooms + OFFSETS["my_room"]
        idx[:, :, 1] = rooms[:, ::-1] + OFFSETS["partner_room"]
        idx[:, :, 2] = (self.killer - 1 + OFFSETS["killer_room"])[:, None]
        idx[:, :, 3] = self._intent[target + 1] + OFFSETS["killer_intent"]
        idx[:, :, 4] = self._ego[self.memory] + OFFSETS["killer_memory"]
        obs.reshape(-1)[(idx + self._seat_base[:, :, None]).reshape(-1)] = 1.0
        # The tail, generator_fixes .. outcome (contiguous), Alice's side; Bob's swaps "fixing".
        fixes, fixing = self.fixes, self.fixing
        fv = self._fixv[fixes]
        tail = np.stack(
            [
                fv[:, 0],
                fv[:, 1],
                (fixes[:, 0] >= self._needed) & (fixes[:, 1] >= self._needed),
                fixing[:, 0],
                fixing[:, 1],
                self._time[self.turn] if self._T is not None else np.zeros(B, np.float32),
                self.outcome == OUTCOME_ESCAPED,
                self.outcome == OUTCOME_CAUGHT,
            ],
            axis=1,
            dtype=np.float32,
        )
        g = OFFSETS["generator_fixes"]
        obs[:, 0, g : g + 8] = tail
        obs[:, 1, g : g + 8] = tail[:, self._bob_tail]
        return obs

    def _masks(self) -> np.ndarray:
        g = self._gen_of[self.rooms]  # (B, 2): generator index in each player's room, or -1
        fixes = np.take_along_axis(self.fixes, np.maximum(g, 0), axis=1)
        repaired = (g >= 0) & (fixes >= self._needed)
        return self._mask[self.rooms, repaired.astype(np.int64)]



class EscapePartner(RoomPartner):
    """The ``greedy`` bot (:mod:`tom_envs.games.collab_escape.bots`) playing seats of every env.

    A :data:`~tom_envs.core.vector.Partner` for :class:`~tom_envs.core.vector.GymVectorEnv`: its
    move for every (own room, generator 1 repaired, generator 2 repaired), all it reads, is a table
    filled by the bot's own :func:`~tom_envs.games.collab_escape.bots.greedy_action` on the rules'
    views. (``optimal`` is a search, not tabulated here.)
    """

    GAME = "CollabEscape"
    engine: EscapeVectorEnv

    def _tabulate(self, engine: EscapeVectorEnv) -> np.ndarray:
        """The move for every (own room, generator 1 repaired, generator 2 repaired)."""
        from tom_envs.games.collab_escape.bots import greedy_action

        need = engine.config.fixes_needed
        table = np.zeros((_R + 1, 2, 2), dtype=np.int64)
        for room in ROOMS:
            for r0 in (0, 1):
                for r1 in (0, 1):
                    state = EscapeState((room, room), room, fixes=(need * r0, need * r1))
                    view = engine.game.observe(state, 0)
                    table[room, r0, r1] = greedy_action(view, engine.game.maze)
        return table

    def __call__(self, obs: np.ndarray | None, masks: np.ndarray) -> np.ndarray:
        """``(B, 2)``: the bot's actions in its seats (0 elsewhere)."""
        e = self.engine
        out = np.zeros((e.num_envs, 2), dtype=np.int64)
        need = e._needed
        rep0, rep1 = (
            (e.fixes[:, 0] >= need).astype(np.int64),
            (e.fixes[:, 1] >= need).astype(np.int64),
        )
        for seat in self.seats:
            out[:, seat] = self._table[e.rooms[:, seat], rep0, rep1]
        return out
