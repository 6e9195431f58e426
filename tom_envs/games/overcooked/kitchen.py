"""The kitchen's places and the walking between them, for the mid-level actions.

The grounding of :mod:`~tom_envs.games.overcooked.midlevel` reads these per-layout tables.
:class:`Kitchen` (built once per layout by :func:`kitchen`) names the places (``o0``, ``c1``,
``k3``...), knows which floor partition reaches which place and the walking distance to each;
:func:`walking_distances` and :func:`shortest_path` search the floor around the partner, and
:func:`step_toward` and :func:`move_away` give the primitive move that brings a chef closer to a
place, or away from its partner.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from functools import cache

import numpy as np

from tom_envs.games.overcooked.layout import Layout, PointOfInterest, Pos, bfs, neighbours
from tom_envs.games.overcooked.rules import Action, OvercookedState
from tom_envs.games.overcooked.view import OvercookedView


# ---------------------------------------------------------------------------- kitchen
@dataclass(frozen=True)
class Reachable:
    """The places one partition reaches: names, and ``(name, pot or counter index)`` pairs."""

    onions: tuple[str, ...]
    plates: tuple[str, ...]
    serving: tuple[str, ...]
    pots: tuple[tuple[str, int], ...]
    shared: tuple[tuple[str, int], ...]
    counters: tuple[tuple[str, int], ...]


class Kitchen:
    """Per-layout lookups for mid-level actions (build with :func:`kitchen`; cached).

    Attributes:
        layout: the layout.
        floor: walkable cells.
        pois: points of interest by name; ``onions``, ``plates``, ``pots``, ``serving``,
            ``shared``, ``kitchen_counters``: the names of each kind, in order.
        goal: ``goal[name][cell]`` walking steps from ``cell`` to a cell next to ``name``
            (ignoring chefs); absent when unreachable.
        region: floor cell -> partition id.
    """

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        tables = layout.tables
        self.floor = frozenset(layout.floor)
        self.pois: dict[str, PointOfInterest] = dict(tables.poi)
        self.region = tables.region
        self.dist = tables.dist
        by_prefix: dict[str, list[str]] = {}
        for p in tables.pois:
            by_prefix.setdefault(p.name[0], []).append(p.name)
        self.onions = tuple(by_prefix.get("o", ()))
        self.plates = tuple(by_prefix.get("p", ()))
        self.pots = tuple(by_prefix.get("c", ()))
        self.serving = tuple(by_prefix.get("d", ()))
        self.shared = tuple(by_prefix.get("s", ()))
        self.kitchen_counters = tuple(by_prefix.get("k", ()))
        self.counter_pois = self.shared + self.kitchen_counters
        self.pot_names = {p: f"c{i}" for i, p in enumerate(layout.pots)}
        self.access_cells = {n: frozenset(c for c, _ in p.access) for n, p in self.pois.items()}
        self.goal: dict[str, dict[Pos, int]] = {}
        for name, poi in self.pois.items():
            goal: dict[Pos, int] = {}
            for cell in self.floor:
                row = self.dist[cell]
                ds = [row[c] for c, _ in poi.access if c in row]
                if ds:
                    goal[cell] = min(ds)
            self.goal[name] = goal
        self.bfs_cache: dict[tuple[Pos, Pos | None], dict[Pos, int]] = {}
        # Which places each partition reaches.
        self.reach: dict[int, frozenset[str]] = {}
        for cell in self.floor:
            r = self.region[cell]
            if r not in self.reach:
                self.reach[r] = frozenset(n for n in self.pois if cell in self.goal[n])
        #: Per partition: the places it reaches, by kind.
        self.reachable_by_kind: dict[int, Reachable] = {}
        for r, names in self.reach.items():

            def indexed(group: tuple[str, ...], names: frozenset[str] = names) -> tuple:
                return tuple((n, self.pois[n].index) for n in group if n in names)

            self.reachable_by_kind[r] = Reachable(
                onions=tuple(n for n in self.onions if n in names),
                plates=tuple(n for n in self.plates if n in names),
                serving=tuple(n for n in self.serving if n in names),
                pots=indexed(self.pots),
                shared=indexed(self.shared),
                counters=indexed(self.counter_pois),
            )

    def reachable(self, pos: Pos, name: str) -> bool:
        """Whether a chef on ``pos`` can walk next to ``name`` (ignoring the partner)."""
        return name in self.reach[self.region[pos]]

    def distance(self, pos: Pos, name: str) -> int | None:
        """Walking steps from ``pos`` to a cell next to ``name`` (ignoring chefs)."""
        return self.goal[name].get(pos)

    def counter_item(self, state: OvercookedState | OvercookedView, name: str) -> int:
        """The item on counter place ``name``."""
        return state.counters[self.pois[name].index]

    def pot(self, state: OvercookedState | OvercookedView, name: str) -> tuple[int, int]:
        """``(onions, tick)`` of pot ``name``."""
        return state.pots[self.pois[name].index]


@cache
def kitchen(layout: Layout) -> Kitchen:
    """The cached :class:`Kitchen` of a layout."""
    return Kitchen(layout)


def walking_distances(k: Kitchen, start: Pos, blocked: Pos | None) -> dict[Pos, int]:
    """BFS distances from ``start`` over the floor, never entering ``blocked`` (the partner).

    Cached per kitchen (at most one entry per pair of cells); do not modify the result.
    """
    key = (start, blocked)
    cached = k.bfs_cache.get(key)
    if cached is not None:
        return cached
    out = k.bfs_cache[key] = bfs(k.floor, start, blocked)
    return out


# ---------------------------------------------------------------------------- walking
def shortest_path(
    k: Kitchen, start: Pos, goals: frozenset[Pos] | set[Pos], blocked: Pos | None
) -> list[Pos] | None:
    """Cells of a shortest walk from ``start`` to any of ``goals`` avoiding ``blocked`` (the
    partner), ``start`` excluded; ``[]`` if already there, ``None`` if no walk exists."""
    if start in goals:
        return []
    parent: dict[Pos, Pos | None] = {start: None}
    queue = deque([start])
    floor = k.floor
    while queue:
        cur = queue.popleft()
        for nxt, _ in neighbours(cur):
            if nxt in floor and nxt not in parent and nxt != blocked:
                parent[nxt] = cur
                if nxt in goals:
                    path = [nxt]
                    while parent[path[-1]] != start:
                        path.append(parent[path[-1]])  # type: ignore[arg-type]
                    return path[::-1]
                queue.append(nxt)
    return None


def direction(a: Pos, b: Pos) -> int:
    """The direction index of the step from ``a`` to the adjacent cell ``b``."""
    return {(0, -1): 0, (0, 1): 1, (1, 0): 2, (-1, 0): 3}[(b[0] - a[0], b[1] - a[1])]


def at_target(k: Kitchen, state: OvercookedState, player: int, target: str) -> int | None:
    """INTERACT or a turn when next to ``target``; ``None`` when not next to it."""
    me = state.chefs[player]
    for cell, d in k.pois[target].access:
        if cell == me.pos:
            return int(Action.INTERACT) if me.facing == d else d
    return None


def greedy_step(k: Kitchen, pos: Pos, target: str) -> Pos | None:
    """The neighbouring cell on a shortest walk to ``target`` ignoring chefs (first in N, S, E,
    W order), or ``None`` when unreachable or already there."""
    goal = k.goal[target]
    here = goal.get(pos)
    if not here:
        return None
    for nxt, _ in neighbours(pos):
        if goal.get(nxt) == here - 1 and nxt in k.floor:
            return nxt
    return None


def step_toward(
    k: Kitchen,
    state: OvercookedState,
    player: int,
    target: str,
    rng: np.random.Generator | None = None,
) -> int | None:
    """The primitive action that brings ``player`` closer to interacting with ``target``.

    ``INTERACT`` when next to it and facing it; a turn (a move towards the non-floor target) when
    next to it but facing elsewhere; else a step along a shortest walk. When the partner stands on
    that walk the chef goes around it (with ``rng``: with probability 1/2, else it waits a step,
    so that two chefs facing each other do not both turn back) or waits if there is no way
    around. ``None`` if ``target`` is unreachable.
    """
    turn = at_target(k, state, player, target)
    if turn is not None:
        return turn
    me, other = state.chefs[player].pos, state.chefs[1 - player].pos
    nxt = greedy_step(k, me, target)
    if nxt is None:
        return None
    if nxt != other:
        return direction(me, nxt)
    if rng is None or rng.random() < 0.5:
        path = shortest_path(k, me, k.access_cells[target] - {other}, other)
        if path:
            return direction(me, path[0])
    return int(Action.STAY)


def move_away(
    k: Kitchen, state: OvercookedState, player: int, rng: np.random.Generator | None = None
) -> int:
    """One step to a free neighbouring cell farther from the partner (the farthest; ties drawn
    with ``rng``, else the first in N, S, E, W order); ``STAY`` if none is farther."""
    me = state.chefs[player]
    other = state.chefs[1 - player].pos
    row = k.dist[other]
    here = row.get(me.pos, 0)
    best: list[int] = []
    best_d = here
    for nxt, d in neighbours(me.pos):
        if nxt in k.floor and nxt != other:
            dd = row.get(nxt, 0)
            if dd > best_d:
                best, best_d = [d], dd
            elif dd == best_d and dd > here:
                best.append(d)
    if not best:
        return int(Action.STAY)
    return best[int(rng.integers(len(best)))] if rng is not None and len(best) > 1 else best[0]
