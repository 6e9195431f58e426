"""Bomb defusal: the map (click a neighbouring room to move there), the three specialists by
name, the bombs in your room (click one to inspect it or cut it with a tool) and every bomb you
have learned about, your tools and your teammates', and your last action's result."""

from __future__ import annotations

from typing import Any

from tom_envs.games.bomb_defusal.rules import ActionKind, decode_action
from tom_envs.serve.boards.base import SEAT_COLOURS, Board, draw_rooms, marks_around, room_positions

TITLE = "Bomb defusal"
WIRE = {"red": "#d62728", "green": "#2ca02c", "blue": "#1f77b4"}


def seat_names(bundle: Any) -> list[str]:
    """The specialists' names (Alpha, Bravo, Charlie)."""
    return [a.capitalize() for a in bundle.game.config.agents]


def chat(bundle: Any, view: Any) -> list[tuple[Any, int, str]]:
    """The teammates' messages this view delivers: ``(key, sender, text)``."""
    return [((m.sender, m.time), m.sender, m.text) for m in view.messages]


def build(ctx: Any) -> Board:
    """The map with players and bombs, and the facts the specialist knows."""
    view, text, names = ctx.view, ctx.bundle.text, ctx.names
    gmap = view.game_map
    b = Board(560, 560)
    pos = room_positions(gmap.rooms, gmap.edges, 70, 70, 400)
    moves, here = _actions(ctx, b)
    rooms = {gmap.rooms[i]: a for i, a in moves.items()}
    draw_rooms(b, pos, [(a, c, "open") for a, c in gmap.edges], {r: [a] for r, a in rooms.items()},
               {r: f"move to Room {r}" for r in rooms})  # fmt: skip
    _players(b, view, names, pos)
    _bombs(b, ctx, pos, here)
    b.panel("Your tools", [f"You ({names[view.player]}): "
                           + ", ".join(text.color(c) for c in view.my_tools)]
            + [f"{names[p]}: " + ", ".join(text.color(c) for c in view.tools[p])
               for p in range(len(names)) if p != view.player])
    b.panel("What you know about the bombs", _intel(view, text) or
            ["Nothing yet: inspect a bomb to learn its sequence of colours."])  # fmt: skip
    b.panel("Your last action", [text.result_text(view, view.last_result)])
    b.headline = (f"Round {view.round} of {view.max_rounds} · team score {view.score} of "
                  f"{view.max_score}")  # fmt: skip
    b.panel("How to play", ["Click a highlighted room to move there; click a bomb in your room to "
                            "inspect it or to cut its next wire with one of your tools.",
                            "A bomb is defused when its wires are cut in order, one colour at a "
                            "time; only the tool of the right colour cuts a wire."])  # fmt: skip
    return b


def _actions(ctx: Any, b: Board) -> tuple[dict[int, int], list[int]]:
    """Label every legal action; the move per room index and the bomb actions (inspect, tools)."""
    view, text = ctx.view, ctx.bundle.text
    cfg = ctx.bundle.game.config
    moves: dict[int, int] = {}
    here: list[int] = []
    for a in view.legal_actions:
        dec = decode_action(cfg, a, view.game_map.num_rooms)
        words = text.action_text(view, a)
        if dec.kind == ActionKind.GO_TO and dec.target is not None:
            moves.setdefault(dec.target, a)
            b.label(a, words, "Move")
        else:
            here.append(a)
            b.label(a, words, "Bomb")
    return moves, here


def _players(b: Board, view: Any, names: list[str], pos: dict[int, tuple[float, float]]) -> None:
    rooms = view.game_map.rooms
    by_room: dict[int, list[int]] = {}
    for seat, idx in enumerate(view.agent_rooms):
        if idx >= 0:
            by_room.setdefault(rooms[idx], []).append(seat)
    for seat in range(len(names)):
        you = " (you)" if seat == view.player else ""
        b.mark(f"seat{seat}", f"{names[seat]}{you}", "circle", SEAT_COLOURS[seat],
               letter=names[seat][0])  # fmt: skip
    for room, seats in by_room.items():
        x, y = pos[room]
        for k, seat in enumerate(seats):
            mx, my = marks_around(x, y, k, len(seats) + 1)
            b.token(mx, my, 11, SEAT_COLOURS[seat], names[seat][0], f"seat{seat}",
                    you=seat == view.player, tip=names[seat])  # fmt: skip


def _bombs(b: Board, ctx: Any, pos: dict[int, tuple[float, float]], here: list[int]) -> None:
    """Active bombs in my room (clickable) and bombs I know of elsewhere (from my intel)."""
    view = ctx.view
    rooms = view.game_map.rooms
    active = b.mark("bomb", "an active bomb in your room (click it)", "circle", "#c0392b",
                    letter="B")  # fmt: skip
    known = b.mark("known", "a bomb you know of (number: its id)", "circle", "#e59866",
                   letter="B")  # fmt: skip
    done = b.mark("defused", "a bomb you know is defused", "circle", "#27ae60", letter="✓")
    x, y = pos[rooms[view.room]]
    for k, bomb in enumerate(view.room_bombs):
        b.token(x - 14 + 26 * k, y + 52, 12, "#c0392b", f"{bomb + 1}", active, act=here,
                tip=f"Bomb {bomb + 1}: inspect it or apply a tool")  # fmt: skip
    for item in view.intel:
        if item.room == view.room and item.bomb in view.room_bombs:
            continue
        bx, by = pos[rooms[item.room]]
        m, fill = (known, "#e59866") if item.remaining else (done, "#27ae60")
        b.token(bx + 30, by + 30, 10, fill, f"{item.bomb + 1}", m, tip=f"Bomb {item.bomb + 1}")


def _intel(view: Any, text: Any) -> list[str]:
    rooms = view.game_map.rooms
    out = []
    for item in view.intel:
        state = (f"wires left to cut, in order: {text.sequence(item.remaining)}" if item.remaining
                 else "defused")  # fmt: skip
        out.append(f"Bomb {item.bomb + 1} in Room {rooms[item.room]}: {state} (as of round "
                   f"{item.round})")  # fmt: skip
    return out


def outcome(ctx: Any) -> str:
    """The end of the game in words."""
    v = ctx.view
    return f"The mission is over: the team scored {v.score} of {v.max_score} points."
