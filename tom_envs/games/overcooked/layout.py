"""Overcooked kitchens as readable ASCII files, read by a small safe parser (never ``eval``).

A layout file is a few ``key: value`` header lines, then ``grid:`` and one row per line::

    # comment
    name: cramped_room
    title: Cramped Room
    source: cramped_room            (the overcooked-ai 1.1.0 layout it reproduces, if any)
    description: A small square kitchen ...
      (indented lines continue the previous value)
    grid:
    |XXPXX|
    |O  2O|
    |X1  X|
    |XDXSX|

Grid legend (overcooked-ai's): ``X`` counter, ``O`` onion dispenser, ``D`` dish (plate)
dispenser, ``P`` pot, ``S`` serving window, space = floor, ``1`` / ``2`` = the start cells of
player_0 / player_1 (floor). The ``|`` bars around a row are optional and keep trailing spaces
visible. Coordinates are ``(x, y)`` with ``x`` the column and ``y`` the row, as in overcooked-ai.

:class:`Layout` also precomputes everything the rules, the renderings, the mid-level actions and
the planners look up every step: the move table, what each chef faces, named points of interest
(``o0``, ``p0``, ``c0``, ``d0``, ``s0``, ``k0``, the paper's names) and all-pairs walking distances.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path

#: Directions as overcooked-ai orders them: index 0 north (up), 1 south, 2 east, 3 west.
DIRECTIONS: tuple[tuple[int, int], ...] = ((0, -1), (0, 1), (1, 0), (-1, 0))
DIRECTION_NAMES = ("north", "south", "east", "west")

COUNTER, ONION_DISPENSER, DISH_DISPENSER, POT, SERVING, FLOOR = "X", "O", "D", "P", "S", " "
TERRAIN = frozenset((COUNTER, ONION_DISPENSER, DISH_DISPENSER, POT, SERVING, FLOOR))
TERRAIN_NAMES = {
    COUNTER: "counter",
    ONION_DISPENSER: "onion dispenser",
    DISH_DISPENSER: "plate dispenser",
    POT: "pot",
    SERVING: "delivery window",
    FLOOR: "floor",
}

#: What a chef faces, as kind codes of :attr:`Layout.front` (``index`` is the pot/counter index).
FACE_NOTHING, FACE_COUNTER, FACE_POT, FACE_ONIONS, FACE_DISHES, FACE_SERVING = range(6)
_FACE_KIND = {
    COUNTER: FACE_COUNTER,
    POT: FACE_POT,
    ONION_DISPENSER: FACE_ONIONS,
    DISH_DISPENSER: FACE_DISHES,
    SERVING: FACE_SERVING,
}

Pos = tuple[int, int]
LAYOUT_NAMES = (
    "cramped_room",
    "asymmetric_advantages",
    "coordination_ring",
    "forced_coordination",
    "counter_circuit",
)


class LayoutError(ValueError):
    """A layout file or grid that cannot be used, with the reason."""


@dataclass(frozen=True)
class PointOfInterest:
    """A named place a chef can interact with (the paper's ``o0``, ``c1``, ``s0``...).

    Attributes:
        name: ``o0`` onion dispenser, ``p0`` plate dispenser, ``c0`` pot ("cooker"), ``d0``
            delivery window, ``s0`` shared counter (reachable from two partitions), ``k0``
            kitchen counter.
        kind: the terrain character.
        pos: grid cell.
        index: index among the pots (for ``c``) or among all counters (for ``s`` and ``k``).
        access: the floor cells from which a chef can interact with it, each with the direction
            to face, ``((cell, direction index), ...)``.
    """

    name: str
    kind: str
    pos: Pos
    index: int
    access: tuple[tuple[Pos, int], ...]


@dataclass(frozen=True)
class Layout:
    """A parsed kitchen with its precomputed lookup tables (immutable, shared by all states).

    Attributes:
        name: machine name (``"cramped_room"``).
        title: display name (``"Cramped Room"``).
        grid: the terrain rows with the start digits replaced by floor.
        starts: start cell of each player, in player order.
        description: the paper's per-layout description ``L_i`` (free text).
        source: the overcooked-ai 1.1.0 layout name this grid reproduces (``""`` if none).
    """

    name: str
    title: str
    grid: tuple[str, ...]
    starts: tuple[Pos, ...]
    description: str = ""
    source: str = ""
    width: int = field(init=False)
    height: int = field(init=False)

    def __post_init__(self) -> None:
        validate_grid(self.grid, self.starts)
        object.__setattr__(self, "width", len(self.grid[0]))
        object.__setattr__(self, "height", len(self.grid))

    # ------------------------------------------------------------------ terrain
    def terrain(self, pos: Pos) -> str:
        """The terrain character at ``pos`` (``"X"`` outside the grid)."""
        x, y = pos
        if 0 <= y < self.height and 0 <= x < self.width:
            return self.grid[y][x]
        return COUNTER

    def cells(self, kind: str) -> tuple[Pos, ...]:
        """Every cell of a terrain kind, in reading order (row by row, left to right)."""
        return _cells(self.grid, kind)

    @property
    def floor(self) -> tuple[Pos, ...]:
        """Walkable cells in reading order."""
        return self.cells(FLOOR)

    @property
    def pots(self) -> tuple[Pos, ...]:
        """Pot cells in reading order (pot ``i`` is ``c{i}`` in text)."""
        return self.cells(POT)

    @property
    def counters(self) -> tuple[Pos, ...]:
        """Counter cells in reading order (objects on counters are stored in this order)."""
        return self.cells(COUNTER)

    # ------------------------------------------------------------------ tables
    @property
    def tables(self) -> LayoutTables:
        """Precomputed lookups (built once per layout)."""
        return _tables(self)


def _cells(grid: tuple[str, ...], kind: str) -> tuple[Pos, ...]:
    return tuple((x, y) for y, row in enumerate(grid) for x, c in enumerate(row) if c == kind)


def validate_grid(grid: tuple[str, ...], starts: tuple[Pos, ...]) -> None:
    """Raise :class:`LayoutError` unless the grid is usable (rectangular, closed, known chars)."""
    if not grid or not grid[0]:
        raise LayoutError("the grid is empty")
    width = len(grid[0])
    for y, row in enumerate(grid):
        if len(row) != width:
            raise LayoutError(f"row {y} has {len(row)} cells, row 0 has {width}: rows must align")
        for x, c in enumerate(row):
            if c == "T":
                raise LayoutError(f"tomato dispenser at {(x, y)}: tomato recipes are not supported")
            if c not in TERRAIN:
                raise LayoutError(f"unknown grid character {c!r} at {(x, y)}")
            border = y in (0, len(grid) - 1) or x in (0, width - 1)
            if border and c == FLOOR:
                raise LayoutError(f"floor on the border at {(x, y)}: the kitchen must be closed")
    if len(starts) != 2:
        raise LayoutError(f"a layout needs start cells 1 and 2, found {len(starts)}")
    for p in starts:
        if grid[p[1]][p[0]] != FLOOR:
            raise LayoutError(f"start cell {p} is not floor")
    if starts[0] == starts[1]:
        raise LayoutError("the two start cells coincide")
    for kind in (POT, ONION_DISPENSER, DISH_DISPENSER, SERVING):
        if not _cells(grid, kind):
            raise LayoutError(f"the layout has no {TERRAIN_NAMES[kind]} ({kind!r})")


# ---------------------------------------------------------------------------- parser
def parse_layout(text: str, where: str = "<string>") -> Layout:
    """Parse a layout file's text (see the module docstring). Never evaluates anything."""
    header: dict[str, str] = {}
    rows: list[str] = []
    last_key = None
    in_grid = False
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip("\n\r")
        if in_grid:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            row = line.strip()
            if row.startswith("|"):
                if not row.endswith("|") or len(row) < 2:
                    raise LayoutError(f"{where}:{n}: a grid row opened with '|' must end with '|'")
                row = row[1:-1]
            rows.append(row)
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] in " \t":
            if last_key is None:
                raise LayoutError(f"{where}:{n}: indented line before any key")
            header[last_key] += " " + line.strip()
            continue
        key, sep, value = line.partition(":")
        key = key.strip().lower()
        if not sep or not key.replace("_", "").isalnum():
            raise LayoutError(f"{where}:{n}: expected 'key: value' or 'grid:', got {line!r}")
        if key == "grid":
            if value.strip():
                raise LayoutError(f"{where}:{n}: the grid starts on the line after 'grid:'")
            in_grid = True
            continue
        if key in header:
            raise LayoutError(f"{where}:{n}: duplicate key {key!r}")
        header[key] = value.strip()
        last_key = key
    unknown = set(header) - {"name", "title", "source", "description"}
    if unknown:
        raise LayoutError(f"{where}: unknown keys {sorted(unknown)}")
    if not rows:
        raise LayoutError(f"{where}: no 'grid:' section")
    return layout_from_rows(
        rows,
        name=header.get("name", Path(where).stem),
        title=header.get("title", ""),
        description=header.get("description", ""),
        source=header.get("source", ""),
    )


def layout_from_rows(
    rows: list[str] | tuple[str, ...],
    name: str = "custom",
    title: str = "",
    description: str = "",
    source: str = "",
) -> Layout:
    """A :class:`Layout` from grid rows that contain the start digits ``1`` and ``2``."""
    starts: dict[int, Pos] = {}
    clean = []
    for y, row in enumerate(rows):
        out = []
        for x, c in enumerate(row):
            if c.isdigit():
                k = int(c)
                if k not in (1, 2):
                    raise LayoutError(f"start digit {c!r} at {(x, y)}: only 1 and 2 (two chefs)")
                if k in starts:
                    raise LayoutError(f"start cell {k} appears twice")
                starts[k] = (x, y)
                c = FLOOR
            out.append(c)
        clean.append("".join(out))
    if set(starts) != {1, 2}:
        raise LayoutError(f"the grid must contain the start cells 1 and 2, found {sorted(starts)}")
    return Layout(
        name=name,
        title=title or name.replace("_", " ").title(),
        grid=tuple(clean),
        starts=(starts[1], starts[2]),
        description=description,
        source=source,
    )


@cache
def builtin_layout(name: str) -> Layout:
    """One of the five packaged layouts (``LAYOUT_NAMES``)."""
    if name not in LAYOUT_NAMES:
        raise LayoutError(f"unknown layout {name!r}; packaged layouts: {', '.join(LAYOUT_NAMES)}")
    text = resources.files("tom_envs.games.overcooked").joinpath(f"layouts/{name}.txt").read_text()
    return parse_layout(text, f"layouts/{name}.txt")


def load_layout(name_or_path: str) -> Layout:
    """A packaged layout by name, or any layout file by path (``.txt``)."""
    if name_or_path in LAYOUT_NAMES:
        return builtin_layout(name_or_path)
    path = Path(name_or_path)
    if path.suffix == ".txt" and path.is_file():
        return parse_layout(path.read_text(), str(path))
    raise LayoutError(
        f"unknown layout {name_or_path!r}: give one of {', '.join(LAYOUT_NAMES)} or the path of a "
        "layout .txt file"
    )


# ---------------------------------------------------------------------------- tables
@dataclass(frozen=True)
class LayoutTables:
    """Lookups derived from a layout (see :func:`_tables`).

    Attributes:
        move: ``move[(cell, direction)]`` = the cell after moving that way (unchanged if blocked).
        front: ``front[(cell, direction)]`` = ``(kind, index)`` of what a chef on ``cell`` facing
            ``direction`` interacts with (``FACE_*`` kinds; ``index`` is the pot or counter index).
        pot_index / counter_index: cell -> index.
        dist: ``dist[a][b]`` walking steps between floor cells (absent if unreachable).
        region: floor cell -> connected-component id (partitions of the kitchen).
        pois: every point of interest, in the paper's naming and order.
        poi: name -> point of interest.
    """

    move: dict[tuple[Pos, int], Pos]
    front: dict[tuple[Pos, int], tuple[int, int]]
    pot_index: dict[Pos, int]
    counter_index: dict[Pos, int]
    dist: dict[Pos, dict[Pos, int]]
    region: dict[Pos, int]
    pois: tuple[PointOfInterest, ...]
    poi: dict[str, PointOfInterest]


def neighbours(pos: Pos) -> list[tuple[Pos, int]]:
    """The four adjacent cells with the direction index leading to each."""
    x, y = pos
    return [((x + dx, y + dy), d) for d, (dx, dy) in enumerate(DIRECTIONS)]


def bfs(floor: frozenset[Pos] | set[Pos], start: Pos, blocked: Pos | None = None) -> dict[Pos, int]:
    """Walking distances from ``start`` over ``floor`` cells, never entering ``blocked``."""
    out = {start: 0}
    queue = deque([start])
    while queue:
        cur = queue.popleft()
        for nxt, _ in neighbours(cur):
            if nxt in floor and nxt not in out and nxt != blocked:
                out[nxt] = out[cur] + 1
                queue.append(nxt)
    return out


@cache
def _tables(layout: Layout) -> LayoutTables:
    floor = frozenset(layout.floor)
    move: dict[tuple[Pos, int], Pos] = {}
    front: dict[tuple[Pos, int], tuple[int, int]] = {}
    pot_index = {p: i for i, p in enumerate(layout.pots)}
    counter_index = {p: i for i, p in enumerate(layout.counters)}
    for cell in floor:
        for nxt, d in neighbours(cell):
            move[(cell, d)] = nxt if nxt in floor else cell
            kind = _FACE_KIND.get(layout.terrain(nxt), FACE_NOTHING)
            index = pot_index.get(nxt, counter_index.get(nxt, 0))
            front[(cell, d)] = (kind, index)
    dist = {c: bfs(floor, c) for c in floor}
    region: dict[Pos, int] = {}
    for c in layout.floor:
        if c not in region:
            rid = len(set(region.values()))
            for other in dist[c]:
                region[other] = rid
    pois = _points_of_interest(layout, floor, region, pot_index, counter_index)
    return LayoutTables(
        move=move,
        front=front,
        pot_index=pot_index,
        counter_index=counter_index,
        dist=dist,
        region=region,
        pois=pois,
        poi={p.name: p for p in pois},
    )


def _points_of_interest(
    layout: Layout,
    floor: frozenset[Pos],
    region: dict[Pos, int],
    pot_index: dict[Pos, int],
    counter_index: dict[Pos, int],
) -> tuple[PointOfInterest, ...]:
    """The paper's names: o (onions), p (plates), c (cookers), d (delivery), s (shared counters,
    reachable from two partitions), k (other kitchen counters a chef can reach)."""
    out: list[PointOfInterest] = []

    def access(pos: Pos) -> tuple[tuple[Pos, int], ...]:
        # From floor cell c, facing direction d reaches pos when c + DIRECTIONS[d] == pos.
        found = []
        for d, (dx, dy) in enumerate(DIRECTIONS):
            c = (pos[0] - dx, pos[1] - dy)
            if c in floor:
                found.append((c, d))
        return tuple(sorted(found))

    for prefix, kind in (("o", ONION_DISPENSER), ("p", DISH_DISPENSER), ("c", POT), ("d", SERVING)):
        for i, pos in enumerate(layout.cells(kind)):
            index = pot_index.get(pos, i)
            out.append(PointOfInterest(f"{prefix}{i}", kind, pos, index, access(pos)))
    shared, kitchen = [], []
    for pos in layout.counters:
        acc = access(pos)
        if not acc:
            continue
        regions = {region[c] for c, _ in acc}
        (shared if len(regions) > 1 else kitchen).append((pos, acc))
    for prefix, group in (("s", shared), ("k", kitchen)):
        for i, (pos, acc) in enumerate(group):
            out.append(PointOfInterest(f"{prefix}{i}", COUNTER, pos, counter_index[pos], acc))
    return tuple(out)
