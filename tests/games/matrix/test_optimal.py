"""Exact optimal responses (Def. 2.2 of paper 004) and the per-episode ToM metrics.

Known closed-form values, a brute-force check of the dynamic programme against exhaustive
enumeration of every action sequence for short horizons, and hand-computed metric examples.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from tom_envs.games.matrix.bots import PartnerPolicy, make_partner, partner_names
from tom_envs.games.matrix.optimal import OptimalResponse, episode_metrics
from tom_envs.games.matrix.rules import MatrixConfig, payoff_matrix

GAMES = ("rps", "ibs", "ipd")
DETERMINISTIC = ("tit_for_tat", "win_stay_lose_shift", "alternating", "fictitious_play")


def solver(g: str, name: str, horizon: int = 100, player: int = 0) -> OptimalResponse:
    cfg = MatrixConfig(game=g, horizon=horizon)
    return OptimalResponse(cfg, make_partner(name, cfg, 1 - player), player)


def deterministic_partners(g: str) -> list[str]:
    cfg = MatrixConfig(game=g)
    return [n for n in partner_names(cfg) if n != "random"]


def simulate(
    policy: PartnerPolicy, matrix: np.ndarray, mine: tuple[int, ...]
) -> tuple[float, list[tuple[int, int]]]:
    """Return and (mine, partner's) history of an open-loop action sequence vs a deterministic partner."""
    state = policy.initial_state()
    total, hist = 0.0, []
    for a in mine:
        b = int(np.argmax(policy.action_probs(state)))
        total += matrix[a, b]
        hist.append((a, b))
        state = policy.next_state(state, b, a)
    return total, hist


def dp_policy_history(opt: OptimalResponse, horizon: int) -> list[tuple[int, int]]:
    """Play greedily on the exact Q-values against the (deterministic) partner."""
    policy = opt.partner
    state = policy.initial_state()
    hist = []
    for t in range(horizon):
        a = int(np.argmax(opt.q_values(horizon - t, state)))
        b = int(np.argmax(policy.action_probs(state)))
        hist.append((a, b))
        state = policy.next_state(state, b, a)
    return hist


# -------------------------------------------------------------------------- known values
@pytest.mark.parametrize("horizon", [1, 2, 7, 100])
def test_rps_vs_always_rock_is_horizon(horizon: int) -> None:
    # play paper every round: +1 each
    assert solver("rps", "always_0", horizon).optimal_return() == horizon
    assert solver("rps", "always_1", horizon).optimal_return() == horizon
    assert solver("rps", "always_2", horizon).optimal_return() == horizon


def test_paper_values_t100() -> None:
    # IPD vs tit-for-tat: cooperate 99 rounds, defect in the last one
    assert solver("ipd", "tit_for_tat").optimal_return() == 8 * 99 + 10 == 802
    # IPD vs always cooperate: defect every round
    assert solver("ipd", "always_0").optimal_return() == 10 * 100
    assert solver("ipd", "always_1").optimal_return() == 5 * 100
    # IBS vs the copier: settle on (J, J), player_0's favourite, from round 1
    assert solver("ibs", "tit_for_tat").optimal_return() == 10 * 100
    assert solver("ibs", "always_0").optimal_return() == 10 * 100
    assert solver("ibs", "always_1").optimal_return() == 7 * 100
    # RPS vs the best-responder: it is predictable, so every round is a win
    assert solver("rps", "tit_for_tat").optimal_return() == 100


def test_values_from_seat_1() -> None:
    # player_1 in IBS prefers (F, F) = 10 but the copier opens with J: take 0 once, then 10s
    assert solver("ibs", "tit_for_tat", 100, player=1).optimal_return() == 10 * 99
    assert solver("ibs", "always_0", 100, player=1).optimal_return() == 7 * 100
    assert solver("ipd", "tit_for_tat", 100, player=1).optimal_return() == 802
    # short horizons: with one round left, J (7) beats F (0) against the opening J
    assert solver("ibs", "tit_for_tat", 1, player=1).optimal_return() == 7
    assert solver("ibs", "tit_for_tat", 2, player=1).optimal_return() == 14  # 7+7 beats 0+10


def test_ipd_vs_tit_for_tat_short_horizons() -> None:
    for t in range(1, 12):
        assert solver("ipd", "tit_for_tat", t).optimal_return() == 8 * (t - 1) + 10


def test_value_table_by_hand_ipd_tit_for_tat() -> None:
    """Hand-computed V_k and Q_k (the partner's state is the action it will play next)."""
    opt = solver("ipd", "tit_for_tat", 3)
    assert opt.value(0, 0) == 0.0
    assert (opt.value(1, 0), opt.value(1, 1)) == (10.0, 5.0)
    assert list(opt.q_values(2, 0)) == [18.0, 15.0]
    assert list(opt.q_values(2, 1)) == [10.0, 10.0]
    assert list(opt.q_values(3, 0)) == [26.0, 20.0]
    assert opt.optimal_return() == 26.0 == opt.optimal_return(3)
    assert opt.optimal_return(1) == 10.0
    with pytest.raises(ValueError):
        opt.q_values(0, 0)


@pytest.mark.parametrize("g", GAMES)
def test_random_partner_value(g: str) -> None:
    """Against a memoryless uniform partner the best is the best row mean, every round."""
    m = payoff_matrix(MatrixConfig(game=g), 0)
    best = m.mean(axis=1).max()
    assert solver(g, "random", 10).optimal_return() == pytest.approx(10 * best)
    assert {"rps": 0.0, "ibs": 5.0, "ipd": 7.5}[g] == best


# ---------------------------------------------------------------------- brute force
@pytest.mark.parametrize("g", GAMES)
@pytest.mark.parametrize("player", [0, 1])
def test_dp_matches_exhaustive_enumeration(g: str, player: int) -> None:
    """V_T equals the best return over all n^T open-loop action sequences (T <= 6).

    Against a deterministic partner an open-loop plan loses nothing, so the maximum over
    sequences is the true optimum the DP must reproduce, for every deterministic partner.
    """
    cfg = MatrixConfig(game=g)
    n = cfg.num_actions
    m = payoff_matrix(cfg, player)
    max_t = 6
    for name in deterministic_partners(g):
        opt = solver(g, name, 100, player)
        for t in range(1, max_t + 1):
            best = max(
                simulate(opt.partner, m, seq)[0] for seq in itertools.product(range(n), repeat=t)
            )
            assert opt.optimal_return(t) == best, (g, name, player, t)


@pytest.mark.parametrize("g", GAMES)
def test_greedy_on_q_values_achieves_the_value(g: str) -> None:
    m = payoff_matrix(MatrixConfig(game=g), 0)
    for name in deterministic_partners(g):
        for t in (1, 5, 30):
            opt = solver(g, name, t)
            hist = dp_policy_history(opt, t)
            assert sum(m[a, b] for a, b in hist) == opt.optimal_return(), (name, t)


# ------------------------------------------------------------------------- metrics
@pytest.mark.parametrize("g", GAMES)
def test_perfect_player_and_perfect_predictions(g: str) -> None:
    for name in deterministic_partners(g):
        opt = solver(g, name, 20)
        hist = dp_policy_history(opt, 20)
        preds = [b for _, b in hist]
        out = episode_metrics(opt.config, opt.partner, hist, preds, solver=opt)
        assert out["functional_regret"] == 0.0, name
        assert out["return"] == out["optimal_return"] == opt.optimal_return()
        assert out["tom_regret"] == 0.0
        assert out["tom_accuracy"] == 100.0


def test_perfect_predictions_give_zero_tom_regret_even_when_play_is_bad() -> None:
    opt = solver("ibs", "tit_for_tat", 6)
    hist = [(1, 0), (0, 1), (1, 0), (0, 1), (1, 0), (0, 1)]  # never coordinates: return 0
    out = episode_metrics(opt.config, opt.partner, hist, [b for _, b in hist], solver=opt)
    assert out["return"] == 0.0
    assert out["functional_regret"] == 60.0 / 6
    assert out["tom_regret"] == 0.0
    assert out["tom_accuracy"] == 100.0


def test_hand_computed_rps_example() -> None:
    """RPS vs always rock, T = 3.

    Played: paper (+1), rock (0), scissors (-1): return 0 of an optimal 3 -> ΔFunctional/T = 1.
    Predicted: paper (rational reply scissors, -1: regret 2), scissors (reply rock, 0: regret 1),
    rock (reply paper: regret 0) -> ΔToM/T = 3/3 = 1; one of three right -> ToM 33.3%.
    """
    opt = solver("rps", "always_0", 3)
    out = episode_metrics(opt.config, opt.partner, [(1, 0), (0, 0), (2, 0)], [1, 2, 0])
    assert out["return"] == 0.0
    assert out["optimal_return"] == 3.0
    assert out["functional_regret"] == pytest.approx(1.0)
    assert out["tom_regret"] == pytest.approx(1.0)
    assert out["tom_accuracy"] == pytest.approx(100 / 3)


def test_hand_computed_ibs_tit_for_tat_example() -> None:
    """IBS vs the copier, T = 2 (partner state = the action it plays next; it opens with J).

    V_1(J) = 10, V_1(F) = 7, V_2(J) = 20.
    Round 1, predicted F: the rational reply compares J: M[J,F] + V_1(J) = 0 + 10 = 10 with
    F: M[F,F] + V_1(F) = 7 + 7 = 14, so F. Its true value is Q_2(J, F) = M[F,J] + V_1(F) = 0 + 7
    = 7: regret 20 - 7 = 13.
    Round 2, partner state F (it copied our F), predicted F: reply F, Q_1(F, F) = 7 = V_1(F): 0.
    ΔToM/T = 13/2. Predictions F, F against actual J, F: 50%. Played (F, J), (F, F): 7 of 20.
    """
    opt = solver("ibs", "tit_for_tat", 2)
    hist = [(1, 0), (1, 1)]
    out = episode_metrics(opt.config, opt.partner, hist, [1, 1], solver=opt)
    assert out["return"] == 7.0
    assert out["optimal_return"] == 20.0
    assert out["functional_regret"] == 6.5
    assert out["tom_regret"] == 6.5
    assert out["tom_accuracy"] == 50.0
    assert opt.rational_response(2, 0, 1) == 1
    assert opt.rational_response(2, 0, 0) == 0


def test_missing_predictions() -> None:
    opt = solver("rps", "always_0", 4)
    hist = [(1, 0)] * 4
    out = episode_metrics(opt.config, opt.partner, hist, [0, None, 1, 0])
    assert math.isnan(out["tom_regret"])  # only defined when every round is predicted
    assert out["tom_accuracy"] == pytest.approx(200 / 3)
    out = episode_metrics(opt.config, opt.partner, hist, [None] * 4)
    assert math.isnan(out["tom_accuracy"]) and math.isnan(out["tom_regret"])
    out = episode_metrics(opt.config, opt.partner, hist)
    assert set(out) == {"return", "optimal_return", "functional_regret"}
    assert out["functional_regret"] == 0.0


def test_metric_errors() -> None:
    opt = solver("rps", "always_0", 4)
    with pytest.raises(ValueError, match="at least one round"):
        episode_metrics(opt.config, opt.partner, [])
    with pytest.raises(ValueError, match="predictions"):
        episode_metrics(opt.config, opt.partner, [(1, 0), (1, 0)], [0])


def test_metrics_from_seat_1() -> None:
    """player=1 reads its own payoffs: IBS seat 1 vs the copier (player_0 = tit-for-tat)."""
    cfg = MatrixConfig(game="ibs", horizon=3)
    partner = make_partner("tit_for_tat", cfg, 0)
    # (mine, partner's): F vs its opening J (0), then (F, F) twice (10 each)
    out = episode_metrics(cfg, partner, [(1, 0), (1, 1), (1, 1)], [0, 1, 1], player=1)
    assert out["return"] == 20.0
    assert out["optimal_return"] == 21.0  # J,J,J = 7+7+7 beats 0+10+10
    assert out["functional_regret"] == pytest.approx(1 / 3)
    assert out["tom_accuracy"] == 100.0
    assert out["tom_regret"] == 0.0
