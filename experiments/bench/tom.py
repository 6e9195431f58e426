"""The bench's functional and literal ToM columns, and the best-response anchors of suite v2.

**Functional ToM** (issue #35's measure, :mod:`tom_envs.partners.regret`): per (game, partner)
cell, the focal's regret ``ΔF(seed) = U_ref(seed) - U(seed)`` on the cell's own seeds (paired),
with ``U`` the game's functional objective (:mod:`tom_envs.core.functional`) and ``U_ref`` the
reference frozen in the suite (``[anchors.<game>.refs.<partner>]``, written by ``tom-envs bench
--build-anchors``):

* ``exact``: :func:`tom_envs.references.reference_for` (the matrix games' dynamic programme, the
  Capture/Escape ``BestResponsePlanner``, the bomb-defusal optimum against a CBS team);
* ``bracket``: bomb defusal against other partners; regret is taken against the lower end (the
  best declared candidate), so it is a lower bound;
* ``lower bound``: elsewhere, the best of the game's *declared* candidates (the suite's
  ``references``) as focal, chosen on the suite's ``selection_seeds`` (disjoint from every cell
  and anchor seed) and then played on the cells' seeds. Never "the best evaluated agent": the
  reference does not depend on which agents are scored, and a negative regret is printed as it
  is (the agent beat a lower bound), never used to replace it.

Per game: the regret per episode and per step (``/T``, the game's fixed horizon), pooled over
its cells, with 95% bootstrap intervals over episodes, and the reference kind of each partner.
Aggregate: the mean over games (those with headroom) of the regret divided by the game's anchor
span ``high - low`` (so games in different units can be averaged), stratified bootstrap.

**Literal ToM** (:mod:`tom_envs.partners.prediction`): the next-action questions the suite asks
(``predict``, e.g. ``every:4``: at the agent's decisions 0, 4, 8, ..., fixed before play) of
agents that answer them (a ``predict_partner`` method: the bench's LLM agent), scored against the
partner's actual next action; agents that volunteer a prediction with their action (RMax and the
oracle in the matrix games) are scored on those, labelled ``volunteered``. Beside the accuracy,
the shortcut predictors on the SAME items (``repeat_last``, ``most_frequent``,
``majority_context``, ``learned_history``: a back-off n-gram fitted on the cell's other seeds; the
``oracle`` ceiling where the partner's policy is known); the column is
``accuracy - best shortcut`` (the shortcut with the highest accuracy on the game's items) with a
bootstrap interval over episodes, and the raw accuracy. An agent that answers nothing is
``not answered`` (never a number); a game whose action space is too large and declares no
action classes is ``not asked``.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tom_experiments.bench.row import NOT_MEASURED, ci_mean, interval
from tom_experiments.bench.suite import Anchor, Suite, SuiteError, SuiteGame

NOT_ANSWERED = "not answered"
NOT_ASKED = "not asked: the game has neither a small action space nor action classes"
#: The shortcut predictors an answer is compared with (the oracle is a ceiling, not a shortcut).
SHORTCUTS = ("repeat_last", "most_frequent", "majority_context", "learned_history")
FUNCTIONAL_DEFINITION = (
    "regret = U_ref - U on the cell's seeds (U: the game's functional objective); U_ref exact "
    "where a solver gives the best response, else the lower end of a bracket or the best declared "
    "candidate chosen on selection seeds (a lower bound: the regret is then a lower bound too)"
)


# --------------------------------------------------------------------------- objective
def objective(g: SuiteGame) -> Any:
    """The game's functional objective ``U`` with the suite's game arguments."""
    from tom_envs.registration import game_spec

    spec = game_spec(g.game)
    return spec.load().functional_objective(**{**spec.kwargs, **g.kwargs})


def score_u(suite: Suite, g: SuiteGame, eps: Sequence[Any], nums: list[dict[str, float]]) -> None:
    """Suites scored on ``U`` (v2): each episode's ``return`` figure becomes its ``U``."""
    if suite.objective != "U":
        return
    obj = objective(g)
    for n, ep in zip(nums, eps, strict=True):
        n["return"] = float(obj(ep, g.focal_seats))


def scored(suite: Suite, g: SuiteGame) -> str:
    """What a game's ``return`` figure is, in words."""
    return "focal return" if suite.objective != "U" else f"U = {objective(g).name}"


# --------------------------------------------------------------------------- anchors (v2)
#: ``play(suite, spec, game, out) -> outcomes`` (the bench's :func:`run._play_plain`) and
#: ``players(game, kwargs) -> int``: given by the caller (this module does not import run.py)
Play = Callable[[Suite, str, SuiteGame, Path], Sequence[Any]]


def _u_by_seed(suite: Suite, spec: str, g: SuiteGame, out: Path, play: Play) -> dict[int, float]:
    obj = objective(g)
    eps = [o.episode for o in play(suite, spec, g, out) if o.ok]
    return {int(e.seed): float(obj(e, g.focal_seats)) for e in eps}


def cell_reference(
    suite: Suite, g: SuiteGame, partner: str, seeds: Sequence[int], out: Path, play: Play,
    players: int,
) -> dict[str, Any]:  # fmt: skip
    """The reference of one (game, partner) on ``seeds``: the solver's where it has one, else the
    best declared candidate (chosen on the suite's selection seeds)."""
    from tom_envs import zoo
    from tom_envs.evaluation.references import candidate_reference, solver_reference

    spec = zoo.agent_spec(partner, g.game)
    kwargs = dict(g.kwargs)
    if g.game == "BombDefusal":
        kwargs.update(candidates=g.references, selection_seeds=suite.selection_seeds)
    ref = None
    if set(g.focal_seats) | set(g.partner_seats) == set(range(players)):  # the solvers' case
        ref = solver_reference(g.game, spec, g.focal_seats[0], seeds, kwargs)
    if ref is None:
        if not suite.selection_seeds:
            raise SuiteError(f"{suite.key}: no selection_seeds to choose a candidate reference")
        cell = dataclasses.replace(g, partners=(partner,))

        def play_candidate(cand: str, on: Sequence[int]) -> Mapping[int, float]:
            return _u_by_seed(suite, cand, dataclasses.replace(cell, seeds=tuple(on)), out, play)

        ref = candidate_reference(play_candidate, g.references, suite.selection_seeds, seeds)
    out_ref: dict[str, Any] = {
        "kind": ref.kind,
        "source": ref.source[:300],
        "seeds": [int(s) for s in sorted(ref.values)],
        "values": [round(float(ref.values[s]), 6) for s in sorted(ref.values)],
    }
    if ref.upper is not None:
        out_ref["upper"] = [round(float(ref.upper[s]), 6) for s in sorted(ref.values)]
    return out_ref


def game_kind(refs: Mapping[str, Mapping[str, Any]]) -> str:
    """``exact`` when every partner's reference is, ``lower bound`` when none is, else
    ``mixed``."""
    kinds = {r["kind"] == "exact" for r in refs.values()}
    return "exact" if kinds == {True} else "lower bound" if kinds == {False} else "mixed"


def build_anchors(
    suite: Suite, out: Path, play: Play, players: Callable[[str, Mapping[str, Any]], int]
) -> dict[str, Anchor]:
    """Each game's v2 anchors: ``low`` = the random focal's mean ``U`` with the suite's partners
    on the anchor seeds; ``high`` = the mean over partners of the reference's value there (each
    reference stored per seed, for the cells' regret)."""
    from tom_envs import zoo
    from tom_envs.records import bootstrap_ci

    anchors = {}
    for g in suite.games:
        on = tuple(g.anchor_seeds or g.seeds)
        lows = [u for p in g.partners for u in _u_by_seed(
            suite, "random", dataclasses.replace(g, seeds=on, partners=(p,)), out, play).values()]  # fmt: skip
        if not lows:
            raise SuiteError(f"{g.game}: no anchor episode could be played")
        seeds = sorted(set(on) | set(g.seeds))
        n = players(g.game, g.kwargs)
        refs = {p: cell_reference(suite, g, p, seeds, out, play, n) for p in g.partners}
        highs = [
            float(np.mean([v for s, v in zip(r["seeds"], r["values"], strict=True) if s in on]))
            for r in refs.values()
        ]
        pooled = [v for r in refs.values() for s, v in zip(r["seeds"], r["values"], strict=True)
                  if s in on]  # fmt: skip
        lo = bootstrap_ci(lows, suite.bootstrap_seed, resamples=suite.bootstrap_resamples)
        hi = bootstrap_ci(pooled, suite.bootstrap_seed, resamples=suite.bootstrap_resamples)
        kind = game_kind(refs)
        anchors[g.game] = Anchor(
            round(lo[0], 6),
            round(float(np.mean(highs)), 6),
            f"best-response references per partner ({kind}; see refs)",
            (round(lo[1], 6), round(lo[2], 6)),
            (round(hi[1], 6), round(hi[2], 6)),
            zoo.version(g.game),
            len(lows),
            kind,
            refs,
        )
        print(f"{g.game}: low {lo[0]:.4g} (random focal), high {np.mean(highs):.4g} ({kind})",
              file=sys.stderr)  # fmt: skip
    return anchors


# --------------------------------------------------------------------------- functional
def _cell_regret(g: SuiteGame, anchor: Anchor, partner: str, eps: Sequence[Any]) -> list[float]:
    ref = anchor.refs.get(partner)
    if ref is None:
        return []
    values = dict(zip(ref["seeds"], ref["values"], strict=True))
    obj = objective(g)
    missing = [e.seed for e in eps if e.seed not in values]
    if missing:
        raise SuiteError(f"{g.game}/{partner}: the frozen reference has no value for {missing}")
    return [float(values[e.seed]) - float(obj(e, g.focal_seats)) for e in eps]


def _per_step(iv: Mapping[str, Any], horizon: int | None) -> dict[str, Any] | None:
    if not horizon:
        return None
    return {k: (None if v is None else round(v / horizon, 6)) if k != "n" else v
            for k, v in iv.items()}  # fmt: skip


def functional(
    suite: Suite, by_cell: Mapping[str, Sequence[Any]], games_with_headroom: Sequence[str]
) -> dict[str, Any]:
    """The functional ToM block of a row (v2 suites)."""
    seed, B = suite.bootstrap_seed, suite.bootstrap_resamples
    games: dict[str, Any] = {}
    groups, spans = [], []
    for g in suite.games:
        anchor = suite.anchors.get(g.game)
        if anchor is None or not anchor.refs:
            continue
        horizon = objective(g).horizon
        cells, pooled = {}, []
        for p in g.partners:
            eps = sorted(by_cell.get(f"{g.game}/{p}", []), key=lambda e: e.seed)
            regret = _cell_regret(g, anchor, p, eps)
            if not regret:
                continue
            pooled += regret
            iv = ci_mean(regret, seed, B)
            ref = anchor.refs[p]
            cells[p] = {"kind": ref["kind"], "source": ref.get("source", ""), "per_episode": iv,
                        "per_step": _per_step(iv, horizon)}  # fmt: skip
        if not pooled:
            continue
        iv = ci_mean(pooled, seed, B)
        kind = game_kind({p: anchor.refs[p] for p in cells})
        games[g.game] = {
            "reference": kind,
            "reference_by_partner": {p: c["kind"] for p, c in cells.items()},
            "horizon": horizon,
            "per_episode": iv,
            "per_step": _per_step(iv, horizon),
            "beaten": bool(kind != "exact" and (iv["mean"] or 0.0) < 0.0),
            "cells": cells,
        }
        if g.game in games_with_headroom and anchor.headroom:
            groups.append(pooled)
            spans.append(anchor.high - anchor.low)
    return {
        "definition": FUNCTIONAL_DEFINITION,
        "games": games,
        "aggregate": _normalised_regret(groups, spans, seed, B),
    }


def _normalised_regret(
    groups: Sequence[Sequence[float]], spans: Sequence[float], seed: int, B: int
) -> dict[str, Any]:
    from tom_experiments.bench.row import stratified_mean

    if not groups:
        return {"mean": None, "lo": None, "hi": None, "n": 0, "games": 0}
    out = stratified_mean(groups, [lambda m, s=s: m / s for s in spans], seed, B)
    return {**out, "games": len(groups), "unit": "regret / (high - low), mean over games"}


# --------------------------------------------------------------------------- literal
def asked(g: SuiteGame) -> bool:
    """Whether the game has a next-action question (a small action space or action classes)."""
    from tom_envs.partners.prediction import MAX_OPTIONS
    from tom_envs.registration import game_spec

    spec = game_spec(g.game)
    module = spec.load()
    n = int(module.make_bundle(**{**spec.kwargs, **g.kwargs}).game.num_actions)
    return n <= MAX_OPTIONS or getattr(module, "action_classes", None) is not None


def cell_items(g: SuiteGame, eps: Sequence[Any]) -> list[Any]:
    """The focal seats' predictions about the partner seats in one cell, with the shortcuts
    filled in on the same items (the asked questions when the agent was asked any, an
    unparsable reply counting as a wrong answer; else its volunteered predictions)."""
    from tom_envs.partners.prediction import prediction_items, shortcut_items

    focal = {f"player_{i}" for i in g.focal_seats}
    partner = {f"player_{i}" for i in g.partner_seats}
    items = [it for ep in eps for it in prediction_items(ep)
             if it.asker in focal and it.target in partner]  # fmt: skip
    asked_any = any(it.source == "probe" for it in items)
    source = "probe" if asked_any else "volunteered"
    return shortcut_items([it for it in items if it.source == source])


def _counts(items: Sequence[Any]) -> dict[tuple[str, int], dict[str, float]]:
    """Per episode: resolved items, the agent's right answers and each shortcut's."""
    out: dict[tuple[str, int], dict[str, float]] = {}
    for it in items:
        if it.truth is None:
            continue
        c = out.setdefault(
            (it.target, it.seed), {"n": 0.0, "agent": 0.0} | dict.fromkeys(SHORTCUTS, 0.0)
        )
        c["n"] += 1
        c["agent"] += float(it.predicted is not None and it.predicted == it.truth)
        for s in SHORTCUTS:
            c[s] += float(it.shortcuts.get(s) is not None and it.shortcuts.get(s) == it.truth)
    return out


def _ratio_iv(rows: Sequence[Mapping[str, float]], key: str, base: str | None, seed: int,
              B: int) -> dict[str, Any]:  # fmt: skip
    """``100 * (sum key - sum base) / sum n`` over episodes, bootstrap over episodes."""
    n = np.asarray([r["n"] for r in rows])
    a = np.asarray([r[key] - (r[base] if base else 0.0) for r in rows])
    est = 100.0 * a.sum() / n.sum()
    if len(rows) < 2:
        return interval(est, math.nan, math.nan, len(rows))
    idx = np.random.default_rng(seed).integers(0, len(rows), size=(B, len(rows)))
    stats = 100.0 * a[idx].sum(axis=1) / np.maximum(n[idx].sum(axis=1), 1e-12)
    lo, hi = np.percentile(stats, [2.5, 97.5])
    return interval(est, float(lo), float(hi), len(rows))


def literal_game(g: SuiteGame, by_cell: Mapping[str, Sequence[Any]], seed: int, B: int) -> Any:
    """One game's literal ToM entry (a status string when there is no number)."""
    if not asked(g):
        return NOT_ASKED
    items: list[Any] = []
    rows: list[dict[str, float]] = []  # one per episode (cells counted apart: seeds repeat)
    for p in g.partners:
        cell = cell_items(g, by_cell.get(f"{g.game}/{p}", []))
        items += cell
        rows += list(_counts(cell).values())
    if not rows:  # never asked (no ``predict_partner``) and nothing volunteered
        return NOT_ANSWERED
    total = {k: sum(r[k] for r in rows) for k in ("n", "agent", *SHORTCUTS)}
    best = max(SHORTCUTS, key=lambda s: total[s])  # ties: the first listed
    oracle = [it for it in items if it.truth is not None and "oracle" in it.shortcuts]
    return {
        "source": items[0].source,
        "kind": items[0].kind,
        "items": int(total["n"]),
        "unanswered": sum(it.predicted is None for it in items if it.truth is not None),
        "acc_pct": _ratio_iv(rows, "agent", None, seed, B),
        "shortcuts_pct": {s: round(100.0 * total[s] / total["n"], 3) for s in SHORTCUTS},
        "best_shortcut": best,
        "acc_minus_best_pct": _ratio_iv(rows, "agent", best, seed, B),
        "note": "majority_context and learned_history are fitted on the cell's other seeds: in a "
        "cell with one seed they have no basis and count as wrong"
        if any(len({e.seed for e in by_cell.get(f"{g.game}/{p}", [])}) < 2 for p in g.partners)
        else "",
        "oracle_pct": round(100.0 * float(np.mean([it.shortcuts["oracle"] == it.truth for it in oracle])), 3)
        if oracle else None,
        "_rows": [[r["n"], r["agent"], r[best]] for r in rows],
    }  # fmt: skip


def literal(suite: Suite, by_cell: Mapping[str, Sequence[Any]]) -> dict[str, Any]:
    """The literal ToM block of a row (v2 suites)."""
    seed, B = suite.bootstrap_seed, suite.bootstrap_resamples
    games = {g.game: literal_game(g, by_cell, seed, B) for g in suite.games}
    numeric = {k: v for k, v in games.items() if isinstance(v, dict)}
    agg: dict[str, Any] = {"status": NOT_ANSWERED} if not numeric else _literal_aggregate(
        [np.asarray(v.pop("_rows")) for v in numeric.values()], seed, B)  # fmt: skip
    for v in games.values():
        if isinstance(v, dict):
            v.pop("_rows", None)
    agg["games"] = sorted(numeric)
    return {"predict": suite.predict, "games": games, "aggregate": agg}


def _literal_aggregate(groups: Sequence[np.ndarray], seed: int, B: int) -> dict[str, Any]:
    """Mean over games of (accuracy - best shortcut) and of accuracy, in points, each game's
    episodes resampled on their own."""

    def stat(arrs: Sequence[np.ndarray], col: int, base: bool) -> float:
        return float(np.mean([100.0 * (a[:, 1] - (a[:, 2] if base else 0)).sum() / a[:, 0].sum()
                              for a in arrs]))  # fmt: skip

    rng = np.random.default_rng(seed)
    draws = [[a[rng.integers(0, len(a), size=len(a))] for a in groups] for _ in range(B)]
    out = {}
    for name, base in (("acc_minus_best_pct", True), ("acc_pct", False)):
        est = stat(groups, 1, base)
        if sum(len(a) for a in groups) < 2:
            out[name] = interval(est, math.nan, math.nan, sum(len(a) for a in groups))
            continue
        vals = [stat(d, 1, base) for d in draws]
        lo, hi = np.percentile(vals, [2.5, 97.5])
        out[name] = interval(est, float(lo), float(hi), sum(len(a) for a in groups))
    return out


# --------------------------------------------------------------------------- the row block
def tom_block(
    suite: Suite, by_cell: Mapping[str, Sequence[Any]], games: Mapping[str, Any]
) -> dict[str, Any]:
    """The row's ``tom`` block: both columns for a v2 suite, "not measured" for v1."""
    if suite.objective != "U":
        return {"functional": NOT_MEASURED, "literal": NOT_MEASURED}
    headroom = [k for k, v in games.items() if v.get("headroom")]
    return {"functional": functional(suite, by_cell, headroom), "literal": literal(suite, by_cell)}


__all__ = [
    "NOT_ANSWERED",
    "NOT_ASKED",
    "SHORTCUTS",
    "asked",
    "build_anchors",
    "cell_items",
    "cell_reference",
    "functional",
    "literal",
    "objective",
    "score_u",
    "tom_block",
]


# --------------------------------------------------------------------------- leaderboard text
V1_SCALE = "0 = random pair, 1 = the suite's best declared reference (per game)"
V2_SCALE = (
    "0 = random focal, 1 = the best-response reference (per game: exact where a solver gives "
    "it, else the best declared candidate, a lower bound: above 1 possible)"
)


def scale_text(row: Mapping[str, Any]) -> str:
    """What 0 and 1 mean in a row's suite."""
    return V2_SCALE if isinstance(row.get("tom", {}).get("functional"), dict) else V1_SCALE


def fmt_interval(x: Any, digits: int = 2) -> str:
    """``mean [lo, hi]`` of an interval (the mean alone without bounds; ``n/a`` without a mean)."""
    if not isinstance(x, Mapping) or x.get("mean") is None:
        return "n/a"
    m, lo, hi = x["mean"], x.get("lo"), x.get("hi")
    if lo is None or hi is None:
        return f"{m:.{digits}f}"
    return f"{m:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def _key(x: Any) -> float:
    m = x.get("mean") if isinstance(x, Mapping) else None
    return float(m) if isinstance(m, (int, float)) else math.nan


def row_cells(row: Mapping[str, Any]) -> list[tuple[str, float]]:
    """The leaderboard's two ToM cells of a row: functional (mean normalised regret, lower is
    better) and literal (accuracy - best shortcut, with the raw accuracy)."""
    t = row.get("tom") or {}
    fun, lit = t.get("functional"), t.get("literal")
    if not isinstance(fun, Mapping):
        return [("not measured (suite v1)", math.nan)] * 2
    agg = fun.get("aggregate", {})
    out = [(fmt_interval(agg) + " (regret / span)", _key(agg))]
    la = lit.get("aggregate", {}) if isinstance(lit, Mapping) else {}
    if "acc_minus_best_pct" not in la:
        return [*out, (NOT_ANSWERED, math.nan)]
    text = f"{fmt_interval(la['acc_minus_best_pct'], 1)} (acc {fmt_interval(la['acc_pct'], 1)})"
    return [*out, (text, _key(la["acc_minus_best_pct"]))]


def _fun_cell(v: Any) -> str:
    if not isinstance(v, Mapping):
        return "n/a"
    main = v.get("per_step") or v.get("per_episode")
    flag = "; reference beaten" if v.get("beaten") else ""
    return f"{fmt_interval(main, 3)} ({v.get('reference')}{flag})"


def _lit_cell(v: Any) -> str:
    if not isinstance(v, Mapping):
        return NOT_ASKED.split(":")[0] if v == NOT_ASKED else str(v)
    cuts = ", ".join(f"{k} {x:.0f}" for k, x in v["shortcuts_pct"].items())
    return (f"{fmt_interval(v['acc_minus_best_pct'], 1)} (acc {v['acc_pct']['mean']:.1f}; {cuts}; "
            f"{v['items']} {v['source']} items)")  # fmt: skip


def game_tables(rows: Sequence[Mapping[str, Any]]) -> list[tuple[str, list[str], list[list[str]]]]:
    """Per-game ToM tables of rows of one suite and protocol (none for v1 rows):
    ``(caption, header, body)``."""
    rows = [r for r in rows if isinstance((r.get("tom") or {}).get("functional"), Mapping)]
    if not rows:
        return []
    games: list[str] = []
    for r in rows:
        for c in r["cells"]:
            if c["game"] not in games:
                games.append(c["game"])
    fun = [[str(r["agent"]["spec"])] + [_fun_cell(r["tom"]["functional"]["games"].get(g))
                                        for g in games] for r in rows]  # fmt: skip
    lit = [[str(r["agent"]["spec"])] + [_lit_cell(r["tom"]["literal"]["games"].get(g, "n/a"))
                                        for g in games] for r in rows]  # fmt: skip
    return [
        ("Functional ToM per game: regret per step (U_ref - U) / T [95%] (reference kind)",
         ["agent", *games], fun),
        ("Literal ToM per game: next-action accuracy - best shortcut, points [95%] "
         "(accuracy; the shortcuts on the same items)", ["agent", *games], lit),
    ]  # fmt: skip


def _tom_figures(row: Mapping[str, Any]) -> dict[str, Any]:
    """Every interval of a row's ToM block, by name (none for v1 rows)."""
    t = row.get("tom") or {}
    fun, lit = t.get("functional"), t.get("literal")
    out: dict[str, Any] = {}
    if isinstance(fun, Mapping):
        out["functional aggregate"] = fun.get("aggregate")
        for g, v in fun.get("games", {}).items():
            out[f"{g} functional per_episode"] = v.get("per_episode")
    if isinstance(lit, Mapping):
        for k in ("acc_pct", "acc_minus_best_pct"):
            if k in lit.get("aggregate", {}):
                out[f"literal aggregate {k}"] = lit["aggregate"][k]
        for g, v in lit.get("games", {}).items():
            for k in ("acc_pct", "acc_minus_best_pct"):
                if isinstance(v, Mapping):
                    out[f"{g} literal {k}"] = v.get(k)
    return out


def compare(
    old: Mapping[str, Any], new: Mapping[str, Any], inside: Callable[[Any, Any], tuple[bool, str]]
) -> Any:
    """``(figure, inside, detail)`` for the ToM figures of two rows (``--reproduce``); a figure
    that became a status ("not answered") or vanished is outside."""
    mine = _tom_figures(new)
    for name, value in _tom_figures(old).items():
        ok, detail = inside(value, mine.get(name))
        yield name, ok, detail


def above_bound(game: Mapping[str, Any]) -> str:
    """A flag for a v2 game score above 1 against a reference that is not exact (the agent beat
    a lower bound: the scale's 1 is not the best response there)."""
    mean = (game.get("normalised") or {}).get("mean")
    kind = (game.get("anchors") or {}).get("high_kind")
    if kind and kind != "exact" and isinstance(mean, (int, float)) and mean > 1.0:
        return f" (above a {kind} reference)"
    return ""
