"""Overcooked's board for people: the kitchen grid, both chefs, pots and counters."""

from __future__ import annotations

from typing import Any

from tom_envs.core.board import circle, label, rect, svg
from tom_envs.games.overcooked.layout import COUNTER, DISH_DISPENSER, ONION_DISPENSER, POT, SERVING
from tom_envs.games.overcooked.rules import item_name

TILE = {COUNTER: "#c8a96e", ONION_DISPENSER: "#f5d76e", DISH_DISPENSER: "#dfe6e9", POT: "#555",
        SERVING: "#9bd39b"}  # fmt: skip
ARROW = ("↑", "↓", "→", "←")


def board_svg(bundle: Any, view: Any) -> str:
    """Y = you, P = partner (arrow: facing; held item below); pots show onions and cooking."""
    layout = view.config.kitchen
    s = 48
    parts = [
        label(8, 16, f"step {view.timestep}/{view.horizon}   score {view.score:g}", 13, "start")
    ]
    for y, row in enumerate(layout.grid):
        for x, ch in enumerate(row):
            parts.append(rect(x * s, 24 + y * s, s, s, TILE.get(ch, "#fbfbf6"), "#999", 0))
            if ch in (ONION_DISPENSER, DISH_DISPENSER, SERVING):
                parts.append(label(x * s + s / 2, 24 + y * s + 28, {"O": "onions", "D": "plates",
                                   "S": "serve"}[ch], 10))  # fmt: skip
    cook = view.config.cook_time
    for (x, y), (n, tick) in zip(layout.pots, view.pots, strict=True):
        status = "" if tick < 0 else ("ready" if tick >= cook else f"{cook - tick}")
        parts.append(label(x * s + s / 2, 24 + y * s + 22, f"{n} on.", 11, fill="#fff"))
        parts.append(label(x * s + s / 2, 24 + y * s + 38, status, 10, fill="#ffd"))
    for (x, y), item in zip(layout.counters, view.counters, strict=True):
        if item:
            parts.append(label(x * s + s / 2, 24 + y * s + 30, item_name(item), 10))
    for chef, mark, colour in ((view.me, "Y", "#1f5fbf"), (view.partner, "P", "#2e8b57")):
        x, y = chef.pos
        cx, cy = x * s + s / 2, 24 + y * s + s / 2
        parts.append(circle(cx, cy, 16, colour))
        parts.append(label(cx, cy + 5, f"{mark}{ARROW[chef.facing] if chef.facing < 4 else ''}", 12,
                           fill="#fff"))  # fmt: skip
        if chef.held:
            parts.append(label(cx, cy + 26, item_name(chef.held), 9))
    return svg(layout.width * s, 24 + layout.height * s, parts, "kitchen")
