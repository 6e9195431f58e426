"""Regret against a reference (:mod:`tom_envs.partners.regret`): paired per seed, windows after a
switch and the time to recover on synthetic series with known answers, the known-groups order."""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.agents import make_agent
from tom_envs.driver import EpisodeDriver
from tom_envs.partners.regret import (
    adaptation,
    decision_losses,
    episode_regret,
    known_groups,
    mean_windows,
    time_to_recover,
    window_sums,
)
from tom_envs.registration import game_spec

#: a synthetic loss series: no loss before the switch at 10, then a recovery
LOSSES = [0.0] * 10 + [5, 5, 5, 5, 3, 3, 1, 1, 0, 0, 0, 0]


def test_episode_regret_is_paired_with_intervals() -> None:
    ref = {0: 10.0, 1: 10.0, 2: 10.0, 3: 10.0}
    agent = {0: 8.0, 1: 9.0, 2: 10.0, 3: 9.0}
    out = episode_regret(ref, agent, seed=1, horizon=5)
    mean, low, high = out["per_episode"]
    assert mean == pytest.approx(1.0) and low <= mean <= high and low >= 0.0 and high <= 2.0
    assert out["per_step"][0] == pytest.approx(0.2)
    assert out["values"] == {0: 2.0, 1: 1.0, 2: 0.0, 3: 1.0}
    assert out == episode_regret(ref, agent, seed=1, horizon=5)  # seeded
    lower = episode_regret({0: 1.0}, {0: 3.0}, seed=0, higher_is_better=False)
    assert lower["per_episode"][0] == 2.0
    with pytest.raises(ValueError, match="paired by seed"):
        episode_regret(ref, {0: 1.0}, seed=0)


def test_windows_on_a_known_series() -> None:
    w = window_sums(LOSSES, at=10, width=2)
    assert w == {-1: 0.0, 0: 10.0, 1: 10.0, 2: 6.0, 3: 2.0, 4: 0.0, 5: 0.0}
    assert window_sums(LOSSES, at=10, width=5, before=2) == {-2: 0.0, -1: 0.0, 0: 23.0, 1: 5.0}
    assert mean_windows([{0: 1.0, 1: 3.0}, {0: 3.0}]) == {0: 2.0}
    with pytest.raises(ValueError, match="width"):
        window_sums(LOSSES, 10, 0)


def test_time_to_recover_on_a_known_series() -> None:
    agent = window_sums(LOSSES, at=10, width=2)
    fixed = {j: 10.0 for j in range(6)}  # the non-adapting agent keeps losing 10 per window
    # mean of w_j.. <= 10% of the fixed loss first from window 3: (2 + 0 + 0) / 3 <= 1
    assert time_to_recover(agent, fixed, width=2) == 6
    # margin 0.3 (3 per window): w_0.. 28/6, w_1.. 18/5 > 3, w_2.. (6+2+0+0)/4 = 2 <= 3
    assert time_to_recover(agent, fixed, width=2, margin=0.3) == 4
    assert time_to_recover(agent, fixed, width=2, margin=0.5) == 0  # 28/6 <= 5
    assert time_to_recover({j: 5.0 for j in range(6)}, fixed, width=2) is None  # censored


def test_adaptation_curve_and_tau_interval() -> None:
    agent = [window_sums(LOSSES, 10, 2)] * 5
    fixed = [{j: 10.0 for j in range(-1, 6)}] * 5
    curve = adaptation(agent, fixed, width=2, seed=3)
    assert curve.tau == 6 and curve.tau_ci == (6.0, 6.0, 6.0) and curve.censored_share == 0.0
    assert curve.windows[0] == 10.0 and curve.window_ci[0] == (10.0, 10.0)
    never = adaptation([{j: 5.0 for j in range(6)}] * 3, fixed[:3], width=2, seed=3)
    assert never.tau is None and never.censored_share == 1.0
    with pytest.raises(ValueError, match="paired by episode"):
        adaptation(agent, fixed[:2], width=2, seed=0)


def test_known_groups_order() -> None:
    rng = np.random.default_rng(0)
    seeds = range(30)
    oracle = {s: float(rng.normal(0.0, 0.1)) for s in seeds}
    adaptive = {s: 1.0 + float(rng.normal(0.0, 0.3)) for s in seeds}
    fixed = {s: 5.0 + float(rng.normal(0.0, 0.5)) for s in seeds}
    good = known_groups(oracle, adaptive, fixed, seed=1)
    assert good["holds"] and good["n"] == 30
    assert good["fixed_minus_adaptive"][0] == pytest.approx(
        np.mean([fixed[s] - adaptive[s] for s in seeds]))  # fmt: skip
    assert not known_groups(oracle, fixed, adaptive, seed=1)["holds"]
    assert not known_groups(adaptive, oracle, fixed, seed=1)["holds"]


def test_decision_losses_of_a_matrix_episode() -> None:
    spec = game_spec("PrisonersDilemma")
    ep = EpisodeDriver(spec, [make_agent("always_0", spec), make_agent("always_0", spec)], 0,
                       {"horizon": 6}).run()  # fmt: skip
    rewards = decision_losses(ep, "player_0")
    assert len(rewards) == 6 and sum(rewards) == pytest.approx(ep.returns["player_0"])
    assert decision_losses(ep, "player_1") == rewards  # symmetric play, same payoffs


def test_windows_aligned_on_the_recorded_switch() -> None:
    """A fixed agent that always cooperates against a partner that switches from always
    cooperating to always defecting (payoffs ((8, 8), (0, 10)), ((10, 0), (5, 5))): its loss
    against the best response (defect: 10 vs 8 before, 5 vs 0 after) shows the switch where the
    trajectory says it happened."""
    from tom_envs.partners.regret import switch_windows

    spec = game_spec("PrisonersDilemma")
    ep = EpisodeDriver(spec, [make_agent("always_0", spec), make_agent(
        "switch:a=always_0:b=always_1:at=10-20:key=4", spec)], 3, {"horizon": 40}).run()  # fmt: skip
    at = ep.switch["player_1"]["at_decision"]
    mine = decision_losses(ep, "player_0")
    best = [10.0 if k < at else 5.0 for k in range(40)]  # the best response's reward
    loss = [b - m for b, m in zip(best, mine, strict=True)]
    w = switch_windows(ep, "player_1", loss, width=5)
    assert w[-1] == pytest.approx(5 * 2.0) and w[0] == pytest.approx(5 * 5.0)
    assert sum(loss) == pytest.approx(2.0 * at + 5.0 * (40 - at))
    with pytest.raises(ValueError, match="no within-episode switch"):
        switch_windows(ep, "player_0", loss, width=5)
