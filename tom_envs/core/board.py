"""Tiny SVG helpers for the per-game boards (``tom_envs/games/<game>/board.py``).

Every game draws its board from one player's **view** only (``board_svg(view, text) -> str``), so
a board shows a person exactly what that seat may see, like the text and the vector.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from html import escape


def svg(width: int, height: int, parts: Iterable[str], title: str = "") -> str:
    """An SVG document of ``parts``."""
    head = f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" class="board">'
    t = f"<title>{escape(title)}</title>" if title else ""
    return head + t + "".join(parts) + "</svg>"


def rect(
    x: float, y: float, w: float, h: float, fill: str, stroke: str = "#333", rx: float = 3
) -> str:
    """A rectangle."""
    return f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{rx}" fill="{fill}" stroke="{stroke}"/>'


def circle(x: float, y: float, r: float, fill: str, stroke: str = "#333") -> str:
    """A circle."""
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" fill="{fill}" stroke="{stroke}"/>'


def line(
    x1: float,
    y1: float,
    x2: float,
    y2: float,
    stroke: str = "#555",
    width: float = 2,
    dash: str = "",
) -> str:
    """A line (dashed when ``dash`` is given, e.g. ``"4,3"``)."""
    d = f' stroke-dasharray="{dash}"' if dash else ""
    return f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{stroke}" stroke-width="{width}"{d}/>'


def label(
    x: float, y: float, text: str, size: int = 12, anchor: str = "middle", fill: str = "#111"
) -> str:
    """A text label."""
    return f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{fill}" font-family="sans-serif">{escape(text)}</text>'


def graph(
    rooms: Sequence[int],
    edges: Iterable[tuple[int, int, str]],
    marks: Mapping[int, Sequence[tuple[str, str]]],
    title: str,
    size: int = 360,
) -> str:
    """Rooms on a circle, passages as lines (style per edge), and coloured marks per room.

    ``edges``: ``(a, b, style)`` with style ``"open"``, ``"closed"`` or ``"oneway"`` (a to b).
    ``marks``: room -> ``[(short label, colour), ...]`` (players, adversaries, objects).
    """
    c, r = size / 2, size / 2 - 40
    pos = {}
    for i, room in enumerate(rooms):
        a = 2 * math.pi * i / len(rooms) - math.pi / 2
        pos[room] = (c + r * math.cos(a), c + 10 + r * math.sin(a))
    parts = [label(c, 16, title, 13)]
    for a, b, style in edges:
        (x1, y1), (x2, y2) = pos[a], pos[b]
        parts.append(line(x1, y1, x2, y2, "#b33" if style == "closed" else "#555", 2,
                          "5,4" if style != "open" else ""))  # fmt: skip
    for room, (x, y) in pos.items():
        parts.append(circle(x, y, 22, "#f4f1e8"))
        parts.append(label(x, y + 4, str(room), 12))
        for k, (text, colour) in enumerate(marks.get(room, ())):
            dx = -14 + 14 * k
            parts.append(circle(x + dx, y - 26, 8, colour))
            parts.append(label(x + dx, y - 22, text, 9, fill="#fff"))
    return svg(size, size + 10, parts, title)
