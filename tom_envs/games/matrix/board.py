"""The matrix game board for people: the payoff table and the rounds so far (from the view)."""

from __future__ import annotations

from typing import Any

from tom_envs.core.board import label, rect, svg
from tom_envs.games.matrix.rules import payoff


def board_svg(bundle: Any, view: Any) -> str:
    """Payoff table (yours / the other's) and the last rounds, from ``view``."""
    cfg = bundle.text.config
    n, p = cfg.num_actions, view.player
    names = [bundle.text.action_text(view, a) for a in range(n)]
    cw, ch, x0, y0 = 120, 34, 130, 40
    now = (f"Round {view.round + 1} of {view.horizon}" if view.round < view.horizon
           else f"Game over after {view.horizon} rounds")  # fmt: skip
    parts = [label(10, 20, f"{now} — you {view.my_score:g}, "
                   f"the other player {view.partner_score:g}", 13, "start")]  # fmt: skip
    for b in range(n):
        parts.append(label(x0 + cw * b + cw / 2, y0 - 6, f"other: {names[b]}", 11))
    for a in range(n):
        y = y0 + ch * a
        parts.append(label(x0 - 8, y + 22, f"you: {names[a]}", 11, "end"))
        for b in range(n):
            mine, theirs = payoff(cfg, p, a, b), payoff(cfg, 1 - p, b, a)
            parts.append(rect(x0 + cw * b, y, cw, ch, "#eef4fb"))
            parts.append(label(x0 + cw * b + cw / 2, y + 22, f"{mine:g} / {theirs:g}", 13))
    y = y0 + ch * n + 24
    parts.append(label(10, y, "Last rounds (you, other):", 12, "start"))
    for k, (mine, theirs) in enumerate(view.history[-8:]):
        r = len(view.history) - min(8, len(view.history)) + k + 1
        parts.append(
            label(10, y + 18 * (k + 1), f"round {r}: {names[mine]}, {names[theirs]}", 11, "start")
        )
    return svg(x0 + cw * n + 20, y + 18 * 9, parts, "payoffs and history")
