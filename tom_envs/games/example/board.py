"""The board people see (``tom-envs serve``, ``render_mode="rgb_array"``), drawn from one view."""

from __future__ import annotations

from typing import Any

from tom_envs.core.board import label, rect, svg
from tom_envs.games.example.rules import COLORS

FILL = {"red": "#d9534f", "green": "#5cb85c", "blue": "#428bca"}


def board_svg(bundle: Any, view: Any) -> str:
    """The colours (my last choice outlined in black), the round, the matches, the partner's last."""
    parts = [label(10, 20, f"Round {min(view.round + 1, view.rounds)} of {view.rounds}, "
                   f"matches {view.matches}", 13, "start")]  # fmt: skip
    for i, colour in enumerate(COLORS):
        stroke = "#000" if i == view.my_last else "#bbb"
        parts += [
            rect(10 + 80 * i, 34, 70, 70, FILL[colour], stroke),
            label(45 + 80 * i, 122, colour),
        ]
    partner = "none yet" if view.partner_last is None else COLORS[view.partner_last]
    parts.append(label(10, 146, f"partner's last colour: {partner}", 12, "start"))
    return svg(250, 160, parts, "colours")
