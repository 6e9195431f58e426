"""The known groups' agents and check (:mod:`tom_envs.known_groups`) on tiny fixed cases: the
type-based posterior, the UCB1 selector, the verdict on synthetic regrets, and an attack: the
adaptive agents are given no partner identity."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest

from tom_envs.agents import make_agent
from tom_envs.core.agents import EpisodeInfo
from tom_envs.known_groups import (
    ORACLE_SPEC,
    ROOM_TYPES,
    GroupsPlan,
    SelectorAgent,
    TypeBasedAgent,
    order_verdict,
    play_groups,
    play_switch,
    reference_policy,
)
from tom_envs.partners.regret import known_groups
from tom_envs.references import reference_for
from tom_envs.registration import game_spec
from tom_envs.sessions import play_session


# ------------------------------------------------------------------------ type-based
@pytest.mark.parametrize("partner", ["greedy", "optimal", "random"])
def test_typebased_posterior_concentrates_on_the_true_member_in_capture(partner: str) -> None:
    """Two seeded three-episode sessions in CollabCapture with both doors closed (where the
    members' moves differ; in the default scenario greedy and optimal move alike): the posterior
    over the paper's members puts most of its mass on the member actually playing (the
    conventions are left out here: ``opener`` makes optimal's moves in this scenario)."""
    base = game_spec("CollabCapture")
    kwargs = {"scenario": "both_closed"}
    spec = dataclasses.replace(base, kwargs={**base.kwargs, **kwargs})
    for seeds in ([0, 1, 2], [7, 8, 9]):
        learner = TypeBasedAgent(ROOM_TYPES)
        eps = play_session(spec, [learner, make_agent(partner, spec)], seeds, kwargs)
        moves = sum(1 for e in eps for s in e.steps if s["agent"] == "player_1")
        assert moves >= 3
        post = learner.posterior
        assert max(post, key=lambda t: post[t]) == partner, post
        assert post[partner] > 0.9, (post, moves)


@pytest.mark.parametrize("partner", ["lazy", "guard", "opener"])
def test_typebased_identifies_the_capture_conventions(partner: str) -> None:
    """In the default scenario each convention moves unlike the other members within two turns:
    after a two-episode session the posterior (over every type, the conventions included) is on
    it, and from the second episode the learner plays as its exact oracle."""
    spec = game_spec("CollabCapture")
    learner = TypeBasedAgent()
    eps = play_session(spec, [learner, make_agent(partner, spec)], [10_000, 10_001])
    post = learner.posterior
    assert max(post, key=lambda t: post[t]) == partner and post[partner] > 0.99, post
    oracle = play_session(spec, [make_agent(ORACLE_SPEC + partner, spec, trusted=True),
                                 make_agent(partner, spec)], [10_001])  # fmt: skip
    assert [s["action"] for s in eps[1].steps] == [s["action"] for s in oracle[0].steps]


def test_typebased_update_is_bayes_on_a_scripted_transition() -> None:
    """One observed transition: the posterior is prior x likelihood, renormalised (the types'
    likelihoods computed independently here from the planner's partner table and the game's
    outcomes); a transition no type can explain leaves the posterior unchanged."""
    spec = game_spec("CollabCapture")
    bundle = spec.load().make_bundle(**spec.kwargs)
    game = bundle.game
    learner = TypeBasedAgent(epsilon=0.05)
    eps = play_session(spec, [learner, make_agent("random", spec)], [3])
    learner.log_post = np.zeros(len(learner.types))
    state = game.initial_state(np.random.default_rng(0))
    mine = game.options(state, 0)[0]
    theirs = game.options(state, 1)[-1]
    (_, nxt), = game.outcomes(state, {0: mine, 1: theirs})
    expected = []
    for br in learner._planners:
        k = br.horizon - int(state.turn)
        probs = br.partner.probs(game.canonical(state), k)
        opts = game.options(state, 1)
        expected.append(sum(
            (0.95 * probs.get(b, 0.0) + 0.05 / len(opts))
            * sum(q for q, s in game.outcomes(state, {0: mine, 1: b})
                  if game.canonical(s) == game.canonical(nxt))
            for b in opts))  # fmt: skip
    learner.observe(state, mine, nxt)
    want = np.array(expected) / np.sum(expected)
    got = np.array(list(learner.posterior.values()))
    assert got == pytest.approx(want)
    assert eps[0].status == "ok"
    before = learner.log_post.copy()
    far = type(nxt)(rooms=nxt.rooms, thief=nxt.thief, doors=nxt.doors, turn=nxt.turn, captured=True)
    if game.canonical(far) != game.canonical(nxt):
        learner.observe(state, mine, far)
        assert np.array_equal(learner.log_post, before)


# ------------------------------------------------------------------------ selector
def test_ucb1_selector_picks_the_best_arm_given_scripted_returns() -> None:
    """Scripted seeded returns (arm means 1, 3, 2, noise 0.5): untried arms first in the declared
    order, then UCB1 concentrates on the best arm; explore-then-commit commits to it."""
    rng = np.random.default_rng(7)
    means = [1.0, 3.0, 2.0]
    sel = SelectorAgent(("a", "b", "c"))
    chosen = []
    for _ in range(200):
        arm = sel.choose()
        chosen.append(arm)
        sel.record(arm, means[arm] + rng.normal(0, 0.5))
    assert chosen[:3] == [0, 1, 2]
    counts = np.bincount(chosen, minlength=3)
    assert counts.argmax() == 1 and counts[1] > 0.6 * len(chosen), counts
    assert counts[0] < counts[2]  # the worst arm is tried least
    etc = SelectorAgent(("a", "b", "c"), rule="etc")
    for arm, ret in ((0, 1.0), (1, 3.0), (2, 2.0)):
        assert etc.choose() == arm
        etc.record(arm, ret)
    assert [etc.choose() for _ in range(3)] == [1, 1, 1]


def test_selector_plays_one_arm_per_episode_and_forgets_at_a_new_session() -> None:
    """In a Hanabi session of 4 episodes with 2 arms the selector tries each arm once, then
    plays on; a new session starts from an empty history."""
    spec = game_spec("Hanabi")
    sel = SelectorAgent(("simple", "convention"))
    play_session(spec, [sel, make_agent("convention", spec)], [0, 1, 2, 3], session_id="s1")
    assert [a for a, _ in sel.history][:2] == [0, 1] and len(sel.history) == 4
    assert all(r >= 0 for _, r in sel.history)
    play_session(spec, [sel, make_agent("convention", spec)], [10, 11], session_id="s2")
    assert [a for a, _ in sel.history] == [0, 1]
    with pytest.raises(ValueError, match="arms"):
        SelectorAgent(("simple", "simple"))
    with pytest.raises(ValueError, match="rule"):
        SelectorAgent(("simple",), rule="greedy")


# ------------------------------------------------------------------------ verdict
def _synthetic(oracle: float, adaptive: float, fixed: float, n: int = 30) -> dict:
    rng = np.random.default_rng(0)

    def series(m: float) -> dict[int, float]:
        return {i: m + float(rng.normal(0, 0.1)) for i in range(n)}

    return known_groups(series(oracle), series(adaptive), series(fixed), 35)


def test_order_verdict_names_the_failing_inequality() -> None:
    assert order_verdict(_synthetic(0.0, 1.0, 2.0)) == "✓"
    fails_upper = order_verdict(_synthetic(0.0, 1.0, 1.0))
    assert fails_upper.startswith("✗") and "adaptive < fixed fails" in fails_upper
    assert "oracle < adaptive" not in fails_upper
    fails_lower = order_verdict(_synthetic(0.0, 0.0, 2.0))
    assert "oracle < adaptive fails" in fails_lower and "adaptive < fixed" not in fails_lower
    both = order_verdict(_synthetic(1.0, 1.0, 1.0))
    assert "oracle < adaptive fails" in both and "adaptive < fixed fails" in both
    reversed_ = order_verdict(_synthetic(2.0, 1.0, 0.0))
    assert reversed_.count("fails") == 2 and "-1.0" in reversed_


# ------------------------------------------------------------------------ attack
def test_adaptive_agents_receive_no_partner_identity() -> None:
    """Their constructors take no partner; what they are told at reset is the same whichever
    member sits opposite (greedy or optimal), and so are their turns until the partner's moves
    differ."""
    assert set(inspect.signature(SelectorAgent.__init__).parameters) == {"self", "arms", "c", "rule"}
    assert set(inspect.signature(TypeBasedAgent.__init__).parameters) == {"self", "types", "epsilon"}
    spec = game_spec("CollabEscape")
    seen: dict[str, list[EpisodeInfo]] = {}
    for partner in ("greedy", "optimal"):
        learner = TypeBasedAgent()
        infos: list[EpisodeInfo] = []
        reset = learner.reset
        learner.reset = lambda info, reset=reset, infos=infos: (infos.append(info), reset(info))[1]
        play_session(spec, [learner, make_agent(partner, spec)], [5, 6], session_id="s")
        seen[partner] = infos
        assert not any(partner in repr(i) for i in infos)
    assert seen["greedy"] == seen["optimal"]


# ------------------------------------------------------------------------ groups and switch
def _escape_plan(sessions: int = 2, length: int = 3) -> GroupsPlan:
    members = {m: ORACLE_SPEC + m for m in ("greedy", "optimal")}
    return GroupsPlan("CollabEscape", {}, ("{focal}", "{partner}"), (0,), members, "optimal",
                      TypeBasedAgent, "typebased", sessions, length)  # fmt: skip


def _exact(member: str, seeds) -> tuple[float, ...]:
    return reference_for("CollabEscape", member, 0, seeds).values


def test_play_groups_on_collab_escape_is_paired_by_session() -> None:
    """The exact oracle's mean regret is near 0; the fixed convention (the oracle of optimal)
    loses most of an escape against greedy (exact 0.9375 vs 0.0625 with this policy)."""
    res = play_groups(_escape_plan(), _exact)
    assert set(res.per_session["oracle"]) == {0, 1}
    assert abs(res.per_member["greedy"]["oracle"]) < 0.2
    assert res.per_member["greedy"]["fixed"] > 0.5
    assert res.per_member["optimal"]["fixed"] == pytest.approx(0.0, abs=1e-9)
    assert res.verdict.startswith(("✓", "✗"))
    # adaptive 2 members x 6 episodes; the oracle of greedy vs greedy, and the oracle of optimal
    # (= fixed) vs both members: each (policy, member) pair played once and reused
    assert res.episodes == 12 + 6 + 12


def test_play_switch_oracle_follows_the_switch() -> None:
    """Across a session the partner switches from optimal to greedy at a seeded episode: the
    fixed agent (best response to optimal) keeps losing after it, the clairvoyant oracle does
    not."""
    res = play_switch(_escape_plan(sessions=2, length=5), "optimal", "greedy", "1-2", _exact)
    assert res.rows["fixed"]["post"][0] > 1.0
    assert res.rows["oracle"]["post"][0] < 0.5
    assert res.rows["oracle"]["windows"][-1] == pytest.approx(0.0, abs=1e-9)


def test_reference_policy_reads_one_function() -> None:
    """The oracle's policy: a trained best response named by the reference wins; the solvers'
    oracle in the matrix and room games; a bracket's candidate; a lower bound's candidate."""

    class Ref:
        def __init__(self, kind: str, **details: object) -> None:
            self.kind, self.details = kind, details

    assert reference_policy("Hanabi", "simple", Ref("lower_bound", policy="zoo/br_simple")) == "zoo/br_simple"
    assert reference_policy("CollabEscape", "greedy", Ref("exact")) == ORACLE_SPEC + "greedy"
    assert reference_policy("CollabEscape", "zoo/ppo_s0", None) is None
    # a room game's learned member: its lower bound's policy (a member, or its trained BR)
    assert reference_policy("CollabEscape", "zoo/ppo_s0", "optimal") == "optimal"
    assert reference_policy("CollabEscape", "zoo/ppo_s0", "br/zoo/ppo_s0") == "br/zoo/ppo_s0"
    assert reference_policy("BombDefusal", "cbs", Ref("exact")) == "cbs"
    assert reference_policy("BombDefusal", "heuristic", Ref("bracket", candidate="cbs")) == "cbs"
    assert reference_policy("CoBlock", "helper", "cooperative") == "cooperative"


def test_room_plans_declare_the_convention_members() -> None:
    """CollabCapture/CollabEscape: every rule member of the zoo (the conventions included) is a
    type of the type-based learner and a member the known groups check, with the exact oracle as
    its policy; m0 stays ``optimal``."""
    from tom_envs import zoo
    from tom_envs.known_groups import room_types
    from tom_experiments import functional_tom as ft

    conventions = {"CollabCapture": ("lazy", "guard", "opener"),
                   "CollabEscape": ("lazy", "far_first", "split")}  # fmt: skip
    for game, names in conventions.items():
        bots = [m.name for m in zoo.members(game) if m.kind == "bot"]
        assert set(names) <= set(bots)
        assert room_types(game) == (*ROOM_TYPES, *names)
        plan = ft.PLANS[game]
        assert plan.session_learner == "typebased" and plan.fixed_member == "optimal"
        refs = {m: ft._reference(plan, m, [0], {}) for m in bots}
        gp = ft._groups_plan(plan, {m: r for m, r in refs.items() if r is not None})
        assert gp is not None
        assert list(gp.members) == [b for b in bots if b != "random"]
        assert all(gp.members[n] == ORACLE_SPEC + n for n in names)
        assert all(refs[n].kind == "exact" for n in names)
    assert ft.PLANS["CollabCapture"].episode_switch == ("optimal", "lazy", "3-6")
