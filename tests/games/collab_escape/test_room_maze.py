"""The shared room-maze helper: one-way passages, closed doors, shortest paths, text helpers."""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.games.room_maze import (
    RoomMaze,
    answer_segment,
    closed_set,
    english_list,
    parse_lettered,
    sample_outcome,
)

MAZE = RoomMaze.from_dict({1: [2], 2: [1, 3], 3: [4], 4: [1, 3]})  # 2 -> 3 -> 4 -> 1 loop + back


def test_passages_and_one_way() -> None:
    assert MAZE.rooms == (1, 2, 3, 4)
    assert MAZE.one_way() == ((2, 3), (4, 1))
    assert MAZE.symmetric().one_way() == ()
    assert MAZE.symmetric().out(3) == (4, 2)  # a missing way back is appended
    assert MAZE.neighbors(4, closed_set([(3, 4)])) == (1,)


def test_shortest_paths_respect_direction_and_doors() -> None:
    assert MAZE.distance(1, 4) == 3 and MAZE.distance(4, 1) == 1
    assert MAZE.step_toward(1, 4) == 2 and MAZE.step_toward(4, 4) is None
    assert MAZE.step_toward(1, 4, closed_set([(2, 3)])) is None
    assert MAZE.distances_to(3) == {3: 0, 2: 1, 4: 1, 1: 2}


def test_bad_mazes() -> None:
    with pytest.raises(ValueError):
        RoomMaze.from_dict({1: [2]})
    with pytest.raises(ValueError):
        RoomMaze.from_dict({1: [1]})
    with pytest.raises(ValueError):
        MAZE.out(9)


def test_text_helpers() -> None:
    assert english_list([2]) == "2" and english_list([2, 6, 9]) == "2, 6 and 9"
    assert answer_segment("Analysis: x. Action: B") == "B"
    assert answer_segment("<action>C</action> Action: B") == "C"
    options = {0: "Stay", 5: "Move to room 5"}
    assert parse_lettered("B", options).action == 5
    assert parse_lettered(None, options).action is None
    assert parse_lettered("A", {}).action is None


def test_sample_outcome() -> None:
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    assert sample_outcome([(1.0, "x")], rng) == "x" and rng.bit_generator.state == state
    draws = {sample_outcome([(0.5, "a"), (0.5, "b")], rng) for _ in range(50)}
    assert draws == {"a", "b"}
    assert {sample_outcome([(0.9, "a"), (0.1, "b")], rng) for _ in range(200)} == {"a", "b"}
