"""CoBlock rules: the action catalogue, the gravity rule, simultaneous rounds, chat, the end.

Table-driven where possible; every case runs on the tiny task of ``conftest.py`` (grid 4×3×2):
player_0 needs a red column at x=0, player_1 a blue column at x=2 and a yellow block hanging at
(3, 1, 0); player_0 holds red 3 and yellow 1, player_1 blue 3.
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest

from tom_envs.core.game import IllegalActionError
from tom_envs.games.coblock.rules import (
    Action,
    ActionKind,
    CoBlockConfig,
    CoBlockGame,
    CoBlockState,
    Outcome,
    decode_action,
    encode_action,
    task_from_json,
    task_to_json,
)
from tom_envs.games.coblock.structures import supported

from .conftest import BLUE, END, RED, SEND, WAIT, YELLOW, brk, last, place, step


def test_known_sizes() -> None:
    cfg = CoBlockConfig()
    assert cfg.grid == (6, 5, 6) and cfg.cells == 180
    assert cfg.num_actions == 3 + 7 * 180 == 1263
    game = CoBlockGame(cfg)
    assert game.num_players == 2 and game.max_steps == 60
    tags = game.tags
    assert (tags.dynamics, tags.chance, tags.information, tags.utility) == (
        "simultaneous",
        "stochastic",
        "imperfect",
        "identical",
    )
    assert tags.communication
    assert CoBlockGame(CoBlockConfig(task_index=0, task_type="independent")).tags.chance == (
        "deterministic"
    )


def test_action_catalogue_round_trips(task) -> None:
    cfg = CoBlockConfig(grid=(4, 3, 2), task=task)
    seen = set()
    for a in range(cfg.num_actions):
        act = decode_action(cfg, a)
        assert encode_action(cfg, act) == a
        seen.add((act.kind, act.color, act.pos))
    assert len(seen) == cfg.num_actions
    assert decode_action(cfg, 0).kind == ActionKind.WAIT
    assert decode_action(cfg, 1).kind == ActionKind.SEND_MESSAGE
    assert decode_action(cfg, 2).kind == ActionKind.END_TASK
    assert decode_action(cfg, 3) == Action(ActionKind.PLACE, 0, (0, 0, 0))
    assert cfg.cells == 24
    assert decode_action(cfg, 3 + 2 * 24 + 7) == Action(ActionKind.PLACE, 2, (1, 0, 1))
    assert decode_action(cfg, 3 + 6 * 24 + 23) == Action(ActionKind.BREAK, -1, (3, 2, 1))
    for bad in (-1, cfg.num_actions):
        with pytest.raises(ValueError):
            decode_action(cfg, bad)
    with pytest.raises(ValueError):
        encode_action(cfg, Action(ActionKind.PLACE, 0, (4, 0, 0)))


def test_initial_legal_actions(make_game) -> None:
    game, s = make_game()
    ground = [(x, 0, z) for x in range(4) for z in range(2)]
    expected0 = {WAIT, SEND, END} | {place(game, c, p) for c in (RED, YELLOW) for p in ground}
    expected1 = {WAIT, SEND, END} | {place(game, BLUE, p) for p in ground}
    assert set(game.legal_actions(s, 0)) == expected0
    assert set(game.legal_actions(s, 1)) == expected1
    assert list(game.legal_actions(s, 0)) == sorted(expected0)
    assert game.legal_actions(s, 2) == ()


# (description, player_0's action, player_1's action) -> expected results, on a fresh game
# after player_0 has placed red (0,0,0) and player_1 blue (2,0,0) in round 1.
def _built(make_game):
    game, s = make_game()
    s = step(game, s, place(game, RED, (0, 0, 0)), place(game, BLUE, (2, 0, 0))).state
    return game, s


LEGALITY = [
    # what, player, action builder, legal?
    ("stack on own block", 0, lambda g: place(g, RED, (0, 1, 0)), True),
    ("hang sideways from a block", 1, lambda g: place(g, BLUE, (3, 0, 0)), True),
    ("next to the partner's block, in the air", 0, lambda g: place(g, RED, (2, 1, 0)), True),
    ("float in the air", 0, lambda g: place(g, RED, (1, 2, 1)), False),
    ("diagonal only (edge contact)", 0, lambda g: place(g, RED, (1, 1, 1)), False),
    ("occupied cell", 0, lambda g: place(g, RED, (2, 0, 0)), False),
    ("colour not held", 0, lambda g: place(g, BLUE, (1, 0, 0)), False),
    ("colour of the partner", 1, lambda g: place(g, RED, (1, 0, 0)), False),
    ("break any block", 1, lambda g: brk(g, (0, 0, 0)), True),
    ("break empty cell", 0, lambda g: brk(g, (1, 0, 0)), False),
]


@pytest.mark.parametrize(
    ("what", "player", "build", "legal"), LEGALITY, ids=[c[0] for c in LEGALITY]
)
def test_legality(make_game, what, player, build, legal) -> None:
    game, s = _built(make_game)
    assert (build(game) in game.legal_actions(s, player)) is legal, what
    if not legal:
        joint = {player: build(game), 1 - player: WAIT}
        with pytest.raises(IllegalActionError):
            game.step(s, joint, np.random.default_rng(0))


def test_place_and_break_effects(make_game) -> None:
    game, s = make_game()
    r = step(game, s, place(game, RED, (0, 0, 0)), WAIT)
    t = r.state
    assert t.world == ((0, 0, 0, RED),)
    assert t.inventories[0] == (2, 0, 1, 0, 0, 0) and t.inventories[1] == s.inventories[1]
    assert t.round == 1 and t.outcome == Outcome.PLAYING
    assert r.rewards == (0.0, 0.0)
    u = step(game, t, WAIT, brk(game, (0, 0, 0))).state
    assert u.world == ()
    assert u.inventories == t.inventories  # a broken block is gone for good
    assert last(u, 1).ok and last(u, 1).text == "break_block(pos=(0, 0, 0))"


def test_same_cell_race_alternates_by_round(make_game) -> None:
    game, s = make_game()
    # round 0: player_0's action is applied first; round 1: player_1's
    r = step(game, s, place(game, RED, (1, 0, 1)), place(game, BLUE, (1, 0, 1))).state
    assert r.cells[(1, 0, 1)] == RED
    assert [(x.player, x.ok) for x in r.records()] == [(0, True), (1, False)]
    assert last(r, 1).message == "Block exists"
    r2 = step(game, r, place(game, RED, (3, 0, 1)), place(game, BLUE, (3, 0, 1))).state
    assert r2.cells[(3, 0, 1)] == BLUE
    assert [(x.player, x.ok) for x in r2.records()[2:]] == [(1, True), (0, False)]
    assert r2.inventories == ((2, 0, 1, 0, 0, 0), (0, 2, 0, 0, 0, 0))


def test_support_broken_in_the_same_round(make_game) -> None:
    game, s = _built(make_game)  # round 1: player_1 is applied first
    r = step(game, s, place(game, RED, (0, 1, 0)), brk(game, (0, 0, 0))).state
    assert last(r, 1).ok and not last(r, 0).ok
    assert last(r, 0).message == (
        "Block position (0, 1, 0) is not either on the ground or adjacent to any existing block."
    )
    assert (0, 1, 0) not in r.cells and r.inventories[0] == s.inventories[0]


def test_double_break(make_game) -> None:
    game, s = _built(make_game)
    r = step(game, s, brk(game, (2, 0, 0)), brk(game, (2, 0, 0))).state
    assert [x.ok for x in r.records()[-2:]] == [True, False]
    assert r.records()[-1].message == "No block at (2, 0, 0) to break."


def test_messages(make_game) -> None:
    game, s = make_game()
    r = step(game, s, SEND, SEND, {0: "hello", 1: "  "}).state
    assert r.dialogue == ((0, 0, "hello"),)
    recs = {x.player: x for x in r.records()}
    assert recs[0].ok and recs[0].text == 'send_message(message="hello")'
    assert not recs[1].ok and recs[1].message == "No message text: nothing was sent."
    r2 = step(game, r, SEND, WAIT).state  # send without any text
    assert r2.dialogue == r.dialogue and not last(r2, 0).ok
    r3 = step(game, r2, place(game, RED, (0, 0, 0)), WAIT, {0: "I place red"}).state
    assert r3.dialogue == r.dialogue, "text with a non-send action is not delivered"
    assert last(r3, 0).ok and "not sent" in last(r3, 0).message
    chatty, t = make_game(chat_with_actions=True)
    t = step(chatty, t, place(chatty, RED, (0, 0, 0)), WAIT, {0: "I place red"}).state
    assert t.dialogue == ((0, 0, "I place red"),)
    with pytest.raises(IllegalActionError):  # messages must be text within the limit
        step(game, s, SEND, WAIT, {0: "x" * (game.max_message_length + 1)})


def test_end_rules(make_game) -> None:
    game, s = make_game()
    r = step(game, s, END, WAIT)
    assert r.state.outcome == Outcome.ENDED and game.is_terminal(r.state)
    assert r.rewards == (0.0, 0.0) and game.legal_actions(r.state, 0) == ()
    game2, t = make_game(end_rule="all")
    t = step(game2, t, END, WAIT).state
    assert t.outcome == Outcome.PLAYING and t.ended == (True, False)
    assert game2.legal_actions(t, 0) == (WAIT,)
    with pytest.raises(IllegalActionError):
        step(game2, t, SEND, WAIT, {0: "hi"})
    t = step(game2, t, WAIT, END).state
    assert t.outcome == Outcome.ENDED


def _solve(game, s):
    """player_0 builds red (0,0,0),(0,1,0); player_1 blue (2,0,0),(2,1,0); yellow needs p0."""
    plan = [
        (place(game, RED, (0, 0, 0)), place(game, BLUE, (2, 0, 0))),
        (place(game, RED, (0, 1, 0)), place(game, BLUE, (2, 1, 0))),
        (place(game, YELLOW, (3, 1, 0)), place(game, BLUE, (3, 0, 0))),  # an extra block too
    ]
    results = []
    for a0, a1 in plan:
        r = step(game, s, a0, a1)
        results.append(r)
        s = r.state
    return results


def test_success_sparse_and_progress(make_game) -> None:
    game, s = make_game()
    results = _solve(game, s)
    end = results[-1].state
    assert end.outcome == Outcome.SUCCESS and end.matched() == 5
    assert (3, 0, 0) in end.cells, "extra blocks do not prevent success"
    assert [r.rewards for r in results] == [(0.0, 0.0), (0.0, 0.0), (1.0, 1.0)]
    assert "episode:success" in results[-1].events
    game_p, s_p = make_game(reward="progress")
    rewards = [r.rewards[0] for r in _solve(game_p, s_p)]
    assert rewards == pytest.approx([0.4, 0.4, 0.2]) and sum(rewards) == pytest.approx(1.0)
    assert game_p.reward_range == (-1.0, 1.0) and game.reward_range == (0.0, 1.0)


def test_success_beats_end_task_in_the_same_round(make_game) -> None:
    game, s = make_game()
    s = step(game, s, place(game, RED, (0, 0, 0)), place(game, BLUE, (2, 0, 0))).state
    s = step(game, s, place(game, RED, (0, 1, 0)), place(game, BLUE, (2, 1, 0))).state
    r = step(game, s, place(game, YELLOW, (3, 1, 0)), END)
    assert r.state.outcome == Outcome.SUCCESS and r.rewards == (1.0, 1.0)


def test_timeout(make_game) -> None:
    game, s = make_game(max_rounds=3)
    for _ in range(3):
        assert not game.is_terminal(s)
        s = step(game, s, WAIT, WAIT).state
    assert s.outcome == Outcome.TIMEOUT and game.current_players(s) == ()
    with pytest.raises(IllegalActionError):
        step(game, s, WAIT, WAIT)


def test_state_values(make_game) -> None:
    game, s = make_game()
    frozen = copy.deepcopy(s)
    r = step(game, s, place(game, RED, (0, 0, 0)), SEND, {1: "hi"}).state
    assert s == frozen and s.world == ()  # apply never mutates
    twin = CoBlockState(r.task_json, r.round, r.world, r.inventories, r.dialogue, r.history)
    assert twin == r and hash(twin) == hash(r)
    assert task_from_json(task_to_json(r.task)) == r.task
    # plain data only (cheap to hash, compare and serialise)
    assert {type(getattr(r, f.name)) for f in dataclasses.fields(r)} <= {str, int, tuple}


def test_gravity_helper() -> None:
    occupied = {(1, 0, 1)}
    assert supported((5, 0, 5), occupied)
    assert supported((1, 1, 1), occupied) and supported((2, 0, 1), occupied)
    assert not supported((2, 1, 1), occupied)
    assert not supported((1, 2, 1), occupied)


def test_task_draw_from_seed() -> None:
    game = CoBlockGame(CoBlockConfig())
    names = {game.initial_state(np.random.default_rng(s)).task.name for s in range(40)}
    assert len(names) > 20
    a = CoBlockGame(CoBlockConfig()).initial_state(np.random.default_rng(5))
    b = CoBlockGame(CoBlockConfig()).initial_state(np.random.default_rng(5))
    assert a == b
    fixed = CoBlockGame(CoBlockConfig(task_type="goal_dependent", task_index=3))
    assert fixed.initial_state(np.random.default_rng(1)).task.name == "goal_dependent_03_m"
    gen = CoBlockGame(CoBlockConfig(task_type="skill_dependent", generated=True))
    t1 = gen.initial_state(np.random.default_rng(9)).task
    assert t1.type == "skill_dependent" and t1 == gen.initial_state(np.random.default_rng(9)).task


@pytest.mark.parametrize(
    "kwargs",
    [
        {"task_type": "nope"},
        {"max_rounds": 0},
        {"end_rule": "any"},
        {"reward": "dense"},
        {"text_format": "html"},
        {"task_index": 24, "task_type": "independent"},
        {"grid": (3, 3, 3)},
        {"history_window": -1},
    ],
)
def test_config_validation(kwargs) -> None:
    with pytest.raises(ValueError):
        CoBlockConfig(**kwargs)
