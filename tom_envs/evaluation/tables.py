"""Results tables: the cells a table needs, and its markdown computed from their episodes.

A table (a paper's, or a game's bot table: ``hanabi``, ``overcooked``) is a :class:`PaperTable`:
``cells(**kwargs)`` names the episodes it needs (game, arguments, seat agents, how many, from which
seed), ``render(episodes, **kwargs)`` turns the episodes those cells played into markdown, and an
optional ``figures(episodes, page, **kwargs)`` draws its pictures next to the page. Nothing is replayed: an eval config names the table
(``[[tables]] table = "paper004"``), :func:`tom_envs.evaluation.run.evaluate` plays the table's
cells in the same worker pool as the config's other cells, with the same resume (a finished
episode on disk is reused only for exactly its configuration), and the report renders the table
from those episodes. ``tom-envs reproduce NAME`` runs the shipped config of that name and writes
the page (``--out``) and its pictures. Parity with peer engines and speed are not tables: they are
``benchmarks/<game>.py``.

Tables are looked up by name among the installed ``tom_envs.tables`` plugins (a config file
cannot name code to run): the papers' and the games' tables ship with the paper-reproduction
package ``tom_experiments`` (the checkout's ``experiments/`` folder), which registers them in
``pyproject.toml``::

    [project.entry-points."tom_envs.tables"]
    paper004 = "tom_experiments.paper004_page:TABLE"    # a PaperTable named "paper004"
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tom_envs import plugins
from tom_envs.records import Episode


@dataclass(frozen=True)
class TableCell:
    """Episodes a table needs: ``episodes`` seeds from ``seed`` of ``seats`` on ``game``."""

    key: str
    game: str
    seats: tuple[str, ...]
    episodes: int
    seed: int = 0
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    #: the failure policy's bound for this cell (None: the run's); a row that measures invalid
    #: moves on purpose (paper 000's unmasked random team) sets 1.0, and its page shows them
    max_fallback_share: float | None = None
    #: the seats' specs were written by the table's own code, never taken from its arguments (a
    #: config file's): they may name the suite's classes (:mod:`tom_envs.core.trust`)
    trusted: bool = False

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_.=+-]{1,120}", self.key):
            raise ValueError(f"table cell key {self.key!r}: letters, digits and _.=+- only")
        if self.episodes < 1:
            raise ValueError(f"table cell {self.key!r}: episodes must be >= 1, got {self.episodes}")


@dataclass(frozen=True)
class PaperTable:
    """A paper's table: the cells it needs and its markdown from their episodes."""

    name: str
    title: str
    cells: Callable[..., list[TableCell]]
    render: Callable[..., str]
    #: ``figures(episodes, page, **kwargs)`` draws the page's pictures next to ``page`` and
    #: returns their paths (None: the table has none)
    figures: Callable[..., list[Path]] | None = None

    def parameters(self) -> list[str]:
        """The keyword arguments the table takes (those of ``cells``)."""
        return [p for p in inspect.signature(self.cells).parameters if p != "self"]

    def check_kwargs(self, kwargs: Mapping[str, Any], where: str) -> None:
        """Raise ValueError naming ``where`` for an argument the table does not take."""
        bad = sorted(set(kwargs) - set(self.parameters()))
        if bad:
            raise ValueError(
                f"{where}: table {self.name!r} takes {self.parameters()}, not {bad}"
            )


def table_names() -> list[str]:
    """The names of the installed tables (``tom_envs.tables`` plugins), sorted."""
    return plugins.names("tom_envs.tables")


def get_table(name: str) -> PaperTable:
    """The table ``name``: ValueError listing the installed tables for an unknown one, naming
    the missing package for one that cannot be imported."""
    if name not in table_names():
        have = ", ".join(table_names()) or "none"
        raise ValueError(f"unknown table {name!r}; installed tables: {have}. The papers' and the "
                         "games' tables ship with the tom_experiments package (the checkout's "
                         "experiments/ folder): `pip install -e .`")  # fmt: skip
    try:
        table = plugins.load("tom_envs.tables", name)
    except plugins.PluginError as exc:
        raise ValueError(f"table {name!r}: {exc}") from None
    if not isinstance(table, PaperTable) or table.name != name:
        raise ValueError(f"table {name!r}: its plugin gives {table!r}, not a PaperTable named "
                         f"{name!r}")  # fmt: skip
    return table


def fmt_ci(v: tuple[float, float], digits: int = 2) -> str:
    """``mean ± half-width`` of a 95% interval (``n/a`` without episodes, the mean alone when
    one episode gives no interval)."""
    m, h = v
    if math.isnan(m):
        return "n/a"
    if math.isnan(h):
        return f"{m:.{digits}f}"
    return f"{m:.{digits}f} ± {h:.{digits}f}"


def episodes_by_key(
    cells: Sequence[TableCell], played: Mapping[str, list[Episode]]
) -> dict[str, list[Episode]]:
    """The finished episodes of each cell (by the cell's key), in seed order."""
    return {c.key: sorted(played.get(c.key, []), key=lambda e: e.seed) for c in cells}


def write_figures(
    entry: Mapping[str, Any], played: Mapping[str, list[Episode]], page: Path
) -> list[Path]:
    """The pictures of one ``[[tables]]`` entry drawn next to ``page`` from the episodes its
    cells played (``played``: episodes by cell key, as the eval results hold them)."""
    table = get_table(entry["table"])
    if table.figures is None:
        return []
    kwargs = entry.get("kwargs", {})
    return table.figures(episodes_by_key(table.cells(**kwargs), played), page, **kwargs)


__all__ = ["PaperTable", "TableCell", "episodes_by_key", "fmt_ci", "get_table", "table_names",
           "write_figures"]  # fmt: skip
