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
Every action is legal in every state (the masks are all ones). Each step returns a new
observation array (callers may keep it).

How it is fast: the state is a few small integer arrays (cells, facings, held items, pots,
counters), and both the rules and the observations are looked up in tables built once per
layout (from the encoder's own tables where it has them): what an interaction does per (kind
faced, held item) and per (held item, onions, tick) of a pot; a chef's plane writes and feature
block per (cell, facing, held item), a pot's writes per (onions, tick), a counter's per item, the
nearest onion / plate / soup / empty counter per (cell, chunk of 3 counters, their items), the
partner offsets per pair of cells. A step fills the observations with the terrain row (and the
time, the same in every env: episodes run in lockstep), then writes the looked-up values with
``np.take`` and flat-index scatters: a few dozen numpy calls per step whatever the batch size.

Example::

    venv = OvercookedVectorEnv(1024, layout="cramped_room")
    obs = venv.reset(seed=0)                      # (1024, 2, obs_size) float32, egocentric
    actions = rng.integers(6, size=(1024, 2))     # player_0, player_1
    obs, rewards, terminated, truncated = venv.step(actions)  # rewards (1024, 2), shared
    venv.state(i)                                 # env i as an OvercookedState
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from tom_envs.core.vector import VectorGame
from tom_envs.games.overcooked.encode import (
    CHANNELS,
    NUM_CHANNELS,
    POT_FEATURES,
    TAIL,
    URGENCY_STEPS,
    OvercookedEncoder,
)
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
    OvercookedGame,
    OvercookedState,
    soup_onions,
)

INTERACT = 5
# Plain ints: IntEnum attribute lookups cost a microsecond each in the hot loops.
ONION, DISH, SOUP_1, SOUP_3 = int(Item.ONION), int(Item.DISH), int(Item.SOUP_1), int(Item.SOUP_3)
#: ``pair[:, p]`` of a ``(B, 2)`` chef array: observer ``p``'s chef first, then the partner.
_PERM = np.array([[0, 1], [1, 0]])
#: Counter item -> feature slot: onion 0, plate 1, soup 2, nothing 3 (the nearest empty counter).
_SLOT = np.array([3, 0, 1, 2, 2, 2])


_CH = CHANNELS


def _item_writes(base: int, item: int) -> list[tuple[int, float]]:
    """Plane writes of an item lying (or held) on the cell at offset ``base`` (the encoder's)."""
    if item == ONION:
        return [(base + _CH["onions"], 1.0)]
    if item == DISH:
        return [(base + _CH["plates"], 1.0)]
    if item >= SOUP_1:
        return [(base + _CH["soup_onions"], float(soup_onions(item))),
                (base + _CH["soup_done"], 1.0)]  # fmt: skip
    return []


def _padded(writes: list[tuple[int, float]], size: int) -> tuple[list[int], list[float]]:
    """``writes`` repeated to ``size`` (writing a value twice to one place changes nothing)."""
    writes = (writes * size)[:size]
    return [o for o, _ in writes], [v for _, v in writes]


class OvercookedVectorEnv(VectorGame):
    """``num_envs`` kitchens of one configuration, stepped with numpy.

    Args:
        num_envs: batch size B.
        **kwargs: the engine's options (``autoreset``, ``max_cycles``, ``keep_final_obs``,
            ``observations``, ``check_actions``: see :class:`~tom_envs.core.vector.VectorGame`)
            and the keyword arguments of :class:`OvercookedConfig` (``layout``, ``horizon``,
            ``cooking``, ``observation``, ...). Every action is always legal.
    """

    agents = ("player_0", "player_1")
    num_agents = 2
    num_actions = 6
    all_legal = True
    encoder: OvercookedEncoder

    def __init__(self, num_envs: int, **kwargs: Any) -> None:
        self.config = OvercookedConfig(**self._init_engine(num_envs, kwargs))
        self.game = OvercookedGame(self.config)
        enc = OvercookedEncoder(self.config)
        self._take_layout(enc)
        layout = self.config.kitchen
        tables = layout.tables
        self.layout = layout
        W, H = layout.width, layout.height
        self._C = C = W * H
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
        # Flat tables: [cell * 6 + action] -> the cell moved to (interact and stay: the same);
        # [cell * 4 + facing] -> what the chef faces.
        self._move6 = np.concatenate([move, np.arange(C)[:, None].repeat(2, 1)], 1).ravel()
        self._kind4, self._index4 = kind.ravel().astype(np.intp), index.ravel().astype(np.intp)
        self.P, self.K = len(layout.pots), len(layout.counters)
        self._ct = self.config.cook_time
        self._auto = self.config.cooking == "auto"
        self._value = float(self.config.delivery_reward)
        self._horizon = self.config.horizon
        self._rule_tables()
        self._rows = np.arange(num_envs)
        self._ones = np.ones((num_envs, 2, 6), dtype=bool)
        self._floor = np.array([self._cell_of[p] for p in layout.floor], dtype=np.int32)
        self._observation_tables()
        self.reset()

    # ------------------------------------------------------------------ tables
    def _rule_tables(self) -> None:
        """The rules' interactions (``OvercookedGame._interact``) as tables.

        Per (facing kind, held item): the item held after facing a dispenser or the serving window
        (anything else: unchanged) and the reward. Per (held item, onions, tick) of a faced pot:
        the onions, tick and held item after.
        """
        held_after = np.tile(np.arange(6), 6).reshape(6, 6)
        held_after[FACE_ONIONS, 0], held_after[FACE_DISHES, 0] = ONION, DISH
        held_after[FACE_SERVING, SOUP_1:] = 0
        gain = np.zeros((6, 6))
        gain[FACE_SERVING, SOUP_3] = self._value
        self._held_after, self._gain = held_after.ravel(), gain.ravel()
        ct, full = self._ct, ONIONS_PER_SOUP
        shape = (6, full + 1, ct + 2)
        n_after, tick_after, pot_held = (
            np.zeros(shape, int),
            np.zeros(shape, int),
            np.zeros(shape, int),
        )
        for h in range(6):
            for n in range(full + 1):
                for tick in range(-1, ct + 1):
                    after = (n, tick, h)
                    if h == 0 and not self._auto and n > 0 and tick < 0:
                        after = (n, 0, h)  # start cooking
                    elif h == DISH and tick >= ct:
                        after = (0, -1, SOUP_1 + n - 1)  # pick up the soup
                    elif h == ONION and tick < 0 and n < full:
                        after = (n + 1, -1, 0)  # put the onion in
                    (
                        n_after[h, n, tick + 1],
                        tick_after[h, n, tick + 1],
                        pot_held[h, n, tick + 1],
                    ) = after
        self._pot_n_after, self._pot_tick_after = n_after.ravel(), tick_after.ravel()
        self._pot_held_after = pot_held.ravel()

    def _observation_tables(self) -> None:
        """Everything an observation holds, per small integer code, from the encoder's values."""
        enc, C, P, K = self.encoder, self._C, self.P, self.K
        ch, D = NUM_CHANNELS, self.obs_size
        layout = self.layout
        self._rowbase = (np.arange(2 * self.num_envs, dtype=np.intp) * D).reshape(-1, 2)
        # The observation before the chefs, pots and counters: terrain, time, urgency.
        self._bases = [enc._base.copy(), enc._urgent.copy()]
        self._tail = enc._tail  # partner offset, counters on counters, time, urgency
        if enc.features_size:
            self._bases[1][self._tail + TAIL["urgency"]] = 1.0
        # Chefs: code (cell * 4 + facing) * 6 + held item; role 0 = the observer, 1 = the partner.
        n_chef = C * 24
        self._roles = np.array([0, n_chef])
        chef_off = np.zeros((2, n_chef, 4), dtype=np.intp)
        chef_val = np.ones((2, n_chef, 4), dtype=np.float32)
        chef_feat = np.zeros((n_chef, enc.chef_size), dtype=np.float32)
        for pos, cell in self._cell_of.items():
            base = cell * ch
            for facing in range(4):
                for held in range(6):
                    code = (cell * 4 + facing) * 6 + held
                    for role, me, face in ((0, _CH["me"], _CH["my_facing"]),
                                           (1, _CH["partner"], _CH["partner_facing"])):  # fmt: skip
                        writes = [(base + me, 1.0), (base + face + facing, 1.0)]
                        writes += _item_writes(base, held) or writes[:1]
                        chef_off[role, code], chef_val[role, code] = _padded(writes, 4)
                    block = enc._chef_block.get((pos, facing, held))
                    if block is not None:  # floor cells
                        chef_feat[code] = block
        self._chef_off, self._chef_val = chef_off.reshape(-1, 4), chef_val.reshape(-1, 4)
        self._chef_feat = chef_feat
        self._pot_tables()
        # Counters: code counter * 6 + item (an empty counter: 0 over the onions channel's 0).
        cnt_off = np.zeros((K * 6, 2), dtype=np.intp)
        cnt_val = np.zeros((K * 6, 2), dtype=np.float32)
        for k, pos in enumerate(layout.counters):
            base = self._cell_of[pos] * ch
            for item in range(6):
                writes = _item_writes(base, item) or [(base + _CH["onions"], 0.0)]
                cnt_off[k * 6 + item], cnt_val[k * 6 + item] = _padded(writes, 2)
        self._cnt_off, self._cnt_val = cnt_off, cnt_val
        # per entry of the flattened (B, K) counters: counter * 6, and its env's first row (x2)
        self._cnt_codes = np.tile(np.arange(K) * 6, self.num_envs)
        # Flat offsets of observer 0's row of each env, in the shapes of the scatters above.
        B, first = self.num_envs, self._rowbase[:, 0]
        self._chef_rows = np.repeat(self._rowbase, 8).reshape(B, 2, 2, 4)
        self._pot_rows = np.repeat(first, P * 3).reshape(B, P, 3)
        self._cnt_rows = np.repeat(first, K * 2).reshape(-1, 2)
        self._feature_tables()
        # Scratch arrays reused every step (fresh temporaries of this size would make the
        # allocator hand pages back to the system and fault them in again, step after step).
        n_chunks = len(self._chunk_rows)
        self._chef_at = np.empty((B, 2, 2, 4), dtype=np.intp)
        self._chef_v = np.empty((B, 2, 2, 4), dtype=np.float32)
        self._blocks = np.empty((B, 2, 2, enc.chef_size), dtype=np.float32)
        self._near_at = np.empty((n_chunks, 2, B), dtype=np.intp)
        self._near_all = np.empty((n_chunks, 2, B, 4), dtype=np.float32)

    def _pot_tables(self) -> None:
        """Each pot's plane writes and its four features, per code ``onions * (cook_time + 2) +
        tick + 1``."""
        P, ct, ch, layout = self.P, self._ct, NUM_CHANNELS, self.layout
        n_pot = 4 * (ct + 2)
        self._pot_codes = np.arange(P) * n_pot
        pot_off = np.zeros((P, n_pot, 3), dtype=np.intp)
        pot_val = np.zeros((P, n_pot, 3), dtype=np.float32)
        pot_feat = np.zeros((n_pot, len(POT_FEATURES)), dtype=np.float32)
        for k, pos in enumerate(layout.pots):
            base = self._cell_of[pos] * ch
            for n in range(ONIONS_PER_SOUP + 1):
                for tick in range(-1, ct + 1):
                    code = n * (ct + 2) + tick + 1
                    idle = base + _CH["idle_pot_onions"]
                    if not n:  # nothing to write: 0 over the idle-onions channel's 0
                        writes = [(idle, 0.0)]
                    elif tick < 0:
                        writes = [(idle, float(n))]
                    else:
                        writes = [(base + _CH["soup_onions"], float(n)),
                                  (base + _CH["cook_time_left"], float(ct - tick))]  # fmt: skip
                        writes += [(base + _CH["soup_done"], 1.0)] if tick >= ct else []
                    pot_off[k, code], pot_val[k, code] = _padded(writes, 3)
                    if n and k == 0:
                        pf = POT_FEATURES
                        pot_feat[code, pf["onions"]] = n / 3.0
                        if tick >= 0:
                            pot_feat[code, pf["ready"] if tick >= ct else pf["cooking"]] = 1.0
                            pot_feat[code, pf["cook_time_left"]] = (ct - tick) / ct
        self._pot_off, self._pot_val = pot_off.reshape(-1, 3), pot_val.reshape(-1, 3)
        self._pot_feat = pot_feat

    def _feature_tables(self) -> None:
        """Tables of the features: counters read in chunks of 3, partner offsets per cells.

        A chunk's state is its 3 items in base 6; per (floor cell, chunk, state) the table holds
        the walking distance / span to the nearest onion, plate, soup and empty counter of the
        chunk (1: none, or unreachable; every reachable one is below 1), so that a chef's four
        values are the minimum over the chunks; per state, the onions, plates and soups in it.
        """
        enc, C, K, layout = self.encoder, self._C, self.K, self.layout
        floor = {self._cell_of[p]: i for i, p in enumerate(layout.floor)}
        self._floor_of = np.zeros(C, dtype=np.intp)
        self._floor_of[list(floor)] = list(floor.values())
        n_chunks = -(-K // 3)
        states = np.arange(216)
        digits = np.stack([states % 6, states // 6 % 6, states // 36])  # (3, 216) items
        near = np.ones((len(floor), n_chunks, 216, 4))
        for k in range(K):
            j, i = divmod(k, 3)
            d = np.ones(len(floor))
            for pos in layout.floor:
                dk = enc._counter_dist[pos][k]
                if dk is not None:
                    d[floor[self._cell_of[pos]]] = dk / enc._span
            for item in range(6):
                has = digits[i] == item
                slot = _SLOT[item]
                near[:, j, has, slot] = np.minimum(near[:, j, has, slot], d[:, None])
        self._near = near.astype(np.float32).reshape(-1, 4)
        self._counts = np.stack([(digits == item).sum(0) for item in (ONION, DISH)]
                                + [(digits >= SOUP_1).sum(0)], 1)  # fmt: skip
        self._chunk_rows = np.arange(n_chunks)[:, None] * 216
        self._cell_rows = n_chunks * 216
        self._count_feat = np.array([i / max(K, 1) for i in range(K + 1)], dtype=np.float32)
        rel = np.zeros((2, C * C, 2), dtype=np.float32)
        for p0, c0 in self._cell_of.items():
            for p1, c1 in self._cell_of.items():
                dx, dy = (p1[0] - p0[0]) / enc._W1, (p1[1] - p0[1]) / enc._H1
                rel[0, c0 * C + c1] = (dx + 1.0) / 2.0, (dy + 1.0) / 2.0
                rel[1, c0 * C + c1] = (1.0 - dx) / 2.0, (1.0 - dy) / 2.0
        self._rel, self._rel_rows = rel.reshape(-1, 2), np.array([0, C * C])

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
            self.pos = np.stack([self._floor[a], self._floor[b]], axis=1).astype(np.intp)
        else:
            starts = [self._cell_of[p] for p in self.layout.starts]
            self.pos = np.tile(np.array(starts, dtype=np.intp), (B, 1))
        # Integer state, in numpy's index type (every step indexes tables with it).
        self.facing = np.zeros((B, 2), dtype=np.intp)
        self.held = np.zeros((B, 2), dtype=np.intp)
        self.pot_n = np.zeros((B, self.P), dtype=np.intp)
        self.pot_tick = np.full((B, self.P), -1, dtype=np.intp)
        self.counters = np.zeros((B, self.K), dtype=np.intp)
        self.score = np.zeros(B, dtype=np.float64)
        self.t = 0
        self._start_pos = self.pos.copy()

    def start_state(self, i: int) -> OvercookedState:
        """Env ``i``'s start: the rules' start with the chefs on the cells drawn for it (they
        differ from the layout's only with ``random_start``)."""
        start = self.game.initial_state(np.random.default_rng(0))
        a, b = start.chefs
        cells = self._start_pos[i]
        chefs = (a._replace(pos=self._pos_of[int(cells[0])]),
                 b._replace(pos=self._pos_of[int(cells[1])]))  # fmt: skip
        return replace(start, chefs=chefs)

    def _advance(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Apply checked ``actions`` (``(B, 2)`` ints in 0..5) to every env.

        Returns the rewards ``(B, 2)`` (the delivery reward, shared by both chefs) and whether the
        episodes end at this step (the horizon, every env at once).
        """
        a = actions
        reward = np.zeros(self.num_envs, dtype=np.float64)
        interact = a == INTERACT
        if interact.any():
            for p in (0, 1):  # chef 0 first, as the rules do
                r = np.flatnonzero(interact[:, p])
                if r.size:
                    self._interact(r, p, reward)
        # Movement with collisions (same cell, or a swap): both stay put.
        pos = self.pos
        intended = self._move6[pos * 6 + a]
        n0, n1 = intended[:, 0], intended[:, 1]
        collide = (n0 == n1) | ((n0 == pos[:, 1]) & (n1 == pos[:, 0]))
        self.pos = np.where(collide[:, None], pos, intended)
        self.facing = np.where(a < 4, a, self.facing)
        # Cooking: a full pot starts by itself ("auto") and cooks this very step.
        tick = self.pot_tick
        if self._auto:
            tick[(tick < 0) & (self.pot_n == ONIONS_PER_SOUP)] = 0
        tick += (tick >= 0) & (tick < self._ct)
        self.t += 1
        self.score += reward
        done = self.t >= self._horizon
        return np.repeat(reward[:, None], 2, axis=1), np.full(self.num_envs, done)

    def _interact(self, r: np.ndarray, p: int, reward: np.ndarray) -> None:
        """Resolve player ``p``'s interactions in envs ``r`` (in place), by the rule tables."""
        take, held = np.take, self.held
        front = self.pos[r, p] * 4 + self.facing[r, p]
        kind = take(self._kind4, front)
        h = held[r, p]
        # Dispensers and the serving window (counters and pots: unchanged here).
        code = kind * 6 + h
        held[r, p] = take(self._held_after, code)
        if self._value:
            reward[r] += take(self._gain, code)
        sel = np.flatnonzero(kind == FACE_COUNTER)
        if sel.size:  # place on an empty counter, or pick up from it
            rr, hh = r[sel], h[sel]
            at = rr * self.K + take(self._index4, front[sel])
            counters = self.counters.reshape(-1)  # a view: counters is C-contiguous
            cur = counters[at]
            swap = (hh == 0) != (cur == 0)
            counters[at] = np.where(swap, hh, cur)
            held[rr, p] = np.where(swap, cur, hh)
        sel = np.flatnonzero(kind == FACE_POT)
        if sel.size:  # (held item, onions, tick) -> the same after, from the pot table
            rr = r[sel]
            at = rr * self.P + take(self._index4, front[sel])
            n, tick = self.pot_n.reshape(-1), self.pot_tick.reshape(-1)
            code = (h[sel] * (ONIONS_PER_SOUP + 1) + n[at]) * (self._ct + 2) + tick[at] + 1
            n[at] = take(self._pot_n_after, code)
            tick[at] = take(self._pot_tick_after, code)
            held[rr, p] = take(self._pot_held_after, code)

    # ------------------------------------------------------------------ observations
    def _observe(self) -> np.ndarray:
        """``(B, 2, obs_size)``: each chef's observation, exactly the encoder's."""
        B, D = self.num_envs, self.obs_size
        enc = self.encoder
        urgent = self._horizon - self.t < URGENCY_STEPS
        base = self._bases[urgent]
        if enc.features_size:
            base[self._tail + TAIL["time"]] = self.t / self._horizon
        obs = np.empty((B, 2, D), dtype=np.float32)
        seats, n = obs.reshape(2 * B, D), 1
        seats[0] = base
        while n < 2 * B:  # double the rows filled so far: a few large copies beat 2B small ones
            m = min(n, 2 * B - n)
            seats[n : n + m] = seats[:m]
            n += m
        pos = self.pos
        # (B, 2, 2): observer p's chef code, then the partner's.
        pair = ((pos * 4 + self.facing) * 6 + self.held)[:, _PERM]
        pots = self.pot_n * (self._ct + 2) + self.pot_tick + 1 if self.P else None
        take = np.take  # mode="clip" below: indices are in range by construction; it writes
        # straight into ``out`` (mode="raise" would buffer a copy)
        if enc.planes_size:
            flat = obs.reshape(-1)
            code = pair + self._roles
            at = take(self._chef_off, code, axis=0, out=self._chef_at, mode="clip")
            at += self._chef_rows
            flat[at] = take(self._chef_val, code, axis=0, out=self._chef_v, mode="clip")
            # Pots and the counters that hold something: the same writes in both observers' rows.
            objects = []
            if pots is not None:
                objects.append((pots + self._pot_codes, self._pot_off, self._pot_val,
                                self._pot_rows))  # fmt: skip
            if self.K:
                items = self.counters.reshape(-1)
                nz = np.flatnonzero(items)
                if nz.size:
                    objects.append((take(self._cnt_codes, nz) + take(items, nz), self._cnt_off,
                                    self._cnt_val, take(self._cnt_rows, nz, axis=0)))  # fmt: skip
            for codes, off, val, rows in objects:
                at = take(off, codes, axis=0)
                at += rows
                v = take(val, codes, axis=0)
                flat[at] = v
                at += D
                flat[at] = v
        if enc.features_size:
            f, size, P = enc.planes_size, enc.chef_size, self.P
            blocks = take(self._chef_feat, pair, axis=0, out=self._blocks, mode="clip")
            k = self._tail
            if self.K:
                items = self.counters.T  # (K, B); chunk j: counters 3j, 3j+1, 3j+2
                state = items[0::3] + 36 * self._pad(items[2::3])
                state += 6 * self._pad(items[1::3])  # (chunks, B): the chunks' states
                counted = take(self._count_feat, take(self._counts, state, axis=0).sum(0))
                state += self._chunk_rows
                rows = self._floor_of[pos.T] * self._cell_rows  # (2, B)
                at = np.add(state[:, None, :], rows, out=self._near_at)
                near = take(self._near, at, axis=0, out=self._near_all, mode="clip").min(axis=0)
                c0 = enc.chef_offsets["counter_items"]  # then the empty counter: 4 values
                blocks[:, :, :, c0 : c0 + 4] = take(near.transpose(1, 0, 2), _PERM, axis=1)
                ci = k + TAIL["counter_items"]
                obs[:, 0, ci : ci + 3] = counted
                obs[:, 1, ci : ci + 3] = counted
            obs[:, :, f : f + 2 * size] = blocks.reshape(B, 2, 2 * size)
            if pots is not None:
                g, w = f + 2 * size, len(POT_FEATURES) * P
                obs[:, :, g : g + w] = take(self._pot_feat, pots, axis=0).reshape(B, 1, w)
            cells = pos[:, 0] * self._C + pos[:, 1]
            po = k + TAIL["partner_offset"]
            obs[:, :, po : po + 2] = take(self._rel, cells[:, None] + self._rel_rows, axis=0)
        return obs

    def _pad(self, rows: np.ndarray) -> np.ndarray:
        """``rows`` of the counters' items (``(n, B)``), completed with empty rows to one per chunk."""
        missing = len(self._chunk_rows) - len(rows)
        return (
            np.concatenate([rows, np.zeros((missing, self.num_envs), np.intp)]) if missing else rows
        )

    # ------------------------------------------------------------------ inspection
    def state(self, i: int) -> OvercookedState:
        """Env ``i`` as an :class:`OvercookedState` (for checks and rendering)."""
        a, b = (
            Chef(self._pos_of[int(self.pos[i, p])], int(self.facing[i, p]), int(self.held[i, p]))
            for p in (0, 1)
        )
        pots = tuple((int(n), int(t)) for n, t in zip(self.pot_n[i], self.pot_tick[i], strict=True))
        return OvercookedState(
            self.t, (a, b), pots, tuple(int(c) for c in self.counters[i]), float(self.score[i])
        )
