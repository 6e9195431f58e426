"""CollabEscape rules as coded: maps, fixing, the killer's decisions, catch-before-escape, limits."""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.core.game import GameTags, IllegalActionError
from tom_envs.games.collab_escape.rules import (
    CODED_MAZE,
    MEM_BOTH_ALICE,
    MEM_BOTH_BOB,
    MEM_NONE,
    MEM_SAW_ALICE,
    MEM_SAW_BOB,
    OUTCOME_CAUGHT,
    OUTCOME_ESCAPED,
    OUTCOME_RUNNING,
    PROMPT_MAZE,
    Action,
    EscapeConfig,
    EscapeGame,
    EscapeState,
    killer_decision,
)

W, F = int(Action.WAIT), int(Action.FIX)


def state(alice, bob, killer, fixes=(0, 0), memory=MEM_NONE, turn=0) -> EscapeState:
    return EscapeState(rooms=(alice, bob), killer=killer, fixes=fixes, memory=memory, turn=turn)


def outcomes(game, s, a, b):
    return game.outcomes(s, {0: a, 1: b})


def only(game, s, a, b) -> EscapeState:
    ((p, nxt),) = outcomes(game, s, a, b)
    assert p == 1.0
    return nxt


def players_part(game, s, a, b) -> EscapeState:
    """The next state with the (roaming) killer put back: the part the players decide."""
    nexts = [nxt for _, nxt in outcomes(game, s, a, b)]
    parts = {(n.rooms, n.fixes, n.fixing, n.memory, n.turn) for n in nexts}
    assert len(parts) == 1, parts
    assert all(n.outcome == OUTCOME_RUNNING for n in nexts)
    rooms, fixes, fixing, memory, turn = parts.pop()
    return EscapeState(rooms, s.killer, fixes, memory, fixing, turn)


def test_maps_and_their_one_way_passages() -> None:
    assert dict(CODED_MAZE.adjacency) == {
        1: (2, 10),
        2: (1, 3),
        3: (2, 4, 8),
        4: (3, 5),
        5: (4, 6),
        6: (5, 7),
        7: (3, 6),
        8: (3, 7, 9),
        9: (8, 10),
        10: (1, 9),
    }
    assert CODED_MAZE.one_way() == ((7, 3), (8, 7))
    assert PROMPT_MAZE.one_way() == ()
    assert PROMPT_MAZE.out(7) == (6, 8)  # "room 7 is connected to room 6 and 8"
    coded, prompt = EscapeGame(), EscapeGame(EscapeConfig(map="prompt"))
    s = state(7, 3, 10)
    assert coded.legal_actions(s, 0) == (3, 6, W) and prompt.legal_actions(s, 0) == (6, 8, W)
    assert 7 not in coded.legal_actions(s, 1)  # 3 -> 7 does not exist in the code


def test_start_and_legal_actions() -> None:
    game = EscapeGame()
    s = game.initial_state(np.random.default_rng(0))
    assert s == EscapeState(rooms=(1, 2), killer=6)
    assert game.legal_actions(s, 0) == (2, 10, F, W)  # listed moves, fix, wait (as coded)
    assert game.legal_actions(s, 1) == (1, 3, W)
    assert EscapeGame(EscapeConfig(scenario="split")).initial_state(None) == EscapeState(
        rooms=(1, 5), killer=6
    )


def test_fixing_needs_consecutive_turns() -> None:
    game = EscapeGame()
    s = state(1, 3, 5)  # the killer in 5 sees 4 and 6: nobody; he roams (kept in 5 here)
    s1 = players_part(game, s, F, W)
    assert s1.fixes == (1, 0) and s1.fixing == (True, False)
    s2 = players_part(game, s1, W, W)  # a pause loses the progress
    assert s2.fixes == (0, 0) and s2.fixing == (False, False)
    s3 = players_part(game, s1, F, W)
    assert s3.fixes == (2, 0) and game.repaired(s3, 0)
    assert F not in game.legal_actions(s3, 0)  # nothing left to fix here
    s4 = players_part(game, s3, W, W)
    assert s4.fixes == (2, 0)  # a repaired generator stays repaired


def test_both_fixing_in_one_turn_repairs_at_once() -> None:
    game = EscapeGame()
    s = state(6, 6, 1, fixes=(2, 0))  # the killer in 1 sees 2 and 10: nobody
    nxt = players_part(game, s, F, F)
    assert nxt.fixes == (2, 2) and game.gate_open(nxt) and nxt.fixing == (True, True)


def test_moving_away_resets_a_partial_fix() -> None:
    game = EscapeGame()
    s = players_part(game, state(1, 3, 5), F, W)
    s = players_part(game, s, 2, W)  # Alice leaves room 1
    assert s.fixes == (0, 0)


@pytest.mark.parametrize(
    ("rooms", "killer", "memory", "target", "new_memory"),
    [
        ((1, 2), 6, MEM_NONE, None, MEM_NONE),  # 6 sees 5 and 7: nobody
        ((5, 2), 6, MEM_NONE, 0, MEM_SAW_ALICE),
        ((1, 7), 6, MEM_NONE, 1, MEM_SAW_BOB),
        ((5, 7), 6, MEM_NONE, 0, MEM_BOTH_ALICE),  # both newly seen: Alice
        ((5, 7), 6, MEM_SAW_ALICE, 1, MEM_BOTH_BOB),  # Bob newly seen: switch to Bob
        ((5, 7), 6, MEM_SAW_BOB, 0, MEM_BOTH_ALICE),  # Alice newly seen: switch to Alice
        ((5, 7), 6, MEM_BOTH_BOB, 1, MEM_BOTH_BOB),  # both seen before: keep the target
        ((5, 7), 6, MEM_BOTH_ALICE, 0, MEM_BOTH_ALICE),
        ((6, 6), 7, MEM_NONE, 0, MEM_BOTH_ALICE),  # same room in sight
        ((3, 1), 7, MEM_NONE, 0, MEM_SAW_ALICE),  # 7 -> 3 is a passage ...
        ((7, 1), 3, MEM_NONE, None, MEM_NONE),  # ... 3 -> 7 is not: the killer in 3 cannot see 7
    ],
)
def test_killer_decisions_as_coded(rooms, killer, memory, target, new_memory) -> None:
    s = state(*rooms, killer, memory=memory)
    assert killer_decision(CODED_MAZE, s) == (target, new_memory)


def test_a_roaming_killer_moves_uniformly_and_never_stays() -> None:
    game = EscapeGame()
    outs = outcomes(game, state(1, 2, 8), W, W)  # killer in 8 sees 3, 7, 9: nobody
    assert [(p, s.killer) for p, s in outs] == [(1 / 3, 3), (1 / 3, 7), (1 / 3, 9)]
    rng = np.random.default_rng(0)
    seen = {game.step(state(1, 2, 8), {0: W, 1: W}, rng).state.killer for _ in range(60)}
    assert seen == {3, 7, 9}


def test_a_chased_player_who_moves_away_survives() -> None:
    game = EscapeGame()
    s = state(5, 1, 6)  # the killer sees Alice in 5 and will move there
    assert only(game, s, 4, W).outcome == OUTCOME_RUNNING  # he lands in 5, she is in 4
    caught = only(game, s, W, W)
    assert caught.outcome == OUTCOME_CAUGHT and caught.killer == 5
    assert game.is_terminal(caught) and game.failed(caught)
    # no swap rule: Alice walks into 6 as the killer walks into 5 -> they cross, nobody caught
    assert only(game, s, 6, W).outcome == OUTCOME_RUNNING


def test_caught_is_checked_before_escape() -> None:
    game = EscapeGame()
    # Bob completes generator 6 while Alice waits at the gate; the killer in 5 lands on Bob
    s = state(7, 6, 5, fixes=(2, 1))
    nxt = only(game, s, W, F)
    assert game.gate_open(nxt) and nxt.outcome == OUTCOME_CAUGHT
    r = game.step(s, {0: W, 1: F}, np.random.default_rng(0))
    assert r.rewards == (0.0, 0.0) and "caught" in r.events


def test_waiting_at_the_gate_escapes_when_it_opens() -> None:
    game = EscapeGame()
    s = state(7, 6, 9, fixes=(2, 1))  # killer in 9 sees 8 and 10: nobody
    r = game.step(s, {0: W, 1: F}, np.random.default_rng(0))
    assert r.state.outcome == OUTCOME_ESCAPED and r.rewards == (1.0, 1.0)
    assert "the exit gate is open" in r.events and "escaped" in r.events
    assert game.succeeded(r.state) and game.legal_actions(r.state, 0) == ()


def test_entering_the_gate_room_escapes_only_if_open() -> None:
    game = EscapeGame()
    assert players_part(game, state(6, 2, 9), 7, W).rooms == (7, 2)  # closed: the game goes on
    outs = outcomes(game, state(6, 2, 9, fixes=(2, 2)), 7, W)  # killer in 9 roams to 8 or 10
    assert [s.outcome for _, s in outs] == [OUTCOME_ESCAPED, OUTCOME_ESCAPED]


def test_turn_limit_and_no_limit() -> None:
    game = EscapeGame(EscapeConfig(max_turns=3))
    assert game.is_terminal(state(1, 2, 9, turn=3)) and game.max_steps == 3
    free = EscapeGame(EscapeConfig(max_turns=None))
    assert free.max_steps is None and not free.is_terminal(state(1, 2, 9, turn=10_000))


def test_illegal_actions_raise() -> None:
    game = EscapeGame()
    s = game.initial_state(None)
    for bad in ({0: 3, 1: W}, {0: W, 1: F}, {0: 12, 1: W}, {1: W}):
        with pytest.raises(IllegalActionError):
            game.step(s, bad, np.random.default_rng(0))


def test_config_validation() -> None:
    for bad in (
        {"scenario": "x"},
        {"map": "x"},
        {"starts": (1, 2)},
        {"starts": (1, 2, 2)},
        {"starts": (1, 2, 11)},
        {"max_turns": 0},
        {"fixes_needed": 0},
    ):
        with pytest.raises(ValueError):
            EscapeConfig(**bad)


def test_tags() -> None:
    assert EscapeGame().tags == GameTags("simultaneous", "stochastic", "perfect", "identical", False)


def test_consecutive_fixes_by_different_players_count() -> None:
    game = EscapeGame()
    s = players_part(game, state(1, 2, 5), F, 1)  # Alice fixes, Bob walks in
    assert s.fixes == (1, 0) and s.rooms == (1, 1)
    s = players_part(game, s, 2, F)  # Alice leaves, Bob fixes: the progress is kept
    assert s.fixes == (2, 0) and game.repaired(s, 0)
