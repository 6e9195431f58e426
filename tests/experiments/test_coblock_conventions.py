"""The CoBlock best-response matrix module (python -m tom_experiments.coblock_conventions)."""

from __future__ import annotations

import pytest

from tom_experiments.coblock_conventions import best_responses, matrix, render


def test_best_responses_take_the_columns_best_first_declared_on_ties() -> None:
    members = ["a", "b"]
    m = {("a", "a"): 1.0, ("b", "a"): 0.0, ("a", "b"): 0.5, ("b", "b"): 0.5}
    assert best_responses(m, members) == {"a": "a", "b": "a"}
    text = render(m, members, range(10000, 10002), 1.0)
    assert "| a | **1.000** | **0.500** |" in text and "| b | 0.000 | 0.500 |" in text
    assert "selection seeds 10000..10001" in text and "8 episodes" in text


def test_matrix_on_a_selection_seed_separates_the_conventions() -> None:
    members = ["cooperative", "mirror"]
    m = matrix(members, [10001])
    assert best_responses(m, members) == {"cooperative": "cooperative", "mirror": "mirror"}
    assert m["mirror", "cooperative"] == m["cooperative", "mirror"] == pytest.approx(-60 / 61)
