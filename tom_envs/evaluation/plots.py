"""The report's figures: cross-play heat maps and curves, as PNGs readable on a docs page.

Every figure is saved at :data:`DPI` and at least :data:`MIN_WIDTH_IN` inches wide (>= 850 px),
with labelled axes and colour bar; the callers put the episode count in the title.
Plots are optional (extra ``plots``): without matplotlib each function returns ``None`` and the
report's tables stand alone.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

Stat = tuple[float, float]

def _plt() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # plots are optional: the tables are the report
        return None
    return plt


#: Figures are saved at this dpi and are at least ``MIN_WIDTH_IN`` inches wide (>= 850 px), so
#: their labels stay readable at the width of a docs page.
DPI = 100
MIN_WIDTH_IN = 8.5


def heatmap_figure(
    agents: Sequence[str],
    values: Mapping[tuple[str, str], Stat],
    title: str,
    colorbar_label: str = "mean return of the focal seats",
) -> Any:
    """A focal x partner heat map of mean returns (a matplotlib figure; None without matplotlib)."""
    plt = _plt()
    if plt is None:
        return None
    grid = np.full((len(agents), len(agents)), np.nan)
    for (a, b), (m, _) in values.items():
        grid[agents.index(a), agents.index(b)] = m
    side = max(MIN_WIDTH_IN, 3.0 + 1.1 * len(agents))
    fig, ax = plt.subplots(figsize=(side, max(5.0, 2.0 + 0.9 * len(agents))))
    im = ax.imshow(grid, cmap="viridis")
    ax.set_xticks(range(len(agents)), agents, rotation=30, ha="right", fontsize=11)
    ax.set_yticks(range(len(agents)), agents, fontsize=11)
    ax.set_xlabel("partner", fontsize=12)
    ax.set_ylabel("focal agent", fontsize=12)
    finite = grid[~np.isnan(grid)]
    mid = float(np.mean([finite.min(), finite.max()])) if finite.size else 0.0
    for i in range(len(agents)):
        for j in range(len(agents)):
            if not math.isnan(grid[i, j]):
                colour = "black" if grid[i, j] > mid else "white"  # viridis is light at the top
                ax.text(j, i, f"{grid[i, j]:.1f}", ha="center", va="center", color=colour,
                        fontsize=11)  # fmt: skip
    bar = fig.colorbar(im, ax=ax)
    bar.set_label(colorbar_label, fontsize=12)
    ax.set_title(title, fontsize=12)
    fig.tight_layout()
    return fig


def _save(fig: Any, path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def heatmap(
    path: Path,
    agents: Sequence[str],
    values: Mapping[tuple[str, str], Stat],
    title: str,
    colorbar_label: str = "mean return of the focal seats",
) -> Path | None:
    """Save :func:`heatmap_figure` as a PNG; None without matplotlib."""
    fig = heatmap_figure(agents, values, title, colorbar_label)
    return None if fig is None else _save(fig, path)


def line_figure(series: Mapping[str, np.ndarray], title: str, xlabel: str, ylabel: str,
                x: Mapping[str, np.ndarray] | None = None) -> Any:  # fmt: skip
    """Curves by label (a matplotlib figure; None without matplotlib or series)."""
    plt = _plt()
    if plt is None or not series:
        return None
    fig, ax = plt.subplots(figsize=(MIN_WIDTH_IN, 4.8))
    for label, y in series.items():
        xs = x[label] if x is not None else np.arange(1, len(y) + 1)
        ax.plot(xs, y, label=label, linewidth=1.8)
    ax.set_xlabel(xlabel, fontsize=12)
    ax.set_ylabel(ylabel, fontsize=12)
    ax.set_title(title, fontsize=12)
    ax.tick_params(labelsize=11)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=10)
    fig.tight_layout()
    return fig


def line_plot(path: Path, series: Mapping[str, np.ndarray], title: str, xlabel: str, ylabel: str,
              x: Mapping[str, np.ndarray] | None = None) -> Path | None:  # fmt: skip
    """Save :func:`line_figure` as a PNG; None without matplotlib or series."""
    fig = line_figure(series, title, xlabel, ylabel, x)
    return None if fig is None else _save(fig, path)


def read_curve(
    csv_path: str | Path, xcol: str, ycols: Sequence[str]
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Columns of a training ``curve.csv`` (rows lacking a column are skipped for it)."""
    import csv

    with open(csv_path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    out = {}
    for y in ycols:
        pts = [
            (float(r[xcol]), float(r[y]))
            for r in rows
            if r.get(y) not in (None, "") and r.get(xcol)
        ]
        if pts:
            xs, ys = zip(*pts, strict=True)
            out[y] = (np.asarray(xs), np.asarray(ys))
    return out


