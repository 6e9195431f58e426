"""Many Overcooked kitchens stepped at once with numpy: the batched rollout engine.

:class:`OvercookedVectorEnv` keeps ``num_envs`` copies of one configured kitchen as arrays and
steps them together (JaxMARL-style, but numpy on the CPU, no compilation). It computes exactly
what the scalar rules (:class:`~tom_envs.games.overcooked.rules.OvercookedGame`) and encoder
(:class:`~tom_envs.games.overcooked.encode.OvercookedEncoder`) compute, env by env, bit for bit;
``tests/games/overcooked/test_vector.py`` checks it. Use it for RL data collection and for
throughput; use the PettingZoo envs for everything else.

It follows the batched-engine contract of :mod:`tom_envs.core.vector` (same-step autoreset,
``(B, 2)`` rewards, ``terminated``/``truncated``, masks; adapters for Gymnasium and batched
multi-agent loops). Episodes run in lockstep (every env starts together and ends at the horizon,
``terminated`` as in the single env). With ``autoreset=True`` (default) the step that ends the
episodes returns the observations of the new episodes, as JaxMARL and SB3's vector envs do.
Every action is legal in every state (the masks are all ones).

Example::

    venv = OvercookedVectorEnv(1024, layout="cramped_room")
    obs = venv.reset(seed=0)                      # (1024, 2, obs_size) float32, egocentric
    actions = rng.integers(6, size=(1024, 2))     # player_0, player_1
    obs, rewards, terminated, truncated = venv.step(actions)  # rewards (1024, 2), shared
    venv.state(i)                                 # env i as an OvercookedState
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tom_envs.core.vector import VectorGame
from tom_envs.games.overcooked.encode import NUM_CHANNELS, URGENCY_STEPS, OvercookedEncoder
from tom_envs.games.overcooked.layout import (
    FACE_COUNTER,
    FACE_DISHES,
    FACE_ONIONS,
    FACE_POT,
    FACE_SERVING,
)
from tom_envs.games.overcooked.rules import (
    ONIONS_PER_SOUP,
    Chef,
    Item,
    OvercookedConfig,
    OvercookedState,
)

INTERACT = 5
# Plain ints: IntEnum attribute lookups cost a microsecond each in the hot loops.
ONION, DISH, SOUP_1, SOUP_3 = int(Item.ONION), int(Item.DISH), int(Item.SOUP_1), int(Item.SOUP_3)


class OvercookedVectorEnv(VectorGame):
    """``num_envs`` kitchens of one configuration, stepped with numpy.

    Args:
        num_envs: batch size B.
        autoreset: start new episodes automatically when the horizon is reached.
        observations: compute observations every step (``False``: the dynamics only).
        max_cycles: truncate (every env at once) after this many steps.
        keep_final_obs: keep the observations the episodes ended on in ``final_obs``.
        **config: keyword arguments of :class:`OvercookedConfig`.
    """

    agents = ("player_0", "player_1")
    num_agents = 2
    num_actions = 6
    all_legal = True

    def __init__(
        self,
        num_envs: int,
        autoreset: bool = True,
        observations: bool = True,
        *,
        max_cycles: int | None = None,
        keep_final_obs: bool = False,
        **config: Any,
    ) -> None:
        super().__init__(
            num_envs,
            autoreset=autoreset,
            max_cycles=max_cycles,
            keep_final_obs=keep_final_obs,
            observations=observations,
        )
        self.config = OvercookedConfig(**config)
        self.encoder = enc = OvercookedEncoder(self.config)
        layout = self.config.kitchen
        tables = layout.tables
        self.layout = layout
        W, H = layout.width, layout.height
        C = W * H
        self._cell_of = {(x, y): x * H + y for x in range(W) for y in range(H)}
        self._pos_of = {c: p for p, c in self._cell_of.items()}
        move = np.zeros((C, 4), dtype=np.int32)
        kind = np.zeros((C, 4), dtype=np.int8)
        index = np.zeros((C, 4), dtype=np.int32)
        for c in range(C):
            move[c] = c
        for (pos, d), nxt in tables.move.items():
            move[self._cell_of[pos], d] = self._cell_of[nxt]
        for (pos, d), (k, i) in tables.front.items():
            kind[self._cell_of[pos], d] = k
            index[self._cell_of[pos], d] = i
        self._move, self._kind, self._index = move, kind, index
        self.P, self.K = len(layout.pots), len(layout.counters)
        self._ct = self.config.cook_time
        self._auto = self.config.cooking == "auto"
        self._value = float(self.config.delivery_reward)
        self._horizon = self.config.horizon
        self._rows = np.arange(num_envs)
        self._both = np.concatenate([self._rows * 2, self._rows * 2 + 1])
        # Observation tables.
        self.obs_size = enc.observation_shape[0]
        self.obs_low, self.obs_high = enc.low, enc.high
        self._ones = np.ones((num_envs, 2, 6), dtype=bool)
        self._base, self._urgent = enc._base, enc._urgent
        self._pot_cells = np.array([self._cell_of[p] for p in layout.pots], dtype=np.int64)
        self._counter_cells = np.array([self._cell_of[p] for p in layout.counters], dtype=np.int64)
        chef = enc.chef_size
        self._chef_table = np.zeros((C, 4, 6, chef), dtype=np.float32)
        for (pos, facing, held), block in enc._chef_block.items():
            self._chef_table[self._cell_of[pos], facing, held] = block
        inf = np.inf
        cdist = np.full((C, max(self.K, 1)), inf)
        for pos, ds in enc._counter_dist.items():
            for k, d in enumerate(ds):
                if d is not None:
                    cdist[self._cell_of[pos], k] = d
        self._cdist = cdist
        self._x = np.array([self._pos_of[c][0] for c in range(C)], dtype=np.float64)
        self._y = np.array([self._pos_of[c][1] for c in range(C)], dtype=np.float64)
        self._floor = np.array([self._cell_of[p] for p in layout.floor], dtype=np.int32)
        self.reset()

    # ------------------------------------------------------------------ episodes
    def _start(self, rows: np.ndarray) -> None:
        """New episodes; every env starts together (the episodes run in lockstep)."""
        if len(rows) != self.num_envs:  # pragma: no cover - lockstep makes this impossible
            raise RuntimeError("Overcooked episodes run in lockstep: all envs restart together")
        self._new_episodes()

    def _masks(self) -> np.ndarray:
        """Every action is legal."""
        return self._ones.copy()

    def _new_episodes(self) -> None:
        B = self.num_envs
        if self.config.random_start:
            n = len(self._floor)
            a = self.rng.integers(n, size=B)
            b = self.rng.integers(n - 1, size=B)
            b = b + (b >= a)
            self.pos = np.stack([self._floor[a], self._floor[b]], axis=1).astype(np.int32)
        else:
            starts = [self._cell_of[p] for p in self.layout.starts]
            self.pos = np.tile(np.array(starts, dtype=np.int32), (B, 1))
        self.facing = np.zeros((B, 2), dtype=np.int32)
        self.held = np.zeros((B, 2), dtype=np.int32)
        self.pot_n = np.zeros((B, self.P), dtype=np.int32)
        self.pot_tick = np.full((B, self.P), -1, dtype=np.int32)
        self.counters = np.zeros((B, self.K), dtype=np.int32)
        self.score = np.zeros(B, dtype=np.float64)
        self.t = 0

    def _advance(self, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Apply checked ``actions`` (``(B, 2)`` ints in 0..5) to every env.

        Returns the rewards ``(B, 2)`` (the delivery reward, shared by both chefs) and whether the
        episodes end at this step (the horizon, every env at once).
        """
        reward = np.zeros(self.num_envs, dtype=np.float64)
        rows = self._rows
        for p in (0, 1):
            m = a[:, p] == INTERACT
            if m.any():
                self._interact(rows[m], p, reward)
        # Movement with collisions.
        pos, face = self.pos, self.facing
        moving = a < 4
        d = np.where(moving, a, 0)
        intended = np.where(moving, self._move[pos, d], pos)
        n0, n1 = intended[:, 0], intended[:, 1]
        collide = (n0 == n1) | ((n0 == pos[:, 1]) & (n1 == pos[:, 0]))
        self.pos = np.where(collide[:, None], pos, intended).astype(np.int32)
        self.facing = np.where(moving, a, face).astype(np.int32)
        # Cooking.
        tick = self.pot_tick
        if self._auto:
            tick = np.where((tick < 0) & (self.pot_n == ONIONS_PER_SOUP), 0, tick)
        self.pot_tick = np.where((tick >= 0) & (tick < self._ct), tick + 1, tick).astype(np.int32)
        self.t += 1
        self.score += reward
        done = self.t >= self._horizon
        return np.repeat(reward[:, None], 2, axis=1), np.full(self.num_envs, done)

    def _interact(self, r: np.ndarray, p: int, reward: np.ndarray) -> None:
        """Resolve player ``p``'s interactions in envs ``r`` (in place)."""
        cell, facing = self.pos[r, p], self.facing[r, p]
        kind, idx = self._kind[cell, facing], self._index[cell, facing]
        h = self.held[r, p]
        # Counters.
        sel = kind == FACE_COUNTER
        if sel.any():
            rr, ii, hh = r[sel], idx[sel], h[sel]
            cur = self.counters[rr, ii]
            place = (hh != 0) & (cur == 0)
            pick = (hh == 0) & (cur != 0)
            self.counters[rr[place], ii[place]] = hh[place]
            self.held[rr[place], p] = 0
            self.counters[rr[pick], ii[pick]] = 0
            self.held[rr[pick], p] = cur[pick]
        for face_kind, item in ((FACE_ONIONS, ONION), (FACE_DISHES, DISH)):
            sel = (kind == face_kind) & (h == 0)
            if sel.any():
                self.held[r[sel], p] = item
        sel = kind == FACE_POT
        if sel.any():
            rr, ii, hh = r[sel], idx[sel], h[sel]
            n, t = self.pot_n[rr, ii], self.pot_tick[rr, ii]
            if not self._auto:
                start = (hh == 0) & (n > 0) & (t < 0)
                self.pot_tick[rr[start], ii[start]] = 0
            take = (hh == DISH) & (t >= self._ct)
            self.held[rr[take], p] = SOUP_1 + n[take] - 1
            self.pot_n[rr[take], ii[take]] = 0
            self.pot_tick[rr[take], ii[take]] = -1
            add = (hh == ONION) & (t < 0) & (n < ONIONS_PER_SOUP)
            self.pot_n[rr[add], ii[add]] = n[add] + 1
            self.held[rr[add], p] = 0
        sel = (kind == FACE_SERVING) & (h >= SOUP_1)
        if sel.any():
            rr = r[sel]
            reward[rr] += np.where(h[sel] == SOUP_3, self._value, 0.0)
            self.held[rr, p] = 0

    # ------------------------------------------------------------------ observations
    def _observe(self) -> np.ndarray:
        """``(B, 2, obs_size)``: each chef's observation, exactly the encoder's."""
        B, D = self.num_envs, self.obs_size
        urgent = self._horizon - self.t < URGENCY_STEPS
        obs = np.empty((B, 2, D), dtype=np.float32)
        obs[:] = self._urgent if urgent else self._base
        flat = obs.reshape(B * 2, D)
        enc = self.encoder
        if enc.planes_size:
            ch = NUM_CHANNELS
            both = self._both  # flat rows of observer 0 then observer 1, env by env
            # Objects, the same for both observers.
            for p in (0, 1):
                self._write_items(flat, both, np.tile(self.pos[:, p] * ch, 2), self.held[:, p])
            pot_n, pot_t = np.tile(self.pot_n, (2, 1)), np.tile(self.pot_tick, (2, 1))
            for k in range(self.P):
                n, t = pot_n[:, k], pot_t[:, k]
                base = int(self._pot_cells[k]) * ch
                idle = (n > 0) & (t < 0)
                flat[both[idle], base + 16] = n[idle]
                cooking = (n > 0) & (t >= 0)
                rc = both[cooking]
                flat[rc, base + 18] = n[cooking]
                flat[rc, base + 20] = self._ct - t[cooking]
                done = t >= self._ct
                flat[both[done], base + 21] = 1.0
            nz = np.nonzero(self.counters)
            if nz[0].size:
                r = np.concatenate([nz[0] * 2, nz[0] * 2 + 1])
                cells = np.tile(self._counter_cells[nz[1]] * ch, 2)
                self._write_items(flat, r, cells, np.tile(self.counters[nz], 2))
            # Who observes: my cell and facing, the partner's.
            rows = self._rows
            for obs_p in (0, 1):
                r2 = rows * 2 + obs_p
                me, other = self.pos[:, obs_p] * ch, self.pos[:, 1 - obs_p] * ch
                flat[r2, me] = 1.0
                flat[r2, me + 2 + self.facing[:, obs_p]] = 1.0
                flat[r2, other + 1] = 1.0
                flat[r2, other + 6 + self.facing[:, 1 - obs_p]] = 1.0
        if enc.features_size:
            self._features(obs)
        return obs

    @staticmethod
    def _write_items(arr: np.ndarray, r: np.ndarray, base: np.ndarray, item: np.ndarray) -> None:
        """Write items (held or on counters) at plane offsets ``base`` of rows ``r``.

        ``item`` is given per env; ``r`` and ``base`` may list every env twice (both observers).
        """
        if len(item) != len(r):
            item = np.tile(item, len(r) // len(item))
        onion = item == ONION
        arr[r[onion], base[onion] + 23] = 1.0
        dish = item == DISH
        arr[r[dish], base[dish] + 22] = 1.0
        soup = item >= SOUP_1
        arr[r[soup], base[soup] + 18] = item[soup] - (SOUP_1 - 1)
        arr[r[soup], base[soup] + 21] = 1.0

    def _features(self, obs: np.ndarray) -> None:
        enc = self.encoder
        f, chef, P = enc.planes_size, enc.chef_size, self.P
        tail = 12 + P
        ct = self._ct
        counters = self.counters
        blocks = []
        for c in (0, 1):
            cell = self.pos[:, c]
            block = self._chef_table[cell, self.facing[:, c], self.held[:, c]]
            if self.K:
                d = self._cdist[cell]  # (B, K): walking distance to each counter
                best = np.where(self._slot_mask, d[:, None, :], np.inf).min(axis=2)  # (B, 4)
                block[:, tail : tail + 4] = np.where(np.isfinite(best), best / enc._span, 1.0)
            blocks.append(block)
        obs[:, 0, f : f + chef] = blocks[0]
        obs[:, 0, f + chef : f + 2 * chef] = blocks[1]
        obs[:, 1, f : f + chef] = blocks[1]
        obs[:, 1, f + chef : f + 2 * chef] = blocks[0]
        k0 = f + 2 * chef
        common = np.zeros((self.num_envs, 4 * P + 7), dtype=np.float64)
        n, t = self.pot_n, self.pot_tick
        cooking = (n > 0) & (t >= 0)
        ready = cooking & (t >= ct)
        common[:, 0 : 4 * P : 4] = n / 3.0
        common[:, 1 : 4 * P : 4] = cooking & ~ready
        common[:, 2 : 4 * P : 4] = ready
        common[:, 3 : 4 * P : 4] = np.where(cooking, (ct - t) / ct, 0.0)
        k = 4 * P
        if self.K:
            nc = self.K
            common[:, k + 2] = (counters == ONION).sum(axis=1) / nc
            common[:, k + 3] = (counters == DISH).sum(axis=1) / nc
            common[:, k + 4] = (counters >= SOUP_1).sum(axis=1) / nc
        common[:, k + 5] = self.t / self._horizon
        common[:, k + 6] = 1.0 if self._horizon - self.t < URGENCY_STEPS else 0.0
        obs[:, :, k0 : k0 + 4 * P + 7] = common[:, None, :]
        W1, H1 = enc._W1, enc._H1
        x, y = self._x[self.pos], self._y[self.pos]  # (B, 2)
        for obs_p in (0, 1):
            o = 1 - obs_p
            obs[:, obs_p, k0 + k] = ((x[:, o] - x[:, obs_p]) / W1 + 1.0) / 2.0
            obs[:, obs_p, k0 + k + 1] = ((y[:, o] - y[:, obs_p]) / H1 + 1.0) / 2.0

    @property
    def _slot_mask(self) -> np.ndarray:
        """``(B, 4, K)``: which counters hold an onion, a plate, a soup, nothing."""
        c = self.counters[:, None, :]
        slots = np.array([ONION, DISH, SOUP_1, 0]).reshape(1, 4, 1)
        mask = c == slots
        mask[:, 2, :] = self.counters >= SOUP_1
        return mask

    # ------------------------------------------------------------------ inspection
    def state(self, i: int) -> OvercookedState:
        """Env ``i`` as an :class:`OvercookedState` (for checks and rendering)."""
        chefs = tuple(
            Chef(self._pos_of[int(self.pos[i, p])], int(self.facing[i, p]), int(self.held[i, p]))
            for p in (0, 1)
        )
        pots = tuple((int(n), int(t)) for n, t in zip(self.pot_n[i], self.pot_tick[i], strict=True))
        return OvercookedState(
            self.t, chefs, pots, tuple(int(c) for c in self.counters[i]), float(self.score[i])
        )  # type: ignore[arg-type]
