"""Probe free-text scoring, the shortcut baselines, balanced accuracy and kappa, the known-groups
check, the answer-free questions and the 95% interval formula (known values)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tom_envs.core.probes import (
    Probe,
    Question,
    agreement,
    ask,
    known_groups,
    normalise_answer,
    probe_baselines,
    probe_records,
    probe_scores,
    probe_table,
    question_type,
    score_answers,
    score_asked,
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
    known = {
        "probe_n/first_order": 8,
        "probe_n/all": 9,
        "probe_base/always_yes/room/first_order": 75.0,
        "probe_base/always_yes/seq/first_order": 25.0,
        "probe_base/always_yes/first_order": 50.0,
        # each type's majority: "yes" for room, "no" for seq: 3 of 4 each, 6 of 8 pooled
        "probe_base/majority/room/first_order": 75.0,
        "probe_base/majority/first_order": 75.0,
        "probe_base/majority/introspection": 100.0,
        "probe_base/ignores_partner/room/first_order": 50.0,
        "probe_base/ignores_partner/seq/first_order": 75.0,
        "probe_base/ignores_partner/all": 62.5,  # over the 8 probes that carry one
        "probe_base/models_partner/all": 100.0,
        # room: recall of "yes" 2/3, of "no" 0/1 -> balanced 33.3%; seq: 0/1 and 3/3 -> 50%
        "probe_bacc/ignores_partner/room/first_order": pytest.approx(100 / 3),
        "probe_bacc/ignores_partner/seq/first_order": 50.0,
        "probe_bacc/majority/room/first_order": 50.0,  # a constant answer
        "probe_yes/first_order": 50.0,
    }
    assert {key: b.get(key) for key in known} == known
    assert "probe_base/ignores_partner/introspection" not in b


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
    assert b["probe_base/ignores_partner/second_order"] == 20.0
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
    # agent: right on p0 and p1 (p3 unanswered counts wrong): 2/4; recalls yes 1/1, no 1/3
    row = next(r for r in table.splitlines() if r.startswith("| first_order |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:4] == ["first_order", "4", "25.0%", "50.0%"]
    assert cells[4].startswith("66.7% [")
    assert cells[6] == "75.0%"  # the majority answer ("no")
    assert cells[7].startswith("50.0% [") and cells[7].endswith(", 0.00")  # constant: kappa 0
    assert cells[8] == "100.0%"
    assert table.splitlines()[-1].startswith("| all | 4 | 25.0% | 50.0% |")
    by_type = probe_table(probes, by="type")
    assert "| room/first_order | 4 | 25.0% | n/a | n/a | n/a | 75.0% |" in by_type
    assert "no: too few of one answer (1 < 10) |" in by_type
    with pytest.raises(ValueError, match="by"):
        probe_table(probes, by="kind")


# ----------------------------------------------------------------------------- agreement
def test_balanced_accuracy_and_kappa_known_values() -> None:
    # 6 yes, 2 no; answers: 5 of the yes right, 1 of the no right
    truths = ["yes"] * 6 + ["no"] * 2
    answers = ["yes"] * 5 + ["no"] + ["no", "yes"]
    a = agreement(truths, answers)
    assert a.n == 8 and a.accuracy == 75.0 and a.chance == 50.0 and a.answers == 2
    assert a.balanced == pytest.approx(100 * (5 / 6 + 1 / 2) / 2)
    # p_o = 0.75; p_e = P(t=yes)P(a=yes) + P(t=no)P(a=no) = 6/8*6/8 + 2/8*2/8 = 0.625
    assert a.kappa == pytest.approx((0.75 - 0.625) / (1 - 0.625))
    # the interval: recalls smoothed (5+1)/(6+2) and (1+1)/(2+2)
    var = (0.75 * 0.25 / 6 + 0.5 * 0.5 / 2) / 4
    assert a.balanced - a.low == pytest.approx(100 * 1.959963984540054 * math.sqrt(var))
    assert a.high == 100.0  # clipped
    constant = agreement(truths, ["yes"] * 8)
    assert constant.balanced == 50.0 and constant.kappa == 0.0 and constant.accuracy == 75.0
    invalid = agreement(["yes", "no"], [None, None])  # answers that name no option
    assert invalid.accuracy == 0.0 and invalid.balanced == 0.0
    assert math.isnan(agreement(["yes"], ["yes"]).kappa)  # both constant: undefined
    with pytest.raises(ValueError, match="answers"):
        agreement(["yes"], [])


def test_probe_scores_read_the_replies_and_skip_the_unanswered() -> None:
    probes = [_probe(i, "room", 1, t) for i, t in enumerate(["yes", "no", "no", "yes"])]
    recs = score_answers(probes, {"p0": "Yes.", "p1": "no", "p2": "yes", "p3": "maybe"})
    recs.append(probe_records([_probe(9, "room", 1, "no")])[0])  # never asked: no reply
    s = probe_scores(recs)["room/first_order"]
    assert s.n == 4 and s.accuracy == 50.0 and s.balanced == 50.0


def test_known_groups_separate_only_partner_dependent_types() -> None:
    def batch(kind: str, order: int, truths: list[str], blind: list[str] | None) -> list[Probe]:
        return [
            Probe(f"{kind}{order}.{i}", kind, order, "?", YN, t,
                  no_tom=None if blind is None else blind[i])
            for i, t in enumerate(truths)
        ]  # fmt: skip

    mixed = ["yes", "no"] * 20
    probes = (
        batch("room", 1, mixed, ["yes"] * 40)  # partner-blind answer constant: at chance
        + batch("seq", 1, mixed, list(mixed))  # partner-blind answer is the truth
        + batch("room", 0, mixed, list(mixed))  # introspection
        + batch("cut", 1, ["no"] * 40, ["yes"] * 40)  # one-sided
        + batch("next", 1, mixed, None)  # no partner-blind answer defined
        + batch("few", 1, ["yes"] * 35 + ["no"] * 5, ["yes"] * 40)  # too few "no"
    )
    kg = known_groups(probes)
    assert kg["room/first_order"].measure and kg["room/first_order"].reason == "separates"
    assert kg["room/first_order"].ignores_partner.balanced == 50.0
    assert kg["room/first_order"].models_partner.balanced == 100.0
    assert not kg["seq/first_order"].measure and "not at chance" in kg["seq/first_order"].reason
    assert kg["room/introspection"].reason == "no partner (introspection)"
    assert kg["cut/first_order"].reason.startswith("one-sided")
    assert kg["next/first_order"].reason == "the game defines no partner-blind answer"
    assert kg["few/first_order"].reason.startswith("too few")
    table = probe_table(probes, by="type")
    assert [r.split(" |")[0] for r in table.splitlines() if r.endswith("| yes |")] == [
        "| room/first_order"
    ]


# ----------------------------------------------------------------------------- questions
def test_agents_get_questions_without_answers() -> None:
    p = Probe("r1.alpha.room.order1.bravo", "room", 1, "Does bravo know?", YN, "no",
              about={"belief": "stale_seen"}, no_tom="yes", subject={"target": "bravo"})  # fmt: skip
    q = p.public("q3")
    assert q == Question("q3", "Does bravo know?", YN, "room", 1, {"target": "bravo"})
    assert not any(hasattr(q, a) for a in ("answer", "no_tom", "about", "truth"))
    (rec,) = score_asked([(q, p)], {"q3": "no"})
    assert rec["qid"] == "q3" and rec["position"] == 0 and rec["id"] == p.id
    assert rec["correct"] and rec["subject"] == {"target": "bravo"}


def test_ask_shuffles_uniformly_from_the_generator_only() -> None:
    probes = [_probe(i, "room", 1, "yes" if i else "no") for i in range(3)]
    firsts = {}
    for seed in range(3000):
        asked = ask(probes, np.random.default_rng(seed))
        assert [q.id for q, _ in asked] == ["q1", "q2", "q3"]
        first = asked[0][1].id
        firsts[first] = firsts.get(first, 0) + 1
    assert set(firsts) == {"p0", "p1", "p2"}
    assert all(abs(n / 3000 - 1 / 3) < 0.03 for n in firsts.values())
    again = ask(probes, np.random.default_rng(7))
    assert [p.id for _, p in again] == [p.id for _, p in ask(probes, np.random.default_rng(7))]
    # the order depends on the generator, not on the answers: flipping every truth keeps it
    flipped = [_probe(i, "room", 1, "no" if i else "yes") for i in range(3)]
    assert [p.id for _, p in ask(flipped, np.random.default_rng(7))] == [p.id for _, p in again]


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
