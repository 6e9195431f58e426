"""The skinned run and the skin gap (issue #36: "the bench runs the canonical and a skinned suite
and reports the gap as a memorisation signal").

A suite may name a disguise (its top-level ``skin = "s<k>"``; suite v2 files carry ``"s1"``), and
``tom-envs bench AGENT --skin s<k>`` sets or overrides it (``--skin none`` turns it off). With a
skin, every game cell is played twice: canonical, and with the game argument ``skin="s<k>"``
(:mod:`tom_envs.core.skin`: names, numbers and listing order renamed, the rules, state, vectors
and action indices untouched), with the same partners and the same seeds; the CoordinationQA
subset is asked twice too, the second time with every item shown in the skin
(:func:`tom_envs.qa.generate.skin_item`: same ids, keys and option positions, only the text
differs). A skinned episode's configuration holds its skin
(:func:`tom_envs.identity.resolved_env_kwargs`), so its file is never taken for a canonical one;
skinned cells live beside the canonical ones as ``<game>/<partner>@s<k>``.

The row's ``skin`` block holds, beside the canonical figures of the row: the skinned cells (the
same figures as a canonical cell, plus the paired return gap), each game's skinned return and
normalised score and its **gap** (canonical - skinned, normalised), the aggregate's skinned score
and gap, and QA's skinned accuracy and gap. Every gap has a **paired** bootstrap 95% interval
(:func:`paired_gap`): the canonical and skinned episodes of one (partner, seed) are a pair, and
pairs are resampled (within each game for the aggregate, anchors fixed); QA items are pairs too.

Agents that act on action indices or state (bots, ``random``, ``rmax``, checkpoints) see nothing
of the skin, so their skinned play is the canonical play and every gap is exactly 0 (a test
checks it on every cell: the sanity check of the construction). A text agent's gap is the part of
its score that rests on the canonical symbols it may have memorised.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tom_experiments.bench.row import interval, stratified_mean, summarise
from tom_experiments.bench.run import _cell, _game, cell_id, cell_numbers, suite_jobs
from tom_experiments.bench.suite import Suite, SuiteError

#: What a row without a skinned run shows (the leaderboard's "skin gap" column).
NOT_RUN = "not run"
#: ``--skin none``: no skinned run, whatever the suite says.
OFF = "none"


def resolve(suite: Suite, given: str | None) -> tuple[str | None, str]:
    """The skin of this run and where it came from: ``given`` (``--skin``: ``s<k>``, or ``none``)
    over the suite's ``skin`` key; ``(None, why)`` for no skinned run."""
    from tom_envs.core.skin import CANONICAL, parse_skin

    if given is not None and str(given).lower() == OFF:
        return None, "--skin none"
    value, source = (
        (given, "--skin") if given is not None else (getattr(suite, "skin", None), "suite")
    )
    if value is None:
        return None, "the suite names no skin and --skin was not given"
    try:
        key = parse_skin(value)
    except ValueError as exc:
        raise SuiteError(f"{source} {value!r}: {exc}; or --skin none") from exc
    if key == CANONICAL:
        return None, f"{source} {value!r}: the canonical text (no disguise)"
    return key, source


def skinned_id(cell: str, key: str) -> str:
    """``Game/partner@s1``: the skinned copy of a cell (its folder in the run directory)."""
    return f"{cell}@{key}"


def skinned_jobs(
    suite: Suite, spec: str | Mapping[str, str], out: Path, trusted: bool, key: str
) -> list[Any]:
    """The suite's jobs with ``skin=key`` added to every game's arguments: same partners, same
    seeds, cells named :func:`skinned_id`."""
    games = [dataclasses.replace(g, kwargs={**g.kwargs, "skin": key}) for g in suite.games]
    return [
        dataclasses.replace(j, cell_id=skinned_id(j.cell_id, key))
        for j in suite_jobs(suite, spec, out, trusted, games=games)
    ]


def split(outcomes: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """``(canonical, skinned)`` outcomes (by the skin in the job's game arguments)."""
    canonical = [o for o in outcomes if "skin" not in o.job.env_kwargs]
    return canonical, [o for o in outcomes if "skin" in o.job.env_kwargs]


# --------------------------------------------------------------------------- the paired gap
def paired_gap(
    groups: Sequence[tuple[Sequence[float], Sequence[float]]],
    scales: Sequence[float],
    seed: int,
    resamples: int,
) -> dict[str, Any]:
    """Mean over groups of ``scale * (mean(a) - mean(b))``, ``a[i]`` and ``b[i]`` a pair, with a
    paired percentile bootstrap 95% interval: each group's pairs resampled on their own (the same
    ``numpy.random.default_rng(seed)`` draws as :func:`~tom_experiments.bench.row.stratified_mean`);
    no interval with fewer than two pairs."""
    if not groups:
        return {"mean": None, "lo": None, "hi": None, "n": 0}
    diffs = []
    for a, b in groups:
        if len(a) != len(b) or not len(a):
            raise ValueError(f"paired_gap: groups of pairs, got lengths {len(a)} and {len(b)}")
        diffs.append(np.asarray(a, dtype=float) - np.asarray(b, dtype=float))
    est = float(np.mean([s * float(d.mean()) for d, s in zip(diffs, scales, strict=True)]))
    n = sum(len(d) for d in diffs)
    if n < 2:
        return interval(est, math.nan, math.nan, n)
    rng = np.random.default_rng(seed)
    stats = np.zeros(resamples)
    for d, s in zip(diffs, scales, strict=True):
        idx = rng.integers(0, len(d), size=(resamples, len(d)))
        stats += s * d[idx].mean(axis=1)
    stats /= len(diffs)
    lo, hi = np.percentile(stats, [2.5, 97.5])
    return interval(est, float(lo), float(hi), n)


# --------------------------------------------------------------------------- the row's block
def _by_cell(outcomes: Sequence[Any]) -> dict[str, dict[int, Any]]:
    out: dict[str, dict[int, Any]] = {}
    for o in outcomes:
        if o.ok:
            out.setdefault(o.job.cell_id, {})[o.job.seed] = o.episode
    return out


def _pairs(
    suite: Suite, g: Any, canon: Mapping[str, Mapping[int, Any]], skin: Mapping[str, Any], key: str
) -> dict[str, tuple[list[Any], list[Any], list[Any]]]:
    """Per partner: the skinned episodes and both runs' numbers (as the row scores them:
    :func:`~tom_experiments.bench.run.cell_numbers`), paired by seed."""
    out = {}
    for partner in g.partners:
        c = canon.get(cell_id(g.game, partner), {})
        s = skin.get(skinned_id(cell_id(g.game, partner), key), {})
        seeds = sorted(set(c) & set(s))
        if seeds:
            out[partner] = (
                [s[x] for x in seeds],
                cell_numbers(suite, g, [c[x] for x in seeds]),
                cell_numbers(suite, g, [s[x] for x in seeds]),
            )
    return out


def block(
    suite: Suite,
    key: str | None,
    source: str,
    canonical: Sequence[Any],
    skinned: Sequence[Any],
    qa: Mapping[str, Any] | None = None,
    qa_skinned: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The row's ``skin`` block (see the module docstring); ``{"key": None, "note": ...}``
    without a skinned run."""
    if key is None:
        return {"key": None, "note": f"{NOT_RUN}: {source}"}
    seed, B = suite.bootstrap_seed, suite.bootstrap_resamples
    canon, skin = _by_cell(canonical), _by_cell(skinned)
    cells, games = [], {}
    gaps: list[tuple[list[float], list[float]]] = []
    scales: list[float] = []
    groups: list[list[float]] = []
    transforms: list[Any] = []
    every: list[dict[str, float]] = []  # every skinned episode's numbers
    for g in suite.games:
        pairs = _pairs(suite, g, canon, skin, key)
        for partner, (eps, c_nums, s_nums) in pairs.items():
            every.extend(s_nums)
            cell = _cell(g, partner, eps, s_nums, seed, B)
            cell["id"] = skinned_id(cell["id"], key)
            cell["return_gap"] = paired_gap(
                [([n["return"] for n in c_nums], [n["return"] for n in s_nums])], [1.0], seed, B
            )
            cells.append(cell)
        anchor = suite.anchors.get(g.game)
        if anchor is None or len(pairs) != len(g.partners):
            continue
        c_ret = [n["return"] for p in pairs.values() for n in p[1]]
        s_ret = [n["return"] for p in pairs.values() for n in p[2]]
        game = _game(anchor, [n for p in pairs.values() for n in p[2]], seed, B)
        scale = 1.0 / (anchor.high - anchor.low) if anchor.headroom else math.nan
        game["gap"] = (
            paired_gap([(c_ret, s_ret)], [scale], seed, B)
            if anchor.headroom
            else {"mean": None, "lo": None, "hi": None, "n": len(c_ret), "note": "no headroom"}
        )
        games[g.game] = game
        if anchor.headroom:
            gaps.append((c_ret, s_ret))
            scales.append(scale)
            groups.append(s_ret)
            transforms.append(anchor.normalise)
    overall = summarise(every, seed, B) if every else {"rules": None, "cost": {}}
    complete = len(games) == len(suite.games)
    empty = {"mean": None, "lo": None, "hi": None, "n": 0, "note": "incomplete"}
    return {
        "key": key,
        "source": source,
        "note": "canonical - skinned, paired by (partner, seed); positive: the agent scores "
        "less in the disguise",
        "cells": cells,
        "games": games,
        "aggregate": {
            "score": stratified_mean(groups, transforms, seed, B) if complete else empty,
            "gap": paired_gap(gaps, scales, seed, B) if complete else empty,
        },
        "qa": _qa(qa, qa_skinned, seed, B),
        "rules": overall["rules"],  # of the skinned run (the row's own are the canonical run's)
        "cost": overall["cost"],  # what the skinned run spent, beside the row's canonical cost
    }


def _qa(
    qa: Mapping[str, Any] | None, skinned: Mapping[str, Any] | None, seed: int, B: int
) -> dict[str, Any]:
    """Skinned CoordinationQA accuracy and its gap (items paired), or why there is none."""
    if qa is None or skinned is None:
        return {"note": "n/a: the agent does not answer text questions"}
    a, b = qa.get("correct"), skinned.get("correct")
    gap = (
        paired_gap([(a, b)], [100.0], seed, B)
        if isinstance(a, list) and isinstance(b, list) and a and len(a) == len(b)
        else {"mean": None, "lo": None, "hi": None, "n": 0}
    )
    return {
        "accuracy_pct": skinned.get("accuracy_pct"),
        "items": skinned.get("items"),
        "gap_pct": gap,
        "note": "the same items (ids, keys, option positions) shown in the skin",
    }


# --------------------------------------------------------------------------- reproduce, board
#: Figures of a skinned cell checked by ``--reproduce`` (besides the canonical cell's).
CELL_FIGURES = (("return",), ("return_gap",), ("rules", "invalid_pct"), ("rules", "fallback_pct"))


def _get(obj: Any, path: tuple[str, ...]) -> Any:
    for k in path:
        obj = obj.get(k) if isinstance(obj, Mapping) else None
    return obj


def figures(old: Mapping[str, Any], new: Mapping[str, Any]) -> Iterator[tuple[str, Any, Any]]:
    """``(figure, old value, new value)`` of every checked skinned figure (nothing when the old
    row has no skinned run)."""
    o, n = old.get("skin") or {}, new.get("skin") or {}
    if not o.get("key"):
        return
    cells = {c["id"]: c for c in n.get("cells", [])}
    for cell in o.get("cells", []):
        for path in CELL_FIGURES:
            yield (
                f"{cell['id']} {'.'.join(path)}",
                _get(cell, path),
                _get(cells.get(cell["id"]), path),
            )
    for game, g in o.get("games", {}).items():
        for path in (("normalised",), ("gap",)):
            yield (
                f"{game}@{o['key']} {'.'.join(path)}",
                _get(g, path),
                _get(n, ("games", game, *path)),
            )
    for path in (
        ("aggregate", "score"),
        ("aggregate", "gap"),
        ("qa", "accuracy_pct"),
        ("qa", "gap_pct"),
    ):
        if _get(o, path) is not None or _get(n, path) is not None:
            yield f"skin {o['key']} {'.'.join(path)}", _get(o, path), _get(n, path)


def leaderboard_cell(row: Mapping[str, Any]) -> tuple[str, float]:
    """The "skin gap" column: the aggregate's gap with its interval, or "not run"."""
    s = row.get("skin") or {}
    gap = _get(s, ("aggregate", "gap"))
    if not s.get("key") or not isinstance(gap, Mapping) or gap.get("mean") is None:
        return NOT_RUN, float("nan")
    m, lo, hi = gap["mean"], gap.get("lo"), gap.get("hi")
    text = f"{m:.2f}" if lo is None or hi is None else f"{m:.2f} [{lo:.2f}, {hi:.2f}]"
    return f"{text} ({s['key']})", float(m)


__all__ = [
    "CELL_FIGURES",
    "NOT_RUN",
    "OFF",
    "block",
    "figures",
    "leaderboard_cell",
    "paired_gap",
    "resolve",
    "skinned_id",
    "skinned_jobs",
    "split",
]
