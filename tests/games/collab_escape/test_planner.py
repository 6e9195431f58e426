"""The exact joint planner on CollabEscape: known values, consistency of values, policy and
probes, and the metrics built on it."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tom_envs.agents import make_agent
from tom_envs.games.collab_escape.env import make_bundle, raw_env
from tom_envs.games.collab_escape.rules import Action, EscapeConfig, EscapeGame
from tom_envs.games.joint_planner import JointPlanner, planner_for, replay
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode

W, F = int(Action.WAIT), int(Action.FIX)


def planner(**kw) -> tuple[EscapeGame, JointPlanner]:
    game = EscapeGame(EscapeConfig(**kw))
    return game, planner_for(EscapeGame, game.config)


def test_fewest_turns_to_escape_together() -> None:
    # By hand: Bob needs 4 moves to generator 6 (2-3-4-5-6) and 2 fixes; meanwhile Alice repairs
    # generator 1 (turns 1-2) and walks 1-2-3-8-7 (turns 3-6, using the one-way 8 -> 7), so the
    # gate opens with her in room 7 at turn 6, and no plan is faster.
    game, pl = planner()
    start = game.initial_state(None)
    curve = pl.success_curve(start)
    assert list(curve[:6]) == [0.0] * 6 and curve[6] > 0
    # computed by the planner (exact over the killer's moves): regression values
    assert curve[6] == pytest.approx(0.75) and curve[7] == pytest.approx(0.9375)
    assert curve[8] == pytest.approx(1.0) and pl.value(start) == pytest.approx(1.0)
    assert pl.best_joint_action(start) == (F, 3)


def test_split_and_prompt_map_values() -> None:
    game, pl = planner(scenario="split")
    curve = pl.success_curve(game.initial_state(None))
    assert int((curve > 0).argmax()) == 7 and pl.value(game.initial_state(None)) == 1.0
    game, pl = planner(map="prompt")
    curve = pl.success_curve(game.initial_state(None))
    assert int((curve > 0).argmax()) == 6 and curve[6] == pytest.approx(0.5208333333)


def test_without_a_turn_limit() -> None:
    game = EscapeGame(EscapeConfig(max_turns=None))
    pl = JointPlanner(game)
    start = game.initial_state(None)
    assert pl.horizon is None and pl.turns_left(start) is None
    assert pl.value(start) == pytest.approx(1.0)
    assert pl.best_joint_action(start) in pl.joint_actions(start)


def test_the_optimal_policy_achieves_the_value() -> None:
    game, pl = planner()
    start = game.initial_state(None)
    late = dataclasses.replace(start, turn=24)  # 6 turns left: success 0.75 at best
    for s, v in ((start, 1.0), (late, 0.75)):
        assert pl.value(s) == pytest.approx(v)
        out = pl.policy_outcome(s)
        assert out["success"] == pytest.approx(v) and out["failure"] <= 1 - v + 1e-12
        assert max(pl.q_table(s).values()) == pytest.approx(v)


def test_optimal_bots_escape_and_score_zero_regret() -> None:
    spec = game_spec("CollabEscape")
    bundle = make_bundle()
    for seed in range(4):
        agents = [make_agent("optimal", spec, bundle) for _ in range(2)]
        ep = play_episode(spec, agents, seed)
        m = ep.metrics
        assert m["escaped"] == 1.0 and m["functional_regret"] == pytest.approx(0.0)
        assert m["tom_accuracy/player_0"] == 100.0 and m["br_regret/player_1"] == pytest.approx(0)
        assert 6 <= ep.length <= 30


def test_greedy_bots_walk_into_the_killer() -> None:
    spec = game_spec("CollabEscape")
    bundle = make_bundle()
    agents = [make_agent("greedy", spec, bundle) for _ in range(2)]
    ep = play_episode(spec, agents, 0)
    assert ep.metrics["escaped"] == 0.0 and ep.metrics["functional_regret"] == 1.0


def test_replay_reproduces_the_episode() -> None:
    spec = game_spec("CollabEscape")
    env = raw_env()
    bundle = env.bundle
    agents = [make_agent("random", spec, bundle) for _ in range(2)]
    for seed in (3, 4, 5):
        ep = play_episode(spec, agents, seed, env=env)
        trajectory, final = replay(bundle.game, seed, ep.steps)
        assert final == env.game_state and len(trajectory) == ep.length


def test_probes_follow_the_optimal_plan() -> None:
    bundle = make_bundle()
    game = bundle.game
    pl = planner_for(EscapeGame, game.config)
    s = game.initial_state(None)
    asked = 0
    for _ in range(8):
        best = pl.optimal_joint_actions(s)
        for player in (0, 1):
            probes = bundle.probes(s, player)
            partner_moves = {j[1 - player] for j in best}
            assert bool(probes) == (len(partner_moves) == 1)
            for p in probes:
                asked += 1
                pview = game.observe(s, 1 - player)
                assert p.answer == bundle.text.action_text(pview, partner_moves.pop())
                assert set(p.options) == set(bundle.text.legal_actions_text(pview).values())
        s = game.step(s, dict(enumerate(best[0])), np.random.default_rng(1)).state
        if game.is_terminal(s):
            assert bundle.probes(s, 0) == []
            break
    assert asked > 0
