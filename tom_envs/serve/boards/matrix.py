"""The matrix games (Rock-Paper-Scissors, Battle of the Sexes, Prisoner's Dilemma): the payoff
table, your options as its rows (click one to choose it), and every round so far."""

from __future__ import annotations

from typing import Any

from tom_envs.games.matrix.rules import payoff
from tom_envs.serve.boards.base import Board

TITLE = "Repeated choice game"


def seat_names(bundle: Any) -> list[str]:
    """The game's words for the two players (its text says "you" and "the other player")."""
    return ["Player 1", "Player 2"]


def build(ctx: Any) -> Board:
    """Payoff table (your points / the other player's), rows clickable, and the history."""
    view, text = ctx.view, ctx.bundle.text
    cfg, p, n = text.config, view.player, text.config.num_actions
    names = [text.option(a) for a in range(n)]
    cw, ch, x0, y0 = 150, 46, 170, 70
    b = Board(x0 + cw * n + 20, y0 + ch * n + 50)
    cell = b.mark("cell", "a cell: your points / the other player's points for that pair of "
                  "choices", "rect", "#eef4fb", "#444")  # fmt: skip
    last = b.mark("last", "what you both chose last round", "rect", "#fdebd0", "#d35400")
    b.text(x0 + cw * n / 2, 22, "The other player chooses", 13, bold=True)
    b.text(12, y0 - 12, "You choose", 13, "start", bold=True)
    prev = view.history[-1] if view.history else None
    legal = set(view.legal_actions)
    for c in range(n):
        b.text(x0 + cw * c + cw / 2, y0 - 12, names[c], 13)
    for a in range(n):
        y = y0 + ch * a
        act = [a] if a in legal else []
        b.rect(8, y + 4, x0 - 16, ch - 8, "#fffbe6" if act else "#f7f7f7",
               "#d4a017" if act else "#bbb", act=act, tip=f"choose {names[a]}")  # fmt: skip
        b.text(x0 / 2, y + ch / 2 + 5, names[a], 14, bold=bool(act), act=act)
        for c in range(n):
            mine, theirs = payoff(cfg, p, a, c), payoff(cfg, 1 - p, c, a)
            here = prev is not None and (prev[0], prev[1]) == (a, c)
            b.rect(x0 + cw * c, y, cw, ch, "#fdebd0" if here else "#eef4fb",
                   "#d35400" if here else "#444", m=last if here else cell, rx=0,
                   sw=3 if here else 1)  # fmt: skip
            b.text(x0 + cw * c + cw / 2, y + ch / 2 + 5, f"{mine:g} / {theirs:g}", 15)
    b.text(12, y0 + ch * n + 30, "Click your choice (a row), or use the buttons.", 12, "start",
           fill="#555")  # fmt: skip
    rounds = []
    start = view.round - len(view.history)
    for k, (mine, theirs) in enumerate(view.history):
        you, other = payoff(cfg, p, mine, theirs), payoff(cfg, 1 - p, theirs, mine)
        rounds.append(f"Round {start + k + 1}: you chose {names[mine]}, the other player chose "
                      f"{names[theirs]}: you got {you:g}, they got {other:g}")  # fmt: skip
    b.panel("Rounds so far", rounds or ["None yet: this is the first round."])
    now = (f"Round {view.round + 1} of {view.horizon}" if view.round < view.horizon
           else f"All {view.horizon} rounds played")  # fmt: skip
    b.headline = f"{now} · your points {view.my_score:g} · the other player's {view.partner_score:g}"
    for a in legal:
        b.label(a, f"Choose {names[a]}")
    return b


def outcome(ctx: Any) -> str:
    """The end of the game in words."""
    v = ctx.view
    return f"The game is over: you scored {v.my_score:g} points, the other player {v.partner_score:g}."
