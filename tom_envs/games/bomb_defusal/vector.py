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

* ``"seeded"`` (default): every mission is drawn exactly as ``env.reset(seed=s)`` draws it.
  :meth:`reset` seeds a generator, which draws one episode seed per mission (``episode_seeds``)
  in env order, and again for each new episode of an autoreset, in env order; the mission of
  seed ``s`` comes from the scalar rules' own
  :meth:`~tom_envs.games.bomb_defusal.rules.BombGame.draw_mission`. So ``BombDefusal`` reset
  with ``episode_seeds[i]`` and fed the same actions is the same episode. Drawing costs about
  0.1 ms of Python per mission, which dominates the engine's time at B = 1024.
* ``"batched"``: the missions of all ending episodes are drawn at once with numpy from the
  batch's generator, from the **same distribution** the rules draw from (a uniform room
  permutation, each bomb's colours uniform without replacement, or with replacement when it has
  more phases than colours, a uniform start room; ``layout="mturk"`` and ``start_room`` as
  configured) but not the same random stream: the episode of env ``i`` is not that of any
  ``reset(seed)``; :meth:`mission` returns it, and the scalar rules play it through
  :meth:`~tom_envs.games.bomb_defusal.rules.BombGame.state_from_mission` (``episode_seeds`` is
  -1). The tests check the dynamics and observations bit for bit on such missions and the
  draw's distribution.

With ``autoreset=True`` (default) a step that ends a mission returns ``done[i] = True``, the
finished episode's score and round in ``final_score`` / ``final_round``, and the observation of
the new mission (as SB3's vector envs do). Episodes are not in lockstep: each mission ends when
its bombs are gone or its round limit is reached. With ``autoreset=False`` a finished mission
stays as it ended (``over[i]``; its actions are ignored, its rewards are 0) until :meth:`reset`.

Example::

    venv = BombVectorEnv(1024)
    obs = venv.reset(seed=0)             # (1024, 348) float32: the acting seat's observation
    venv.turn, venv.action_mask          # (1024,) seat to act, (1024, 9) its legal actions
    obs, rewards, done = venv.step(actions)  # actions (1024,); rewards shared by the team
    venv.state()                         # (1024, 130) the global state (centralised critics)
    venv.observe(seat=np.zeros(1024, int))   # any seat's observation
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from tom_envs.core.params import validate_kwargs
from tom_envs.driver import draw_episode_seed
from tom_envs.games.bomb_defusal.encode import BombEncoder
from tom_envs.games.bomb_defusal.rules import BombGame
from tom_envs.games.bomb_defusal.state import BombConfig, Mission
from tom_envs.games.bomb_defusal.view import ResultKind

START, MOVED, INSPECTED, CUT = (int(k) for k in (ResultKind.START, ResultKind.MOVED,
                                                 ResultKind.INSPECTED, ResultKind.CUT))
DEFUSED, WRONG_TOOL, EXPLODED, NO_BOMB = (int(k) for k in (
    ResultKind.DEFUSED, ResultKind.WRONG_TOOL, ResultKind.EXPLODED, ResultKind.NO_BOMB))
OBSERVATIONS = ("acting", "none")
MISSIONS = ("seeded", "batched")


class BombVectorEnv:
    """``num_envs`` bomb-defusal missions of one configuration, stepped with numpy.

    Args:
        num_envs: batch size B.
        autoreset: start a new mission in an env as soon as its mission ends.
        observations: ``"acting"`` (default): :meth:`reset` and :meth:`step` return the
            observation of the seat to act in each env, ``(B, obs_size)``; ``"none"``: the
            dynamics only (``None`` is returned; :meth:`observe` still works).
        missions: ``"seeded"`` (each mission exactly as ``reset(seed)`` draws it) or
            ``"batched"`` (the same distribution, drawn with numpy; see the module docstring).
        **config: the game's keyword arguments (as ``BombDefusal``'s; bounds checked).
    """

    def __init__(
        self,
        num_envs: int,
        autoreset: bool = True,
        observations: str = "acting",
        missions: str = "seeded",
        **config: Any,
    ) -> None:
        from tom_envs.games.bomb_defusal.env import PARAMS

        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        if observations not in OBSERVATIONS:
            raise ValueError(f"observations must be one of {OBSERVATIONS}, got {observations!r}")
        if missions not in MISSIONS:
            raise ValueError(f"missions must be one of {MISSIONS}, got {missions!r}")
        self.missions = missions
        cfg = BombConfig(**validate_kwargs(PARAMS, config))
        if cfg.symbolic_messages:
            raise ValueError("symbolic_messages=True is not supported by the batched engine "
                             "(no chat); use the PettingZoo env")  # fmt: skip
        if cfg.fixed_map is None:
            raise ValueError("map='random' needs map_seed in the batched engine (one map for all "
                             "missions); use the PettingZoo env for a new map per episode")  # fmt: skip
        self.config = cfg = replace(cfg, probes="none")
        self.game = BombGame(cfg)
        self.encoder = enc = BombEncoder(cfg)
        self.num_envs, self.autoreset, self.observations = num_envs, autoreset, observations
        gmap = cfg.fixed_map
        n, nb, m, k, P = enc.n, enc.b, enc.m, enc.k, enc.p
        self.n, self.nb, self.m, self.k, self.P = n, nb, m, k, P
        self.num_agents, self.num_actions = k, self.game.num_actions
        self.obs_size, self.state_size = enc.observation_shape[0], enc.state_shape[0]
        self.seqlen = np.asarray(cfg.bomb_phases, np.int64)  # the same in every mission
        self.value = (cfg.points_per_phase * self.seqlen).astype(np.float64)
        self.max_score = cfg.max_score
        o = enc.offsets
        self._o = o
        # Constant parts: each seat's observation with its tools and the map; legal moves.
        adjacency = np.zeros((n, n), np.float32)
        for i, nbrs in enumerate(gmap.neighbors):
            adjacency[i, list(nbrs)] = 1.0
        tools = cfg.tool_colors
        self._base = np.zeros((k, self.obs_size), np.float32)
        self._move_mask = np.zeros((k, n, self.num_actions), bool)
        for p in range(k):
            for slot, q in enumerate([p, *((p + d) % k for d in range(1, k))]):
                for c in tools[q]:
                    self._base[p, o["tools"] + slot * m + c] = 1.0
            self._base[p, o["map"] : o["map"] + n * n] = adjacency.ravel()
            for r in range(n):
                self._move_mask[p, r, [1 + j for j in gmap.neighbors[r]]] = True
                self._move_mask[p, r, [1 + n + c for c in tools[p]]] = True
        self._state_base = np.zeros(self.state_size, np.float32)
        self._state_base[-n * n :] = adjacency.ravel()
        self._rows = np.arange(num_envs)
        self._bombs = np.arange(nb)
        self.rng = np.random.default_rng()
        self.reset()

    # ------------------------------------------------------------------ episodes
    def reset(self, seed: int | None = None) -> np.ndarray | None:
        """New missions in every env (``seed`` seeds the episode-seed generator)."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        B, k, nb = self.num_envs, self.k, self.nb
        self.episode_seeds = np.zeros(B, np.int64)
        self.loc = np.zeros((B, k), np.int64)
        self.start = np.zeros(B, np.int64)
        self.bomb_room = np.zeros((B, nb), np.int64)
        self.seq = np.zeros((B, nb, self.P), np.int64)
        self.prog = np.zeros((B, nb), np.int64)
        self.exploded = np.zeros((B, nb), bool)
        self.score = np.zeros(B, np.float64)
        self.round = np.ones(B, np.int64)
        self.turn = np.zeros(B, np.int64)
        self.time = np.zeros(B, np.int64)
        self.result = np.zeros((B, k), np.int64)
        self.intel_known = np.zeros((B, k, nb), bool)
        self.intel_room = np.zeros((B, k, nb), np.int64)
        self.intel_prog = np.zeros((B, k, nb), np.int64)
        self.over = np.zeros(B, bool)
        self.final_score = np.zeros(B, np.float64)
        self.final_round = np.zeros(B, np.int64)
        self._new_episodes(self._rows)
        return self._after_step()

    def mission(self, i: int) -> Mission:
        """The mission env ``i`` is playing (the scalar rules play it via ``state_from_mission``)."""
        cfg, gmap = self.config, self.config.fixed_map
        assert gmap is not None
        seqs = tuple(tuple(int(c) for c in self.seq[i, b, :k]) for b, k in enumerate(self.seqlen))
        return Mission(gmap, tuple(int(r) for r in self.bomb_room[i]), seqs, cfg.tool_colors,
                       int(self.start[i]), cfg.points_per_phase)  # fmt: skip

    def _new_episodes(self, rows: np.ndarray) -> None:
        """Draw a mission for each env of ``rows`` (in order) and set its start state."""
        if self.missions == "seeded" or self.config.layout == "mturk":
            for i in rows.tolist():
                seed = draw_episode_seed(self.rng) if self.missions == "seeded" else -1
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
        self.time[rows] = 0
        self.result[rows] = START
        self.intel_known[rows] = False
        self.over[rows] = False

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

    def _here(self, room: np.ndarray) -> np.ndarray:
        """``(B, bombs)``: active bombs in ``room`` (one room index per env)."""
        return (self.bomb_room == room[:, None]) & self.active()

    def legal_mask(self) -> np.ndarray:
        """``(B, num_actions)`` legal actions of the seat to act (all false once over)."""
        rows, p = self._rows, self.turn
        room = self.loc[rows, p]
        mask = self._move_mask[p, room]
        mask[:, 0] = self._here(room).any(1)
        mask[self.over] = False
        return mask

    def step(self, actions: np.ndarray) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
        """Apply each env's acting seat's action (``(B,)`` ints).

        Returns the observations (of the new missions where one ended, with ``autoreset``), the
        team rewards ``(B,)`` (the same for every seat: points, plus the shaping if configured)
        and ``done`` ``(B,)``. An illegal action raises ``ValueError`` naming the envs.
        """
        a = np.asarray(actions)
        B, n = self.num_envs, self.n
        if a.shape != (B,) or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions must be {B} integers, got shape {a.shape} {a.dtype}")
        live = ~self.over  # without autoreset, a finished mission ignores its action
        a = np.where(live, a, -1).astype(np.int64)
        legal = self.action_mask[self._rows, np.clip(a, 0, self.num_actions - 1)]
        legal &= (a >= 0) & (a < self.num_actions)
        legal |= ~live
        if not legal.all():
            bad = np.flatnonzero(~legal)[:5].tolist()
            raise ValueError(f"illegal actions in envs {bad} (e.g. env {bad[0]}: action "
                             f"{int(a[bad[0]])}; legal: {np.flatnonzero(self.action_mask[bad[0]]).tolist()})")  # fmt: skip
        rows, p = self._rows, self.turn
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
        use = a > n
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
        self.result[rows[live], p[live]] = kind[live]
        self.score += points
        # Turn order and the end.
        self.time += live
        turn = np.where(live, p + 1, p)
        wrap = turn == self.k
        turn[wrap] = 0
        rnd = self.round + wrap
        done = live & (~self.active().any(1) | (rnd > self.config.max_rounds))
        self.round = np.where(done | ~live, self.round, rnd)
        self.turn = turn
        self.over = done | ~live
        if done.any():
            self.final_score[done] = self.score[done]
            self.final_round[done] = self.round[done]
            if self.autoreset:
                self._new_episodes(np.flatnonzero(done))
        return self._after_step(), points + shaping, done

    def _after_step(self) -> np.ndarray | None:
        self.action_mask = self.legal_mask()
        return self.observe() if self.observations == "acting" else None

    # ------------------------------------------------------------------ observations
    def observe(self, seat: np.ndarray | None = None) -> np.ndarray:
        """``(B, obs_size)``: the observation of ``seat`` (default: the seat to act) in each env,
        exactly ``BombEncoder.encode`` of that seat's view."""
        rows, B = self._rows, self.num_envs
        p = self.turn if seat is None else np.asarray(seat, np.int64)
        n, k, m, P, nb = self.n, self.k, self.m, self.P, self.nb
        o, D = self._o, self.obs_size
        out = self._base[p]  # (B, D) copy: tools and map
        off = rows * D
        room = self.loc[rows, p]
        ones = [off + o["my_room"] + room, off + o["last_result"] + self.result[rows, p]]
        out[:, o["round"]] = self.round / self.config.max_rounds
        out[:, o["score"]] = self.score / max(self.max_score, 1)
        for d in range(1, k):
            r = self.loc[rows, (p + d) % k]
            same = r == room
            seen = r if self.config.teammate_locations else np.where(same, r, n)
            ones.append(off + o["teammate_rooms"] + (d - 1) * (n + 1) + seen)
            ones.append((off + o["room_agents"] + d - 1)[same])
        out[:, o["room_bombs"] : o["room_bombs"] + nb] = self._here(room)
        known = self.intel_known[rows, p]  # (B, nb)
        if known.any():
            size = self.encoder.intel_size
            iprog, iroom = self.intel_prog[rows, p], self.intel_room[rows, p]
            at = off[:, None] + o["intel"] + np.arange(nb) * size  # (B, nb)
            ones.append(at[known])
            ones.append((at + 1)[known & (iprog >= self.seqlen)])
            ones.append((at + 2 + iroom)[known])
            for s in range(P):
                idx = iprog + s
                valid = known & (idx < self.seqlen)
                colour = self.seq[rows[:, None], self._bombs, np.minimum(idx, P - 1)]
                ones.append((at + 2 + n + s * m + colour)[valid])
        out.reshape(-1)[np.concatenate(ones)] = 1.0
        return out

    def state(self) -> np.ndarray:
        """``(B, state_size)``: exactly ``BombEncoder.encode_state`` of each env's state."""
        rows, B = self._rows, self.num_envs
        n, k, m, P, nb = self.n, self.k, self.m, self.P, self.nb
        S = self.state_size
        out = np.tile(self._state_base, (B, 1))
        off = rows * S
        ones = [off[:, None] + np.arange(k) * n + self.loc]
        live = ~self.over
        ones.append((off + k * n + self.turn)[live])
        at = k * n + k
        out[:, at] = self.round / self.config.max_rounds
        out[:, at + 1] = self.score / max(self.max_score, 1)
        at += 2
        width = n + P * m + 3
        b_at = off[:, None] + at + np.arange(nb) * width  # (B, nb)
        ones.append(b_at + self.bomb_room)
        active = self.active()
        for s in range(P):
            idx = self.prog + s
            valid = (idx < self.seqlen) & ~self.exploded
            colour = self.seq[rows[:, None], self._bombs, np.minimum(idx, P - 1)]
            ones.append((b_at + n + s * m + colour)[valid])
        status = np.where(active, 0, np.where(self.exploded, 2, 1))
        ones.append(b_at + n + P * m + status)
        out.reshape(-1)[np.concatenate([x.ravel() for x in ones])] = 1.0
        return out
