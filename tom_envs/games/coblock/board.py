"""CoBlock's board for people: the 3D world (isometric), your goal's missing blocks as outlines."""

from __future__ import annotations

import base64
from typing import Any

from tom_envs.core.board import label, svg
from tom_envs.games.coblock.picture import render_png


def board_svg(bundle: Any, view: Any) -> str:
    """An isometric picture of the world; outlines: blocks of *your* goal not yet in place."""
    world = set(view.world)
    missing = [b for b in view.goal if b not in world]
    png = render_png(view.world, view.grid, missing, f"round {view.round}/{view.max_rounds}",
                     size=(4.0, 3.6), dpi=80)  # fmt: skip
    data = base64.b64encode(png).decode()
    inv = ", ".join(str(n) for n in view.inventory)
    return svg(340, 320, [f'<image href="data:image/png;base64,{data}" x="0" y="0" width="340" height="290"/>',
                          label(8, 310, f"your inventory: {inv}", 11, "start")], "CoBlock")  # fmt: skip
