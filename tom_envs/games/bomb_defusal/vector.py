"""Many bomb-defusal missions stepped at once with numpy: the batched rollout engine.

:class:`BombVectorEnv` keeps ``num_envs`` missions of one configuration as arrays and applies one
move in every mission per :meth:`~BombVectorEnv.step` (the seat whose turn it is in each mission).
It computes exactly what the scalar rules (:class:`~tom_envs.games.bomb_defusal.rules.BombGame`)
and encoder (:class:`~tom_envs.games.bomb_defusal.encode.BombEncoder`) compute, mission by
mission, bit for bit: ``tests/games/bomb_defusal/test_vector.py`` replays random and bot play
step by step against the PettingZoo env over fixed seed lists. Use it for RL data collection and
for throughput; use the PettingZoo envs for everything else.

What it does not have (by design; the PettingZoo env has them):

* **no Theory-of-Mind probes** and no epistemic tracker (``probes`` is forced to ``"none"``,
  which changes no observation, state or reward);
* **no chat**: ``symbolic_messages=True`` and free-text messages are refused (with
  ``symbolic_messages=False`` nobody can send a message, so the message block of every
  observation is zero, as in the scalar encoder);
* **one map for all missions**: the paper's map, or a random map fixed by ``map_seed``
  (``map="random"`` without ``map_seed`` draws a new map per episode and is refused).

Missions (``missions=``):

* ``"batched"`` (default): the missions of all ending episodes are drawn at once with numpy from
  the engine's generator, from the **same distribution** the rules draw from (a uniform room
  permutation, each bomb's colours uniform without replacement, or with replacement when it has
  more phases than colours, a uniform start room; ``layout="mturk"`` and ``start_room`` as
  configured) but not the same random stream: the episode of env ``i`` is not that of any
  ``reset(seed)``; :meth:`~BombVectorEnv.mission` returns it, and the scalar rules play it
  through :meth:`~tom_envs.games.bomb_defusal.rules.BombGame.state_from_mission`
  (``episode_seeds`` is -1). The tests check the dynamics and observations bit for bit on such
  missions, and the draw's distribution.
* ``"seeded"``: every mission is drawn exactly as ``env.reset(seed=s)`` draws it.
  :meth:`reset` seeds a generator, which draws one episode seed per mission (``episode_seeds``)
  in env order, and again for each new episode of an autoreset, in env order; the mission of
  seed ``s`` comes from the scalar rules' own
  :meth:`~tom_envs.games.bomb_defusal.rules.BombGame.draw_mission`. So ``BombDefusal`` reset
  with ``episode_seeds[i]`` and fed the same actions is the same episode (this also makes an
  RL collector on the engine replay the per-env collector exactly). Drawing costs about 0.1 ms
  of Python per mission, which dominates the engine's time at B = 1024.

It follows the batched-engine contract of :mod:`tom_envs.core.vector` (``(B, n, D)``
observations of every seat, ``(B, n)`` actions with a trailing **no-op** for the seats that wait,
``(B, n)`` rewards, ``terminated`` / ``truncated``, same-step autoreset, masks; adapters for
Gymnasium and batched multi-agent loops). ``current_player`` ``(B,)`` is the seat to act in each
mission. Episodes are not in lockstep: each mission ends when its bombs are gone or its round
limit is reached (``terminated``, as in the single env); the score and round it ended with are in
``final_score`` / ``final_round``. Besides the contract, :meth:`~BombVectorEnv.observe` gives one
seat per env (the acting seat by default: what an RL collector needs, a third of the work),
:meth:`~BombVectorEnv.legal_mask` that seat's mask without the no-op, and
:meth:`~BombVectorEnv.state` the global state (``env.state()``: MAPPO's critic input).

Example::

    venv = BombVectorEnv(1024)
    obs = venv.reset(seed=0)             # (1024, 3, 348) float32: every seat's observation
    venv.current_player                  # (1024,) the seat to act; the others send the no-op
    joint = np.full((1024, 3), venv.noop)
    joint[np.arange(1024), venv.current_player] = actions
    obs, rewards, terminated, truncated = venv.step(joint)   # rewards (1024, 3), shared
    venv.observe(), venv.legal_mask(), venv.state()  # acting seat (1024, 348), (1024, 9); (1024, 130)
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from tom_envs.core.game import agent_names
from tom_envs.core.params import validate_kwargs
from tom_envs.core.vector import VectorGame
from tom_envs.games.bomb_defusal.encode import BombEncoder
from tom_envs.games.bomb_defusal.rules import BombGame
from tom_envs.games.bomb_defusal.state import BombConfig, BombState, Mission
from tom_envs.games.bomb_defusal.view import ResultKind

START, MOVED, INSPECTED, CUT = (int(k) for k in (ResultKind.START, ResultKind.MOVED,
                                                 ResultKind.INSPECTED, ResultKind.CUT))  # fmt: skip
DEFUSED, WRONG_TOOL, EXPLODED, NO_BOMB = (int(k) for k in (
    ResultKind.DEFUSED, ResultKind.WRONG_TOOL, ResultKind.EXPLODED, ResultKind.NO_BOMB))  # fmt: skip
MISSIONS = ("batched", "seeded")
#: Episode seeds are drawn as the suite's drivers draw them (``tom_envs.driver.draw_episode_seed``,
#: a layer above the games): ``int(rng.integers(2**31 - 1))``.
MAX_SEED = 2**31 - 1


class BombVectorEnv(VectorGame):
    """``num_envs`` bomb-defusal missions of one configuration, stepped with numpy.

    Args:
        num_envs: batch size B.
        missions: ``"batched"`` (default: the rules' distribution, drawn with numpy) or
            ``"seeded"`` (each mission exactly as ``reset(seed)`` draws it); see the module
            docstring.
        **kwargs: the engine's options (``autoreset``, ``max_cycles``, ``keep_final_obs``,
            ``observations``, ``check_actions``: see :class:`~tom_envs.core.vector.VectorGame`)
            and the game's keyword arguments (as ``BombDefusal``'s; bounds checked).
    """

    turn_based = True
    current_player: np.ndarray  # (B,): the seat to act in each mission (the array ``turn``)
    encoder: BombEncoder

    def __init__(self, num_envs: int, missions: str = "batched", **kwargs: Any) -> None:
        from tom_envs.games.bomb_defusal.env import PARAMS

        if missions not in MISSIONS:
            raise ValueError(f"missions must be one of {MISSIONS}, got {missions!r}")
        self.missions = missions
        config = self._init_engine(num_envs, dict(kwargs))
        config.pop("render_mode", None)
        cfg = BombConfig(**validate_kwargs(PARAMS, config))
        if cfg.symbolic_messages:
            raise ValueError("symbolic_messages=True is not supported by the batched engine "
                             "(no chat); use the PettingZoo env")  # fmt: skip
        gmap = cfg.fixed_map
        if gmap is None:
            raise ValueError("map='random' needs map_seed in the batched engine (one map for all "
                             "missions); use the PettingZoo env for a new map per episode")  # fmt: skip
        self.config = cfg = replace(cfg, probes="none")
        self.game = BombGame(cfg)
        enc = BombEncoder(cfg)
        self._take_layout(enc)
        n, nb, m, k, P = enc.n, enc.b, enc.m, enc.k, enc.p
        self.n, self.nb, self.m, self.k, self.P = n, nb, m, k, P
        self.agents = tuple(agent_names(k))
        self.num_agents = k
        self.num_game_actions = A = self.game.num_actions
        self.num_actions = A + 1
        self.noop = A
        self.state_size = enc.state_shape[0]
        self.seqlen = np.asarray(cfg.bomb_phases, np.int64)  # the same in every mission
        self.value = (cfg.points_per_phase * self.seqlen).astype(np.float64)
        self.max_score = cfg.max_score
        o = self._o = enc.offsets
        # Constant parts: each seat's observation with its tools and the map; legal moves.
        adjacency = np.zeros((n, n), np.float32)
        for i, nbrs in enumerate(gmap.neighbors):
            adjacency[i, list(nbrs)] = 1.0
        tools = cfg.tool_colors
        self._base = np.zeros((k, self.obs_size), np.float32)
        self._move_mask = np.zeros((k, n, A), bool)
        for p in range(k):
            for slot, q in enumerate([p, *((p + d) % k for d in range(1, k))]):
                for c in tools[q]:
                    self._base[p, o["tools"] + slot * m + c] = 1.0
            self._base[p, o["map"] : o["map"] + n * n] = adjacency.ravel()
            for r in range(n):
                self._move_mask[p, r, [1 + j for j in gmap.neighbors[r]]] = True
                self._move_mask[p, r, [1 + n + c for c in tools[p]]] = True
        self._state_base = np.zeros(self.state_size, np.float32)
        at = enc.state_offsets["map"]
        self._state_base[at : at + n * n] = adjacency.ravel()
        B = self.num_envs
        self._rows = np.arange(B)
        self._bombs = np.arange(nb)
        self._every_env = np.repeat(self._rows, k)  # (B*k,) env of each (env, seat) row
        self._every_seat = np.tile(np.arange(k), B)
        self.episode_seeds = np.zeros(B, np.int64)
        self.start = np.zeros(B, np.int64)
        self.loc = np.zeros((B, k), np.int64)
        self.bomb_room = np.zeros((B, nb), np.int64)
        self.seq = np.zeros((B, nb, P), np.int64)
        self.prog = np.zeros((B, nb), np.int64)
        self.exploded = np.zeros((B, nb), bool)
        self.score = np.zeros(B, np.float64)
        self.round = np.ones(B, np.int64)
        self.turn = np.zeros(B, np.int64)
        self.current_player = self.turn  # the same array, updated in place
        self.result = np.zeros((B, k), np.int64)
        self.intel_known = np.zeros((B, k, nb), bool)
        self.intel_room = np.zeros((B, k, nb), np.int64)
        self.intel_prog = np.zeros((B, k, nb), np.int64)
        self.over = np.zeros(B, bool)
        self.final_score = np.zeros(B, np.float64)
        self.final_round = np.zeros(B, np.int64)
        self.reset()

    # ------------------------------------------------------------------ episodes
    def mission(self, i: int) -> Mission:
        """The mission env ``i`` is playing (the scalar rules play it via ``state_from_mission``)."""
        cfg, gmap = self.config, self.config.fixed_map
        assert gmap is not None
        seqs = tuple(tuple(int(c) for c in self.seq[i, b, :k]) for b, k in enumerate(self.seqlen))
        return Mission(gmap, tuple(int(r) for r in self.bomb_room[i]), seqs, cfg.tool_colors,
                       int(self.start[i]), cfg.points_per_phase)  # fmt: skip

    def _start(self, rows: np.ndarray) -> None:
        """Draw a mission for each env of ``rows`` (in order) and set its start state."""
        if self.missions == "seeded" or self.config.layout == "mturk":
            for i in rows.tolist():
                seed = int(self.rng.integers(MAX_SEED)) if self.missions == "seeded" else -1
                mission = self.game.draw_mission(np.random.default_rng(max(seed, 0)))
                self.episode_seeds[i] = seed
                self.start[i] = mission.start_room
                self.bomb_room[i] = mission.bomb_rooms
                for b, s in enumerate(mission.sequences):
                    self.seq[i, b, : len(s)] = s
        else:
            self._draw_batched(rows)
        self.loc[rows] = self.start[rows, None]
        self.prog[rows] = 0
        self.exploded[rows] = False
        self.score[rows] = 0.0
        self.round[rows] = 1
        self.turn[rows] = 0
        self.result[rows] = START
        self.intel_known[rows] = False
        self.over[rows] = False

    def start_state(self, i: int) -> BombState:
        """Env ``i``'s mission in the rules engine (``BombGame.state_from_mission``)."""
        return self.game.state_from_mission(self.mission(i))

    def _draw_batched(self, rows: np.ndarray) -> None:
        """``missions="batched"``: the rules' mission distribution, drawn with numpy."""
        cfg, rng, R = self.config, self.rng, len(rows)
        n, m = self.n, self.m
        perm = np.argsort(rng.random((R, n)), axis=1)
        self.bomb_room[rows] = perm[:, np.arange(self.nb) % n]
        for b, k in enumerate(cfg.bomb_phases):
            if k <= m:
                self.seq[rows, b, :k] = np.argsort(rng.random((R, m)), axis=1)[:, :k]
            else:
                self.seq[rows, b, :k] = rng.integers(m, size=(R, k))
        if cfg.start_room is None:
            self.start[rows] = rng.integers(n, size=R)
        else:
            self.start[rows] = cfg.fixed_map.index(cfg.start_room)  # type: ignore[union-attr]
        self.episode_seeds[rows] = -1

    # ------------------------------------------------------------------ dynamics
    def active(self) -> np.ndarray:
        """``(B, bombs)``: neither defused nor exploded."""
        return (self.prog < self.seqlen) & ~self.exploded

    def _here(self, room: np.ndarray, envs: np.ndarray | None = None) -> np.ndarray:
        """Active bombs in ``room`` (one room index per row of ``envs``, default every env)."""
        if envs is None:
            return (self.bomb_room == room[:, None]) & self.active()
        return (self.bomb_room[envs] == room[:, None]) & self.active()[envs]

    def legal_mask(self) -> np.ndarray:
        """``(B, game actions)``: the acting seat's legal actions (the single env's mask, as
        bool; no no-op column)."""
        rows, p = self._rows, self.turn
        room = self.loc[rows, p]
        mask = self._move_mask[p, room]
        mask[:, 0] = self._here(room).any(1)
        mask[self.over] = False
        return mask

    def _masks(self) -> np.ndarray:
        B, k = self.num_envs, self.k
        masks = np.zeros((B, k, self.num_actions), bool)
        masks[:, :, self.noop] = True
        masks[self._rows, self.turn, self.noop] = False
        masks[self._rows, self.turn, : self.noop] = self.legal_mask()
        return masks

    def _advance(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Apply each env's acting seat's action; team rewards ``(B, n)`` and the ends."""
        B, n = self.num_envs, self.n
        rows, p = self._rows, self.turn.copy()
        a = actions[rows, p].astype(np.int64)
        room = self.loc[rows, p]
        here = self._here(room)
        has, first = here.any(1), here.argmax(1)
        kind = np.full(B, MOVED, np.int64)
        points = np.zeros(B)
        shaping = np.zeros(B)
        # Moves.
        go = (a >= 1) & (a <= n)
        self.loc[rows[go], p[go]] = a[go] - 1
        # Inspect, tools: the active bomb with the lowest id in my room.
        cur = self.prog[rows, first]
        learn = a == 0
        kind[learn] = INSPECTED
        new_prog = cur.copy()
        use = (a > n) & (a < self.noop)
        kind[use & ~has] = NO_BOMB
        tool = use & has
        colour = a - 1 - n
        right = tool & (self.seq[rows, first, np.minimum(cur, self.P - 1)] == colour)
        self.prog[rows[right], first[right]] += 1
        new_prog[right] += 1
        defused = right & (new_prog == self.seqlen[first])
        kind[right] = CUT
        kind[defused] = DEFUSED
        points[defused] = self.value[first[defused]]
        wrong = tool & ~right
        if self.config.wrong_tool == "explode":
            self.exploded[rows[wrong], first[wrong]] = True
            new_prog[wrong] = self.seqlen[first[wrong]]  # nothing remains of an exploded bomb
            kind[wrong] = EXPLODED
            if self.config.shaping:
                shaping[wrong] = -1.0
        else:
            kind[wrong] = WRONG_TOOL
        if self.config.shaping:
            shaping[right] = 1.0
        learn |= tool
        self.intel_known[rows[learn], p[learn], first[learn]] = True
        self.intel_room[rows[learn], p[learn], first[learn]] = room[learn]
        self.intel_prog[rows[learn], p[learn], first[learn]] = new_prog[learn]
        self.result[rows, p] = kind
        self.score += points
        # Turn order and the end.
        turn = p + 1
        wrap = turn == self.k
        turn[wrap] = 0
        rnd = self.round + wrap
        done = ~self.active().any(1) | (rnd > self.config.max_rounds)
        self.round[:] = np.where(done, self.round, rnd)
        self.turn[:] = turn
        self.over[:] = done
        if done.any():
            self.final_score[done] = self.score[done]
            self.final_round[done] = self.round[done]
        reward = points + shaping
        return np.repeat(reward[:, None], self.k, axis=1), done

    # ------------------------------------------------------------------ observations
    def _observe(self) -> np.ndarray:
        """``(B, n, D)``: every seat's observation."""
        B, k = self.num_envs, self.k
        return self._encode(self._every_env, self._every_seat).reshape(B, k, self.obs_size)

    def observe(self, seat: np.ndarray | None = None) -> np.ndarray:
        """``(B, obs_size)``: the observation of ``seat`` (default: the seat to act) in each env,
        exactly ``BombEncoder.encode`` of that seat's view."""
        p = self.turn if seat is None else np.asarray(seat, np.int64)
        return self._encode(self._rows, p)

    def _encode(self, envs: np.ndarray, p: np.ndarray) -> np.ndarray:
        """Observations of seat ``p[j]`` in env ``envs[j]``, ``(len(envs), D)``."""
        n, k, m, P, nb = self.n, self.k, self.m, self.P, self.nb
        o, D = self._o, self.obs_size
        out = self._base[p]  # a new array holding tools and map
        off = np.arange(len(envs)) * D
        locs = self.loc[envs]  # (R, k)
        room = locs[np.arange(len(envs)), p]
        ones = [off + o["my_room"] + room, off + o["last_result"] + self.result[envs, p]]
        out[:, o["round"]] = self.round[envs] / self.config.max_rounds
        out[:, o["score"]] = self.score[envs] / max(self.max_score, 1)
        rr = np.arange(len(envs))
        for d in range(1, k):
            r = locs[rr, (p + d) % k]
            same = r == room
            seen = r if self.config.teammate_locations else np.where(same, r, n)
            ones.append(off + o["teammate_rooms"] + (d - 1) * (n + 1) + seen)
            ones.append((off + o["room_agents"] + d - 1)[same])
        out[:, o["room_bombs"] : o["room_bombs"] + nb] = self._here(room, envs)
        known = self.intel_known[envs, p]  # (R, nb)
        if known.any():
            size, io = self.encoder.intel_size, self.encoder.intel_offsets
            iprog, iroom = self.intel_prog[envs, p], self.intel_room[envs, p]
            at = off[:, None] + o["intel"] + self._bombs * size  # (R, nb)
            ones.append((at + io["known"])[known])
            ones.append((at + io["inactive"])[known & (iprog >= self.seqlen)])
            ones.append((at + io["room"] + iroom)[known])
            for s in range(P):
                idx = iprog + s
                valid = known & (idx < self.seqlen)
                colour = self.seq[envs[:, None], self._bombs, np.minimum(idx, P - 1)]
                ones.append((at + io["sequence"] + s * m + colour)[valid])
        out.reshape(-1)[np.concatenate(ones)] = 1.0
        return out

    def state(self) -> np.ndarray:
        """``(B, state_size)``: exactly ``BombEncoder.encode_state`` of each env's state."""
        rows, B = self._rows, self.num_envs
        n, k, m, P = self.n, self.k, self.m, self.P
        S = self.state_size
        so, bo = self.encoder.state_offsets, self.encoder.bomb_state_offsets
        out = np.tile(self._state_base, (B, 1))
        off = rows * S
        ones = [off[:, None] + so["rooms"] + np.arange(k) * n + self.loc]
        live = ~self.over
        ones.append((off + so["turn"] + self.turn)[live])
        out[:, so["round"]] = self.round / self.config.max_rounds
        out[:, so["score"]] = self.score / max(self.max_score, 1)
        b_at = off[:, None] + so["bombs"] + self._bombs * self.encoder.bomb_state_size  # (B, nb)
        ones.append(b_at + bo["room"] + self.bomb_room)
        active = self.active()
        for s in range(P):
            idx = self.prog + s
            valid = (idx < self.seqlen) & ~self.exploded
            colour = self.seq[rows[:, None], self._bombs, np.minimum(idx, P - 1)]
            ones.append((b_at + bo["sequence"] + s * m + colour)[valid])
        status = np.where(active, 0, np.where(self.exploded, 2, 1))
        ones.append(b_at + bo["status"] + status)
        out.reshape(-1)[np.concatenate([x.ravel() for x in ones])] = 1.0
        return out
