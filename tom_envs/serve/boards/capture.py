"""CollabCapture (catch the thief): the rooms and doors (click a room next to you to move there,
click your room's button to open or close its door), both pursuers by name and the thief."""

from __future__ import annotations

from typing import Any

from tom_envs.games.collab_capture.rules import MAZE, Action
from tom_envs.serve.boards.base import Board, alice_and_bob, room_board, room_positions

TITLE = "Catch the thief"

seat_names = alice_and_bob


def build(ctx: Any) -> Board:
    """The map, the pursuers, the thief, the doors and their buttons."""
    view = ctx.view
    b = Board(520, 540)
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

    def buttons() -> None:
        button = b.mark("button", "a button: it opens or closes the door of its letter (see Doors)",
                        "rect", "#f5b041")  # fmt: skip
        for k, (a, c, room, _is_open) in enumerate(view.doors):
            x, y = pos[room]
            b.rect(x - 9, y + 34, 18, 14, "#f5b041", m=button, act=acts.get(room, []) if room ==
                   view.my_room and Action.PRESS in legal else [],
                   tip=f"button for the door between rooms {a} and {c}")  # fmt: skip
            b.text(x, y + 45, "ABCD"[k], 10, bold=True)
        b.panel("Doors", [f"Door {'ABCD'[k]} between rooms {a} and {c}: "
                          f"{'open' if o else 'closed'} (its button is in room {room})"
                          for k, (a, c, room, o) in enumerate(view.doors)])  # fmt: skip

    b.headline = f"Turn {view.turn + 1} of at most {view.max_turns}"
    here = "stay here" + (" or press the button" if Action.PRESS in legal else "")
    return room_board(ctx, b, pos, styled, acts, here, (view.thief_room, "T", "thief"), buttons)


def outcome(ctx: Any) -> str:
    """The end of the game in words."""
    v = ctx.view
    return ("You caught the thief!" if v.captured
            else f"The thief got away: {v.max_turns} turns are over.")  # fmt: skip
