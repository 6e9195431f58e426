"""CollabCapture rules as coded: legal moves, doors and their timing, the thief, capture, limits."""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.core.game import GameTags, IllegalActionError
from tom_envs.games.collab_capture.rules import (
    MAZE,
    SCENARIOS,
    Action,
    CaptureConfig,
    CaptureGame,
    CaptureState,
    thief_plan,
)

S, P = int(Action.STAY), int(Action.PRESS)
RNG = np.random.default_rng(0)


def state(alice: int, bob: int, thief: int, doors=(True, True), turn: int = 0) -> CaptureState:
    return CaptureState(rooms=(alice, bob), thief=thief, doors=doors, turn=turn)


def step(game: CaptureGame, s: CaptureState, a: int, b: int):
    return game.step(s, {0: a, 1: b}, RNG)


def test_the_coded_map() -> None:
    assert dict(MAZE.adjacency) == {
        1: (2, 6),
        2: (1, 3),
        3: (2, 4),
        4: (3, 5),
        5: (4, 6, 7),
        6: (5, 9, 1),
        7: (5, 8),
        8: (7,),
        9: (6,),
    }
    assert MAZE.one_way() == ()


@pytest.mark.parametrize(
    ("scenario", "doors"),
    [
        ("both_open", (True, True)),
        ("door12_closed", (False, True)),
        ("door34_closed", (True, False)),
        ("both_closed", (False, False)),
    ],
)
def test_scenarios_start_as_coded(scenario, doors) -> None:
    game = CaptureGame(CaptureConfig(scenario=scenario))
    assert game.initial_state(RNG) == CaptureState(rooms=(1, 6), thief=2, doors=doors)
    assert set(SCENARIOS) == {
        "both_open", "door12_closed", "door34_closed", "both_closed", "pincer", "enable", "disable"
    }
    assert CaptureConfig().scenario == "door12_closed"  # the coded LLM benchmark


@pytest.mark.parametrize(
    ("room", "doors", "legal"),
    [
        (1, (True, True), (S, 2, 6)),
        (1, (False, True), (S, 6)),  # door 1-2 closed
        (2, (False, True), (S, 3)),
        (3, (True, False), (S, 2)),  # door 3-4 closed
        (4, (True, False), (S, 5)),
        (5, (True, True), (S, 4, 6, 7)),
        (6, (True, True), (S, 5, 9, 1)),  # listed order, not sorted
        (8, (True, True), (S, 7, P)),  # button room
        (9, (False, False), (S, 6, P)),
    ],
)
def test_legal_actions(room, doors, legal) -> None:
    game = CaptureGame()
    assert game.legal_actions(state(room, 5, 7 if room != 7 else 3, doors), 0) == legal


@pytest.mark.parametrize(
    ("thief", "doors", "planned", "expected"),
    [
        (5, (True, True), (4, 6), 7),  # 4 and 6 are taken; 7 is 1 away from 6
        (2, (True, True), (2, 6), 1),  # tie between 1 and 3 (both 1 away): first listed wins
        (2, (False, True), (1, 6), 3),  # door 1-2 closed: 3 is the only way out
        (3, (True, False), (5, 5), 2),  # door 3-4 closed: back to 2 even toward nobody
        (8, (True, True), (9, 9), 7),  # dead end: the thief never stays while he can move
        (6, (True, True), (1, 1), 9),  # 9 is 8 away from room 1 by number (as coded)
        (6, (True, True), (5, 1), 9),
    ],
)
def test_thief_as_coded(thief, doors, planned, expected) -> None:
    cfg = CaptureConfig()
    assert thief_plan(cfg, state(1, 6, thief, doors), planned) == expected


def test_thief_with_graph_distance() -> None:
    # from 6 with agents about to be in 1: by room number 9 is furthest (|9-1| = 8); by graph
    # distance 5 and 9 are both 2 moves from room 1 -> first listed (5)
    cfg = CaptureConfig(thief_distance="graph")
    assert thief_plan(cfg, state(1, 6, 6), (1, 1)) == 5
    assert thief_plan(CaptureConfig(), state(1, 6, 6), (1, 1)) == 9


def test_press_toggles_at_the_end_of_the_turn() -> None:
    game = CaptureGame()
    s = state(9, 1, 4, doors=(False, True))
    assert 2 not in game.legal_actions(s, 1)  # Bob cannot cross the closed door this turn
    r = step(game, s, P, S)
    assert r.state.doors == (True, True)
    assert 2 in game.legal_actions(r.state, 1)  # ... but can the next turn
    # closing: Bob crosses 1 -> 2 in the same turn as Alice closes the door (moves were checked
    # against the doors at the start of the turn); the door is closed afterwards
    r = step(game, state(9, 1, 4, doors=(True, True)), P, 2)
    assert r.state.rooms == (9, 2) and r.state.doors == (False, True)
    assert r.events and "closed" in r.events[0]


def test_two_presses_of_one_button_cancel() -> None:
    game = CaptureGame()
    r = step(game, state(9, 9, 4, doors=(False, True)), P, P)
    assert r.state.doors == (False, True)


def test_the_thief_plans_with_the_doors_of_the_start_of_the_turn() -> None:
    # thief in 2 with door 1-2 open, Alice about to be in 3: he flees to 1 through the door Bob
    # closes this very turn
    game = CaptureGame()
    r = step(game, state(4, 9, 2, doors=(True, True)), 3, P)
    assert r.state.thief == 1 and r.state.doors == (False, True)
    assert r.state.rooms == (3, 9) and not r.state.captured


def test_capture_same_room() -> None:
    game = CaptureGame()
    # thief in 8 must go to 7, where Alice moves: caught
    r = step(game, state(5, 1, 8), 7, S)
    assert r.state.captured and r.state.thief == 7 and r.rewards == (1.0, 1.0)
    assert "captured" in r.events
    assert game.is_terminal(r.state) and game.legal_actions(r.state, 0) == ()


def test_capture_by_swap_and_without_it() -> None:
    # Alice 1 -> 2 while the thief, tied between 1 and 3, takes 1: they swap
    s = state(1, 6, 2)
    r = step(CaptureGame(), s, 2, S)
    assert r.state.rooms == (2, 6) and r.state.thief == 1
    assert r.state.captured and r.events == ("captured by swap",)
    r = step(CaptureGame(CaptureConfig(swap_capture=False)), s, 2, S)
    assert not r.state.captured and r.rewards == (0.0, 0.0)


def test_turn_limit() -> None:
    game = CaptureGame(CaptureConfig(max_turns=2))
    s = state(1, 6, 4, turn=1)
    r = step(game, s, S, S)
    assert r.state.turn == 2 and not r.state.captured
    assert game.is_terminal(r.state) and game.current_players(r.state) == ()
    assert game.max_steps == 2


def test_illegal_actions_raise_and_change_nothing() -> None:
    game = CaptureGame()
    s = game.initial_state(RNG)
    for bad in ({0: 2, 1: S}, {0: P, 1: S}, {0: 11, 1: S}, {0: S}, {0: S, 1: S, 2: S}):
        with pytest.raises(IllegalActionError):
            game.step(s, bad, RNG)
    assert s == game.initial_state(RNG)


def test_config_validation() -> None:
    for bad in (
        {"scenario": "nope"},
        {"doors_open": (True,)},
        {"starts": (1, 2)},
        {"starts": (1, 2, 10)},
        {"max_turns": 0},
        {"thief_distance": "manhattan"},
    ):
        with pytest.raises(ValueError):
            CaptureConfig(**bad)
    cfg = CaptureConfig(doors_open=(0, 1), starts=(9, 8, 5))
    assert cfg.start_doors == (False, True) and cfg.start_rooms == (9, 8, 5)


def test_tags() -> None:
    assert CaptureGame().tags == GameTags("simultaneous", "deterministic", "perfect", "identical", False)
