"""The room games' exact best-response matrix (python -m tom_experiments.room_conventions)."""

from __future__ import annotations

import pytest

from tom_envs.references import best_response_planner
from tom_envs.registration import game_spec
from tom_experiments.room_conventions import best_responses, markov_members, matrix, render

#: CollabCapture's rule members (the learned ones are Markov too but slow to tabulate in a test).
RULES = ["greedy", "optimal", "lazy", "guard", "opener", "random"]


def test_markov_members_are_the_exact_ones() -> None:
    """Capture's learned members are Markov in the planner's state, Escape's are not."""
    assert markov_members("CollabCapture") == [*RULES, "zoo/ppo_s0", "zoo/ppo_s1"]
    assert markov_members("CollabEscape") == [
        "greedy",
        "optimal",
        "lazy",
        "far_first",
        "split",
        "random",
    ]


def test_capture_matrix_equals_the_planners_values() -> None:
    """Two known cells, each from a planner built apart: optimal's best response never captures
    with ``lazy`` (-30/31: it waits in room 1 for a chase that never comes) and lazy's own best
    response captures at turn 5 (1 - 5/31, its exact value); every diagonal entry is its column's
    best."""
    m = matrix("CollabCapture", RULES)
    config = game_spec("CollabCapture").load().make_bundle().game.config
    lazy = best_response_planner("CollabCapture", config, "lazy", 0)
    fixed = best_response_planner("CollabCapture", config, "optimal", 0)
    cell = fixed.outcome(against=lazy)
    assert m["optimal", "lazy"] == pytest.approx(
        cell["success"] - cell["expected_turns"] / 31, abs=1e-12
    )
    assert m["optimal", "lazy"] == pytest.approx(-30 / 31, abs=1e-9)
    assert m["lazy", "lazy"] == pytest.approx(lazy.value(), abs=1e-12)
    assert m["lazy", "lazy"] == pytest.approx(1 - 5 / 31, abs=1e-9)
    for y in RULES:
        assert m[y, y] >= max(m[x, y] for x in RULES) - 1e-12, y
    br = best_responses(m, RULES)
    assert (
        "optimal" not in br["lazy"] and "optimal" not in br["guard"] and br["random"] == ["random"]
    )


def test_render_bolds_every_focal_that_ties_the_column() -> None:
    m = {("a", "a"): 1.0, ("b", "a"): 1.0, ("a", "b"): 0.25, ("b", "b"): 0.5}
    assert best_responses(m, ["a", "b"]) == {"a": ["a", "b"], "b": ["b"]}
    text = render("CollabEscape", m, ["a", "b"], 2.0)
    assert (
        "| BR(a) | **1.0000** | 0.2500 |" in text and "| BR(b) | **1.0000** | **0.5000** |" in text
    )
    assert "escaped (probability within the turn limit)" in text and "2 s" in text
