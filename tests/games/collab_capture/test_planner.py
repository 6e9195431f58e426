"""The exact joint planner on CollabCapture: known optimal turns (derived by hand), coordination of
two optimal bots, probes and metrics built on it."""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.agents import make_agent
from tom_envs.games.collab_capture.env import make_bundle
from tom_envs.games.collab_capture.rules import Action, CaptureConfig, CaptureGame
from tom_envs.games.joint_planner import JointPlanner, planner_for
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode

S, P = int(Action.STAY), int(Action.PRESS)

# Hand derivations (rules as coded; starts Alice 1, Bob 6, thief 2):
# * both_open / door34_closed: 1 turn. Alice steps into room 2; the thief, seeing her next room 2
#   and Bob's 6, is tied between 1 and 3 (both 1 away) and takes 1, listed first: a swap.
# * door12_closed: 3 turns. Turn 1 the thief must go to 3 and nobody reaches 2 or 3; turn 2 from
#   3 he flees to 2 whatever the agents plan (Alice cannot cross the closed door), so no capture
#   before turn 3.
# * both_closed: 3 turns. The thief shuttles 2 -> 3 -> 2; a door can open at the end of turn 2 at
#   the earliest (Bob walks to 9, then presses), and moves are checked against the doors at the
#   start of a turn, so turn 3 is the first chance (Alice 1 -> 2 while the thief takes 1: a swap).
OPTIMAL_TURNS = {"both_open": 1, "door12_closed": 3, "door34_closed": 1, "both_closed": 3,
                 "pincer": 3, "enable": 3, "disable": 3}  # the last three: tests/../test_scenarios.py


@pytest.mark.parametrize(("scenario", "turns"), OPTIMAL_TURNS.items())
def test_optimal_turns(scenario, turns) -> None:
    game = CaptureGame(CaptureConfig(scenario=scenario))
    planner = planner_for(CaptureGame, game.config)
    start = game.initial_state(None)
    assert planner.turns_to_success(start) == turns
    assert planner.optimal_turns(start) == turns
    assert planner.value(start) == 1.0  # capture within 30 turns is certain
    curve = planner.success_curve(start)
    assert list(curve[:turns]) == [0.0] * turns and curve[turns] == 1.0


def test_without_swaps_capture_takes_longer() -> None:
    cfg = CaptureConfig(scenario="both_open", swap_capture=False)
    planner = JointPlanner(CaptureGame(cfg))
    assert planner.turns_to_success(CaptureGame(cfg).initial_state(None)) > 1


def test_first_moves_of_the_optimal_plan() -> None:
    cfg = CaptureConfig(scenario="both_closed")
    game = CaptureGame(cfg)
    planner = planner_for(CaptureGame, cfg)
    start = game.initial_state(None)
    assert planner.best_joint_action(start) == (S, 9)  # Bob heads for the button of door 1-2
    assert all(j[1] == 9 for j in planner.optimal_joint_actions(start))


def test_q_values_agree_with_the_values() -> None:
    cfg = CaptureConfig(scenario="door12_closed")
    game = CaptureGame(cfg)
    planner = planner_for(CaptureGame, cfg)
    start = game.initial_state(None)
    q = planner.q_turns(start)
    assert min(q.values()) == planner.turns_to_success(start) == 3
    assert set(q) == set(planner.joint_actions(start))
    # a joint action that wastes a turn costs exactly one more turn (or more)
    assert all(v >= 3 for v in q.values())
    qp = planner.q_table(start)
    assert max(qp.values()) == planner.value(start)


@pytest.mark.parametrize("scenario", OPTIMAL_TURNS)
def test_two_optimal_bots_achieve_the_optimum(scenario) -> None:
    spec = game_spec("CollabCapture")
    bundle = make_bundle(scenario=scenario)
    agents = [make_agent("optimal", spec, bundle) for _ in range(2)]
    ep = play_episode(spec, agents, 0, env_kwargs={"scenario": scenario})
    m = ep.metrics
    assert m["captured"] == 1.0 and ep.length == OPTIMAL_TURNS[scenario]
    assert m["turn_regret"] == 0.0 and m["functional_regret"] == 0.0
    assert m["tom_accuracy/player_0"] == m["tom_accuracy/player_1"] == 100.0
    assert m["br_regret/player_0"] == m["br_regret/player_1"] == 0.0
    assert ep.returns == {"player_0": 1.0, "player_1": 1.0}


def test_metrics_of_a_failed_episode() -> None:
    # greedy agents never press a button: with both doors closed the thief is out of reach
    spec = game_spec("CollabCapture")
    bundle = make_bundle(scenario="both_closed")
    agents = [make_agent("greedy", spec, bundle) for _ in range(2)]
    ep = play_episode(spec, agents, 0, env_kwargs={"scenario": "both_closed"})
    m = ep.metrics
    assert m["captured"] == 0.0 and m["turns"] == 30.0 and m["optimal_turns"] == 3.0
    assert m["turn_regret"] == 31.0 - 3.0 and m["functional_regret"] == 1.0
    assert "tom_accuracy/player_0" not in m  # greedy bots predict nothing


def test_probes_name_the_partners_unique_optimal_move() -> None:
    bundle = make_bundle(scenario="both_closed")
    game = bundle.game
    start = game.initial_state(np.random.default_rng(0))
    (probe,) = bundle.probes(start, 0)  # Alice is asked about Bob
    assert probe.kind == "next_action" and probe.order == 1
    assert probe.question == "What action does my partner Bob intend to take this turn?"
    assert probe.options == (
        "Stay in current room",
        "Move to room 5",
        "Move to room 9",
        "Move to room 1",
    )
    assert probe.answer == "Move to room 9" and probe.score("move to room 9")
    # Bob's question about Alice: her optimal first move is not unique here (she has time), so
    # the probe is not asked (only unambiguous questions, as in the paper)
    planner = planner_for(CaptureGame, game.config)
    alice = {j[0] for j in planner.optimal_joint_actions(start)}
    assert (len(alice) == 1) == bool(bundle.probes(start, 1))
    end = game.step(start, {0: S, 1: 9}, None).state
    assert all(p.answer in p.options for p in bundle.probes(end, 0) + bundle.probes(end, 1))


def test_unknown_states_are_reported() -> None:
    from tom_envs.games.collab_capture.rules import CaptureState

    game = CaptureGame()
    caught = CaptureState(rooms=(2, 6), thief=2, doors=(False, True), captured=True)
    planner = JointPlanner(game, roots=[caught])  # an absorbing root: nothing else is reachable
    assert planner.num_states == 1 and planner.value(caught) == 1.0
    with pytest.raises(KeyError):
        planner.value(game.initial_state(None))
    with pytest.raises(ValueError):
        planner.best_joint_action(caught)
