"""Best-response references (#35): known values, brute force on tiny cases, the oracle's regret.

* CollabCapture / CollabEscape: :class:`BestResponsePlanner` against the design study's measured
  values (greedy partner in seat 1), against an independent brute force (every focal action
  sequence; expectimax over chance and a random partner) on games cut to a few turns, and the
  ``optimal`` partner's tabulation against the bot's own choices.
* Matrix games: :class:`SwitchingPolicy` on a hand-computed 3-round Prisoner's Dilemma (the shadow
  memory of ``b`` changes the answer) and on ``always_k`` switches; the oracle's regret is exactly
  0 against every deterministic partner.
* BombDefusal: a team of ``cbs`` bots reaches the exact reference; brackets are ordered.
"""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.agents import make_agent
from tom_envs.core.agents import as_agent_action, make_turn, state_turn
from tom_envs.games.joint_planner import (
    BestResponsePlanner,
    JointPlanner,
    MarkovPartner,
    optimal_partner,
    partner_from_batch,
    partner_from_view,
    uniform_partner,
)
from tom_envs.games.matrix.bots import make_partner, partner_names
from tom_envs.games.matrix.planner import OptimalResponse, SwitchingPolicy
from tom_envs.games.matrix.rules import MatrixConfig
from tom_envs.references import (
    NoReference,
    OracleAgent,
    best_response_planner,
    markov_partner,
    reference_for,
)
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode

CAPTURE_TURNS_VS_GREEDY = {"both_open": 3, "door12_closed": 3, "door34_closed": 2, "both_closed": 5}


# ------------------------------------------------------------------ Capture and Escape
@pytest.mark.parametrize(("scenario", "value"), [("together", 0.9375), ("split", 0.0)])
def test_escape_best_response_to_greedy_known_values(scenario: str, value: float) -> None:
    ref = reference_for("CollabEscape", "greedy", 0, (0, 1), scenario=scenario)
    assert ref.kind == "exact"
    assert ref.values == pytest.approx((value, value), abs=1e-12)
    assert ref.details["success"] == pytest.approx(value, abs=1e-12)
    assert ref.details["team_optimum_success"] == pytest.approx(1.0)


@pytest.mark.parametrize(("scenario", "turns"), sorted(CAPTURE_TURNS_VS_GREEDY.items()))
def test_capture_best_response_to_greedy_known_turns(scenario: str, turns: int) -> None:
    ref = reference_for("CollabCapture", "greedy", 0, (0,), scenario=scenario)
    assert ref.mean == pytest.approx(1.0 - turns / 31, abs=1e-12)  # U = captured - turns/31
    assert ref.details["success"] == pytest.approx(1.0)
    assert ref.details["expected_turns"] == pytest.approx(turns)


def _capture_game(scenario: str, max_turns: int):
    return game_spec("CollabCapture").load().make_bundle(scenario=scenario, max_turns=max_turns)


def _greedy_probs(bundle, seat: int):
    """The real greedy bot's action from a state (with its turn counter): ``{action: 1}``."""
    spec = game_spec("CollabCapture")
    agent = spec.load().bot_table().make("greedy", bundle)

    def probs(state, k):
        return {as_agent_action(agent.act(state_turn(bundle, state, seat))).action: 1.0}

    return probs


def _sequences_brute_force(game, seat: int, partner, cost: float) -> float:
    """Max over every focal action sequence of ``U`` (deterministic game and partner)."""
    best = -np.inf
    n_seq = 0
    frontier = [(game.initial_state(np.random.default_rng(0)), 0.0)]
    while frontier:
        state, spent = frontier.pop()
        if game.succeeded(state) or game.is_terminal(state):
            n_seq += 1
            best = max(best, (1.0 if game.succeeded(state) else 0.0) - spent)
            continue
        (b,) = partner(state, None)
        for a in game.options(state, seat):
            ((_, nxt),) = game.outcomes(state, {seat: a, 1 - seat: b})
            frontier.append((nxt, spent + cost))
    assert n_seq > 50  # the enumeration really branched
    return float(best)


@pytest.mark.parametrize(
    ("scenario", "max_turns"), [("both_open", 4), ("both_closed", 5), ("both_closed", 4)]
)
def test_capture_br_equals_brute_force_over_action_sequences(scenario: str, max_turns: int) -> None:
    bundle = _capture_game(scenario, max_turns)
    game, cost = bundle.game, 1.0 / (max_turns + 1)
    brute = _sequences_brute_force(game, 0, _greedy_probs(bundle, 1), cost)
    ref = reference_for("CollabCapture", "greedy", 0, (0,), scenario=scenario, max_turns=max_turns)
    assert ref.mean == pytest.approx(brute, abs=1e-12)


def _expectimax(game, seat: int, partner, state, k: int, cost: float, memo=None) -> float:
    """Best expected ``U`` by plain recursion over the rules' outcomes (memoised on the
    canonical state and the turns left; no planner table involved)."""
    memo = {} if memo is None else memo
    if game.succeeded(state):
        return 1.0
    if game.failed(state) or k == 0:
        return 0.0
    key = (game.canonical(state), k)
    if key in memo:
        return memo[key]
    best = -np.inf
    for a in game.options(state, seat):
        total = 0.0
        for b, pb in partner(state, k).items():
            for p, nxt in game.outcomes(state, {seat: a, 1 - seat: b}):
                total += pb * p * (_expectimax(game, seat, partner, nxt, k - 1, cost, memo) - cost)
        best = max(best, total)
    memo[key] = best
    return best


@pytest.mark.parametrize("seat", [0, 1])
def test_capture_br_to_random_partner_equals_expectimax(seat: int) -> None:
    bundle = _capture_game("both_open", 3)
    game = bundle.game
    uniform = uniform_partner(game, 1 - seat)
    br = BestResponsePlanner(game, uniform, seat, step_cost=0.25)
    brute = _expectimax(game, seat, uniform.probs, br.start(), 3, 0.25)
    assert br.value() == pytest.approx(brute, abs=1e-12)
    assert br.q_values()[br.best_action()] == pytest.approx(brute, abs=1e-12)


def test_escape_br_to_greedy_equals_expectimax_over_the_killer() -> None:
    spec = game_spec("CollabEscape")
    bundle = spec.load().make_bundle(scenario="together", max_turns=10)
    game = bundle.game
    agent = spec.load().bot_table().make("greedy", bundle)

    def greedy(view, k):  # the bot reads only the view
        turn = make_turn("player_1", view, np.zeros(0), np.zeros(0, np.int8), str, str)
        return as_agent_action(agent.act(turn)).action

    partner = partner_from_view("greedy", game, 1, greedy, stationary=True)
    br = BestResponsePlanner(game, partner, 0)
    brute = _expectimax(game, 0, partner.probs, br.start(), 10, 0.0)
    assert 0.0 < brute < 1.0  # the killer's chance moves matter at this depth
    assert br.value() == pytest.approx(brute, abs=1e-12)


@pytest.mark.parametrize("scenario", ["door12_closed", "enable"])
def test_optimal_partner_tabulation_matches_the_bot(scenario: str) -> None:
    """The vectorised tabulation picks, in every state and for several k, the action the
    ``optimal`` bot's planner picks (lexicographic Q, first in canonical order)."""
    game = game_spec("CollabCapture").load().make_bundle(scenario=scenario).game
    planner = JointPlanner(game)
    partner = optimal_partner(planner, 1)
    states = [s for s in planner._tables.states if not game.is_terminal(s)]
    for k in (1, 2, 5, 30):
        for s in states[::7]:
            (b,) = partner.probs(s, k)
            assert b == planner.best_joint_action(s, k)[1]


def test_oracle_plays_the_exact_best_response_in_capture() -> None:
    spec = game_spec("CollabCapture")
    for scenario, turns in CAPTURE_TURNS_VS_GREEDY.items():
        bundle = spec.load().make_bundle(scenario=scenario)
        agents = [OracleAgent("greedy"), make_agent("greedy", spec, bundle)]
        ep = play_episode(spec, agents, 0, {"scenario": scenario})
        assert ep.metrics["captured"] == 1.0
        assert ep.metrics["turns"] == turns


def test_best_response_rejects_bad_partners() -> None:
    game = _capture_game("both_open", 3).game
    bad = MarkovPartner("half", lambda s, k: {0: 0.5}, stationary=True)
    with pytest.raises(ValueError, match=r"sum to 0\.5"):
        BestResponsePlanner(game, bad, 0)
    illegal = MarkovPartner("press", lambda s, k: {99: 1.0}, stationary=True)
    with pytest.raises(ValueError, match="not among its options"):
        BestResponsePlanner(game, illegal, 0)
    with pytest.raises(ValueError, match="seat"):
        BestResponsePlanner(game, uniform_partner(game, 1), 2)


def test_learned_capture_members_are_markov_in_the_planners_state() -> None:
    """A learned CollabCapture member's tabulation (its policy evaluated on the view rebuilt from
    the planner's canonical state and the turns left) equals its policy on the real turn of every
    decision of seeded random play: the canonical state drops only the turn counter, so its exact
    reference needs no vouching argument; CollabEscape's members read flags the canonical state
    drops, so their reference is refused with that reason."""
    pytest.importorskip("tom_experiments.zoo")
    spec = game_spec("CollabCapture")
    bundle = spec.load().make_bundle()
    game, seat = bundle.game, 1
    partner = markov_partner(spec, bundle, "zoo/ppo_s0", seat)
    agent = make_agent("zoo/ppo_s0", spec, bundle)
    compared = 0
    for seed in range(4):
        rng = np.random.default_rng(seed)
        state = game.initial_state(rng)
        while not game.is_terminal(state):
            turns_left = game.config.max_turns - state.turn
            real = agent.action_probs(state_turn(bundle, state, seat))
            table = partner.probs(game.canonical(state), turns_left)
            assert {int(a): pytest.approx(float(p)) for a, p in dict(real).items() if p > 0} == {
                a: p for a, p in table.items() if p > 0}  # fmt: skip
            compared += 1
            joint = {p: int(rng.choice(game.options(state, p))) for p in (0, 1)}
            state = game.transition(state, joint)[0]
    assert compared >= 8
    with pytest.raises(NoReference, match="fixing"):  # no exact reference: not Markov
        reference_for("CollabEscape", "zoo/ppo_s0", trained=False)
    trained = reference_for("CollabEscape", "zoo/ppo_s0", 0, (700_000,))  # the shipped BR's
    assert trained.kind == "lower_bound" and trained.label == "trained lower bound"


# ------------------------------------------------------------------------------ matrix
def _ipd(horizon: int) -> MatrixConfig:
    return MatrixConfig(game="ipd", horizon=horizon)


@pytest.mark.parametrize(("switch_at", "value"), [(0, 26.0), (1, 26.0), (2, 28.0), (3, 30.0)])
def test_switching_composite_hand_computed_three_rounds(switch_at: int, value: float) -> None:
    """IPD, 3 rounds, always-cooperate then tit-for-tat (b remembers the focal's actions from
    round 0). switch 1: C,C,D = 8 + 8 + 10 = 26 (defecting first makes b defect next: D,C,D =
    20); a b started fresh at the switch would allow D,C,D = 28, so the shadow memory matters.
    switch 2: D,C,D = 10 + 8 + 10 = 28. switch 3 (a throughout): D,D,D = 30. switch 0: tit-for-
    tat alone, C,C,D = 26."""
    cfg = _ipd(3)
    policy = SwitchingPolicy(
        cfg, 1, make_partner("always_0", cfg, 1), make_partner("tit_for_tat", cfg, 1), switch_at
    )
    assert OptimalResponse(cfg, policy, 0).optimal_return() == pytest.approx(value)
    ref = reference_for("PrisonersDilemma", "switch:a=always_0:b=tit_for_tat", 0, (7,),
                        horizon=3, switch_at=switch_at)  # fmt: skip
    assert ref.values == (pytest.approx(value),)
    assert ref.kind == "exact"


@pytest.mark.parametrize("switch_at", [0, 1, 37, 100])
def test_switching_between_single_actions(switch_at: int) -> None:
    """IBS: always_0 pays the answering focal 10 a round, always_1 pays 7."""
    ref = reference_for("BattleOfSexes", "switch:a=always_0:b=always_1", 0, (0, 1),
                        switch_at=lambda seed: switch_at)  # fmt: skip
    assert ref.values == pytest.approx((10.0 * switch_at + 7.0 * (100 - switch_at),) * 2)
    rps = reference_for("RockPaperScissors", "switch:a=always_2:b=always_1", 1, (0,),
                        switch_at=switch_at)  # fmt: skip
    assert rps.mean == pytest.approx(100.0)


def test_switch_round_per_seed_and_required() -> None:
    ref = reference_for("BattleOfSexes", "switch:a=always_0:b=always_1", 0, (10, 20),
                        switch_at=lambda seed: seed)  # fmt: skip
    assert ref.values == pytest.approx((10.0 * 10 + 7.0 * 90, 10.0 * 20 + 7.0 * 80))
    assert ref.details["switch_at"] == (10, 20)
    with pytest.raises(ValueError, match="switch_at"):
        reference_for("BattleOfSexes", "switch:a=always_0:b=always_1", 0, (0,))
    with pytest.raises(ValueError, match="switch_at/switch_window/bayes are for"):
        reference_for("BattleOfSexes", "always_0", 0, (0,), switch_at=3)


def test_bayes_switching_reference_hand_computed() -> None:
    """IBS, 2 rounds, always_0 then always_1 from a round uniform in {0, 1, 2}. Round 0: the
    partner plays 0 with probability 2/3, so the focal plays 0 (20/3). Seeing a 1 (1/3) reveals
    the switch: 7 next round. Seeing a 0 (2/3) leaves rounds 1 and 2 equally likely: 0 pays
    10/2 = 5. Total 20/3 + 7/3 + 10/3 = 37/3; the clairvoyant mean is (14 + 17 + 20)/3 = 17."""
    ref = reference_for("BattleOfSexes", "switch:a=always_0:b=always_1", 0, (0, 5),
                        horizon=2, switch_window=(0, 2))  # fmt: skip
    assert ref.values == pytest.approx((37 / 3, 37 / 3), abs=1e-9)
    assert ref.details["clairvoyant_mean"] == pytest.approx(17.0)


def test_bayes_reference_is_below_the_clairvoyant_one_and_equal_without_doubt() -> None:
    partner = "switch:a=always_0:b=tit_for_tat"
    bayes = reference_for("PrisonersDilemma", partner, 0, (0,), horizon=20, switch_window=(5, 12))
    assert bayes.mean < bayes.details["clairvoyant_mean"]
    sure = reference_for("PrisonersDilemma", partner, 0, (0,), horizon=20, switch_window=(9, 9))
    clair = reference_for("PrisonersDilemma", partner, 0, (0,), horizon=20, switch_at=9)
    assert sure.mean == pytest.approx(clair.mean, abs=1e-9)
    with pytest.raises(NoReference, match="deterministic"):
        reference_for("PrisonersDilemma", "switch:a=random:b=always_0", 0, (0,),
                      switch_window=(5, 9))  # fmt: skip
    with pytest.raises(ValueError, match="not both"):
        reference_for("PrisonersDilemma", partner, 0, (0,), switch_at=3, switch_window=(1, 4))


DETERMINISTIC = ("tit_for_tat", "win_stay_lose_shift", "alternating", "fictitious_play")


@pytest.mark.parametrize("game", ["RockPaperScissors", "BattleOfSexes", "PrisonersDilemma"])
@pytest.mark.parametrize("seat", [0, 1])
def test_oracle_regret_is_exactly_zero_against_deterministic_partners(game: str, seat: int) -> None:
    spec = game_spec(game)
    config = MatrixConfig(**spec.kwargs)
    names = [n for n in partner_names(config) if n != "random"]
    assert set(DETERMINISTIC) <= set(names)
    for partner in names:  # 30 rounds: fictitious play's count states grow with the horizon
        bundle = spec.load().make_bundle(**spec.kwargs, horizon=30)
        agents = [make_agent(partner, spec, bundle)]
        agents.insert(seat, OracleAgent(partner))
        ep = play_episode(spec, agents, 3, {"horizon": 30})
        ref = reference_for(spec, partner, seat, (3,), horizon=30)
        assert ep.metrics["functional_regret"] == 0.0, partner
        assert ep.returns[f"player_{seat}"] == pytest.approx(ref.mean), partner


class _SwitchingPartner:
    """A matrix partner agent playing a SwitchingPolicy (test helper)."""

    def __new__(cls, a: str, b: str, switch_at: int, config: MatrixConfig):
        from tom_envs.games.matrix.bots import PartnerAgent

        agent = PartnerAgent(a, config)
        base_reset = agent.reset

        def reset(info):
            base_reset(info)
            p = info.player
            agent.policy = SwitchingPolicy(
                config, p, make_partner(a, config, p), make_partner(b, config, p), switch_at
            )
            agent.state = agent.policy.initial_state()

        agent.reset = reset  # type: ignore[method-assign]
        return agent


@pytest.mark.parametrize(("a", "b", "switch_at"),
                         [("always_0", "tit_for_tat", 40), ("fictitious_play", "alternating", 55)])  # fmt: skip
def test_switching_oracle_regret_is_zero(a: str, b: str, switch_at: int) -> None:
    spec = game_spec("PrisonersDilemma")
    config = MatrixConfig(**spec.kwargs)
    agents = [OracleAgent(a, b=b, switch_at=switch_at), _SwitchingPartner(a, b, switch_at, config)]
    ep = play_episode(spec, agents, 0, {})
    ref = reference_for(spec, f"switch:a={a}:b={b}", 0, (0,), switch_at=switch_at)
    assert ep.returns["player_0"] == pytest.approx(ref.mean)
    fixed = make_agent("always_0", spec)  # always cooperate: exploited by b, never answers a
    ep2 = play_episode(spec, [fixed, _SwitchingPartner(a, b, switch_at, config)], 0, {})
    assert ep2.returns["player_0"] < ref.mean


# ------------------------------------------------------------------------ bomb defusal
def test_bomb_cbs_team_reaches_the_exact_reference() -> None:
    from tom_envs.games.bomb_defusal.planner import exhaustive_optimum

    spec = game_spec("BombDefusal")
    seeds = (0, 1)
    ref = reference_for(spec, "cbs", 0, seeds)
    assert ref.kind == "exact"
    bundle = spec.load().make_bundle()
    for seed, value, rounds in zip(seeds, ref.values, ref.details["team_optimum_rounds"],
                                   strict=True):  # fmt: skip
        agents = [make_agent("cbs", spec, bundle) for _ in range(3)]
        ep = play_episode(spec, agents, seed, {"probes": "none"})
        assert ep.metrics["team_score"] - 0.3 * ep.metrics["rounds"] == pytest.approx(value)
        from gymnasium.utils import seeding

        rng, _ = seeding.np_random(seed)
        assert exhaustive_optimum(bundle.game, bundle.game.initial_state(rng)) == rounds
    assert ref.details["team_optimum_rounds"] == (6, 6)  # the design study's missions 0 and 1
    assert ref.details["checked_by_exhaustive_search"] == 2


def test_bomb_bracket_is_labelled_and_ordered() -> None:
    ref = reference_for("BombDefusal", "heuristic", 1, (0, 1), candidates=("heuristic",),
                        selection_seeds=(500, 501))  # fmt: skip
    assert ref.kind == "bracket" and ref.upper is not None
    assert all(lo <= up for lo, up in zip(ref.values, ref.upper, strict=True))
    assert ref.details["candidate"] == "heuristic"
    with pytest.raises(ValueError, match="overlap"):
        reference_for("BombDefusal", "heuristic", 0, (0, 1), selection_seeds=(1, 2))


# --------------------------------------------------------------------------- dispatch
@pytest.mark.parametrize("game", ["Hanabi", "Overcooked", "Guandan", "CoBlock"])
def test_games_without_a_reference_say_so(game: str) -> None:
    with pytest.raises(NoReference, match=game):
        reference_for(game, "random", 0, (0,))


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="seat"):
        reference_for("CollabCapture", "greedy", 2, (0,))
    with pytest.raises(ValueError, match="seeds"):
        reference_for("CollabCapture", "greedy", 0, ())
    with pytest.raises(NoReference, match="partner"):
        reference_for("CollabCapture", "planner", 0, (0,))
    with pytest.raises(KeyError, match="unknown matrix partner"):
        reference_for("RockPaperScissors", "nobody", 0, (0,))


def test_planner_cache_is_shared() -> None:
    config = _capture_game("both_open", 30).game.config
    a = best_response_planner("CollabCapture", config, "greedy", 0)
    assert a is best_response_planner("CollabCapture", config, "greedy", 0)
    assert len(a.q_values()) == len(a.game.options(a.start(), 0))  # one Q per focal action


def test_oracle_predicts_the_known_partner() -> None:
    spec = game_spec("PrisonersDilemma")
    agents = [OracleAgent("tit_for_tat"), make_agent("tit_for_tat", spec)]
    ep = play_episode(spec, agents, 0, {"horizon": 20})
    assert ep.metrics["tom_accuracy"] == 100.0
    assert ep.metrics["functional_regret"] == 0.0


def test_escape_without_a_turn_limit_converges_above_the_limited_value() -> None:
    spec = game_spec("CollabEscape")
    game = spec.load().make_bundle(scenario="together", max_turns=None).game
    partner = uniform_partner(game, 1)
    unlimited = BestResponsePlanner(game, partner, 0)
    limited = reference_for("CollabEscape", "random", 0, (0,), scenario="together").mean
    assert limited <= unlimited.value() <= 1.0
    assert unlimited.value() > limited  # more time, more escapes with a random partner
    clock = MarkovPartner("clock", partner.probs, stationary=False)  # reads the turns left
    with pytest.raises(ValueError, match="turns left"):
        BestResponsePlanner(game, clock, 0, planner=unlimited.planner)


def test_batched_partner_tabulation_equals_the_per_state_one() -> None:
    """A learned actor is tabulated in one batched call; here a batched uniform policy (over
    the view's legal actions) must give the uniform partner's exact values."""
    game = _capture_game("both_closed", 30).game

    def batched(views, turns_left):
        out = np.zeros((len(views), 11))  # CollabCapture: stay, rooms 1-9, press
        for n, v in enumerate(views):
            out[n, list(v.legal_actions)] = 1.0 / len(v.legal_actions)
        return out

    learned = partner_from_batch("uniform_batched", game, 1, batched, stationary=True)
    per_state = BestResponsePlanner(game, uniform_partner(game, 1), 0, step_cost=1 / 31)
    batch = BestResponsePlanner(game, learned, 0, step_cost=1 / 31, planner=per_state.planner)
    assert batch.value() == pytest.approx(per_state.value(), abs=1e-12)
    assert batch.q_values() == pytest.approx(per_state.q_values(), abs=1e-12)
    ref = reference_for("CollabCapture", learned, 0, (0,), scenario="both_closed")
    assert ref.mean == pytest.approx(per_state.value(), abs=1e-12)
    assert ref.partner == "uniform_batched"


def test_switch_spec_window_and_bayes_flag() -> None:
    spec_ = "switch:a=always_0:b=always_1:at=3-5:key=2"
    bayes = reference_for("BattleOfSexes", spec_, 0, (0,), horizon=8, bayes=True)
    window = reference_for("BattleOfSexes", "switch:a=always_0:b=always_1", 0, (0,), horizon=8,
                           switch_window=(3, 5))  # fmt: skip
    assert bayes.mean == pytest.approx(window.mean)
    assert bayes.details["switch_window"] == (3, 5)
    with pytest.raises(ValueError, match="across episodes"):
        reference_for("BattleOfSexes", "switch:a=always_0:b=always_1:at_episode=1-2:key=0", 0,
                      (0,), bayes=True)  # fmt: skip


def test_clairvoyant_reference_follows_the_switching_agent() -> None:
    """With the partners' switching agent installed: the reference draws each seed's switch round
    as the agent does, and the oracle given the same spec has regret exactly 0 against it."""
    switching = pytest.importorskip("tom_envs.partners.switching")
    spec = game_spec("PrisonersDilemma")
    partner = "switch:a=always_0:b=tit_for_tat:at=5-15:key=3"
    seeds = (0, 1, 2)
    ref = reference_for(spec, partner, 0, seeds, horizon=20)
    rounds = [switching.switch_point(s, 3, 5, 15) for s in seeds]
    assert ref.details["switch_at"] == tuple(rounds)
    for seed, value in zip(seeds, ref.values, strict=True):
        bundle = spec.load().make_bundle(**spec.kwargs, horizon=20)
        member = switching.make_switching(
            {"a": "always_0", "b": "tit_for_tat", "at": "5-15", "key": 3},
            lambda name, bundle=bundle: make_agent(name, spec, bundle),
        )
        ep = play_episode(spec, [OracleAgent(partner), member], seed, {"horizon": 20})
        assert ep.returns["player_0"] == pytest.approx(value)


def test_any_markov_agent_spec_is_tabulated_on_request() -> None:
    """An agent spec other than the three bots needs markov=True; the ``greedy`` bot given that
    way (read through its turns) gives the same exact value as the named path."""
    named = reference_for("CollabCapture", "greedy", 0, (0,), scenario="enable")
    with pytest.raises(NoReference, match="markov=True"):
        reference_for("CollabCapture", "population:all", 0, (0,), scenario="enable")
    spec = game_spec("CollabCapture")
    bundle = spec.load().make_bundle(scenario="enable")
    from tom_envs.games.joint_planner import partner_from_agent

    agent = make_agent("greedy", spec, bundle)
    learned_like = partner_from_agent("greedy_as_agent", bundle, 1, agent, stationary=True)
    ref = reference_for(spec, learned_like, 0, (0,), scenario="enable")
    assert ref.mean == pytest.approx(named.mean, abs=1e-12)


# ------------------------------------------------------- the room games' convention members
CONVENTIONS = {"CollabCapture": ("lazy", "guard", "opener"),
               "CollabEscape": ("lazy", "far_first", "split")}  # fmt: skip
SELECTION = tuple(range(10_000, 10_010))


def _u(spec, ep) -> float:
    return float(spec.load().functional_objective(**spec.kwargs)(ep, (0,)))


@pytest.mark.parametrize(("game", "member"), [(g, m) for g, ms in CONVENTIONS.items() for m in ms])
def test_convention_members_are_markov_in_the_planners_state(game: str, member: str) -> None:
    """The planner's tabulation of a convention bot (asked on the view rebuilt from the canonical
    state) is the bot's own action on the real turn of every decision of seeded random play."""
    spec = game_spec(game)
    bundle = spec.load().make_bundle()
    game_obj, seat = bundle.game, 1
    partner = markov_partner(spec, bundle, member, seat)
    bot = make_agent(member, spec, bundle)
    compared = 0
    for seed in range(3):
        rng = np.random.default_rng(seed)
        state = game_obj.initial_state(rng)
        while not game_obj.is_terminal(state):
            real = as_agent_action(bot.act(state_turn(bundle, state, seat))).action
            turns_left = game_obj.config.max_turns - state.turn
            assert partner.probs(game_obj.canonical(state), turns_left) == {real: 1.0}
            compared += 1
            joint = {p: int(rng.choice(game_obj.options(state, p))) for p in (0, 1)}
            state = game_obj.step(state, joint, rng).state
    assert compared >= 6


@pytest.mark.parametrize(("game", "member", "kwargs", "cost"), [
    ("CollabCapture", "guard", {"scenario": "door12_closed", "max_turns": 6}, 1 / 7),
    ("CollabCapture", "opener", {"scenario": "both_closed", "max_turns": 6}, 1 / 7),
    ("CollabEscape", "far_first", {"scenario": "together", "max_turns": 8}, 0.0),
    ("CollabEscape", "split", {"scenario": "split", "max_turns": 8}, 0.0),
])  # fmt: skip
def test_convention_references_equal_expectimax(game: str, member: str, kwargs, cost: float) -> None:
    """The exact reference of a convention member equals plain expectimax over the rules (no
    planner table) on games cut to a few turns."""
    spec = game_spec(game)
    bundle = spec.load().make_bundle(**kwargs)
    ref = reference_for(game, member, 0, (0,), **kwargs)
    partner = markov_partner(spec, bundle, member, 1)
    brute = _expectimax(bundle.game, 0, partner.probs, bundle.game.initial_state(None),
                        kwargs["max_turns"], cost)  # fmt: skip
    assert ref.kind == "exact"
    assert ref.mean == pytest.approx(brute, abs=1e-12)


@pytest.mark.parametrize("member", CONVENTIONS["CollabCapture"])
def test_capture_convention_reference_is_what_the_oracle_obtains(member: str) -> None:
    """CollabCapture has no chance: the oracle's U on seeded episodes is the exact value."""
    spec = game_spec("CollabCapture")
    bundle = spec.load().make_bundle()
    ref = reference_for("CollabCapture", member, 0, SELECTION[:2])
    for seed in SELECTION[:2]:
        ep = play_episode(spec, [OracleAgent(member), make_agent(member, spec, bundle)], seed)
        assert _u(spec, ep) == pytest.approx(ref.value(seed), abs=1e-12)


@pytest.mark.parametrize(("member", "value"), [("lazy", 0.0), ("far_first", None), ("split", None)])
def test_escape_convention_reference_is_what_the_oracle_obtains(member: str, value) -> None:
    """CollabEscape: the planner's own propagation of its policy gives the value, and the oracle's
    escape rate on 60 seeded episodes lies within 4 standard errors of it (lazy: exactly 0, the
    waiting partner is always caught or time runs out)."""
    spec = game_spec("CollabEscape")
    bundle = spec.load().make_bundle()
    ref = reference_for("CollabEscape", member, 0, (0,))
    br = best_response_planner("CollabEscape", bundle.game.config, member, 0)
    assert br.outcome()["success"] == pytest.approx(ref.mean, abs=1e-12)
    if value is not None:
        assert ref.mean == pytest.approx(value, abs=1e-12)
    seeds = range(60)
    u = [_u(spec, play_episode(spec, [OracleAgent(member), make_agent(member, spec, bundle)], s))
         for s in seeds]  # fmt: skip
    se = max(np.sqrt(ref.mean * (1 - ref.mean) / len(u)), 1e-9)
    assert abs(np.mean(u) - ref.mean) <= 4 * se


def test_convention_best_responses_differ_from_optimals() -> None:
    """The exact cross values (the best response to one member played against another, same
    tables): optimal's best response never captures with ``lazy`` or ``guard`` (it waits in room
    1 for a chase that never comes) and escapes 10x less often with ``far_first``; and on the
    selection seeds the member's own oracle does better than optimal's."""
    for game, member, own, with_optimal in (
        ("CollabCapture", "lazy", 1 - 5 / 31, -30 / 31),
        ("CollabCapture", "guard", 1 - 5 / 31, -30 / 31),
        ("CollabEscape", "far_first", 0.625, 0.0625),
    ):
        spec = game_spec(game)
        bundle = spec.load().make_bundle()
        config = bundle.game.config
        br = best_response_planner(game, config, member, 0)
        fixed = best_response_planner(game, config, "optimal", 0)
        obj = (lambda o: o["success"] - o["expected_turns"] / 31) if game == "CollabCapture" else (
            lambda o: o["success"])  # fmt: skip
        assert obj(br.outcome()) == pytest.approx(own, abs=1e-9)
        assert obj(fixed.outcome(against=br)) == pytest.approx(with_optimal, abs=1e-9)
        seeds = SELECTION if game == "CollabEscape" else SELECTION[:1]
        play = {o: np.mean([_u(spec, play_episode(spec, [OracleAgent(o), make_agent(member, spec, bundle)], s))
                            for s in seeds]) for o in (member, "optimal")}  # fmt: skip
        assert play[member] > play["optimal"], (game, member, play)


@pytest.mark.parametrize(("game", "member", "joint", "final"), [
    ("CollabCapture", "lazy", [(0, 0), (6, 0), (5, 0), (4, 0), (3, 0)], "captured"),
    ("CollabCapture", "guard", [(0, 5), (6, 0), (5, 0), (4, 0), (3, 0)], "captured"),
    ("CollabCapture", "opener", [(0, 9), (0, 10), (2, 6), (3, 5)], "captured"),
    ("CollabEscape", "far_first", [(11, 3), (2, 4), (3, 5)], "caught"),
    ("CollabEscape", "split", [(11, 3), (11, 4), (10, 5)], "caught"),
])  # fmt: skip
def test_convention_golden_playthroughs(game: str, member: str, joint, final: str) -> None:
    """Seeded golden (selection seed 10000): the oracle of each convention member against it, the
    joint actions turn by turn (Capture: the partner waits, walks to the hub, or opens door 1-2
    with the button in room 9 while the oracle holds room 1; Escape: both conventions walk into
    the killer coming from room 6, seed 10000's draw)."""
    from tom_envs.games.joint_planner import replay

    spec = game_spec(game)
    bundle = spec.load().make_bundle()
    ep = play_episode(spec, [OracleAgent(member), make_agent(member, spec, bundle)], 10_000)
    trajectory, _ = replay(bundle.game, 10_000, ep.steps)
    assert [(j[0], j[1]) for _, j in trajectory] == joint
    assert ep.metrics[final] == 1.0
