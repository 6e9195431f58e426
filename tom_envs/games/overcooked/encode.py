"""Vector rendering of an Overcooked view (no game logic): lossless planes and compact features.

``PIECES`` names the parts of the vector, in order (OpenSpiel style); :meth:`OvercookedEncoder.split`
cuts a vector into them.

**planes** (``observation`` ``"lossless"`` or ``"both"``): overcooked-ai's
``lossless_state_encoding`` for the observing chef, value for value, flattened from its
``(width, height, 26)`` array in C order (``vector[:W*H*26].reshape(W, H, 26)`` gives it back, and
``np.moveaxis(..., -1, 0)`` the channels-first stack). Channels::

    0 my cell            1 partner's cell      2-5 my facing N/S/E/W   6-9 partner's facing N/S/E/W
    10 pots              11 counters           12 onion dispensers     13 tomato dispensers (none)
    14 plate dispensers  15 serving windows    16 onions in an idle pot
    17 tomatoes in pot   18 onions in a soup (cooking, cooked, on a plate)
    19 tomatoes in soup  20 cook time remaining of a pot's soup       21 soup done
    22 plates            23 onions (held or on counters)              24 tomatoes
    25 urgency (all ones when fewer than 40 steps remain)

Values are counts and step counts (up to ``cook_time``), as in overcooked-ai.

**features** (``"features"`` or ``"both"``), every value in [0, 1], egocentric::

    for me, then my partner (12 + P + 4 values each, P = number of pots):
        x / (W-1), y / (H-1), facing one-hot (4), holding onion / plate / soup (3),
        walking distance to the nearest onion dispenser, plate dispenser, serving window,
        then to each pot; to the nearest onion, plate and soup lying on a counter, and to the
        nearest empty counter  (distance / (D+1), D the longest walk in the kitchen; 1 when
        there is none or it cannot be reached)
    per pot: onions / 3, cooking, ready, cook time remaining / cook_time
    partner's offset from me: (dx / (W-1) + 1) / 2, (dy / (H-1) + 1) / 2
    onions, plates, soups on counters (each / number of counters)
    time: timestep / horizon, urgency (fewer than 40 steps left)

``state()`` (centralised critic) is player_0's observation: the game is fully observable.
"""

from __future__ import annotations

import numpy as np

from tom_envs.core.game import Encoder
from tom_envs.games.overcooked.layout import (
    COUNTER,
    DISH_DISPENSER,
    ONION_DISPENSER,
    POT,
    SERVING,
    Layout,
    Pos,
)
from tom_envs.games.overcooked.rules import (
    Chef,
    Item,
    OvercookedConfig,
    OvercookedState,
    soup_onions,
)
from tom_envs.games.overcooked.view import OvercookedView

Pots = tuple[tuple[int, int], ...]
Counters = tuple[int, ...]
NUM_CHANNELS = 26
URGENCY_STEPS = 40
#: The planes' channels by name, overcooked-ai's order (the module docstring lists them). The
#: encoder and the batched engine (``vector.py``) write at these channels, and only these.
CHANNELS: dict[str, int] = {
    "me": 0, "partner": 1, "my_facing": 2, "partner_facing": 6, "pots": 10, "counters": 11,
    "onion_dispensers": 12, "tomato_dispensers": 13, "dish_dispensers": 14, "serving": 15,
    "idle_pot_onions": 16, "idle_pot_tomatoes": 17, "soup_onions": 18, "soup_tomatoes": 19,
    "cook_time_left": 20, "soup_done": 21, "plates": 22, "onions": 23, "tomatoes": 24,
    "urgency": 25,
}  # fmt: skip
_CH = CHANNELS
_ME, _PARTNER, _MY_FACING, _PARTNER_FACING = (_CH[k] for k in ("me", "partner", "my_facing",
                                                               "partner_facing"))  # fmt: skip
_IDLE_ONIONS, _SOUP_ONIONS, _COOK_LEFT, _SOUP_DONE = (_CH[k] for k in (
    "idle_pot_onions", "soup_onions", "cook_time_left", "soup_done"))  # fmt: skip
_PLATES, _ONIONS, _URGENCY = _CH["plates"], _CH["onions"], _CH["urgency"]
#: Terrain channels of the planes, as overcooked-ai orders them (13 = tomato dispensers: none).
_TERRAIN_CHANNEL = {POT: _CH["pots"], COUNTER: _CH["counters"],
                    ONION_DISPENSER: _CH["onion_dispensers"],
                    DISH_DISPENSER: _CH["dish_dispensers"], SERVING: _CH["serving"]}  # fmt: skip
#: One pot's four features, by name (offsets in its block).
POT_FEATURES: dict[str, int] = {"onions": 0, "cooking": 1, "ready": 2, "cook_time_left": 3}
#: The features' tail (after both chefs' blocks and the pots): named pieces and their sizes.
TAIL_PIECES: tuple[tuple[str, int], ...] = (
    ("partner_offset", 2), ("counter_items", 3), ("time", 1), ("urgency", 1))  # fmt: skip
#: Where each piece of the tail starts (offsets in the tail).
TAIL: dict[str, int] = {
    name: sum(n for _, n in TAIL_PIECES[:k]) for k, (name, _) in enumerate(TAIL_PIECES)
}
TAIL_SIZE = sum(n for _, n in TAIL_PIECES)


def chef_offsets(num_pots: int) -> dict[str, int]:
    """Where each part of a chef's feature block starts (``P = num_pots``): position (2), facing
    (4), holding onion / plate / soup (3), distances to the fixed places then each pot (3 + P),
    to the nearest onion, plate, soup on a counter (3), to the nearest empty counter (1)."""
    P = num_pots
    return {"position": 0, "facing": 2, "holding": 6, "distances": 9, "counter_items": 12 + P,
            "empty_counter": 15 + P, "size": 16 + P}  # fmt: skip


class OvercookedEncoder(Encoder[OvercookedView, OvercookedState]):
    """Lossless planes and/or compact features of a chef's view."""

    def __init__(self, config: OvercookedConfig) -> None:
        self.config = config
        layout = config.kitchen
        self.layout = layout
        self.W, self.H = layout.width, layout.height
        self.num_pots = len(layout.pots)
        self.num_counters = len(layout.counters)
        self.planes_size = self.W * self.H * NUM_CHANNELS if config.observation != "features" else 0
        P = self.num_pots
        self.chef_offsets = chef_offsets(P)
        self.chef_size = self.chef_offsets["size"]
        self.features_size = (
            2 * self.chef_size + len(POT_FEATURES) * P + TAIL_SIZE
            if config.observation != "lossless" else 0
        )  # fmt: skip
        self.obs_size = self.state_size = self.planes_size + self.features_size  # state: player_0's
        self._W1, self._H1 = max(self.W - 1, 1), max(self.H - 1, 1)
        self._tail = self.planes_size + 2 * self.chef_size + 4 * self.num_pots
        self._pair_key: object = None
        self._pair: list[np.ndarray | None] = [None, None]
        self._objects_key: object = None
        self._objects = np.zeros(0, dtype=np.float32)
        self._nonempty: list[tuple[int, int]] = []
        self._blocks: dict[tuple[Chef, Counters], np.ndarray] = {}
        self._objects_cache: dict[tuple[bool, Pots, Counters], tuple[np.ndarray, list]] = {}
        self._high = float(max(config.cook_time, 3, 1))
        self._horizon = config.horizon
        self._cook_time = config.cook_time
        # Cell index of the planes: ((x * H + y) * 26 + channel).
        H = self.H
        self._cell = {
            (x, y): (x * H + y) * NUM_CHANNELS for x in range(self.W) for y in range(self.H)
        }
        base = np.zeros(self.obs_size, dtype=np.float32)
        if self.planes_size:
            for kind, ch in _TERRAIN_CHANNEL.items():
                for pos in layout.cells(kind):
                    base[self._cell[pos] + ch] = 1.0
        urgent = base.copy()
        if self.planes_size:
            urgent[_URGENCY : self.planes_size : NUM_CHANNELS] = 1.0
        self._base, self._urgent = base, urgent
        self._pot_cells = [self._cell[p] for p in layout.pots]
        self._counter_cells = [self._cell[p] for p in layout.counters]
        self._feature_tables(layout)

    def _feature_tables(self, layout: Layout) -> None:
        """The features' static tables (part of ``__init__``): each floor cell's block (position,
        distances to fixed places), its distances to the counters, and a chef's whole block per
        (cell, facing, held item) when no counter holds anything."""
        tables = layout.tables
        # Features: static per-cell block (position, distances to fixed places) for every floor cell.
        dist = tables.dist
        self._span = 1.0 + max((d for row in dist.values() for d in row.values()), default=0)
        self._access = {p.pos: p.access for p in tables.pois}
        self._counter_access = [self._access.get(p, ()) for p in layout.counters]
        self._static: dict[Pos, list[float]] = {}
        for cell in layout.floor:
            block = [cell[0] / max(self.W - 1, 1), cell[1] / max(self.H - 1, 1)]
            targets = [
                layout.cells(ONION_DISPENSER),
                layout.cells(DISH_DISPENSER),
                layout.cells(SERVING),
            ]
            targets += [[p] for p in layout.pots]
            block_d = [self._nearest(cell, ts) for ts in targets]
            self._static[cell] = block + block_d
        self._any_counter = {c: self._nearest(c, layout.counters) for c in layout.floor}
        self._counter_dist: dict[Pos, list[int | None]] = {}
        for c in layout.floor:
            row = dist[c]
            self._counter_dist[c] = [
                min((row[a] for a, _ in acc if a in row), default=None)
                for acc in self._counter_access
            ]
        # Reachable counters of each cell, nearest first: (distance, counter index).
        self._counter_order = {
            c: sorted((d, k) for k, d in enumerate(ds) if d is not None)
            for c, ds in self._counter_dist.items()
        }
        self._chef_block = self._chef_blocks()

    def _chef_blocks(self) -> dict[tuple[Pos, int, int], np.ndarray]:
        """A chef's whole feature block when no counter holds anything, per (cell, facing, held
        item)."""
        o, out = self.chef_offsets, {}
        for cell, static in self._static.items():
            for facing in range(4):
                for held in range(6):
                    block = np.zeros(self.chef_size, dtype=np.float32)
                    block[:2] = static[:2]
                    block[o["facing"] + facing] = 1.0
                    if held:
                        slot = 0 if held == Item.ONION else 1 if held == Item.DISH else 2
                        block[o["holding"] + slot] = 1
                    block[o["distances"] : o["counter_items"]] = static[2:]
                    block[o["counter_items"] : o["empty_counter"]] = 1.0
                    block[o["empty_counter"]] = self._any_counter[cell]
                    out[(cell, facing, held)] = block
        return out

    # ------------------------------------------------------------------ shape

    @property
    def high(self) -> float:
        """Counts and cook times go up to ``max(cook_time, 3)``."""
        return self._high

    @property
    def pieces(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        """The named parts of the vector and their shapes (``planes`` is ``(W, H, 26)``)."""
        out: list[tuple[str, tuple[int, ...]]] = []
        if self.planes_size:
            out.append(("planes", (self.W, self.H, NUM_CHANNELS)))
        if self.features_size:
            out.append(("features", (self.features_size,)))
        return tuple(out)

    def split(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        """Cut an observation into its pieces (``{"planes": (W, H, 26), "features": (F,)}``)."""
        out, start = {}, 0
        for name, shape in self.pieces:
            size = int(np.prod(shape))
            out[name] = np.asarray(vector[start : start + size]).reshape(shape)
            start += size
        return out

    # ------------------------------------------------------------------ helpers
    def _nearest(self, cell: Pos, targets: list[Pos] | tuple[Pos, ...]) -> float:
        """Normalised walking distance from ``cell`` to stand next to the nearest target."""
        row = self.layout.tables.dist[cell]
        best = None
        for t in targets:
            for acc, _ in self._access.get(t, ()):
                d = row.get(acc)
                if d is not None and (best is None or d < best):
                    best = d
        return 1.0 if best is None else best / self._span

    # ------------------------------------------------------------------ encode
    def encode(self, view: OvercookedView) -> np.ndarray:
        """The view as a float32 vector (my features first)."""
        chefs = (view.me, view.partner) if view.player == 0 else (view.partner, view.me)
        return self._encode(view.timestep, view.player, chefs, view.pots, view.counters)

    def encode_state(self, state: OvercookedState) -> np.ndarray:
        """player_0's observation (the game is fully observable)."""
        return self._encode(state.timestep, 0, state.chefs, state.pots, state.counters)

    def _encode(
        self, timestep: int, player: int, chefs: tuple[Chef, Chef], pots: Pots, counters: Counters
    ) -> np.ndarray:
        """Both chefs' vectors of a state are computed together (a state's two views are usually
        encoded one after the other); the second is kept until asked for, once."""
        key = (timestep, chefs, pots, counters)
        if key == self._pair_key:
            ready = self._pair[player]
            if ready is not None:
                self._pair[player] = None  # handed out: a second request gets a fresh array
                return ready
        pair = self._encode_pair(timestep, chefs, pots, counters)
        self._pair_key = key
        self._pair = pair
        out = pair[player]
        pair[player] = None
        return out  # type: ignore[return-value]

    def _encode_pair(
        self, timestep: int, chefs: tuple[Chef, Chef], pots: Pots, counters: Counters
    ) -> list[np.ndarray | None]:
        urgent = self._horizon - timestep < URGENCY_STEPS
        key = (urgent, pots, counters)
        if key != self._objects_key:  # pots and counters change far less often than chefs
            cached = self._objects_cache.get(key)
            if cached is None:
                if len(self._objects_cache) > 4096:
                    self._objects_cache.clear()
                cached = self._objects_cache[key] = (
                    self._objects_part(urgent, pots, counters),
                    self._nonempty,
                )
            self._objects_key = key
            self._objects, self._nonempty = cached
        base = self._objects
        c0, c1 = chefs
        cell = self._cell
        if self.planes_size and (c0.held or c1.held):
            a = base.copy()
            if c0.held:
                self._item(a, cell[c0.pos], c0.held)
            if c1.held:
                self._item(a, cell[c1.pos], c1.held)
            b = a.copy()
        else:
            a, b = base.copy(), base.copy()
        if self.planes_size:
            i, j = cell[c0.pos], cell[c1.pos]
            # Channel 0/2-5: the observer; 1/6-9: the other chef.
            a[i + _ME] = b[j + _ME] = 1.0
            a[i + _MY_FACING + c0.facing] = 1.0
            b[j + _MY_FACING + c1.facing] = 1.0
            a[j + _PARTNER] = b[i + _PARTNER] = 1.0
            a[j + _PARTNER_FACING + c1.facing] = 1.0
            b[i + _PARTNER_FACING + c0.facing] = 1.0
        if self.features_size:
            f, chef = self.planes_size, self.chef_size
            if self._nonempty:
                block0 = self._dynamic_block(c0, counters)
                block1 = self._dynamic_block(c1, counters)
            else:
                block0, block1 = self._chef_block[c0], self._chef_block[c1]
            a[f : f + chef] = block0
            a[f + chef : f + 2 * chef] = block1
            b[f : f + chef] = block1
            b[f + chef : f + 2 * chef] = block0
            k = self._tail + TAIL["partner_offset"]
            dx, dy = (c1.pos[0] - c0.pos[0]) / self._W1, (c1.pos[1] - c0.pos[1]) / self._H1
            a[k], a[k + 1] = (dx + 1.0) / 2.0, (dy + 1.0) / 2.0
            b[k], b[k + 1] = (1.0 - dx) / 2.0, (1.0 - dy) / 2.0
            t = self._tail + TAIL["time"]
            a[t] = b[t] = timestep / self._horizon
        return [a, b]

    def _objects_part(self, urgent: bool, pots: Pots, counters: Counters) -> np.ndarray:
        """Terrain, urgency, pots and counters: what neither chef's cell or hands change."""
        out = (self._urgent if urgent else self._base).copy()
        cook_time = self._cook_time
        self._nonempty = [
            (i, 0 if item == Item.ONION else 1 if item == Item.DISH else 2)
            for i, item in enumerate(counters)
            if item
        ]
        if self.planes_size:
            for k, (n, tick) in enumerate(pots):
                if n:
                    p = self._pot_cells[k]
                    if tick < 0:
                        out[p + _IDLE_ONIONS] = n
                    else:
                        out[p + _SOUP_ONIONS] = n
                        out[p + _COOK_LEFT] = cook_time - tick
                        if tick >= cook_time:
                            out[p + _SOUP_DONE] = 1.0
            cells = self._counter_cells
            for k, _ in self._nonempty:
                self._item(out, cells[k], counters[k])
        if self.features_size:
            k, pf = self.planes_size + 2 * self.chef_size, POT_FEATURES
            for n, tick in pots:
                if n:
                    out[k + pf["onions"]] = n / 3.0
                    if tick >= 0:
                        out[k + (pf["ready"] if tick >= cook_time else pf["cooking"])] = 1.0
                        out[k + pf["cook_time_left"]] = (cook_time - tick) / cook_time
                k += len(pf)
            if self._nonempty:
                nc = self.num_counters
                for slot in (0, 1, 2):
                    out[k + TAIL["counter_items"] + slot] = (
                        sum(1 for _, s_ in self._nonempty if s_ == slot) / nc
                    )
            if urgent:
                out[k + TAIL["urgency"]] = 1.0
        return out

    @staticmethod
    def _item(out: np.ndarray, i: int, item: int) -> None:
        if item == Item.ONION:
            out[i + _ONIONS] = 1.0
        elif item == Item.DISH:
            out[i + _PLATES] = 1.0
        else:
            out[i + _SOUP_ONIONS] = soup_onions(item)
            out[i + _SOUP_DONE] = 1.0

    def _dynamic_block(self, chef: Chef, counters: Counters) -> np.ndarray:
        """A chef's feature block when counters hold items (cached: chefs revisit cells)."""
        key = (chef, counters)
        block = self._blocks.get(key)
        if block is None:
            if len(self._blocks) > 20_000:
                self._blocks.clear()
            block = self._chef_block[chef].copy()
            self._counter_distances(block, self.chef_offsets["counter_items"], chef.pos, counters)
            self._blocks[key] = block
        return block

    def _counter_distances(
        self, out: np.ndarray, at: int, pos: Pos, counters: tuple[int, ...]
    ) -> None:
        """Write the distances to the nearest onion, plate, soup on a counter and empty counter."""
        row = self._counter_dist[pos]
        best: list[int | None] = [None, None, None]  # onion, plate, soup
        for k, slot in self._nonempty:
            d = row[k]
            if d is not None:
                b = best[slot]
                if b is None or d < b:
                    best[slot] = d
        span = self._span
        for slot, b in enumerate(best):
            out[at + slot] = 1.0 if b is None else b / span
        for d, k in self._counter_order[pos]:
            if not counters[k]:
                out[at + 3] = d / span
                return
        out[at + 3] = 1.0
