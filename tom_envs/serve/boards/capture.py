"""CollabCapture (catch the thief): the rooms and doors (click a room next to you to move there,
click your room's button to open or close its door), both pursuers by name and the thief."""

from __future__ import annotations

from typing import Any

from tom_envs.games.collab_capture.rules import MAZE, PLAYER_NAMES, Action
from tom_envs.serve.boards.base import (
    SEAT_COLOURS,
    Board,
    draw_rooms,
    marks_around,
    room_positions,
    situation,
)

TITLE = "Catch the thief"


def seat_names(bundle: Any) -> list[str]:
    """Alice and Bob."""
    return list(PLAYER_NAMES)


def build(ctx: Any) -> Board:
    """The map, the pursuers, the thief, the doors and their buttons."""
    view = ctx.view
    b = Board(520, 480)
    edges = sorted({(min(a, c), max(a, c)) for a in MAZE.rooms for c in MAZE.out(a)})
    pos = room_positions(MAZE.rooms, edges, 60, 60, 400)
    closed = {frozenset((a, c)) for a, c, _, is_open in view.doors if not is_open}
    styled = [(a, c, "closed" if frozenset((a, c)) in closed else "open") for a, c in edges]
    legal = set(view.legal_actions)
    acts = {r: [r] for r in MAZE.rooms if r in legal and r != Action.STAY}
    acts.setdefault(view.my_room, [])
    for a in legal:
        if a in (Action.STAY, Action.PRESS):
            acts[view.my_room].append(a)
    tips = {r: f"move to room {r}" for r in acts}
    tips[view.my_room] = "stay here" + (" or press the button" if Action.PRESS in legal else "")
    draw_rooms(b, pos, styled, acts, tips)
    button = b.mark("button", "a button: it opens or closes the door of its colour", "rect",
                    "#f5b041")  # fmt: skip
    for k, (a, c, room, _is_open) in enumerate(view.doors):
        x, y = pos[room]
        b.rect(x - 9, y + 34, 18, 14, "#f5b041", m=button, act=acts.get(room, []) if room ==
               view.my_room and Action.PRESS in legal else [],
               tip=f"button for the door between rooms {a} and {c}")  # fmt: skip
        b.text(x, y + 45, "ABCD"[k], 10, bold=True)
    _pieces(b, view, pos)
    b.panel("Doors", [f"Door {'ABCD'[k]} between rooms {a} and {c}: "
                      f"{'open' if o else 'closed'} (its button is in room {room})"
                      for k, (a, c, room, o) in enumerate(view.doors)])  # fmt: skip
    b.panel("Situation", situation(ctx.bundle.text.observation_text(view)))
    b.headline = f"Turn {view.turn + 1} of at most {view.max_turns}"
    for a in legal:
        b.label(a, ctx.bundle.text.action_text(view, a))
    return b


def _pieces(b: Board, view: Any, pos: dict[int, tuple[float, float]]) -> None:
    me, other = view.player, 1 - view.player
    marks = [(view.my_room, me, True), (view.partner_room, other, False)]
    for seat in (0, 1):
        b.mark(f"seat{seat}", f"{PLAYER_NAMES[seat]}{' (you)' if seat == me else ''}", "circle",
               SEAT_COLOURS[seat], letter=PLAYER_NAMES[seat][0])  # fmt: skip
    thief = b.mark("thief", "the thief", "circle", "#c0392b", letter="T")
    count: dict[int, int] = {}
    for room, seat, you in marks:
        k = count[room] = count.get(room, -1) + 1
        x, y = marks_around(*pos[room], k, 3)
        b.token(x, y, 11, SEAT_COLOURS[seat], PLAYER_NAMES[seat][0], f"seat{seat}", you=you,
                tip=PLAYER_NAMES[seat])  # fmt: skip
    k = count.get(view.thief_room, -1) + 1
    x, y = marks_around(*pos[view.thief_room], k, 3)
    b.token(x, y, 11, "#c0392b", "T", thief, tip="the thief")


def outcome(ctx: Any) -> str:
    """The end of the game in words."""
    v = ctx.view
    return ("You caught the thief!" if v.captured
            else f"The thief got away: {v.max_turns} turns are over.")  # fmt: skip
