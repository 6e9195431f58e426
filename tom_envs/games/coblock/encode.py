"""Vector rendering of a CoBlock view (no game logic).

Named pieces of :meth:`CoBlockEncoder.encode`, in order (``N = X*Y*Z`` cells, ``C = 6`` colours;
cell index ``(x * Y + y) * Z + z``, colour-major within a piece)::

    world        C * N   1 where a block of colour c sits in cell i
    my_goal      C * N   1 where my goal wants colour c in cell i
    my_inventory C       my count of each colour / max_inventory (saturating at 1)
    round        1       rounds played / max_rounds
    my_last      3       my last action: took effect, failed, none yet
    partner_last 5 + 1   the partner's last action kind (one-hot) and whether it took effect
    new_message  1       the partner sent a message in the last round
    ended        2       I ended the task, the partner did

The chat text itself has no vector form (an RL policy sees that a message arrived, not what it
says). ``encode_state`` (for centralised critics) holds the world, both goals, both inventories,
the round and the ended flags.
"""

from __future__ import annotations

import numpy as np

from tom_envs.core.game import Encoder
from tom_envs.games.coblock.rules import (
    ActionKind,
    CoBlockConfig,
    CoBlockState,
    cell_index,
    decode_action,
)
from tom_envs.games.coblock.structures import COLORS, Block
from tom_envs.games.coblock.view import CoBlockView

C = len(COLORS)


def pieces(config: CoBlockConfig) -> tuple[tuple[str, int], ...]:
    """``(name, size)`` of each piece of the observation vector, in order."""
    n = config.cells
    return (
        ("world", C * n),
        ("my_goal", C * n),
        ("my_inventory", C),
        ("round", 1),
        ("my_last", 3),
        ("partner_last", len(ActionKind) + 1),
        ("new_message", 1),
        ("ended", 2),
    )


class CoBlockEncoder(Encoder[CoBlockView, CoBlockState]):
    """One-hot world and goal grids plus a few scalars."""

    def __init__(self, config: CoBlockConfig) -> None:
        self.config = config
        self.n = config.cells
        self.pieces = pieces(config)
        self.offsets: dict[str, int] = {}
        at = 0
        for name, size in self.pieces:
            self.offsets[name] = at
            at += size
        self._size = at
        self._state_size = 3 * C * self.n + 2 * C + 1 + 2
        self._last: dict[int, tuple[CoBlockView, np.ndarray]] = {}
        self._last_state: tuple[CoBlockState, np.ndarray] | None = None
        self._grid_cache: dict[int, tuple[tuple[Block, ...], list[int]]] = {}
        self._decoded: dict[int, ActionKind] = {}

    @property
    def observation_shape(self) -> tuple[int, ...]:
        """``(2*C*N + C + 13,)``."""
        return (self._size,)

    @property
    def state_shape(self) -> tuple[int, ...]:
        """``(3*C*N + 2*C + 3,)``."""
        return (self._state_size,)

    def _grid(self, out: np.ndarray, offset: int, blocks: tuple[Block, ...]) -> None:
        hit = self._grid_cache.get(id(blocks))
        if hit is None or hit[0] is not blocks:  # indices once per tuple of blocks (immutable)
            grid, n = self.config.grid, self.n
            hit = (blocks, [c * n + cell_index(grid, (x, y, z)) for x, y, z, c in blocks])
            if len(self._grid_cache) >= 4096:
                self._grid_cache.clear()
            self._grid_cache[id(blocks)] = hit
        if hit[1]:
            out[[offset + i for i in hit[1]]] = 1.0

    def _inventory(self, out: np.ndarray, offset: int, counts: tuple[int, ...]) -> None:
        top = float(self.config.max_inventory)
        for c, k in enumerate(counts):
            out[offset + c] = min(k / top, 1.0)

    def encode(self, view: CoBlockView) -> np.ndarray:
        """The view as a float32 vector (the last result is reused for the same view object)."""
        cached = self._last.get(view.player)
        if cached is not None and cached[0] is view:
            return cached[1].copy()
        o = self.offsets
        out = np.zeros(self._size, dtype=np.float32)
        self._grid(out, o["world"], view.world)
        self._grid(out, o["my_goal"], view.goal)
        self._inventory(out, o["my_inventory"], view.inventory)
        out[o["round"]] = min(view.round / view.max_rounds, 1.0)
        mine, partner = view.last_result, view.partner_last
        if mine is None:
            out[o["my_last"] + 2] = 1.0
        else:
            out[o["my_last"] + (0 if mine.ok else 1)] = 1.0
        if partner is not None:
            kind = self._decoded.get(partner.action)
            if kind is None:
                kind = self._decoded[partner.action] = decode_action(
                    self.config, partner.action
                ).kind
            out[o["partner_last"] + int(kind)] = 1.0
            out[o["partner_last"] + len(ActionKind)] = 1.0 if partner.ok else 0.0
        if any(r == view.round - 1 and not mine for r, mine, _ in view.dialogue[-2:]):
            out[o["new_message"]] = 1.0
        out[o["ended"]] = float(view.ended[0])
        out[o["ended"] + 1] = float(view.ended[1])
        self._last[view.player] = (view, out)
        return out.copy()

    def encode_state(self, state: CoBlockState) -> np.ndarray:
        """World, player_0's goal, player_1's goal, both inventories, round, ended flags."""
        if self._last_state is not None and self._last_state[0] is state:
            return self._last_state[1].copy()
        n = self.n
        out = np.zeros(self._state_size, dtype=np.float32)
        self._grid(out, 0, state.world)
        self._grid(out, C * n, state.task.goals[0].blocks)
        self._grid(out, 2 * C * n, state.task.goals[1].blocks)
        at = 3 * C * n
        self._inventory(out, at, state.inventories[0])
        self._inventory(out, at + C, state.inventories[1])
        at += 2 * C
        out[at] = min(state.round / self.config.max_rounds, 1.0)
        out[at + 1] = float(state.ended[0])
        out[at + 2] = float(state.ended[1])
        self._last_state = (state, out)
        return out.copy()
