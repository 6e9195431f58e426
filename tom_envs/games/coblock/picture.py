"""Isometric 3D pictures of the CoBlock world as PNG, for docs and debugging (matplotlib).

Kept out of the environment: the rules never import this module, and matplotlib (in the
``plots``/``test`` extras) is imported only when a picture is drawn. Blocks are unit cubes seen
from above the ``+x, +z`` corner (their top, ``+x`` and ``+z`` faces visible), drawn far to near;
``ghost`` blocks (e.g. the target blocks still missing) are drawn as faint outlines.

    picture.save_png(picture.render_png(task.target, grid, title=task.name), "target.png")
    picture.save_png(picture.state_png(state, grid), "world.png")   # missing blocks faint

The pictures of ``docs/results/coblock.md`` are drawn by the ``paper003`` table
(``tom-envs reproduce paper003 --out docs/results/coblock.md``; the world after 5 rounds of the
cooperative pair is replayed from that table's episode).
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tom_envs.games.coblock.structures import COLORS, Block, pos_of

#: Face colours of the six block colours.
PALETTE: dict[str, str] = {
    "red": "#d62728",
    "blue": "#1f77b4",
    "yellow": "#f2c80f",
    "green": "#2ca02c",
    "black": "#3a3a3a",
    "purple": "#8e44ad",
}
_COS = math.cos(math.radians(30))
_SIN = math.sin(math.radians(30))


def project(x: float, y: float, z: float) -> tuple[float, float]:
    """Isometric screen coordinates of a world point (``y`` up; ``+x`` right, ``+z`` left)."""
    return ((x - z) * _COS, y - (x + z) * _SIN)


def _shade(hex_colour: str, factor: float) -> tuple[float, float, float]:
    r, g, b = (int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return (min(r * factor, 1.0), min(g * factor, 1.0), min(b * factor, 1.0))


def _faces(x: int, y: int, z: int) -> dict[str, list[tuple[float, float]]]:
    """The three visible faces of the cube at ``(x, y, z)``, projected."""
    top = [(x, y + 1, z), (x + 1, y + 1, z), (x + 1, y + 1, z + 1), (x, y + 1, z + 1)]
    east = [(x + 1, y, z), (x + 1, y + 1, z), (x + 1, y + 1, z + 1), (x + 1, y, z + 1)]
    south = [(x, y, z + 1), (x + 1, y, z + 1), (x + 1, y + 1, z + 1), (x, y + 1, z + 1)]
    return {
        k: [project(*p) for p in v] for k, v in (("top", top), ("east", east), ("south", south))
    }


def draw(
    ax: Any,
    blocks: Sequence[Block],
    grid: Sequence[int],
    ghost: Sequence[Block] = (),
    title: str | None = None,
) -> None:
    """Draw ``blocks`` (and ``ghost`` outlines) on a matplotlib axes."""
    from matplotlib.patches import Polygon

    gx, _, gz = grid
    for i in range(gx + 1):  # the ground grid
        ax.plot(*zip(project(i, 0, 0), project(i, 0, gz), strict=True), color="#cccccc", lw=0.6)
    for k in range(gz + 1):
        ax.plot(*zip(project(0, 0, k), project(gx, 0, k), strict=True), color="#cccccc", lw=0.6)
    ax.annotate("x", project(gx + 0.6, 0, 0), color="#888888", fontsize=8)
    ax.annotate("z", project(0, 0, gz + 0.6), color="#888888", fontsize=8)
    solid = {pos_of(b): b[3] for b in blocks}
    faint = {pos_of(b): b[3] for b in ghost if pos_of(b) not in solid}
    cells = [(p, c, False) for p, c in solid.items()] + [(p, c, True) for p, c in faint.items()]
    cells.sort(key=lambda item: (item[0][0] + item[0][1] + item[0][2], item[0][1]))
    shade = {"top": 1.15, "east": 0.85, "south": 0.65}
    for (x, y, z), c, is_ghost in cells:
        base = PALETTE[COLORS[c]]
        for name, poly in _faces(x, y, z).items():
            if is_ghost:
                patch = Polygon(
                    poly, closed=True, fill=False, edgecolor=base, lw=0.8, ls="--", alpha=0.7
                )
            else:
                patch = Polygon(
                    poly,
                    closed=True,
                    facecolor=_shade(base, shade[name]),
                    edgecolor="#222222",
                    lw=0.5,
                )
            ax.add_patch(patch)
    ax.set_aspect("equal")
    ax.autoscale_view()
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=9)


def render_png(
    blocks: Sequence[Block],
    grid: Sequence[int],
    ghost: Sequence[Block] = (),
    title: str | None = None,
    size: tuple[float, float] = (5.0, 4.5),
    dpi: int = 100,
) -> bytes:
    """The picture as PNG bytes (no global pyplot state is touched)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            'CoBlock pictures need matplotlib; from the checkout: pip install -e ".[plots]"'
        ) from exc
    fig = Figure(figsize=size, dpi=dpi)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    draw(ax, blocks, grid, ghost, title)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    return buf.getvalue()


def state_png(state: Any, grid: Sequence[int], title: str | None = None) -> bytes:
    """A CoBlock state: the world solid, the target blocks still missing as outlines."""
    missing = [b for b in state.task.target if state.cells.get(pos_of(b)) != b[3]]
    if title is None:
        task = state.task
        title = f"{task.name}, round {state.round}: {state.matched()}/{len(task.target)} in place"
    return render_png(state.world, grid, missing, title)


def save_png(data: bytes, path: str | Path) -> Path:
    """Write PNG bytes to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path
