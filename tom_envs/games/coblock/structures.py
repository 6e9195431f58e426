"""Geometry of the CoBlock world: colours, blocks, the gravity rule and the five base structures.

Pure functions on plain tuples (no gymnasium, no pettingzoo, no game state). The world is an integer
3D grid, ``y`` is up and the ground is the plane ``y = 0`` (paper §2.1; the original prompt's "y = 1"
is a known slip, see specs/games.md §3). A block is ``(x, y, z, colour)`` with ``colour`` an index
into :data:`COLORS`.

The **gravity rule** (paper §2.1, original ``valid.ts``): a block may be placed when its cell is on
the ground or face-adjacent (6-neighbourhood) to an existing block. It is adjacency, not support:
a block may hang sideways from a pillar.

The five base structures of paper App. A.1 (after Narayan-Chen et al. 2019) are built here as
:class:`Component` values: ``tower``, ``rectangle`` (a wall or a floor slab), ``symbol`` (a letter
standing in a vertical plane), ``arch`` (two pillars taller than 3 blocks, more than 3 apart, and a
top) and ``bridge`` (two low pillars and a deck). Arches and bridges come as two parts (pillars
and top/deck) so a task can give the parts to different agents (goal-dependent tasks).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

#: The six block colours, in the order of the original code's colour list.
COLORS: tuple[str, ...] = ("red", "blue", "yellow", "green", "black", "purple")
COLOR_INDEX: dict[str, int] = {c: i for i, c in enumerate(COLORS)}

Pos = tuple[int, int, int]
#: ``(x, y, z, colour index)``.
Block = tuple[int, int, int, int]

#: The 6-neighbourhood (face adjacency).
NEIGHBOURS: tuple[Pos, ...] = (
    (1, 0, 0),
    (-1, 0, 0),
    (0, 1, 0),
    (0, -1, 0),
    (0, 0, 1),
    (0, 0, -1),
)

#: The five base structure kinds (paper App. A.1, Table 1).
KINDS: tuple[str, ...] = ("symbol", "bridge", "arch", "tower", "rectangle")

#: Every sub-structure label a goal component can carry (kind, or kind + part).
PART_LABELS: tuple[str, ...] = (
    "tower",
    "rectangle",
    "symbol",
    "arch",
    "arch pillars",
    "arch top",
    "bridge",
    "bridge pillars",
    "bridge deck",
)

#: Letters of the ``symbol`` structure, rows top to bottom (``#`` = block). Each is face-connected
#: and touches its bottom row, so it stands on the ground (or on the structure below it).
LETTERS: dict[str, tuple[str, ...]] = {
    "T": ("###", ".#.", ".#."),
    "L": ("#..", "#..", "###"),
    "H": ("#.#", "###", "#.#"),
    "U": ("#.#", "#.#", "###"),
    "I": ("###", ".#.", "###"),
    "C": ("###", "#..", "###"),
    "O": ("###", "#.#", "###"),
    "E": ("###", "##.", "###"),
    "F": ("###", "##.", "#.."),
    "P": ("###", "###", "#.."),
    "+": (".#.", "###", ".#."),
    "J": ("###", "..#", "###"),
}


def pos_of(block: Block) -> Pos:
    """The cell of a block."""
    return (block[0], block[1], block[2])


def fmt_pos(pos: Sequence[int]) -> str:
    """``(1, 0, 2)``."""
    return f"({pos[0]}, {pos[1]}, {pos[2]})"


def fmt_block(block: Block) -> str:
    """``red (1, 0, 2)``."""
    return f"{COLORS[block[3]]} {fmt_pos(block)}"


def in_bounds(pos: Sequence[int], grid: Sequence[int]) -> bool:
    """Whether ``pos`` lies in the ``grid = (X, Y, Z)`` box ``[0, X) × [0, Y) × [0, Z)``."""
    return 0 <= pos[0] < grid[0] and 0 <= pos[1] < grid[1] and 0 <= pos[2] < grid[2]


def supported(pos: Sequence[int], occupied: Collection[Pos]) -> bool:
    """The gravity rule: ``pos`` is on the ground or face-adjacent to an occupied cell."""
    x, y, z = pos[0], pos[1], pos[2]
    if y == 0:
        return True
    return any((x + dx, y + dy, z + dz) in occupied for dx, dy, dz in NEIGHBOURS)


def build_layers(blocks: Iterable[Block], support: Collection[Pos] = ()) -> dict[Pos, int] | None:
    """Breadth-first layers from the ground: 0 for blocks placeable now, k for blocks placeable
    after layer k-1 is built. ``support`` cells count as already built. ``None`` when some block can
    never be placed (the set is not connected to the ground or to ``support``)."""
    cells = {pos_of(b) for b in blocks}
    layer: dict[Pos, int] = {}
    frontier = [p for p in cells if supported(p, support)]
    for p in frontier:
        layer[p] = 0
    depth = 0
    while frontier:
        depth += 1
        nxt = []
        for x, y, z in frontier:
            for dx, dy, dz in NEIGHBOURS:
                q = (x + dx, y + dy, z + dz)
                if q in cells and q not in layer:
                    layer[q] = depth
                    nxt.append(q)
        frontier = nxt
    return layer if len(layer) == len(cells) else None


def is_buildable(blocks: Iterable[Block], support: Collection[Pos] = ()) -> bool:
    """Whether ``blocks`` can be placed one by one under the gravity rule (given ``support``)."""
    return build_layers(blocks, support) is not None


def build_order(blocks: Iterable[Block], support: Collection[Pos] = ()) -> tuple[Block, ...]:
    """``blocks`` sorted into a valid placement order: by layer from the ground, then ``y, x, z``.

    Blocks that can never be placed come last (in ``y, x, z`` order).
    """
    blocks = tuple(blocks)
    layer = build_layers(blocks, support) or {}
    far = 1 << 30
    return tuple(sorted(blocks, key=lambda b: (layer.get(pos_of(b), far), b[1], b[0], b[2], b[3])))


@dataclass(frozen=True)
class Component:
    """One sub-structure of a goal: a base structure or one part of it.

    Attributes:
        kind: one of :data:`KINDS`.
        part: ``"whole"``, or for arches and bridges ``"pillars"``, ``"top"`` / ``"deck"``.
        blocks: its blocks, in a valid placement order once the structure below it exists.
        detail: an optional name shown before the description (``"the letter T"``).
    """

    kind: str
    part: str
    blocks: tuple[Block, ...]
    detail: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown structure kind {self.kind!r}; choose from {KINDS}")
        if self.label not in PART_LABELS:
            raise ValueError(f"unknown part {self.part!r} of a {self.kind}")
        if not self.blocks:
            raise ValueError("a component needs at least one block")

    @property
    def label(self) -> str:
        """``"tower"``, ``"bridge deck"``, ``"arch pillars"``..."""
        return self.kind if self.part == "whole" else f"{self.kind} {self.part}"

    @property
    def description(self) -> str:
        """One line for a goal's ``<Description>``: colours, label, size and extent."""
        text = describe(self.kind, self.part, self.blocks)
        return f"{self.detail}: {text}" if self.detail else text

    def shifted(self, dx: int, dy: int, dz: int) -> Component:
        """The same component moved by ``(dx, dy, dz)``."""
        blocks = tuple((x + dx, y + dy, z + dz, c) for x, y, z, c in self.blocks)
        return Component(self.kind, self.part, blocks, self.detail)

    def to_dict(self) -> dict:
        """JSON-ready form (colours by name)."""
        out: dict = {"kind": self.kind, "part": self.part}
        if self.detail:
            out["detail"] = self.detail
        out["blocks"] = [[x, y, z, COLORS[c]] for x, y, z, c in self.blocks]
        return out

    @classmethod
    def from_dict(cls, data: dict) -> Component:
        """Inverse of :meth:`to_dict`."""
        blocks = tuple((int(x), int(y), int(z), COLOR_INDEX[c]) for x, y, z, c in data["blocks"])
        return cls(data["kind"], data["part"], blocks, data.get("detail", ""))


# --------------------------------------------------------------------------- descriptions
def _colours_of(blocks: Sequence[Block]) -> str:
    names = sorted({COLORS[b[3]] for b in blocks}, key=COLOR_INDEX.__getitem__)
    return " and ".join(names)


def _span(blocks: Sequence[Block]) -> str:
    lo = tuple(min(b[i] for b in blocks) for i in range(3))
    hi = tuple(max(b[i] for b in blocks) for i in range(3))
    return fmt_pos(lo) if lo == hi else f"from {fmt_pos(lo)} to {fmt_pos(hi)}"


def describe(kind: str, part: str, blocks: Sequence[Block]) -> str:
    """A one-line description of a component: colours, size and where it is."""
    n = len(blocks)
    label = kind if part == "whole" else f"{kind} {part}"
    return f"a {_colours_of(blocks)} {label} of {n} block{'s' if n != 1 else ''}, {_span(blocks)}"


# ----------------------------------------------------------------------------- builders
def _axis_step(axis: str) -> tuple[int, int]:
    if axis not in ("x", "z"):
        raise ValueError(f"axis must be 'x' or 'z', got {axis!r}")
    return (1, 0) if axis == "x" else (0, 1)


def tower(x: int, z: int, height: int, colors: Sequence[int], y: int = 0) -> Component:
    """A one-block column of ``height`` blocks at ``(x, z)`` from ``y``; colours cycle by level."""
    if height < 1 or not colors:
        raise ValueError("a tower needs height >= 1 and at least one colour")
    blocks = tuple((x, y + k, z, colors[k % len(colors)]) for k in range(height))
    return Component("tower", "whole", blocks)


def wall(x: int, z: int, length: int, height: int, axis: str, color: int, y: int = 0) -> Component:
    """A vertical rectangle ``length`` long along ``axis`` and ``height`` high (a ``rectangle``)."""
    ax, az = _axis_step(axis)
    blocks = tuple(
        (x + ax * i, y + k, z + az * i, color) for k in range(height) for i in range(length)
    )
    return Component("rectangle", "whole", blocks)


def slab(x: int, z: int, width: int, depth: int, color: int, y: int = 0) -> Component:
    """A flat ``width × depth`` rectangle at height ``y`` (a ``rectangle`` lying down)."""
    blocks = tuple((x + i, y, z + j, color) for i in range(width) for j in range(depth))
    return Component("rectangle", "whole", blocks)


def symbol(letter: str, x: int, z: int, axis: str, color: int, y: int = 0) -> Component:
    """A letter of :data:`LETTERS` standing in the vertical plane along ``axis``."""
    if letter not in LETTERS:
        raise ValueError(f"unknown letter {letter!r}; choose from {sorted(LETTERS)}")
    ax, az = _axis_step(axis)
    rows = LETTERS[letter]
    h = len(rows)
    blocks = tuple(
        (x + ax * i, y + (h - 1 - r), z + az * i, color)
        for r, row in enumerate(rows)
        for i, ch in enumerate(row)
        if ch == "#"
    )
    return Component("symbol", "whole", build_order(blocks), f"the letter {letter}")


def arch(
    x: int,
    z: int,
    span: int,
    height: int,
    axis: str,
    pillar_color: int,
    top_color: int,
    y: int = 0,
) -> tuple[Component, Component]:
    """Two one-block pillars ``height`` high, ``span`` apart along ``axis``, and a top row across.

    Paper App. A.1's rule: pillars taller than 3 and more than 3 apart (``height >= 4``,
    ``span >= 4``); smaller arches are refused.
    """
    if height < 4 or span < 4:
        raise ValueError("an arch needs pillars of height >= 4, at least 4 apart")
    ax, az = _axis_step(axis)
    pillars = tuple(
        (x + ax * i, y + k, z + az * i, pillar_color) for i in (0, span) for k in range(height)
    )
    top = tuple((x + ax * i, y + height, z + az * i, top_color) for i in range(span + 1))
    return (
        Component("arch", "pillars", pillars),
        Component("arch", "top", build_order(top, _cells(pillars))),
    )


def bridge(
    x: int,
    z: int,
    span: int,
    height: int,
    width: int,
    axis: str,
    pillar_color: int,
    deck_color: int,
    y: int = 0,
) -> tuple[Component, Component]:
    """Two pillars (``width`` columns each, ``height`` high) at both ends of a ``span``-long deck.

    The deck lies at ``y + height``, ``width`` blocks wide across ``axis``.
    """
    if span < 3 or height < 1 or width < 1:
        raise ValueError("a bridge needs span >= 3, height >= 1 and width >= 1")
    ax, az = _axis_step(axis)
    bx, bz = az, ax  # across the axis
    pillars = tuple(
        (x + ax * i + bx * w, y + k, z + az * i + bz * w, pillar_color)
        for i in (0, span - 1)
        for w in range(width)
        for k in range(height)
    )
    deck = tuple(
        (x + ax * i + bx * w, y + height, z + az * i + bz * w, deck_color)
        for i in range(span)
        for w in range(width)
    )
    deck = build_order(deck, _cells(pillars))
    return (
        Component("bridge", "pillars", pillars),
        Component("bridge", "deck", deck),
    )


def _cells(blocks: Iterable[Block]) -> frozenset[Pos]:
    return frozenset(pos_of(b) for b in blocks)


def whole(parts: Sequence[Component]) -> Component:
    """Merge the parts of one arch or bridge back into a single ``"whole"`` component."""
    kinds = {p.kind for p in parts}
    if len(kinds) != 1:
        raise ValueError(f"parts of different structures: {sorted(kinds)}")
    kind = kinds.pop()
    blocks = tuple(b for p in parts for b in p.blocks)
    return Component(kind, "whole", build_order(blocks), parts[0].detail)
