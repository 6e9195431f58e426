"""``tom-envs probes verify`` on small seed lists: the report's sections, the LLM-like text
agent, and the gate's semantics on probe sets with and without a planted surface leak."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")

from tom_envs.agents import make_agent
from tom_envs.cli import main
from tom_envs.driver import FailurePolicy
from tom_envs.probe_report import (
    TeamProbes,
    TextChatter,
    balanced_cells,
    balanced_gate,
    examples,
    prior_chance,
    surface_features,
    verify,
)
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode
from tom_envs.validity import transfer

SPEC = game_spec("BombDefusal")


def test_verify_prints_baselines_known_groups_adversary_and_gate() -> None:
    report = verify(episodes=2, teams=["heuristic", "text"])
    text = report.text
    for part in ("## Team: heuristic", "## Team: text", "ignores partner", "models partner",
                 "| boosting | held-out missions |", "| logistic | fresh seed |",
                 "Gate for heuristic:", "## Verdict", "ToM measures for every team:"):  # fmt: skip
        assert part in text, part
    assert "no: one-sided: every truth is 'no'" in text  # a cut's first order at the paper's time
    assert "no: no partner (introspection)" in text
    assert set(report.measures) == {"heuristic", "text"}
    assert all(m.split("/")[1] in ("first_order", "second_order")
               for ms in report.measures.values() for m in ms)  # fmt: skip
    assert report.passed == (not report.failures)


def test_the_command_writes_the_report_and_exits_by_the_gate(tmp_path, capsys) -> None:
    out = tmp_path / "probes.md"
    code = main(["probes", "verify", "--episodes", "1", "--teams", "heuristic", "--out", str(out)])
    assert code in (0, 1) and out.read_text().strip() == capsys.readouterr().out.strip()
    assert ("**passed**" in out.read_text()) == (code == 0)


def test_the_text_agent_plays_through_the_parser_with_refusals_and_free_chat() -> None:
    team = [TextChatter(make_agent("heuristic", SPEC), invalid=0.3) for _ in range(3)]
    ep = play_episode(SPEC, team, seed=5, policy=FailurePolicy(max_fallback_share=1.0))
    steps = ep.steps
    assert any(s.get("fallback") for s in steps) and any(s["valid"] for s in steps)
    assert all(s["info"]["reply"].startswith("Action selection:") for s in steps)
    said = [s["message"] for s in steps if s.get("message")]
    assert said and any(m[0].islower() for m in said)  # rephrased, not only canonical


# ------------------------------------------------------------------ the gate's semantics
def synthetic(n_steps: int, seed: int, leak: bool) -> TeamProbes:
    """Steps of four first-order questions about rooms 0..4; the truth depends on the room
    named when ``leak`` (a surface leak), else on nothing an answerer sees."""
    rng = np.random.default_rng(seed)
    tp = TeamProbes("synthetic")
    for k in range(n_steps):
        step = []
        for i in range(4):
            room = int(rng.integers(5))
            p_yes = (0.85 if room < 2 else 0.15) if leak else 0.35
            truth = "yes" if rng.random() < p_yes else "no"
            step.append({"id": f"s{k}.{i}", "kind": "room", "order": 1, "truth": truth,
                         "question": f"Does player bravo know the current contents of room {room}?",
                         "options": ["yes", "no"], "subject": {"target": "bravo", "room": room}})  # fmt: skip
        tp.steps.append((k // 5, step))
    return tp


@pytest.mark.parametrize("leak", [False, True])
def test_the_gate_fails_a_planted_leak_and_passes_a_clean_set(leak: bool) -> None:
    train, test = synthetic(300, 0, leak), synthetic(300, 1, leak)
    chance, one_sided = prior_chance(train, test)
    assert not one_sided and set(chance) == {"room/first_order"}
    reports = [transfer(examples(train), examples(test, chance), adv) for adv in ("boosting",
                                                                                  "logistic")]  # fmt: skip
    decision = balanced_gate(reports)
    (cell,) = balanced_cells(reports[0])
    assert decision.passed is (not leak), decision.failures
    if leak:
        assert cell.balanced > 65 and cell.low >= 55
    else:
        assert abs(cell.balanced - 50) < 5 and cell.chance == 50


def test_surface_features_name_position_siblings_and_subject() -> None:
    step = [
        {"kind": "room_contents", "order": 0, "subject": {"room": 5}},
        {"kind": "room_contents", "order": 1, "subject": {"room": 5, "target": "bravo"}},
        {"kind": "announced_room", "order": 1, "subject": {"room": 8, "target": "bravo"}},
    ]
    f = surface_features(step, 1)
    assert f["position"] == 1 and f["asked"] == 3 and f["facts"] == 2 and f["same_fact"] == 1
    assert f["sib=room_contents/introspection"] == 1 and f["sib=announced_room/first_order"] == 1
    assert f["same_fact_sib=room_contents/introspection"] == 1
    assert f["subject_room"] == 5 and f["subject_target=bravo"] == 1
    assert "truth" not in str(f) and "answer" not in str(f)
