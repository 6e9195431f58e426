"""The participant board's building blocks: shapes, a legend, panels of facts, action labels.

A :class:`Board` is plain data (JSON) that the page draws as SVG elements one by one
(``static/board.js``: ``createElementNS`` and ``textContent``, never HTML), so nothing a game or a
player wrote can run as script. A shape may carry ``act`` (the legal actions a click on it offers:
one is played at once, several open a chooser), ``sel`` (a card to select, for games where a move
is a set of cards), ``tip`` (what it is, in words) and ``m`` (its legend entry: every marker on
the board is explained in the legend, a test checks it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from tom_envs.games.room_maze import PLAYER_NAMES as ROOM_PLAYER_NAMES

#: Seat colours (seat order) shared by every board: blue, green, purple, orange, and more.
SEAT_COLOURS = ("#1f5fbf", "#2e8b57", "#8e44ad", "#d35400", "#7f8c8d", "#b03a2e")
#: The outline that marks the person's own piece.
YOU_OUTLINE = "#f1c40f"


@dataclass
class Board:
    """A participant's board under construction (see the module docstring)."""

    width: int
    height: int
    shapes: list[dict[str, Any]] = field(default_factory=list)
    legend: dict[str, dict[str, Any]] = field(default_factory=dict)
    panels: list[dict[str, Any]] = field(default_factory=list)
    labels: dict[int, tuple[str, str]] = field(default_factory=dict)
    headline: str = ""
    select: bool = False
    keys: dict[str, int] = field(default_factory=dict)
    #: per action, the cards it uses (games where a move is a set of cards: ``select``)
    faces: dict[int, list[str]] = field(default_factory=dict)

    # ------------------------------------------------------------------ shapes
    def _add(self, kind: str, act: Iterable[int] = (), tip: str | None = None,
             m: str | None = None, **attrs: Any) -> dict[str, Any]:  # fmt: skip
        shape: dict[str, Any] = {"k": kind, **attrs}
        acts = sorted({int(a) for a in act})
        if acts:
            shape["act"] = acts
        if tip:
            shape["tip"] = tip
        if m is not None:
            if m not in self.legend:
                raise KeyError(f"legend entry {m!r} is used before it is defined")
            shape["m"] = m
        self.shapes.append(shape)
        return shape

    def rect(self, x: float, y: float, w: float, h: float, fill: str, stroke: str = "#444",
             **kw: Any) -> dict[str, Any]:  # fmt: skip
        """A rectangle (``rx`` rounds its corners, ``sw`` its stroke width)."""
        return self._add("rect", x=_r(x), y=_r(y), w=_r(w), h=_r(h), fill=fill, stroke=stroke, **kw)

    def circle(self, x: float, y: float, r: float, fill: str, stroke: str = "#333",
               **kw: Any) -> dict[str, Any]:  # fmt: skip
        """A circle."""
        return self._add("circle", x=_r(x), y=_r(y), r=_r(r), fill=fill, stroke=stroke, **kw)

    def text(self, x: float, y: float, text: str, size: int = 12, anchor: str = "middle",
             fill: str = "#111", bold: bool = False, **kw: Any) -> dict[str, Any]:  # fmt: skip
        """A text label (shown as text, never parsed)."""
        return self._add("text", x=_r(x), y=_r(y), text=str(text), size=size, anchor=anchor,
                         fill=fill, bold=bold, **kw)  # fmt: skip

    def line(self, x1: float, y1: float, x2: float, y2: float, stroke: str = "#555",
             width: float = 2, dash: str = "", **kw: Any) -> dict[str, Any]:  # fmt: skip
        """A line (dashed when ``dash`` is given); ``arrow`` draws a head at its end."""
        return self._add("line", x1=_r(x1), y1=_r(y1), x2=_r(x2), y2=_r(y2), stroke=stroke,
                         sw=width, dash=dash, **kw)  # fmt: skip

    def poly(self, points: Sequence[tuple[float, float]], fill: str, stroke: str = "#333",
             **kw: Any) -> dict[str, Any]:  # fmt: skip
        """A polygon."""
        return self._add("poly", points=[[_r(x), _r(y)] for x, y in points], fill=fill,
                         stroke=stroke, **kw)  # fmt: skip

    def token(self, x: float, y: float, r: float, fill: str, letter: str, m: str,
              you: bool = False, tip: str | None = None, act: Iterable[int] = ()) -> None:  # fmt: skip
        """A round marker with a letter (a player, a bomb, a thief ...), explained by ``m``."""
        self.circle(x, y, r, fill, YOU_OUTLINE if you else "#222", sw=3 if you else 1, m=m,
                    tip=tip, act=act)  # fmt: skip
        self.text(x, y + r * 0.38, letter, max(8, int(r * 1.05)), fill="#fff", bold=True, act=act)

    # ------------------------------------------------------------------ explanations
    def mark(self, key: str, text: str, shape: str = "circle", fill: str = "#ccc",
             stroke: str = "#222", letter: str = "", dash: str = "") -> str:  # fmt: skip
        """Define a legend entry (idempotent); returns its key for shapes' ``m``."""
        self.legend.setdefault(key, {"key": key, "shape": shape, "fill": fill, "stroke": stroke,
                                     "letter": letter, "dash": dash, "text": text})  # fmt: skip
        return key

    def panel(self, title: str, lines: Iterable[str], kind: str = "list") -> None:
        """A box of facts beside the board (every line in full)."""
        self.panels.append({"title": title, "lines": [str(x) for x in lines], "kind": kind})

    def label(self, action: int, text: str, group: str = "") -> None:
        """The words of a legal action on its button, and the group it is listed under."""
        self.labels[int(action)] = (text, group)

    def to_json(self, legal: Sequence[int]) -> dict[str, Any]:
        """The board as the page receives it; ``legal`` orders the action buttons."""
        actions = []
        for a in legal:
            text, group = self.labels.get(int(a), (f"action {int(a)}", ""))
            entry: dict[str, Any] = {"id": int(a), "label": text, "group": group}
            if int(a) in self.faces:
                entry["faces"] = self.faces[int(a)]
            actions.append(entry)
        return {
            "board": {"w": self.width, "h": self.height, "shapes": self.shapes},
            "legend": list(self.legend.values()),
            "panels": self.panels,
            "actions": actions,
            "headline": self.headline,
            "select": self.select,
            "keys": self.keys,
        }


def _r(v: float) -> float:
    return round(float(v), 1)


def plural(n: int, word: str, many: str | None = None) -> str:
    """``"1 card"``, ``"3 cards"``."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def and_list(items: Sequence[str]) -> str:
    """``"a, b and c"``."""
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def situation(text: str) -> list[str]:
    """A game's observation text as sentences for a panel, without its lettered action list
    (the actions are the buttons)."""
    lines = []
    for line in text.split("\n"):
        if "Available actions" in line:
            break
        lines += [s.strip().rstrip(".") + "." for s in line.split(". ") if s.strip(" .")]
    return lines


# ------------------------------------------------------------------ room graphs
@cache
def _layout(rooms: tuple[int, ...], edges: tuple[tuple[int, int], ...]) -> dict[int, tuple[float, float]]:
    """Room positions in the unit square: a deterministic force layout of the map (cached)."""
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(rooms)
    g.add_edges_from(edges)
    pos = nx.kamada_kawai_layout(g) if len(rooms) > 2 else nx.circular_layout(g)
    xs = [float(p[0]) for p in pos.values()]
    ys = [float(p[1]) for p in pos.values()]
    span = max(max(xs) - min(xs), max(ys) - min(ys), 1e-9)
    return {r: ((float(pos[r][0]) - min(xs)) / span, (float(pos[r][1]) - min(ys)) / span)
            for r in rooms}  # fmt: skip


def room_positions(rooms: Sequence[int], edges: Iterable[tuple[int, int]], x0: float, y0: float,
                   size: float) -> dict[int, tuple[float, float]]:  # fmt: skip
    """Screen positions of the rooms of a map in a ``size`` square at ``(x0, y0)``."""
    key = tuple(sorted({(min(a, b), max(a, b)) for a, b in edges}))
    unit = _layout(tuple(rooms), key)
    return {r: (x0 + size * u, y0 + size * v) for r, (u, v) in unit.items()}


def draw_rooms(b: Board, pos: Mapping[int, tuple[float, float]],
               edges: Iterable[tuple[int, int, str]], acts: Mapping[int, Iterable[int]],
               tips: Mapping[int, str], radius: float = 30) -> None:  # fmt: skip
    """Passages (``"open"``, ``"closed"`` door, ``"oneway"`` a to b) and rooms as circles with
    their numbers; a room offers the actions ``acts[room]`` (e.g. moving there)."""
    styles = {"open": ("#666", "", "passage"), "closed": ("#c0392b", "6,4", "closed door"),
              "oneway": ("#666", "2,3", "one-way passage")}  # fmt: skip
    for a, c, style in edges:
        colour, dash, word = styles[style]
        key = b.mark(f"edge:{style}", word, "line", colour, colour, dash=dash)
        (x1, y1), (x2, y2) = pos[a], pos[c]
        if style == "oneway":  # stop short of the target's circle so the arrow head shows
            d = math.hypot(x2 - x1, y2 - y1) or 1.0
            x2, y2 = x2 - (x2 - x1) * radius / d, y2 - (y2 - y1) * radius / d
        b.line(x1, y1, x2, y2, colour, 3, dash, m=key, arrow=style == "oneway")
    room = b.mark("room", "a room (its number inside); click a room to act on it", "circle",
                  "#f4f1e8", "#555")  # fmt: skip
    for r, (x, y) in pos.items():
        act = list(acts.get(r, ()))
        b.circle(x, y, radius, "#fffbe6" if act else "#f4f1e8", "#d4a017" if act else "#555",
                 sw=3 if act else 1.5, m=room, act=act, tip=tips.get(r))  # fmt: skip
        b.text(x, y + 5, str(r), 15, fill="#333", bold=True, act=act)


def two_players_and_enemy(b: Board, view: Any, names: Sequence[str],
                          pos: Mapping[int, tuple[float, float]], enemy: tuple[int, str, str]) -> None:  # fmt: skip
    """The two players of a rooms game (``view.my_room``, ``view.partner_room``) and their
    enemy ``(room, letter, name)`` (the thief, the killer), each explained in the legend."""
    me = view.player
    for seat in (0, 1):
        b.mark(f"seat{seat}", f"{names[seat]}{' (you)' if seat == me else ''}", "circle",
               SEAT_COLOURS[seat], letter=names[seat][0])  # fmt: skip
    room, letter, what = enemy
    key = b.mark(what, f"the {what}", "circle", "#c0392b", letter=letter)
    count: dict[int, int] = {}
    for where, seat in ((view.my_room, me), (view.partner_room, 1 - me)):
        k = count[where] = count.get(where, -1) + 1
        x, y = marks_around(*pos[where], k, 3)
        b.token(x, y, 11, SEAT_COLOURS[seat], names[seat][0], f"seat{seat}", you=seat == me,
                tip=str(names[seat]))  # fmt: skip
    x, y = marks_around(*pos[room], count.get(room, -1) + 1, 3)
    b.token(x, y, 11, "#c0392b", letter, key, tip=f"the {what}")


def alice_and_bob(bundle: Any) -> list[str]:
    """The seats of a rooms game (CollabCapture, CollabEscape): Alice and Bob."""
    return list(ROOM_PLAYER_NAMES)


def room_board(ctx: Any, b: Board, pos: Mapping[int, tuple[float, float]],
               edges: Iterable[tuple[int, int, str]], acts: Mapping[int, Iterable[int]],
               here: str, enemy: tuple[int, str, str], things: Callable[[], None]) -> Board:  # fmt: skip
    """``b`` with a rooms game drawn on it: passages and rooms (:func:`draw_rooms`; a room in
    ``acts`` is a move there, the seat's own room ``here``), the game's own ``things`` (buttons,
    generators, and their panels), both players and their ``enemy``
    (:func:`two_players_and_enemy`), the situation in words and every legal action's words."""
    view = ctx.view
    tips = {r: f"move to room {r}" for r in acts}
    tips[view.my_room] = here
    draw_rooms(b, pos, edges, acts, tips)
    things()
    two_players_and_enemy(b, view, ROOM_PLAYER_NAMES, pos, enemy)
    b.panel("Situation", situation(ctx.bundle.text.observation_text(view)))
    for a in set(view.legal_actions):
        b.label(a, ctx.bundle.text.action_text(view, a))
    return b

def marks_around(x: float, y: float, k: int, n: int, radius: float = 30) -> tuple[float, float]:
    """Where the ``k``-th of ``n`` markers in a room goes (around the room's circle)."""
    a = -math.pi / 2 + 2 * math.pi * k / max(n, 1) + (math.pi / 4 if n > 1 else 0)
    return x + (radius + 4) * math.cos(a), y + (radius + 4) * math.sin(a)
