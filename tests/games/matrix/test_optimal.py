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
from tom_envs.games.matrix.planner import (
    OptimalResponse,
    episode_metrics,
    one_step_responses,
    one_step_tom_regret,
    predictions_matter,
)
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
        assert out["tom_regret_lookahead"] == 0.0
        assert out["tom_accuracy"] == 100.0


def test_perfect_predictions_give_zero_tom_regret_even_when_play_is_bad() -> None:
    opt = solver("ibs", "tit_for_tat", 6)
    hist = [(1, 0), (0, 1), (1, 0), (0, 1), (1, 0), (0, 1)]  # never coordinates: return 0
    out = episode_metrics(opt.config, opt.partner, hist, [b for _, b in hist], solver=opt)
    assert out["return"] == 0.0
    assert out["functional_regret"] == 60.0 / 6
    assert out["tom_regret"] == 0.0
    assert out["tom_regret_lookahead"] == 0.0
    assert out["tom_accuracy"] == 100.0


def test_hand_computed_rps_example() -> None:
    """RPS vs always rock, T = 3.

    Played: paper (+1), rock (0), scissors (-1): return 0 of an optimal 3 -> ΔFunctional/T = 1.
    Predicted: paper (rational reply scissors, -1: regret 2), scissors (reply rock, 0: regret 1),
    rock (reply paper: regret 0) -> ΔToM/T = 3/3 = 1; one of three right -> ToM 33.3%. The
    partner is stateless, so the look-ahead variant agrees.
    """
    opt = solver("rps", "always_0", 3)
    out = episode_metrics(opt.config, opt.partner, [(1, 0), (0, 0), (2, 0)], [1, 2, 0])
    assert out["return"] == 0.0
    assert out["optimal_return"] == 3.0
    assert out["functional_regret"] == pytest.approx(1.0)
    assert out["tom_regret"] == pytest.approx(1.0)
    assert out["tom_regret_lookahead"] == pytest.approx(1.0)
    assert out["tom_accuracy"] == pytest.approx(100 / 3)


def test_hand_computed_ibs_tit_for_tat_example() -> None:
    """IBS vs the copier, T = 2 (partner state = the action it plays next; it opens with J).

    One-step ΔToM (the paper's): round 1, predicted F, the partner played J: the reply to F is F,
    which earns M[F, J] = 0 against J where the best reply earns 10: regret 10. Round 2, predicted
    F, played F: 0. ΔToM/T = 10/2 = 5.

    Look-ahead variant: V_1(J) = 10, V_1(F) = 7, V_2(J) = 20.
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
    assert out["tom_regret"] == 5.0
    assert out["tom_regret_lookahead"] == 6.5
    assert out["tom_accuracy"] == 50.0
    assert opt.lookahead_response(2, 0, 1) == 1
    assert opt.lookahead_response(2, 0, 0) == 0


def test_missing_predictions() -> None:
    opt = solver("rps", "always_0", 4)
    hist = [(1, 0)] * 4
    out = episode_metrics(opt.config, opt.partner, hist, [0, None, 1, 0])
    assert math.isnan(out["tom_regret"])  # only defined when every round is predicted
    assert math.isnan(out["tom_regret_lookahead"])
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
    assert out["tom_regret_lookahead"] == 0.0


# ------------------------------------------------------ one-step ΔToM: the paper's values
def rps_episode(costs: list[int]) -> tuple[list[tuple[int, int]], list[int]]:
    """100 rounds against always-rock; one wrong prediction per entry of ``costs``.

    Predicting scissors (reply rock: a tie) costs 1, predicting paper (reply scissors: a loss)
    costs 2 against the rock actually played; every other round predicts rock.
    """
    preds = [2 if c == 1 else 1 for c in costs] + [0] * (100 - len(costs))
    return [(1, 0)] * 100, preds


def test_paper_rps_tit_for_tat_value_from_seven_wrong_predictions() -> None:
    """The paper's RPS row: 7.0 wrong predictions per 100 rounds x 1.5 = 0.105 (Table 4).

    Two episodes of 7 wrong predictions each, the wrong actions split evenly over the two
    episodes (3 + 4 ties, 4 + 3 losses): ΔToM/T 0.10 and 0.11, mean 0.105 at ToM 93.0 %.
    """
    cfg = MatrixConfig(game="rps")
    partner = make_partner("always_0", cfg, 1)
    outs = [
        episode_metrics(cfg, partner, *rps_episode([1, 1, 1, 2, 2, 2, 1])),
        episode_metrics(cfg, partner, *rps_episode([1, 1, 1, 2, 2, 2, 2])),
    ]
    assert [o["tom_accuracy"] for o in outs] == [93.0, 93.0]
    assert [o["tom_regret"] for o in outs] == [pytest.approx(0.10), pytest.approx(0.11)]
    assert np.mean([o["tom_regret"] for o in outs]) == pytest.approx(0.105)
    # and the single-action row: 2.6 wrong per 100 x 1.5 = 0.039 (10 episodes, 26 wrong
    # predictions: 13 ties and 13 losses)
    costs = [[1, 2, 1]] * 5 + [[2, 2]] * 4 + [[1, 1, 1]]
    ten = [episode_metrics(cfg, partner, *rps_episode(c)) for c in costs]
    assert np.mean([o["tom_accuracy"] for o in ten]) == pytest.approx(97.4)
    assert np.mean([o["tom_regret"] for o in ten]) == pytest.approx(0.039)


def test_ibs_wrong_predictions_cost_what_the_miscoordination_costs() -> None:
    """IBS vs the copier: predicting F when it plays J costs 10, predicting J when it plays F
    costs 7 (the paper's 0.162 at 98.1 % = 1.9 wrong per 100 x 8.5, both kinds)."""
    cfg = MatrixConfig(game="ibs", horizon=4)
    partner = make_partner("tit_for_tat", cfg, 1)
    hist = [(0, 0), (1, 0), (1, 1), (0, 1)]  # the copier plays J, J, F, F
    out = episode_metrics(cfg, partner, hist, [1, 0, 0, 1])
    assert out["tom_accuracy"] == 50.0
    assert out["tom_regret"] == pytest.approx((10 + 0 + 7 + 0) / 4)
    m = payoff_matrix(cfg, 0)
    assert one_step_tom_regret(m, 1, 0) == 10.0
    assert one_step_tom_regret(m, 0, 1) == 7.0


def test_ipd_one_step_regret_is_zero_for_every_predictor() -> None:
    """Defection is dominant: every prediction is answered by D, so no predictor is penalised."""
    m = payoff_matrix(MatrixConfig(game="ipd"), 0)
    assert all(list(one_step_responses(m, p)) == [1] for p in (0, 1))
    assert all(one_step_tom_regret(m, p, b) == 0.0 for p in (0, 1) for b in (0, 1))
    assert not predictions_matter(m)
    assert predictions_matter(payoff_matrix(MatrixConfig(game="rps"), 0))
    assert predictions_matter(payoff_matrix(MatrixConfig(game="ibs"), 0))


def test_tied_rational_responses_are_averaged() -> None:
    m = np.array([[1.0, 0.0], [1.0, 2.0]])  # both actions answer a predicted 0 equally well
    assert list(one_step_responses(m, 0)) == [0, 1]
    # against an actual 1: the best earns 2, the tied replies earn 0 and 2 on average 1
    assert one_step_tom_regret(m, 0, 1) == 1.0
    assert one_step_tom_regret(m, 1, 1) == 0.0
    assert one_step_tom_regret(m, 0, 0) == 0.0


def test_one_step_regret_rejects_out_of_range_actions() -> None:
    m = payoff_matrix(MatrixConfig(game="ibs"), 0)
    with pytest.raises(ValueError, match="predicted"):
        one_step_tom_regret(m, 2, 0)
    with pytest.raises(ValueError, match="actual"):
        one_step_tom_regret(m, 0, -1)
    opt = solver("ibs", "always_0", 2)
    with pytest.raises(ValueError, match="predicted"):
        episode_metrics(opt.config, opt.partner, [(0, 0), (0, 0)], [0, 5])


# ------------------------------------------- property: the measure separates predictors
PAPER_PARTNERS = {g: [f"always_{k}" for k in range(n)] + ["tit_for_tat"]
                  for g, n in (("rps", 3), ("ibs", 2), ("ipd", 2))}  # fmt: skip


def seeded_history(
    policy: PartnerPolicy, n: int, horizon: int, seed: int
) -> list[tuple[int, int]]:
    """A seeded random focal player against a deterministic partner."""
    rng = np.random.default_rng(seed)
    state, hist = policy.initial_state(), []
    for _ in range(horizon):
        a, b = int(rng.integers(n)), int(np.argmax(policy.action_probs(state)))
        hist.append((a, b))
        state = policy.next_state(state, b, a)
    return hist


@pytest.mark.parametrize("g", GAMES)
def test_always_wrong_predictor_is_strictly_worse_than_a_perfect_one(g: str) -> None:
    """Wherever predictions can change the rational action (RPS, IBS), an always-wrong predictor
    (every rotation of the true action) has a strictly larger ΔToM/T than a perfect one (0), for
    every paper partner and seed; in the Prisoner's Dilemma no prediction changes the rational
    action, so both are 0 (the limit of the measure there, stated in the results page)."""
    cfg = MatrixConfig(game=g, horizon=30)
    n = cfg.num_actions
    matter = predictions_matter(payoff_matrix(cfg, 0))
    assert matter == (g != "ipd")
    for name in PAPER_PARTNERS[g]:
        partner = make_partner(name, cfg, 1)
        for seed in range(5):
            hist = seeded_history(partner, n, 30, seed)
            perfect = episode_metrics(cfg, partner, hist, [b for _, b in hist])
            assert perfect["tom_regret"] == 0.0 and perfect["tom_accuracy"] == 100.0
            for shift in range(1, n):
                wrong = episode_metrics(cfg, partner, hist, [(b + shift) % n for _, b in hist])
                assert wrong["tom_accuracy"] == 0.0
                if matter:
                    assert wrong["tom_regret"] > perfect["tom_regret"], (g, name, seed, shift)
                    assert wrong["tom_regret"] >= 1.0  # every round costs at least 1 (RPS) or 7
                else:
                    assert wrong["tom_regret"] == perfect["tom_regret"] == 0.0


def test_the_look_ahead_variant_is_blind_where_the_one_step_measure_is_not() -> None:
    """The adversary of the old measure: in IBS against the copier an always-wrong predictor
    costs the one-step measure 7-10 per round, but the look-ahead variant charges it much less,
    because the true policy answers for the future. It is kept only as a named variant."""
    cfg = MatrixConfig(game="ibs", horizon=30)
    partner = make_partner("tit_for_tat", cfg, 1)
    for seed in range(3):
        hist = seeded_history(partner, 2, 30, seed)
        wrong = episode_metrics(cfg, partner, hist, [1 - b for _, b in hist])
        assert wrong["tom_regret"] >= 7.0
        assert wrong["tom_regret_lookahead"] <= 1.0  # seeds 0, 1, 2: 0.7, 1.0, 0.4
