"""The teaching example (name the same colour as your partner): the colours, click one."""

from __future__ import annotations

from typing import Any

from tom_envs.games.example.rules import COLORS
from tom_envs.serve.boards.base import Board

TITLE = "Name the same colour"
FILL = {"red": "#d9534f", "green": "#5cb85c", "blue": "#428bca"}


def seat_names(bundle: Any) -> list[str]:
    """Two partners."""
    return ["Player 1", "Player 2"]


def build(ctx: Any) -> Board:
    """The three colours (yours last round outlined), click one to name it."""
    view = ctx.view
    b = Board(20 + 110 * len(COLORS), 170)
    mine = b.mark("mine", "the colour you named last round", "rect", "#fff", "#000")
    colour = b.mark("colour", "a colour you can name (click it)", "rect", "#ddd", "#bbb")
    legal = set(view.legal_actions)
    for i, name in enumerate(COLORS):
        act = [i] if i in legal else []
        m = mine if i == view.my_last else colour
        b.rect(10 + 110 * i, 20, 100, 100, FILL[name], "#000" if i == view.my_last else "#bbb",
               sw=4 if i == view.my_last else 1, m=m, act=act, tip=f"name {name}")  # fmt: skip
        b.text(60 + 110 * i, 140, name, 15, bold=True, act=act)
    partner = "none yet" if view.partner_last is None else COLORS[view.partner_last]
    b.panel("What you know", [f"Your partner named {partner} last round.",
                              f"Matches so far: {view.matches}."])  # fmt: skip
    b.headline = f"Round {min(view.round + 1, view.rounds)} of {view.rounds} · matches {view.matches}"
    for a in legal:
        b.label(a, f"Name {COLORS[a]}")
    return b


def outcome(ctx: Any) -> str:
    """The end of the game in words."""
    return f"The game is over: you matched {ctx.view.matches} times out of {ctx.view.rounds}."
