"""CollabEscape's board for people: rooms, one-way passages, generators, the gate and the killer."""

from __future__ import annotations

from typing import Any

from tom_envs.core.board import graph


def board_svg(bundle: Any, view: Any) -> str:
    """Y = you, P = partner, K = killer, G = generator (fixes done), E = exit gate."""
    maze = bundle.game.maze
    edges = []
    for a in maze.rooms:
        for b in maze.out(a):
            if a in maze.out(b):
                if a < b:
                    edges.append((a, b, "open"))
            else:
                edges.append((a, b, "oneway"))
    marks: dict[int, list[tuple[str, str]]] = {}
    for room, mark in ((view.my_room, ("Y", "#1f5fbf")), (view.partner_room, ("P", "#2e8b57")),
                       (view.killer_room, ("K", "#c0392b")),
                       (view.gate_room, ("E", "#6c3483" if view.gate_open else "#999"))):  # fmt: skip
        marks.setdefault(room, []).append(mark)
    for room, done, needed in view.generators:
        marks.setdefault(room, []).append((f"{done}", "#d35400" if done < needed else "#27ae60"))
    return graph(maze.rooms, edges, marks, f"turn {view.turn + 1}")
