"""CollabCapture's board for people: the rooms graph with doors, both pursuers and the thief."""

from __future__ import annotations

from typing import Any

from tom_envs.core.board import graph
from tom_envs.games.collab_capture.rules import MAZE


def board_svg(bundle: Any, view: Any) -> str:
    """Rooms and passages (closed doors red and dashed); Y = you, P = partner, T = thief."""
    closed = {frozenset((a, b)) for a, b, _, is_open in view.doors if not is_open}
    edges = []
    for a in MAZE.rooms:
        for b in MAZE.out(a):
            if a < b:
                edges.append((a, b, "closed" if frozenset((a, b)) in closed else "open"))
    marks: dict[int, list[tuple[str, str]]] = {}
    for room, mark in ((view.my_room, ("Y", "#1f5fbf")), (view.partner_room, ("P", "#2e8b57")),
                       (view.thief_room, ("T", "#c0392b"))):  # fmt: skip
        marks.setdefault(room, []).append(mark)
    for _, _, button, _ in view.doors:
        marks.setdefault(button, []).append(("B", "#8e6c00"))
    return graph(MAZE.rooms, edges, marks, f"turn {view.turn + 1} of {view.max_turns}")
