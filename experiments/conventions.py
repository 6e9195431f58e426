"""The best-response matrix of a game's zoo, as every ``<game>_conventions`` script prints it
(issue #35: do the members' best responses really differ?).

``m[(focal, partner)]`` is a mean ``U`` (or an exact value); :func:`best_focals` names each
partner's best focal (the first declared of equal means, as the references choose, or with
``tie`` every focal within ``tie`` of the column's best), and :func:`table` renders the markdown
table with those cells in bold. Used by :mod:`tom_experiments.bomb_conventions`,
:mod:`tom_experiments.coblock_conventions` and :mod:`tom_experiments.room_conventions`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

Matrix = Mapping[tuple[str, str], float]


def best_focals(m: Matrix, focals: Sequence[str], partners: Sequence[str],
                tie: float | None = None) -> dict[str, list[str]]:  # fmt: skip
    """Per partner, its best focals: the first declared of the best (``tie=None``), or every
    focal within ``tie`` of the column's maximum."""
    out = {}
    for p in partners:
        if tie is None:
            out[p] = [max(focals, key=lambda f: m[f, p])]
        else:
            top = max(m[f, p] for f in focals)
            out[p] = [f for f in focals if m[f, p] >= top - tie]
    return out


def table(m: Matrix, focals: Sequence[str], partners: Sequence[str], best: Mapping[str, Sequence[str]],
          corner: str, digits: int, name: Callable[[str], str] = str) -> list[str]:  # fmt: skip
    """The markdown table: a row per focal (``name(focal)``), a column per partner, each
    column's ``best`` in bold, ``digits`` decimals."""
    lines = [f"| {corner} | " + " | ".join(partners) + " |", "|---|" + "---|" * len(partners)]
    for f in focals:
        cells = [f"**{m[f, p]:.{digits}f}**" if f in best[p] else f"{m[f, p]:.{digits}f}"
                 for p in partners]  # fmt: skip
        lines.append(f"| {name(f)} | " + " | ".join(cells) + " |")
    return lines


__all__ = ["Matrix", "best_focals", "table"]
