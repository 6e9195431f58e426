"""Bomb defusal's board for people: the map, where teammates are known to be, bombs you see."""

from __future__ import annotations

from typing import Any

from tom_envs.core.board import graph

COLOURS = ("#1f5fbf", "#2e8b57", "#8e44ad")


def board_svg(bundle: Any, view: Any) -> str:
    """Rooms and hallways; players where visible (Y = you); B = active bombs in your room."""
    m = view.game_map
    edges = [(a, b, "open") for a, b in m.edges]
    marks: dict[int, list[tuple[str, str]]] = {}
    for seat, idx in enumerate(view.agent_rooms):
        if idx >= 0:
            text = "Y" if seat == view.player else str(seat)
            marks.setdefault(m.rooms[idx], []).append((text, COLOURS[seat % 3]))
    if view.room_bombs:
        marks.setdefault(m.rooms[view.room], []).append((str(len(view.room_bombs)), "#c0392b"))
    return graph(m.rooms, edges, marks, f"round {view.round}/{view.max_rounds}, score {view.score}")
