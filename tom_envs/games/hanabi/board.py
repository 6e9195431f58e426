"""Hanabi's board for people: fireworks, tokens, partners' cards face up, yours face down."""

from __future__ import annotations

from typing import Any

from tom_envs.core.board import label, rect, svg

FILL = {"Red": "#e74c3c", "Yellow": "#f1c40f", "Green": "#27ae60", "White": "#ecf0f1",
        "Blue": "#3498db"}  # fmt: skip


def board_svg(bundle: Any, view: Any) -> str:
    """Your own cards show only what the hints told you (never their identity)."""
    text = bundle.text
    colors, r = text.colors, bundle.game.config.ranks
    parts = [label(10, 18, f"Score {view.score}   hints {view.information_tokens}   lives "
                   f"{view.life_tokens}   deck {view.deck_size}", 13, "start")]  # fmt: skip
    for c, h in enumerate(view.fireworks):
        parts.append(rect(10 + 60 * c, 28, 52, 36, FILL.get(colors[c], "#ccc")))
        parts.append(label(36 + 60 * c, 52, f"{colors[c][0]}{h}", 13))
    y = 84
    parts.append(label(10, y, "Your cards (what you know):", 12, "start"))
    for k, code in enumerate(text.layout.codes(view.knowledge[0], view.my_hand_size)):
        parts.append(rect(10 + 70 * k, y + 8, 62, 44, "#555"))
        parts.append(label(41 + 70 * k, y + 26, f"Card {k}", 11, fill="#fff"))
        parts.append(label(41 + 70 * k, y + 44, text.knowledge_text(code)[:14], 7, fill="#fff"))
    y += 70
    for i, hand in enumerate(view.hands):
        seat = view.seat(i + 1)
        parts.append(label(10, y, f"{text.possessive(seat)} cards:", 12, "start"))
        for k, card in enumerate(hand):
            parts.append(rect(10 + 70 * k, y + 8, 62, 44, FILL.get(colors[card // r], "#ccc")))
            parts.append(label(41 + 70 * k, y + 36, f"{colors[card // r]} {card % r + 1}", 11))
        y += 64
    return svg(max(420, 70 * max(view.my_hand_size, 5) + 20), y + 10, parts, "Hanabi")
