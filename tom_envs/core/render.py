"""Rendering for spectators: text (``"ansi"``), an image (``"rgb_array"``) and a window (``"human"``).

Every mode shows what a spectator sees: every seat's view, one after another. The image is the same
board the browser app draws (each game's ``board.py``: ``board_svg(bundle, view)``), one panel per
seat side by side, rasterised here from the small SVG subset the boards use (``rect``, ``circle``,
``line``, ``text`` and embedded PNG ``image``) with Pillow, so no browser or SVG library is needed.
``"human"`` shows that image in a Matplotlib window where a display exists, and prints the text
otherwise.

An unknown render mode is not an error: the environments warn once and render nothing (as
Gymnasium's ``PassiveEnvChecker`` expects), so training code that asks for ``"rgb_array"`` by
default (Stable-Baselines3's ``make_vec_env``) works unchanged.
"""

from __future__ import annotations

import base64
import importlib
import io
import os
import re
import warnings
import xml.etree.ElementTree as ET
from functools import lru_cache
from typing import Any

import numpy as np

from tom_envs.core.game import GameBundle

#: The modes every game renders.
RENDER_MODES = ("ansi", "rgb_array", "human")


def check_render_mode(render_mode: str | None, owner: str) -> str | None:
    """``render_mode`` if supported; otherwise a warning naming the allowed modes, and ``None``."""
    if render_mode is None or render_mode in RENDER_MODES:
        return render_mode
    warnings.warn(
        f"{owner}: render_mode {render_mode!r} is not supported (allowed: None, "
        f"{', '.join(repr(m) for m in RENDER_MODES)}); rendering is off",
        stacklevel=3,
    )
    return None


def render(bundle: GameBundle, state: Any, mode: str | None) -> str | np.ndarray | None:
    """Render ``state`` in ``mode`` (``None``: nothing)."""
    if mode is None or state is None:
        return None
    if mode == "ansi":
        return spectator_text(bundle, state)
    if mode == "rgb_array":
        return spectator_rgb(bundle, state)
    if mode == "human":
        show_human(bundle, state)
        return None
    raise ValueError(f"render mode must be one of {RENDER_MODES}, got {mode!r}")


def spectator_text(bundle: GameBundle, state: Any) -> str:
    """The whole state as text: the game's own ``render_state`` if it has one, else every view."""
    render_state = getattr(bundle.text, "render_state", None)
    if render_state is not None:
        return str(render_state(state))
    parts = []
    for i, agent in enumerate(bundle.agents):
        view = bundle.game.observe(state, i)
        parts.append(f"== {agent} ==\n{bundle.text.observation_text(view)}")
    return "\n".join(parts)


def board_module(bundle: GameBundle) -> Any:
    """The game's ``board`` module: the sibling of the module that defines its rules class."""
    package = type(bundle.game).__module__.rpartition(".")[0]
    try:
        return importlib.import_module(f"{package}.board")
    except ImportError as exc:
        raise NotImplementedError(
            f"{package} has no board.py (board_svg(bundle, view)): it cannot render images"
        ) from exc


def spectator_svgs(bundle: GameBundle, state: Any) -> list[str]:
    """Every seat's board as SVG (what each seat sees)."""
    board = board_module(bundle)
    return [
        board.board_svg(bundle, bundle.game.observe(state, i)) for i in range(len(bundle.agents))
    ]


def spectator_rgb(bundle: GameBundle, state: Any, gap: int = 8) -> np.ndarray:
    """Every seat's board side by side as an ``(H, W, 3)`` uint8 image, each titled with its seat."""
    panels = []
    for agent, doc in zip(bundle.agents, spectator_svgs(bundle, state), strict=True):
        panels.append(svg_to_rgb(doc, title=agent))
    height = max(p.shape[0] for p in panels)
    width = sum(p.shape[1] for p in panels) + gap * (len(panels) - 1)
    out = np.full((height, width, 3), 255, dtype=np.uint8)
    x = 0
    for p in panels:
        out[: p.shape[0], x : x + p.shape[1]] = p
        x += p.shape[1] + gap
    return out


def show_human(bundle: GameBundle, state: Any) -> None:
    """A Matplotlib window with the image where a display exists; the text on stdout otherwise."""
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        print(spectator_text(bundle, state))
        return
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        print(spectator_text(bundle, state))
        return
    image = spectator_rgb(bundle, state)
    fig = plt.figure("tom-envs", clear=True)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.imshow(image)
    ax.axis("off")
    plt.pause(0.001)


# ----------------------------------------------------------------------------- rasteriser
_NUM = re.compile(r"-?\d+(?:\.\d+)?")


def _f(el: ET.Element, key: str, default: float = 0.0) -> float:
    m = _NUM.match(el.get(key, "") or "")
    return float(m.group()) if m else default


@lru_cache(maxsize=32)
def _font(size: int) -> Any:
    from PIL import ImageFont

    size = max(6, size)
    try:  # DejaVu Sans (shipped with Matplotlib) has the arrows and card suits the boards use
        import matplotlib

        path = os.path.join(matplotlib.get_data_path(), "fonts", "ttf", "DejaVuSans.ttf")
        return ImageFont.truetype(path, size)
    except (ImportError, OSError):
        pass
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1: one bitmap size
        return ImageFont.load_default()


def _colour(value: str | None) -> str | None:
    if value is None or value in ("none", "transparent"):
        return None
    return value


def svg_to_rgb(doc: str, title: str = "", scale: float = 1.0) -> np.ndarray:
    """Rasterise one board SVG (the subset :mod:`tom_envs.core.board` writes) to an RGB array.

    Needs Pillow (installed with Matplotlib, Stable-Baselines3 and the ``rl``/``plots``/``serve``
    extras; ``pip install pillow`` otherwise).
    """
    try:
        from PIL import Image, ImageDraw
    except ImportError as exc:  # pragma: no cover - pillow comes with every image extra
        raise ImportError(
            "render_mode='rgb_array' needs Pillow: pip install pillow "
            "(or install this checkout's extra: pip install -e '.[plots]')"
        ) from exc
    root = ET.fromstring(doc)
    width = int(_f(root, "width", 320) * scale)
    height = int(_f(root, "height", 240) * scale)
    top = 18 if title else 0
    image = Image.new("RGB", (max(width, 1), max(height + top, 1)), "white")
    draw = ImageDraw.Draw(image)
    if title:
        draw.text((4, 2), title, fill="#111", font=_font(12))

    def xy(x: float, y: float) -> tuple[float, float]:
        return x * scale, y * scale + top

    for el in root.iter():
        tag = el.tag.rpartition("}")[2]
        fill, stroke = _colour(el.get("fill")), _colour(el.get("stroke"))
        if tag == "rect":
            x0, y0 = xy(_f(el, "x"), _f(el, "y"))
            x1, y1 = xy(_f(el, "x") + _f(el, "width"), _f(el, "y") + _f(el, "height"))
            draw.rounded_rectangle(
                (x0, y0, max(x1, x0), max(y1, y0)),
                radius=_f(el, "rx") * scale,
                fill=fill,
                outline=stroke,
            )
        elif tag == "circle":
            cx, cy = xy(_f(el, "cx"), _f(el, "cy"))
            r = _f(el, "r") * scale
            draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fill, outline=stroke)
        elif tag == "line":
            draw.line(
                (*xy(_f(el, "x1"), _f(el, "y1")), *xy(_f(el, "x2"), _f(el, "y2"))),
                fill=stroke or "#555",
                width=max(1, int(_f(el, "stroke-width", 1) * scale)),
            )
        elif tag == "text" and el.text:
            size = int(_f(el, "font-size", 12) * scale)
            font = _font(size)
            x, y = xy(_f(el, "x"), _f(el, "y"))
            anchor = {"middle": "ms", "end": "rs"}.get(el.get("text-anchor", "start"), "ls")
            draw.text((x, y), el.text, fill=fill or "#111", font=font, anchor=anchor)
        elif tag == "image":
            href = el.get("href") or el.get("{http://www.w3.org/1999/xlink}href") or ""
            prefix = "data:image/png;base64,"
            if not href.startswith(prefix):  # only embedded PNGs: never a file or a URL
                continue
            pic = Image.open(io.BytesIO(base64.b64decode(href[len(prefix) :]))).convert("RGB")
            w, h = (
                int(_f(el, "width", pic.width) * scale),
                int(_f(el, "height", pic.height) * scale),
            )
            pic = pic.resize((max(w, 1), max(h, 1)))
            x0, y0 = xy(_f(el, "x"), _f(el, "y"))
            image.paste(pic, (int(x0), int(y0)))
    return np.asarray(image, dtype=np.uint8).copy()
