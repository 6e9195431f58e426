"""CBS planner (tom_envs/games/bomb_defusal/planner.py): valid plans, optimal rounds against the exhaustive search."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils import seeding

from tom_envs.games.bomb_defusal.maps import paper_map
from tom_envs.games.bomb_defusal.planner import (
    Problem,
    check_plan,
    exhaustive_optimum,
    plan_mission,
    solve,
)
from tom_envs.games.bomb_defusal.rules import BombConfig, BombGame, Mission

R, G, B = 0, 1, 2
GAME = BombGame(BombConfig(probes="none"))
ROOM = {r: i for i, r in enumerate(paper_map().rooms)}


def hand(bombs, start=0, game=GAME):
    m = Mission(
        paper_map(),
        tuple(ROOM[r] for r, _ in bombs),
        tuple(s for _, s in bombs),
        game.config.tool_colors,
        ROOM[start],
    )
    return game.state_from_mission(m)


@pytest.mark.parametrize(
    "bombs, start, rounds",
    [
        ([(0, (R,))], 0, 1),  # alpha cuts at once
        ([(0, (B,))], 0, 1),  # bravo, second in the round
        ([(0, (B, R))], 0, 1),  # bravo then charlie, same round
        ([(0, (B, G))], 0, 2),  # blue (bravo, t=1), then green: alpha at t=3
        ([(0, (R, G, B))], 0, 1),  # alpha, bravo ... charlie holds blue: t=2
        ([(3, (R,))], 0, 2),  # one hallway away
        ([(8, (G,)), (5, (B,))], 3, 3),  # 3-8 adjacent, 3 to 5 is two hallways (via 0)
        ([(0, (R,)), (0, (G,))], 0, 1),  # two bombs in a room: the lower one first
    ],
)
def test_known_optima(bombs, start, rounds) -> None:
    state = hand(bombs, start)
    plan = plan_mission(GAME, state)
    assert not check_plan(plan.problem, plan)
    assert plan.rounds == rounds == exhaustive_optimum(GAME, state)
    assert plan.return_ == state.mission.max_score


def test_cbs_matches_the_exhaustive_optimum_on_many_seeds() -> None:
    gaps = []
    for seed in range(40):
        state = GAME.initial_state(seeding.np_random(seed)[0])
        plan = plan_mission(GAME, state)
        assert not check_plan(plan.problem, plan), seed
        assert plan.return_ == 90
        gaps.append(plan.rounds - exhaustive_optimum(GAME, state))
    assert min(gaps) >= 0, "CBS found fewer rounds than the exhaustive optimum: a bug in one"
    assert np.mean([g == 0 for g in gaps]) >= 0.95


def test_plans_execute_in_the_rules() -> None:
    """Executing every player's action list through the rules defuses everything on time."""
    from tom_envs.games.bomb_defusal.rules import ActionKind, encode_action

    for seed in range(10):
        state = GAME.initial_state(seeding.np_random(seed)[0])
        plan = plan_mission(GAME, state)
        queues = [list(a) for a in plan.actions]
        rng = np.random.default_rng(0)
        while not state.over:
            p = state.turn
            view = GAME.observe(state, p)
            kind, arg = queues[p].pop(0) if queues[p] else ("wait", None)
            if kind == "move":
                a = encode_action(GAME.config, ActionKind.GO_TO, arg)
            elif kind == "use":
                a = encode_action(GAME.config, ActionKind.USE, arg)
            else:
                a = encode_action(
                    GAME.config,
                    ActionKind.INSPECT if view.room_bombs else ActionKind.USE,
                    None if view.room_bombs else view.my_tools[0],
                )
            state = GAME.step(state, {p: a}, rng).state
        assert state.score == 90 and state.round == plan.rounds


def test_subtask_decomposition_is_valid_but_not_optimal() -> None:
    worse = 0
    for seed in range(15):
        state = GAME.initial_state(seeding.np_random(seed)[0])
        full = plan_mission(GAME, state)
        sub = plan_mission(GAME, state, bombs_per_subtask=2)
        assert not check_plan(sub.problem, sub) and sub.return_ == 90
        assert sub.rounds >= full.rounds
        worse += sub.rounds > full.rounds
    assert worse > 0


def test_planning_mid_episode_and_larger_missions() -> None:
    game = BombGame(
        BombConfig(map="random", num_rooms=6, map_seed=3, probes="none", bomb_phases=(1, 2, 2, 3))
    )
    state = game.initial_state(np.random.default_rng(4))
    rng = np.random.default_rng(0)
    for _ in range(4):  # a few random moves, then plan from there
        legal = game.legal_actions(state, state.turn)
        state = game.step(state, {state.turn: int(rng.choice(legal))}, rng).state
    problem = Problem.from_state(game, state)
    plan = solve(problem)
    assert not check_plan(problem, plan)
    assert plan.rounds == exhaustive_optimum(game, state)


def test_exhaustive_search_respects_the_round_limit() -> None:
    # room 8 is next to room 0: the red holders (alpha, charlie) need a move, then a cut in round 2
    state = hand([(8, (R,))], 0)
    assert exhaustive_optimum(GAME, state) == 2
    short = BombGame(BombConfig(max_rounds=1, probes="none"))
    assert exhaustive_optimum(short, hand([(8, (R,))], 0, short)) is None
    assert plan_mission(short, hand([(8, (R,))], 0, short)).return_ == 0  # best return: none
