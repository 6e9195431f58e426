"""The bench row (``tom-bench-row/1``): one JSON file, every figure with its 95% interval.

Every interval is a seeded percentile bootstrap over episodes
(:func:`tom_envs.records.bootstrap_ci`, the suite's resamples and seed): a game's return and its
normalised score resample the game's episodes (its cells pooled; each cell has its suite-fixed
seeds), rates and costs resample episodes too; the aggregate (the mean of the games' normalised
scores) resamples each game's episodes independently (stratified), with the anchors fixed. With
fewer than two episodes there is no interval (``lo``/``hi`` are ``null``). CoordinationQA accuracy
resamples items. Functional and literal ToM are not measured by suite version 1: the row says so
in words and holds no number for them.

:func:`check_row` validates an untrusted row file (schema, sizes, known fields) before anything
reads it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tom_envs.records import bootstrap_ci

SCHEMA = "tom-bench-row/1"
#: A row file larger than this is refused (rows hold numbers and a manifest, no trajectories).
MAX_ROW_BYTES = 2_000_000
ROW_KEYS = {
    "schema",
    "created",
    "suite",
    "agent",
    "protocol",
    "code",
    "cells",
    "games",
    "aggregate",
    "qa",
    "rules",
    "cost",
    "tom",
    "unplayable",
    "run",
    "skin",
}
NOT_MEASURED = "not measured in this suite version (the #35 measures are not part of suite v1)"
#: Failure kinds that are an illegal answer (a reply naming no legal action, an illegal action,
#: an answer the agent itself found unusable, e.g. an Overcooked mid-level action that cannot be
#: carried out); the others (endpoint, exception, context overflow) are failures of the run.
RULE_FAILURES = ("unparseable", "illegal", "invalid")
#: Cost fields summed per episode (the LLM agents' usage metrics) and the wall time.
COST_FIELDS = ("calls", "tokens_in", "tokens_out", "cost_usd")


class RowError(ValueError):
    """A row file that is not a valid ``tom-bench-row/1``; the message says why."""


def _num(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), 6)


def interval(est: float, lo: float, hi: float, n: int) -> dict[str, Any]:
    """``{"mean", "lo", "hi", "n"}`` (non-finite bounds as ``null``)."""
    return {"mean": _num(est), "lo": _num(lo), "hi": _num(hi), "n": int(n)}


def ci_mean(values: Sequence[float], seed: int, resamples: int) -> dict[str, Any]:
    """The mean of ``values`` with its bootstrap interval."""
    return interval(*bootstrap_ci(list(values), seed, resamples=resamples), n=len(values))


def ci_ratio(
    pairs: Sequence[tuple[float, float]], seed: int, resamples: int, scale: float = 100.0
) -> dict[str, Any]:
    """``scale * sum(num) / sum(den)`` over episodes ``(num, den)`` with its interval (episodes
    resampled); ``null`` when no episode has a denominator. The draws and percentiles are
    :func:`~tom_envs.records.bootstrap_ci`'s with the ratio as its statistic, vectorised (a test
    checks they agree)."""
    num = np.asarray([p[0] for p in pairs], dtype=float)
    den = np.asarray([p[1] for p in pairs], dtype=float)
    if den.sum() == 0:
        return {"mean": None, "lo": None, "hi": None, "n": len(pairs)}
    est = scale * float(num.sum()) / float(den.sum())
    if len(pairs) < 2:
        return interval(est, math.nan, math.nan, len(pairs))
    idx = np.random.default_rng(seed).integers(0, len(pairs), size=(resamples, len(pairs)))
    dens = den[idx].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        stats = np.where(dens > 0, scale * num[idx].sum(axis=1) / dens, np.nan)
    lo, hi = np.percentile(stats, [2.5, 97.5])
    return interval(est, float(lo), float(hi), len(pairs))


def stratified_mean(
    groups: Sequence[Sequence[float]],
    transforms: Sequence[Callable[[float], float]],
    seed: int,
    resamples: int,
) -> dict[str, Any]:
    """Mean over groups of ``transform(mean of the group)``, each group's items resampled on its
    own (percentile interval; the same ``numpy.random.default_rng(seed)`` draws)."""
    if not groups:
        return {"mean": None, "lo": None, "hi": None, "n": 0}
    est = float(np.mean([t(float(np.mean(g))) for g, t in zip(groups, transforms, strict=True)]))
    if min(len(g) for g in groups) < 1 or sum(len(g) for g in groups) < 2:
        return interval(est, math.nan, math.nan, sum(len(g) for g in groups))
    rng = np.random.default_rng(seed)
    stats = np.zeros(resamples)
    for g, t in zip(groups, transforms, strict=True):
        arr = np.asarray(g, dtype=float)
        idx = rng.integers(0, len(arr), size=(resamples, len(arr)))
        means = arr[idx].mean(axis=1)
        stats += np.asarray([t(float(m)) for m in means])
    stats /= len(groups)
    lo, hi = np.percentile(stats, [2.5, 97.5])
    return interval(est, float(lo), float(hi), sum(len(g) for g in groups))


# --------------------------------------------------------------------------- per episode
def episode_numbers(ep: Any, focal: Sequence[int]) -> dict[str, float]:
    """What one episode contributes to a row: the focal seats' mean return, their decisions,
    fallbacks, invalid first answers (an answer re-asked, or replaced for being illegal:
    :data:`RULE_FAILURES`),
    re-asks, model calls, tokens, cost and wall time."""
    names = [f"player_{i}" for i in focal]
    out = {
        "return": float(np.mean([ep.returns.get(a, 0.0) for a in names])),
        "decisions": float(sum(ep.decisions.get(a, 0) for a in names)),
        "fallbacks": float(sum(ep.fallbacks.get(a, 0) for a in names)),
        "invalid": 0.0,
        "reprompts": 0.0,
        "wall_s": float(ep.wall_time_s),
        # illegal answers forfeited (``--on-invalid forfeit``): turns lost, the episode lost
        "forfeit_turns": float(sum(ep.metrics.get(f"forfeit_turns/{a}", 0.0) for a in names)),
        "forfeit_episode": float(any(ep.metrics.get(f"forfeit_episode/{a}") for a in names)),
    }
    for key in COST_FIELDS:
        out[key] = float(sum(float(ep.metrics.get(f"usage/{key}/{a}", 0.0)) for a in names))
    for step in ep.steps:
        if step.get("agent") not in names:
            continue
        info = step.get("info") or {}
        # the driver's record of the decision (every agent), else the agent's own
        raw_usage, raw_failure = info.get("usage"), step.get("failure") or info.get("failure")
        usage: Mapping[str, Any] = raw_usage if isinstance(raw_usage, Mapping) else {}
        re_asked = float(usage.get("reprompts", 0) or 0)
        out["reprompts"] += re_asked
        failure: Mapping[str, Any] = raw_failure if isinstance(raw_failure, Mapping) else {}
        fell_back = bool(step.get("fallback") or step.get("forfeit") or info.get("fallback"))
        illegal = fell_back and failure.get("kind") in RULE_FAILURES
        out["invalid"] += float(re_asked > 0 or illegal)
    return out


def models_reported(episodes: Sequence[Any], focal: Sequence[int]) -> list[str]:
    """The distinct model names the endpoint reported in the focal seats' calls."""
    names = {f"player_{i}" for i in focal}
    seen: set[str] = set()
    for ep in episodes:
        for step in ep.steps:
            if step.get("agent") in names:
                for call in (step.get("info") or {}).get("llm_calls") or ():
                    if isinstance(call, Mapping) and call.get("model"):
                        seen.add(str(call["model"]))
    return sorted(seen)


def summarise(nums: Sequence[Mapping[str, float]], seed: int, resamples: int) -> dict[str, Any]:
    """The return, rule-adherence and cost figures of a set of episodes, with intervals."""
    pick = lambda k: [n[k] for n in nums]  # noqa: E731
    return {
        "return": ci_mean(pick("return"), seed, resamples),
        "rules": {
            "invalid_pct": ci_ratio(
                [(n["invalid"], n["decisions"]) for n in nums], seed, resamples
            ),
            "fallback_pct": ci_ratio(
                [(n["fallbacks"], n["decisions"]) for n in nums], seed, resamples
            ),
            "reprompts_per_decision": ci_ratio(
                [(n["reprompts"], n["decisions"]) for n in nums], seed, resamples, scale=1.0
            ),
            "decisions": sum(pick("decisions")),
            **forfeit_figures(nums, seed, resamples),
        },
        "cost": {
            **{
                k: {"per_episode": ci_mean(pick(k), seed, resamples), "total": _num(sum(pick(k)))}
                for k in (*COST_FIELDS, "wall_s")
            },
        },
    }


def forfeit_figures(
    nums: Sequence[Mapping[str, float]], seed: int, resamples: int
) -> dict[str, Any]:
    """Forfeited turns (% of decisions) and forfeited episodes (count and %), with intervals:
    illegal answers under ``--on-invalid forfeit`` (0 under the other protocols)."""
    lost = [float(n.get("forfeit_episode", 0.0)) for n in nums]
    return {
        "forfeit_turn_pct": ci_ratio(
            [(n.get("forfeit_turns", 0.0), n["decisions"]) for n in nums], seed, resamples
        ),
        "forfeited_episodes": int(sum(lost)),
        "forfeited_episode_pct": {
            k: (v * 100 if isinstance(v, float) else v)
            for k, v in ci_mean(lost, seed, resamples).items()
        },
    }


# --------------------------------------------------------------------------- the file
def check_row(data: Any, where: str = "row") -> dict[str, Any]:
    """``data`` if it is a ``tom-bench-row/1`` (else :class:`RowError` naming the problem)."""
    if not isinstance(data, dict):
        raise RowError(f"{where}: expected a JSON object")
    if data.get("schema") != SCHEMA:
        raise RowError(f"{where}: schema {data.get('schema')!r}, expected {SCHEMA!r}")
    unknown = set(data) - ROW_KEYS
    if unknown:
        raise RowError(f"{where}: unknown fields {sorted(unknown)}")
    missing = ROW_KEYS - set(data) - {"unplayable", "run", "skin"}
    if missing:
        raise RowError(f"{where}: missing fields {sorted(missing)}")
    suite = data["suite"]
    if not isinstance(suite, dict) or not {"name", "version", "sha256"} <= set(suite):
        raise RowError(f"{where}: suite must name name, version and sha256")
    if not isinstance(data["cells"], list) or not isinstance(data["games"], dict):
        raise RowError(f"{where}: cells must be a list and games an object")
    if not isinstance(data["agent"], dict) or not isinstance(data["agent"].get("spec"), str):
        raise RowError(f"{where}: agent.spec must be a string")
    return data


def read_row(path: str | Path) -> dict[str, Any]:
    """Read and check a row file (bounded in size; never executes anything it names)."""
    p = Path(path)
    size = p.stat().st_size
    if size > MAX_ROW_BYTES:
        raise RowError(f"{p}: {size:,} bytes, over the row limit of {MAX_ROW_BYTES:,}")
    try:
        data = json.loads(p.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RowError(f"{p}: not JSON: {exc}") from exc
    return check_row(data, str(p))


def write_row(row: Mapping[str, Any], path: str | Path) -> Path:
    """Write a row (checked first) as indented JSON."""
    check_row(dict(row))
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(row, indent=1, sort_keys=False, allow_nan=False) + "\n")
    return p


__all__ = [
    "MAX_ROW_BYTES",
    "NOT_MEASURED",
    "RULE_FAILURES",
    "SCHEMA",
    "RowError",
    "check_row",
    "ci_mean",
    "ci_ratio",
    "episode_numbers",
    "interval",
    "models_reported",
    "read_row",
    "stratified_mean",
    "summarise",
    "write_row",
]
