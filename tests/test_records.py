"""The records module: the one 95% interval of a mean, the seeded bootstrap, Wilson, and the
summaries built on them (known values, and the same numbers whichever path computes them)."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest

from tom_envs.records import (
    Z_NORMAL,
    Episode,
    RunningSummary,
    bootstrap_ci,
    half_width,
    mean_ci95,
    summarize,
    wilson,
)

ROOT = Path(__file__).resolve().parents[1]


def _episode(seed: int, ret: float, *, ok: bool = True, score: float | None = None) -> Episode:
    ep = Episode("tom_envs/PrisonersDilemma-v0", seed, {"player_0": "a", "player_1": "b"}, {})
    ep.returns = {"player_0": ret, "player_1": -ret}
    ep.invalid = {"player_0": 0, "player_1": seed % 2}
    ep.length = 10 + seed
    ep.status = "ok" if ok else "failed"
    if score is not None:
        ep.metrics["score"] = score
    return ep


def test_mean_ci95_known_values() -> None:
    m, h = mean_ci95([1.0, 2.0, 3.0, 4.0])
    assert m == 2.5
    # sample sd of 1..4 is sqrt(5/3); 1.96 standard errors of the mean of 4
    assert h == pytest.approx(1.96 * math.sqrt(5 / 3) / 2)
    assert mean_ci95([7.0, float("nan")])[0] == 7.0 and math.isnan(mean_ci95([7.0])[1])
    assert all(math.isnan(x) for x in mean_ci95([]))
    assert half_width(2.0, 4) == Z_NORMAL * 2.0 / 2.0 and math.isnan(half_width(1.0, 1))


def test_running_summary_and_summarize_give_the_same_intervals() -> None:
    rng = np.random.default_rng(3)
    eps = [_episode(s, float(rng.normal()), score=float(rng.integers(0, 25))) for s in range(40)]
    eps.append(_episode(99, 1000.0, ok=False))  # failed: not a result on either path
    totals = RunningSummary()
    for ep in eps:
        totals.add(ep)
    batch, running = summarize(eps), totals.summary()
    assert set(batch) == set(running) == {"return/player_0", "return/player_1", "invalid/player_0",
                                          "invalid/player_1", "length", "score"}  # fmt: skip
    for key, (m, h) in batch.items():
        assert running[key] == pytest.approx((m, h), rel=1e-9, abs=1e-12), key
    assert totals.ok == 40 and totals.failed_count == 1 and summarize(eps[-1:]) == {}


def test_bootstrap_is_seeded_and_agrees_with_the_normal_interval_on_a_large_sample() -> None:
    values = [1.0] * 200 + [0.0] * 200
    est, lo, hi = bootstrap_ci(values, seed=0)
    assert (est, lo, hi) == bootstrap_ci(values, seed=0)  # same seed, same interval
    assert bootstrap_ci(values, seed=1) != (est, lo, hi)
    _, h = mean_ci95(values)
    assert est == 0.5 and lo == pytest.approx(0.5 - h, abs=0.01) and hi == pytest.approx(0.5 + h, abs=0.01)
    assert bootstrap_ci([3.0] * 10, seed=0) == (3.0, 3.0, 3.0)  # no spread, no width
    assert all(math.isnan(x) for x in bootstrap_ci([2.0], seed=0)[1:])


def test_bootstrap_resamples_episodes_with_any_statistic() -> None:
    eps = [_episode(s, 1.0 if s % 4 else -1.0) for s in range(40)]  # player_0 wins 3 of 4

    def win_rate(sample: list[Episode]) -> float:
        return sum(e.returns["player_0"] > 0 for e in sample) / len(sample)

    est, lo, hi = bootstrap_ci(eps, seed=7, statistic=win_rate, resamples=2000)
    assert est == 0.75 and lo < 0.75 < hi
    wl, wh = wilson(30, 40)
    assert lo == pytest.approx(wl, abs=0.06) and hi == pytest.approx(wh, abs=0.06)
    with pytest.raises(ValueError, match="resamples"):
        bootstrap_ci(eps, seed=0, statistic=win_rate, resamples=0)
    with pytest.raises(ValueError, match="level"):
        bootstrap_ci([1.0, 2.0], seed=0, level=1.5)


def test_wilson_known_values() -> None:
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson(30, 40, z=1.96)
    assert (lo, hi) == pytest.approx((0.5981, 0.8581), abs=1e-4)


def _number_literals(path: Path) -> set[float]:
    return {
        node.value
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, float)
    }


def test_one_home_for_the_95_interval() -> None:
    """No module but the records writes 1.96 (or the exact quantile but core.probes): every 95%
    interval of a mean comes from :func:`mean_ci95`/:func:`half_width`."""
    homes = {ROOT / "tom_envs" / "records.py", ROOT / "tom_envs" / "core" / "probes.py"}
    bad = []
    for folder in ("tom_envs", "experiments", "baselines", "llm_agents"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path not in homes and _number_literals(path) & {1.96, 1.959963984540054}:
                bad.append(str(path.relative_to(ROOT)))
    assert not bad, bad
