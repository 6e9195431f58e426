"""CoBlock tasks: structures, classification, the built-in sets, the generator and the planner."""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.games.coblock import structures as S
from tom_envs.games.coblock.make_tasks import stale_sets
from tom_envs.games.coblock.planner import optimal_assignment, optimal_counts, plan, schedule
from tom_envs.games.coblock.rules import CoBlockConfig, CoBlockGame
from tom_envs.games.coblock.structures import COLOR_INDEX, Component, pos_of
from tom_envs.games.coblock.tasks import (
    BUILTIN_SIZE,
    DEFAULT_GRID,
    TASK_TYPES,
    Goal,
    Task,
    builtin_tasks,
    classify,
    generate_task,
    self_sufficient,
    self_supported,
    validate,
)

from .conftest import place, step

R, B, Y, G = (COLOR_INDEX[c] for c in ("red", "blue", "yellow", "green"))


# ------------------------------------------------------------------------- structures
def test_letters_stand_and_are_connected() -> None:
    for letter in S.LETTERS:
        comp = S.symbol(letter, 0, 0, "x", R)
        assert S.is_buildable(comp.blocks), letter
        assert comp.label == "symbol" and comp.description.startswith(f"the letter {letter}")
        assert len({pos_of(b) for b in comp.blocks}) == len(comp.blocks)


def test_arch_follows_the_papers_rule() -> None:
    pillars, top = S.arch(0, 0, 4, 4, "x", R, B)
    assert len(pillars.blocks) == 8 and len(top.blocks) == 5
    assert {b[1] for b in top.blocks} == {4}
    assert not S.is_buildable(top.blocks)  # the top needs the pillars
    assert S.is_buildable(pillars.blocks + top.blocks)
    for span, height in ((3, 4), (4, 3)):
        with pytest.raises(ValueError):
            S.arch(0, 0, span, height, "x", R, B)


def test_bridge_and_tower_shapes() -> None:
    pillars, deck = S.bridge(0, 0, 4, 2, 2, "z", R, B)
    assert len(pillars.blocks) == 2 * 2 * 2 and len(deck.blocks) == 4 * 2
    assert {b[1] for b in deck.blocks} == {2} and {b[2] for b in deck.blocks} == set(range(4))
    assert deck.label == "bridge deck" and pillars.label == "bridge pillars"
    t = S.tower(2, 3, 4, (R, B))
    assert [b[3] for b in t.blocks] == [R, B, R, B] and [b[1] for b in t.blocks] == [0, 1, 2, 3]
    assert S.whole((pillars, deck)).label == "bridge"
    with pytest.raises(ValueError):
        Component("dome", "whole", ((0, 0, 0, R),))


def test_build_order_is_placeable_in_order() -> None:
    pillars, top = S.arch(0, 0, 4, 4, "z", R, B)
    order = S.build_order(top.blocks + pillars.blocks)
    placed: set = set()
    for b in order:
        assert S.supported(pos_of(b), placed)
        placed.add(pos_of(b))


# ------------------------------------------------------------------- classification
def _goal(*blocks) -> Goal:
    return Goal((Component("tower", "whole", tuple(blocks)),))


CLASSIFY = [
    # goal_0, goal_1, inventory_0, inventory_1, type
    ([(0, 0, 0, R)], [(2, 0, 0, B)], (2, 0, 0, 0, 0, 0), (0, 2, 0, 0, 0, 0), "independent"),
    ([(0, 0, 0, R)], [(2, 0, 0, B)], (2, 2, 0, 0, 0, 0), (0, 0, 0, 0, 0, 0), "skill_dependent"),
    (
        [(0, 0, 0, R), (0, 1, 0, R)],
        [(2, 0, 0, B)],
        (1, 0, 0, 0, 0, 0),
        (1, 2, 0, 0, 0, 0),
        "skill_dependent",
    ),  # one red short
    ([(0, 1, 0, R)], [(0, 0, 0, B)], (2, 0, 0, 0, 0, 0), (0, 2, 0, 0, 0, 0), "goal_dependent"),
    (
        [(1, 0, 0, R)],
        [(2, 0, 0, B), (3, 0, 0, B)],
        (2, 0, 0, 0, 0, 0),
        (0, 2, 0, 0, 0, 0),
        "independent",
    ),
]


@pytest.mark.parametrize(("g0", "g1", "i0", "i1", "kind"), CLASSIFY)
def test_classify(g0, g1, i0, i1, kind) -> None:
    task = Task("t", kind, (_goal(*g0), _goal(*g1)), (i0, i1))
    assert classify(task) == kind


#: Broken tasks: (type, each player's goal block, inventories, what the report must name).
BROKEN = {
    "floating": (
        "independent", ((0, 2, 0, R), (2, 0, 0, B)),
        ((2, 0, 0, 0, 0, 0), (0, 2, 0, 0, 0, 0)), ("gravity",),
    ),
    "short": (
        "skill_dependent", ((0, 0, 0, R), (2, 0, 0, B)),
        ((0, 2, 0, 0, 0, 0), (0, 0, 0, 0, 0, 0)), ("no joint plan", "holds no block"),
    ),
    "outside": (
        "independent", ((9, 0, 0, R), (2, 0, 0, B)),
        ((2, 0, 0, 0, 0, 0), (0, 2, 0, 0, 0, 0)), ("outside the grid",),
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", BROKEN)
def test_validate_reports_problems(case) -> None:
    kind, (b0, b1), inventories, named = BROKEN[case]
    problems = validate(Task("t", kind, (_goal(b0), _goal(b1)), inventories))
    for needle in named:
        assert any(needle in p for p in problems), (needle, problems)


# ------------------------------------------------------------------------ built-in sets
@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_builtin_set(task_type) -> None:
    tasks = builtin_tasks(task_type)
    assert len(tasks) == BUILTIN_SIZE == 24
    assert len({t.name for t in tasks}) == 24
    assert sum(t.source == "manual" for t in tasks) == 4
    for t in tasks:
        assert t.type == task_type
        assert validate(t, DEFAULT_GRID) == [], t.name
        if task_type == "goal_dependent":
            assert not (self_supported(t, 0) and self_supported(t, 1))
            assert not (self_sufficient(t, 0) and self_sufficient(t, 1))


def test_skill_dependent_tasks_reuse_the_independent_structures() -> None:
    for ind, skill in zip(
        builtin_tasks("independent"), builtin_tasks("skill_dependent"), strict=True
    ):
        assert ind.target == skill.target
        assert ind.inventories != skill.inventories


def test_data_files_are_current() -> None:
    assert stale_sets() == [], "run python -m tom_envs.games.coblock.make_tasks --write"


def test_task_json_round_trip() -> None:
    for t in builtin_tasks("goal_dependent"):
        assert Task.from_dict(t.to_dict()) == t


# --------------------------------------------------------------------------- generator
@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_generator(task_type) -> None:
    for seed in range(15):
        task = generate_task(task_type, np.random.default_rng(seed))
        assert task.type == task_type and validate(task) == []
        again = generate_task(task_type, np.random.default_rng(seed))
        assert again == task
    with pytest.raises(RuntimeError):
        generate_task("independent", np.random.default_rng(0), grid=(2, 2, 2), max_tries=5)


# ----------------------------------------------------------------------------- planner
def test_alg1_known_counts() -> None:
    # 4 red (only player_0), 2 blue (only player_1), 4 yellow (both): unique 4 vs 2, then the
    # mutual yellows go to the agent with fewer: p1, p1, then p0 (tie -> player_0), p1
    g0 = [(0, 0, 0, R), (0, 1, 0, R), (0, 2, 0, R), (0, 3, 0, R), (1, 0, 0, Y), (1, 1, 0, Y)]
    g1 = [(3, 0, 0, B), (3, 1, 0, B), (4, 0, 0, Y), (4, 1, 0, Y)]
    inv0 = (9, 0, 9, 0, 0, 0)
    inv1 = (0, 9, 9, 0, 0, 0)
    assert optimal_counts([g0, g1], [inv0, inv1]) == (5, 5)
    a0, a1 = optimal_assignment([g0, g1], [inv0, inv1])
    # each keeps its own goal's yellow blocks first: player_0 keeps its lower yellow, player_1
    # both of its own and player_0's upper one
    assert [b for b in a0 if b[3] == Y] == [(1, 0, 0, Y)]
    assert sorted(b for b in a1 if b[3] == Y) == [(1, 1, 0, Y), (4, 0, 0, Y), (4, 1, 0, Y)]
    assert set(a0) | set(a1) == set(g0) | set(g1) and not set(a0) & set(a1)


def test_alg1_respects_counts() -> None:
    g0 = [(0, 0, 0, R), (1, 0, 0, R), (2, 0, 0, R)]
    g1 = [(4, 0, 0, R)]
    # both hold red, but player_1 only one: the balance would give it two
    counts = optimal_counts([g0, g1], [(5, 0, 0, 0, 0, 0), (1, 0, 0, 0, 0, 0)])
    assert counts == (3, 1)
    assert optimal_assignment([g0, g1], [(1, 0, 0, 0, 0, 0), (1, 0, 0, 0, 0, 0)]) is None


def test_schedule_waits_for_support() -> None:
    pillars, top = S.arch(0, 0, 4, 4, "x", R, B)
    rounds = schedule((top.blocks, pillars.blocks))
    assert rounds is not None and len(rounds) == 8 + 1  # 8 pillar rounds, last top block
    assert rounds[0] == (None, pillars.blocks[0])  # the top agent waits first
    assert schedule((((0, 2, 0, R),), ())) is None  # a floating block never gets placed


@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_plans_complete_every_builtin_task_in_the_rules(task_type) -> None:
    from tom_envs.games.coblock.rules import ActionKind

    for task in builtin_tasks(task_type):
        p = plan([g.blocks for g in task.goals], task.inventories)
        assert p is not None
        game = CoBlockGame(CoBlockConfig(task=task))
        s = game.initial_state(np.random.default_rng(0))
        wait = int(ActionKind.WAIT)
        for b0, b1 in p.rounds:
            a0 = wait if b0 is None else place(game, b0[3], pos_of(b0))
            a1 = wait if b1 is None else place(game, b1[3], pos_of(b1))
            s = step(game, s, a0, a1).state
        assert s.outcome == "success", task.name
        assert s.round == p.makespan
        assert p.counts == optimal_counts([g.blocks for g in task.goals], task.inventories)
