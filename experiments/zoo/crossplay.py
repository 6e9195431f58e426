"""Cross-play of a game's zoo: does every member play well only with its own kind?

``X[i, j]`` is the team's outcome when member ``i`` holds the focal seat and member ``j`` every
other seat, averaged over the focal seat's positions (each rotation played on every seed) and
then over fixed seeds; the diagonal is self-play. Every cell is played on the same seeds, so the
differences are paired by seed: :func:`gaps` gives, for every pair of members, the self-play
minus cross-play gap ``(X[i,i] + X[j,j])/2 - (X[i,j] + X[j,i])/2`` per seed with its seeded
percentile-bootstrap 95% interval (:func:`tom_envs.records.bootstrap_ci`). A gap whose interval
lies above 0 is evidence that the two members follow different conventions: each plays better with
itself than with the other. Cells carry normal 95% intervals over seeds
(:func:`tom_envs.records.mean_ci95`).

The outcome is a game metric (:data:`OBJECTIVES`: the score in Overcooked and Hanabi, rounds in
bomb defusal (its team score, which saturates at 90, beside them), turns to capture in
CollabCapture, the escape rate in CollabEscape; the focal seats' return elsewhere); ``metric=``
picks another one the game reports.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: ``game -> (metric, higher_is_better)``: the team outcome cross-play reports by default.
OBJECTIVES: dict[str, tuple[str, bool]] = {
    "Overcooked": ("score", True),
    "Hanabi": ("score", True),
    "BombDefusal": ("rounds", False),  # the team score saturates at 90: speed tells teams apart
    "CollabCapture": ("turns", False),
    "CollabEscape": ("escaped", True),
}
#: ``game -> metric``: a second outcome descriptions report (where the first saturates).
SECONDARY: dict[str, str] = {"BombDefusal": "team_score", "CollabCapture": "captured"}
#: The seeds cross-play is played on by default (disjoint from the description seeds).
CROSSPLAY_SEEDS = tuple(range(800_000, 800_020))
#: ``metric=`` value meaning the mean return of the focal seats.
RETURN = "return"


def objective(game: str) -> tuple[str, bool]:
    """The default metric of ``game`` and whether higher is better."""
    return OBJECTIVES.get(game, (RETURN, True))


@dataclass
class CrossPlay:
    """The matrix: ``values[i][j]`` = per-seed outcomes of focal ``names[i]`` with partner
    ``names[j]`` (each the mean over the focal seat's rotations)."""

    game: str
    names: list[str]
    seeds: list[int]
    metric: str
    higher_is_better: bool
    env_kwargs: dict[str, Any]
    values: list[list[list[float]]] = field(default_factory=list)
    #: the same matrix for further metrics (``SECONDARY``: e.g. bomb defusal's rounds)
    more: dict[str, list[list[list[float]]]] = field(default_factory=dict)
    #: fallback decisions counted over all episodes (a learned member never needs one)
    fallbacks: int = 0

    def cell(self, i: int, j: int, metric: str | None = None) -> tuple[float, float]:
        """Mean and 95% half-width of cell ``(i, j)`` (of ``metric``: default the main one)."""
        from tom_envs.records import mean_ci95

        values = self.values if metric in (None, self.metric) else self.more[str(metric)]
        return mean_ci95(values[i][j])


def _outcome(ep: Any, metric: str, focal_seats: Sequence[int]) -> float:
    if metric == RETURN:
        names = list(ep.returns)
        return float(np.mean([ep.returns[names[k]] for k in focal_seats]))
    if metric not in ep.metrics:
        raise ValueError(f"metric {metric!r}: the game reports {', '.join(sorted(ep.metrics))}")
    return float(ep.metrics[metric])


def play_matrix(
    game: str,
    names: Sequence[str],
    seeds: Sequence[int],
    env_kwargs: dict[str, Any] | None = None,
    metric: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> CrossPlay:
    """Play every (focal, partner) pair of zoo members ``names`` on ``seeds``.

    In an ``n``-seat game the focal member holds one seat and the partner all the others; each
    seed is played with the focal member in every seat in turn and the outcomes averaged.
    """
    from tom_envs import zoo
    from tom_envs.agents import make_agent
    from tom_envs.registration import game_spec
    from tom_envs.runner import play_episode

    spec = game_spec(game)
    kwargs = dict(env_kwargs or {})
    default_metric, higher = objective(spec.name)
    metric = metric or default_metric
    bundle = spec.load().make_bundle(**{**spec.kwargs, **kwargs})
    n = int(bundle.game.num_players)
    members = [zoo.member(name, spec.name) for name in names]
    cache: dict[tuple[int, int], Any] = {}

    def agent(i: int, seat: int) -> Any:  # one instance per (member, seat): agents keep memory
        if (i, seat) not in cache:
            cache[(i, seat)] = make_agent(members[i].agent_spec, spec)
        return cache[(i, seat)]

    out = CrossPlay(spec.name, [m.agent_spec for m in members], list(seeds), metric, higher,
                    kwargs)  # fmt: skip
    second = SECONDARY.get(spec.name)
    extra = [second] if second and second != metric else []
    out.more = {m: [] for m in extra}
    for i in range(len(members)):
        row = []
        rows_more: dict[str, list[list[float]]] = {m: [] for m in extra}
        for j in range(len(members)):
            per_seed = []
            more_seed: dict[str, list[float]] = {m: [] for m in extra}
            for seed in seeds:
                values = []
                values_more: dict[str, list[float]] = {m: [] for m in extra}
                for focal in range(n):
                    agents = [agent(i if s == focal else j, s) for s in range(n)]
                    ep = play_episode(spec, agents, int(seed), kwargs)
                    if ep.status != "ok":
                        raise RuntimeError(f"{game} {names[i]} x {names[j]} seed {seed}: episode "
                                           f"{ep.status} ({ep.failure})")  # fmt: skip
                    out.fallbacks += sum(ep.fallbacks.values())
                    values.append(_outcome(ep, metric, [focal]))
                    for m in extra:
                        values_more[m].append(_outcome(ep, m, [focal]))
                per_seed.append(float(np.mean(values)))
                for m in extra:
                    more_seed[m].append(float(np.mean(values_more[m])))
            row.append(per_seed)
            for m in extra:
                rows_more[m].append(more_seed[m])
            if progress is not None:
                mean = float(np.mean(per_seed))
                progress(f"{out.names[i]} x {out.names[j]}: {metric} {mean:.2f}")
        out.values.append(row)
        for m in extra:
            out.more[m].append(rows_more[m])
    return out


@dataclass(frozen=True)
class Gap:
    """Self-play minus cross-play for one pair of members (positive: better with itself, in the
    metric's good direction), with its bootstrap interval over seeds."""

    a: str
    b: str
    estimate: float
    low: float
    high: float

    @property
    def verdict(self) -> str:
        """``"self-play beats cross-play"``, ``"cross-play beats self-play"`` or ``"no
        difference shown"`` (the interval contains 0)."""
        if math.isnan(self.low):
            return "no interval"
        if self.low > 0:
            return "self-play beats cross-play"
        if self.high < 0:
            return "cross-play beats self-play"
        return "no difference shown"


def gaps(cp: CrossPlay, pairs: Sequence[tuple[int, int]] | None = None, seed: int = 0) -> list[Gap]:
    """The paired self-play minus cross-play gap of every pair (default: all pairs ``i < j``)."""
    from tom_envs.records import bootstrap_ci

    k = len(cp.names)
    pairs = pairs if pairs is not None else [(i, j) for i in range(k) for j in range(i + 1, k)]
    sign = 1.0 if cp.higher_is_better else -1.0
    out = []
    for i, j in pairs:
        v = cp.values
        per_seed = [
            sign * ((v[i][i][s] + v[j][j][s]) / 2 - (v[i][j][s] + v[j][i][s]) / 2)
            for s in range(len(cp.seeds))
        ]
        est, lo, hi = bootstrap_ci(per_seed, seed)
        out.append(Gap(cp.names[i], cp.names[j], est, lo, hi))
    return out


def _fmt(mean: float, half: float) -> str:
    if math.isnan(half):
        return f"{mean:.2f}"
    return f"{mean:.2f} ± {half:.2f}"


def format_matrix(cp: CrossPlay, metric: str | None = None) -> str:
    """The matrix (of ``metric``, default the main one) as a Markdown table: rows focal, columns
    partner, ``mean ± 95% half-width``."""
    head = f"| focal \\ partner | {' | '.join(cp.names)} |"
    lines = [head, "|---" * (len(cp.names) + 1) + "|"]
    for i, name in enumerate(cp.names):
        cells = []
        for j in range(len(cp.names)):
            text = _fmt(*cp.cell(i, j, metric))
            cells.append(f"**{text}**" if i == j else text)
        lines.append(f"| {name} | {' | '.join(cells)} |")
    return "\n".join(lines)


def format_gaps(found: Sequence[Gap]) -> str:
    """The gaps as a Markdown table."""
    lines = ["| pair | self-play minus cross-play (95% CI) | reading |", "|---|---|---|"]
    for g in found:
        lines.append(f"| {g.a} / {g.b} | {g.estimate:+.2f} [{g.low:+.2f}, {g.high:+.2f}] | "
                     f"{g.verdict} |")  # fmt: skip
    return "\n".join(lines)


__all__ = ["CROSSPLAY_SEEDS", "OBJECTIVES", "SECONDARY", "CrossPlay", "Gap", "format_gaps", "format_matrix",
           "gaps", "objective", "play_matrix"]


def load_json(path: str) -> CrossPlay:
    """A matrix written by ``tom-envs zoo crossplay --json``."""
    import json
    from pathlib import Path

    d = json.loads(Path(path).read_text())
    return CrossPlay(d["game"], d["names"], d["seeds"], d["metric"], d["higher_is_better"],
                     d["env_kwargs"], d["values"], d.get("more", {}), d.get("fallbacks", 0))  # fmt: skip
