"""Maps of the bomb-defusal game: the paper's five-room map and random connected maps (networkx).

A :class:`GameMap` is a value (frozen, hashable): room ids and undirected hallways, with the
neighbour lists and all-pairs hallway distances precomputed once. Room ids are the labels players
read ("Room 5"); the action space addresses rooms by their *index* in ``rooms`` (sorted ids).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx
import numpy as np

#: The paper's mission map (specs §1.1, decoded from the original map file): rooms 0, 3, 5, 6, 8.
PAPER_ROOMS: tuple[int, ...] = (0, 3, 5, 6, 8)
#: Its undirected hallways.
PAPER_EDGES: tuple[tuple[int, int], ...] = ((0, 3), (0, 5), (0, 6), (0, 8), (3, 8), (5, 6), (6, 8))
#: The prompt's description of that map (App. A.1), word for word.
PAPER_MAP_TEXT = (
    "The rooms are numbered 0, 3, 6, 5, and 8. Room 0 is connected to all other rooms. Room 5 "
    "shares a hallway with room 6. Room 3 is linked to room 8. And room 8 is also connected with "
    "room 6."
)


@dataclass(frozen=True)
class GameMap:
    """Rooms joined by hallways (a connected undirected graph).

    Attributes:
        rooms: room ids, sorted; the index of a room in this tuple is its action index.
        edges: undirected hallways as ``(a, b)`` pairs of room ids with ``a < b``, sorted.
        neighbors: for each room index, the indices of adjacent rooms (derived).
        distance: ``distance[i][j]``, hallways on a shortest path between room indices (derived).
    """

    rooms: tuple[int, ...]
    edges: tuple[tuple[int, int], ...]
    neighbors: tuple[tuple[int, ...], ...] = field(init=False, compare=False, repr=False)
    distance: tuple[tuple[int, ...], ...] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        rooms = tuple(sorted(int(r) for r in self.rooms))
        if len(rooms) < 2 or len(set(rooms)) != len(rooms):
            raise ValueError(f"a map needs at least two distinct rooms, got {self.rooms}")
        edges = tuple(sorted({(min(int(a), int(b)), max(int(a), int(b))) for a, b in self.edges}))
        for a, b in edges:
            if a == b or a not in rooms or b not in rooms:
                raise ValueError(f"hallway {(a, b)} must join two different rooms of {rooms}")
        graph = nx.Graph()
        graph.add_nodes_from(rooms)
        graph.add_edges_from(edges)
        if not nx.is_connected(graph):
            raise ValueError(f"the map must be connected: rooms {rooms}, hallways {edges}")
        index = {r: i for i, r in enumerate(rooms)}
        nbrs = tuple(tuple(sorted(index[n] for n in graph.neighbors(r))) for r in rooms)
        lengths = dict(nx.all_pairs_shortest_path_length(graph))
        dist = tuple(tuple(lengths[a][b] for b in rooms) for a in rooms)
        object.__setattr__(self, "rooms", rooms)
        object.__setattr__(self, "edges", edges)
        object.__setattr__(self, "neighbors", nbrs)
        object.__setattr__(self, "distance", dist)

    @property
    def num_rooms(self) -> int:
        """Number of rooms n."""
        return len(self.rooms)

    def index(self, room: int) -> int:
        """Index of room id ``room`` (raises ``ValueError`` for an unknown room)."""
        return self.rooms.index(room)

    def adjacent(self, i: int, j: int) -> bool:
        """Whether room indices ``i`` and ``j`` share a hallway."""
        return j in self.neighbors[i]

    def next_hop(self, i: int, j: int) -> int:
        """The first room index on a shortest path from ``i`` to ``j`` (lowest index on ties)."""
        if i == j:
            return i
        return min(k for k in self.neighbors[i] if self.distance[k][j] == self.distance[i][j] - 1)

    def describe(self) -> str:
        """The map in words: the paper's sentence for the paper's map, one line per room else."""
        if self.rooms == PAPER_ROOMS and self.edges == PAPER_EDGES:
            return PAPER_MAP_TEXT
        ids = ", ".join(str(r) for r in self.rooms)
        lines = [f"The rooms are numbered {ids}."]
        for i, r in enumerate(self.rooms):
            others = [str(self.rooms[k]) for k in self.neighbors[i]]
            lines.append(f"Room {r} is connected to room {_and(others)}.")
        return " ".join(lines)


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def paper_map() -> GameMap:
    """The paper's five-room map (rooms 0, 3, 5, 6, 8)."""
    return GameMap(PAPER_ROOMS, PAPER_EDGES)


def random_map(num_rooms: int, extra_edge_prob: float, rng: np.random.Generator) -> GameMap:
    """A random connected map on rooms ``0 … num_rooms-1``.

    A uniformly random labelled spanning tree (networkx, seeded from ``rng``) guarantees
    connectivity; every other pair of rooms then gets a hallway with probability
    ``extra_edge_prob`` (drawn from ``rng`` in a fixed pair order). Same generator state, same map.
    """
    if num_rooms < 2:
        raise ValueError(f"num_rooms must be >= 2, got {num_rooms}")
    if not 0.0 <= extra_edge_prob <= 1.0:
        raise ValueError(f"extra_edge_prob must be in [0, 1], got {extra_edge_prob}")
    tree = nx.random_labeled_tree(num_rooms, seed=int(rng.integers(2**31 - 1)))
    edges = {(min(a, b), max(a, b)) for a, b in tree.edges}
    for a in range(num_rooms):
        for b in range(a + 1, num_rooms):
            if (a, b) not in edges and rng.random() < extra_edge_prob:
                edges.add((a, b))
    return GameMap(tuple(range(num_rooms)), tuple(sorted(edges)))
