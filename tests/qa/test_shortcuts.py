"""The named shortcut answerers of CoordinationQA (tom_envs/qa/shortcuts.py): each catches the
give-away it is built for. They explain leaks; the gate is the learned adversary
(tests/qa/test_qa_validity.py, tom_envs/validity.py)."""

from __future__ import annotations

import pytest

from tom_envs.qa.items import QAItem, Scenario
from tom_envs.qa.shortcuts import shortcut_accuracy, shortcut_table, violations

SCEN = Scenario("PrisonersDilemma", {}, 0, ())
ROOMS = ("Room 1", "Room 2", "Room 3", "Room 4")


def item(k: int, answer: int, context: str = "Nothing to see.", options=ROOMS) -> QAItem:
    return QAItem(f"t/{k}", "PrisonersDilemma", "ToM", "where", context,
                  "Where will your partner go next?", tuple(options), (answer,), "rules", SCEN)  # fmt: skip


def test_position_catches_a_fixed_letter() -> None:
    acc = shortcut_accuracy([item(k, 0) for k in range(20)])
    assert acc["chance"] == pytest.approx(0.25) and acc["position"] == pytest.approx(1.0)


def test_majority_catches_a_fixed_answer_text_wherever_it_stands() -> None:
    items = [item(k, -k % 4, options=ROOMS[k % 4 :] + ROOMS[: k % 4]) for k in range(20)]
    acc = shortcut_accuracy(items)  # always the same text, at every letter in turn
    assert acc["position"] == pytest.approx(0.25) and acc["majority"] == pytest.approx(1.0)


def test_length_and_lookup_catch_their_give_aways() -> None:
    opts = ("go", "stay", "a much longer and obviously right answer", "wait")
    assert shortcut_accuracy([item(k, 2, options=opts) for k in range(20)])["length"] == 1.0
    told = [item(k, k % 4, context=f"Your partner will go next to {ROOMS[k % 4]}.")
            for k in range(20)]  # fmt: skip
    assert shortcut_accuracy(told)["lookup"] > 0.9


def test_a_balanced_group_passes_and_a_leaky_one_is_named() -> None:
    fair = [item(k, k % 4, options=ROOMS) for k in range(20)]  # positions and texts even
    assert not violations(shortcut_table(fair))
    leaky = violations(shortcut_table([item(k, 0) for k in range(20)]))
    assert leaky and all(v.startswith("PrisonersDilemma ToM") for v in leaky)
