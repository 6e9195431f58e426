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

from tom_envs.core.game import Encoder, piece_offsets
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
#: ``my_last``: took effect, failed, no action yet.
_TOOK_EFFECT, _FAILED, _NONE_YET = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)


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
        self.offsets, self.obs_size = piece_offsets(self.pieces)
        self.state_size = 3 * C * self.n + 2 * C + 1 + 2
        self._last_state: tuple[CoBlockState, np.ndarray] | None = None
        # one-hot grids (C * N floats, only read) by tuple of blocks: the goals, and the last few
        # worlds (both seats' views of a state share its world)
        self._goals: dict[int, tuple[tuple[Block, ...], np.ndarray]] = {}
        self._worlds: dict[int, tuple[tuple[Block, ...], np.ndarray]] = {}
        self._kinds: dict[int, int] = {}  # action id -> its ActionKind
        self._inventories: dict[tuple[int, ...], tuple[float, ...]] = {}
        x, y, z = config.grid
        self._cell_of = {
            (i, j, k): cell_index(config.grid, (i, j, k))
            for i in range(x)
            for j in range(y)
            for k in range(z)
        }

    def _grid(
        self, blocks: tuple[Block, ...], cache: dict[int, tuple[tuple[Block, ...], np.ndarray]]
    ) -> np.ndarray:
        """The one-hot grid of ``blocks`` (1 at ``colour * N + cell``, as uint8), kept in ``cache``
        per tuple object (tuples of blocks are immutable). Read only."""
        hit = cache.get(id(blocks))
        if hit is None or hit[0] is not blocks:
            n, cell_of = self.n, self._cell_of
            grid = bytearray(C * n)
            try:
                for x, y, z, c in blocks:
                    grid[c * n + cell_of[(x, y, z)]] = 1
            except KeyError:  # not a state of the rules: their blocks are always inside the grid
                outside = next(b for b in blocks if (b[0], b[1], b[2]) not in cell_of)
                raise ValueError(
                    f"block {outside} is outside the grid {self.config.grid}"
                ) from None
            if len(cache) >= (1024 if cache is self._goals else 4):
                cache.clear()
            hit = cache[id(blocks)] = (blocks, np.frombuffer(grid, dtype=np.uint8))
        return hit[1]

    def _inventory(self, counts: tuple[int, ...]) -> tuple[float, ...]:
        """The inventory entries: each count / max_inventory, at most 1 (kept per counts)."""
        hit = self._inventories.get(counts)
        if hit is None:
            top = float(self.config.max_inventory)
            hit = tuple([min(k / top, 1.0) for k in counts])
            if len(self._inventories) >= 4096:
                self._inventories.clear()
            self._inventories[counts] = hit
        return hit

    def encode(self, view: CoBlockView) -> np.ndarray:
        """The view as a float32 vector (a new array: the grids are kept per tuple of blocks)."""
        mine = partner = None
        for entry in reversed(view.history):  # my and the partner's last actions
            if entry[1]:
                if mine is None:
                    mine = entry
            elif partner is None:
                partner = entry
            if mine is not None and partner is not None:
                break
        kinds = [0.0] * (len(ActionKind) + 1)
        if partner is not None:
            kind = self._kinds.get(partner[2])
            if kind is None:
                kind = self._kinds[partner[2]] = int(decode_action(self.config, partner[2]).kind)
            kinds[kind] = 1.0
            kinds[-1] = 1.0 if partner[4] else 0.0
        dialogue = view.dialogue
        new_message = bool(dialogue) and any(
            r == view.round - 1 and not m for r, m, _ in dialogue[-2:]
        )
        tail = [  # the scalars after the two grids, in the layout's order
            *self._inventory(view.inventory),
            min(view.round / view.max_rounds, 1.0),
            *(_NONE_YET if mine is None else _TOOK_EFFECT if mine[4] else _FAILED),
            *kinds,
            1.0 if new_message else 0.0,
            float(view.ended[0]),
            float(view.ended[1]),
        ]
        return np.concatenate(
            (self._grid(view.world, self._worlds), self._grid(view.goal, self._goals), tail),
            dtype=np.float32,
        )

    def encode_state(self, state: CoBlockState) -> np.ndarray:
        """World, player_0's goal, player_1's goal, both inventories, round, ended flags."""
        if self._last_state is not None and self._last_state[0] is state:
            return self._last_state[1].copy()
        n = self.n
        out = np.zeros(self.state_size, dtype=np.float32)
        out[: C * n] = self._grid(state.world, self._worlds)
        out[C * n : 2 * C * n] = self._grid(state.task.goals[0].blocks, self._goals)
        out[2 * C * n : 3 * C * n] = self._grid(state.task.goals[1].blocks, self._goals)
        at = 3 * C * n
        out[at : at + C] = self._inventory(state.inventories[0])
        out[at + C : at + 2 * C] = self._inventory(state.inventories[1])
        at += 2 * C
        out[at] = min(state.round / self.config.max_rounds, 1.0)
        out[at + 1] = float(state.ended[0])
        out[at + 2] = float(state.ended[1])
        self._last_state = (state, out)
        return out.copy()
