"""Probe free-text scoring, the shortcut baselines and the 95% interval formula (known values)."""

from __future__ import annotations

import math

import pytest

from tom_envs.core.probes import (
    Probe,
    normalise_answer,
    probe_baselines,
    probe_records,
    probe_table,
    question_type,
    score_answers,
)
from tom_envs.games.coblock.structures import PART_LABELS
from tom_envs.runner import mean_ci95

YN = ("yes", "no")
#: CoBlock's sub-structure labels: "arch" is a prefix of "arch pillars" and "arch top".
PARTS = PART_LABELS


# ----------------------------------------------------------------------------- free text
@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("arch pillars, since the partner placed two columns", "arch pillars"),
        ("arch pillars", "arch pillars"),
        ("Arch Pillars.", "arch pillars"),
        ("**arch top**", "arch top"),
        ("arch, since nothing else fits", "arch"),
        ("arch", "arch"),
        ("  ARCH  ", "arch"),
        ("bridge deck because it spans", "bridge deck"),
        ("bridge", "bridge"),
        ("archway", None),  # a longer word is not the option "arch"
        ("the arch pillars", None),  # the option must come first
        ("", None),
        ("pillars", None),
    ],
)
def test_longest_option_prefix_wins(reply, expected) -> None:
    assert normalise_answer(reply, PARTS) == expected


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("yes", "yes"),
        ("Yes.", "yes"),
        ('"no"', "no"),
        ("No, bravo was never in room 5", "no"),
        ("yes - she saw it", "yes"),
        (True, "yes"),
        (False, "no"),
        ("yesterday", None),
        ("nobody knows", None),
        ("maybe", None),
        (None, None),
        (1, None),  # a number is not a yes/no answer
    ],
)
def test_yes_no(reply, expected) -> None:
    assert normalise_answer(reply, YN) == expected


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (3, "3"),
        (3.0, "3"),
        ("3", "3"),
        ("3.", "3"),
        ("13", "13"),  # not the option "1" followed by "3"
        ("1 card", "1"),
        ("2", None),
        ("1.5", None),
    ],
)
def test_numbers(reply, expected) -> None:
    assert normalise_answer(reply, ("1", "3", "13")) == expected


def test_multiple_options_and_ambiguity() -> None:
    opts = ("Move to room 5", "Move to room 9", "Stay in current room")
    assert normalise_answer("move to room 9", opts) == "Move to room 9"
    assert normalise_answer("Move to room 9: it closes the door", opts) == "Move to room 9"
    assert normalise_answer("move to room", opts) is None  # a prefix of two options names none
    assert normalise_answer(True, opts) is None  # bools answer yes/no questions only
    # equal normalised options are ambiguous, never silently the first
    assert normalise_answer("tower", ("Tower", "tower.")) is None


def test_probe_score_and_records() -> None:
    p = Probe("q1", "part", 1, "Which part?", PARTS, "arch pillars", no_tom="arch")
    assert p.score("arch pillars, since ...") and not p.score("arch, since ...")
    assert p.qtype == "part/first_order" == question_type("part", 1)
    (rec,) = score_answers([p], {"q1": "Arch pillars."})
    assert rec["correct"] is True and rec["truth"] == "arch pillars"
    assert rec["options"] == list(PARTS) and rec["no_tom"] == "arch"
    (missing,) = score_answers([p], {})
    assert missing["correct"] is False and missing["reply"] is None
    with pytest.raises(ValueError, match="no_tom"):
        Probe("q2", "part", 1, "?", YN, "yes", no_tom="maybe")
    with pytest.raises(ValueError, match="answer"):
        Probe("q3", "part", 1, "?", YN, "perhaps")


# ----------------------------------------------------------------------------- baselines
def _probe(i: int, kind: str, order: int, truth: str, no_tom: str | None = None) -> Probe:
    return Probe(f"p{i}", kind, order, "?", YN, truth, no_tom=no_tom)


def test_baselines_known_values() -> None:
    probes = [
        # first order, room: 3 yes / 1 no; the no-ToM answer is right on 2 of 4
        _probe(0, "room", 1, "yes", "yes"),
        _probe(1, "room", 1, "yes", "no"),
        _probe(2, "room", 1, "yes", "yes"),
        _probe(3, "room", 1, "no", "yes"),
        # first order, seq: 1 yes / 3 no
        _probe(4, "seq", 1, "no", "no"),
        _probe(5, "seq", 1, "no", "no"),
        _probe(6, "seq", 1, "no", "no"),
        _probe(7, "seq", 1, "yes", "no"),
        # introspection, no no-ToM answers
        _probe(8, "room", 0, "yes"),
    ]
    b = probe_baselines(probes)
    assert b["probe_n/first_order"] == 8 and b["probe_n/all"] == 9
    assert b["probe_base/always_yes/room/first_order"] == 75.0
    assert b["probe_base/always_yes/seq/first_order"] == 25.0
    assert b["probe_base/always_yes/first_order"] == 50.0
    # each type's majority: "yes" for room, "no" for seq: 3 of 4 each, 6 of 8 pooled
    assert b["probe_base/majority/room/first_order"] == 75.0
    assert b["probe_base/majority/first_order"] == 75.0
    assert b["probe_base/majority/introspection"] == 100.0
    assert b["probe_base/no_tom/room/first_order"] == 50.0
    assert b["probe_base/no_tom/seq/first_order"] == 75.0
    assert b["probe_base/no_tom/all"] == 62.5  # over the 8 probes that carry one
    assert "probe_base/no_tom/introspection" not in b


def test_baselines_from_steps_equal_baselines_from_probes() -> None:
    probes = [_probe(i, "room", 2, t, "yes") for i, t in enumerate(["yes"] + ["no"] * 4)]
    steps = [
        {"agent": "player_0", "valid": True, "probes": score_answers(probes[:2], {})},
        {"agent": "player_1", "valid": True},
        {"agent": "player_2", "valid": True, "probes": score_answers(probes[2:], {"p2": "no"})},
    ]
    assert probe_baselines(steps) == probe_baselines(probes)
    b = probe_baselines(steps)
    assert b["probe_base/majority/second_order"] == 80.0
    assert b["probe_base/always_yes/second_order"] == 20.0
    assert b["probe_base/no_tom/second_order"] == 20.0
    assert len(probe_records(steps)) == 5
    with pytest.raises(TypeError):
        probe_records([42])


def test_always_yes_skips_questions_that_are_not_yes_no() -> None:
    p = Probe("a", "next_action", 1, "?", ("Stay", "Move"), "Move")
    q = Probe("b", "next_action", 1, "?", ("Stay", "Move"), "Move")
    b = probe_baselines([p, q])
    assert "probe_base/always_yes/all" not in b
    assert b["probe_base/majority/all"] == 100.0


def test_probe_table_prints_the_agent_beside_every_baseline() -> None:
    probes = [_probe(i, "room", 1, t, "yes") for i, t in enumerate(["yes", "no", "no", "no"])]
    steps = [{"probes": score_answers(probes, {"p0": "yes", "p1": "no", "p2": "yes"})}]
    table = probe_table(steps)
    assert "| first_order | 4 | 50.0% | 25.0% | 75.0% | 25.0% |" in table
    assert table.splitlines()[-1].startswith("| all | 4 | 50.0% |")
    by_type = probe_table(probes, by="type")
    assert "| room/first_order | 4 | n/a | 25.0% | 75.0% | 25.0% |" in by_type
    with pytest.raises(ValueError, match="by"):
        probe_table(probes, by="kind")


# ----------------------------------------------------------------------------- intervals
def test_mean_ci95_known_values() -> None:
    m, h = mean_ci95([1.0, 2.0, 3.0, 4.0, 5.0])
    # sd = sqrt(2.5), half-width = 1.96 * sd / sqrt(5) = 1.96 * sqrt(0.5)
    assert m == 3.0 and h == pytest.approx(1.96 * math.sqrt(0.5), abs=1e-12)
    assert h == pytest.approx(1.385929291, abs=1e-9)
    m, h = mean_ci95([0.0, 1.0])
    assert m == 0.5 and h == pytest.approx(0.98, abs=1e-12)
    m, h = mean_ci95([10.0, 12.0, 11.0, 15.0])  # sd = sqrt(14/3)
    assert m == 12.0 and h == pytest.approx(1.96 * math.sqrt(14 / 3) / 2, abs=1e-12)


def test_mean_ci95_edge_cases() -> None:
    m, h = mean_ci95([4.0, float("nan"), 6.0])  # NaN is dropped, not propagated
    assert m == 5.0 and h == pytest.approx(1.96 * math.sqrt(2) / math.sqrt(2), abs=1e-12)
    m, h = mean_ci95([7.0, 7.0, 7.0])
    assert (m, h) == (7.0, 0.0)
    m, h = mean_ci95([2.0])
    assert m == 2.0 and math.isnan(h)
    assert all(math.isnan(v) for v in mean_ci95([]))
