"""Guandan's board for people: your hand, the play to beat, and card counts (never others' cards)."""

from __future__ import annotations

from typing import Any

from tom_envs.core.board import label, rect, svg
from tom_envs.games.guandan.cards import card_name, sort_by_value

SEATS = ("you", "next (opponent)", "partner", "previous (opponent)")


def board_svg(bundle: Any, view: Any) -> str:
    """Your cards as chips, sorted by value; the lead; how many cards each seat holds."""
    lang = getattr(bundle.game.config, "language", "en")
    cards = [k for k, n in enumerate(bytes(view.hand)) for _ in range(n)]
    cards = sort_by_value(cards, view.level)
    parts = [label(8, 18, f"level {view.level + 2 if view.level < 9 else 'JQKA'[view.level - 9]}   "
                   f"phase {view.phase}", 13, "start")]  # fmt: skip
    for i, c in enumerate(cards):
        x, y = 8 + 34 * (i % 20), 30 + 48 * (i // 20)
        red = card_name(c) and card_name(c)[0] in "♥♦"
        parts.append(rect(x, y, 30, 42, "#fff"))
        parts.append(
            label(x + 15, y + 26, card_name(c, lang), 10, fill="#c0392b" if red else "#111")
        )
    y = 30 + 48 * ((len(cards) + 19) // 20) + 20
    lead = (
        bundle.text.move_text(view, view.lead) if view.lead is not None else "nothing: you may lead"
    )
    parts.append(label(8, y, f"to beat: {lead}", 12, "start"))
    for s, n in enumerate(view.cards_left):
        parts.append(label(8, y + 20 * (s + 1), f"{SEATS[s]}: {n} cards", 12, "start"))
    return svg(8 + 34 * 20, y + 100, parts, "Guandan")
