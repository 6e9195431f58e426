"""Paper 000's protocol (issue #33): ToM questions asked inside the agent's own conversation,
three per call, right after the action; no legal-action menu; one answer format per prompt, also
after an invalid answer. A scripted model plays alpha; the partners are the heuristic bots.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from tom_envs.agents import make_agent
from tom_envs.core.probes import Question
from tom_envs.registration import game_spec
from tom_envs.runner import Episode, play_episode
from tom_llm_agents import LLMAgent, ScriptedClient
from tom_llm_agents.answering import probe_groups
from tom_llm_agents.client import LLMRequest
from tom_llm_agents.presets import PRESETS

SPEC = game_spec("BombDefusal")
#: Every way a prompt can state an answer format (see test_prompt_voice.py).
FORMATS = ("Format your response", "fixed format", "Reply with a JSON object", "Reply as ")


def script(request: LLMRequest) -> str:
    last = request.messages[-1]["content"]
    if "Please update your belief state" in last:
        return "Below is your current belief: bombs somewhere."
    if "Answer these questions" in last:
        return "q1: yes\nq2: no\nq3: no"
    return 'Action selection: Inspect Bomb. Message to Team: "Inspecting."'


def play(preset: str, rounds: int = 4, **settings) -> tuple[Episode, ScriptedClient]:
    client = ScriptedClient(script)
    agent = LLMAgent(client, preset=preset, **settings)
    team = [agent, *(make_agent("heuristic", SPEC) for _ in range(2))]
    kwargs = {**PRESETS[preset].env_kwargs, "max_cycles": 3 * rounds}
    return play_episode(SPEC, team, seed=3, env_kwargs=kwargs), client


def calls(ep: Episode, step: str) -> list[dict]:
    return [
        c
        for s in ep.steps
        if s["agent"] == "player_0"
        for c in s["info"].get("llm_calls", [])
        if c["step"] == step
    ]


def test_probe_prompts_are_the_agents_own_conversation_and_differ_with_the_belief() -> None:
    belief, _ = play("paper000")
    raw, _ = play("paper000-nobelief")
    # the same trajectory: the same replies, hence the same moves and the same questions
    assert [s["action"] for s in belief.steps] == [s["action"] for s in raw.steps]
    with_belief, without = calls(belief, "probe"), calls(raw, "probe")
    assert len(with_belief) == len(without) > 0
    for a, b in zip(with_belief, without, strict=True):
        assert a["messages"] != b["messages"]
        assert a["messages"][-1]["content"] == b["messages"][-1]["content"]  # the questions
    # later calls carry the agent's history: its own belief states (or raw observations) and
    # its own replies, then the observation of this moment with the questions
    late_b, late_r = with_belief[-1]["messages"], without[-1]["messages"]
    assert [m["role"] for m in late_b] == ["system", "user", "assistant", "user", "assistant",
                                           "user"]  # fmt: skip
    assert "Below is your current belief" in late_b[1]["content"]
    assert "Below is your current belief" not in "".join(m["content"] for m in late_r)
    assert late_b[2]["content"].startswith("Action selection: Inspect Bomb")
    assert "Your observation is:" in late_b[-1]["content"]


def test_three_questions_per_call_about_one_teammate_right_after_the_action() -> None:
    ep, _ = play("paper000")
    steps = [s for s in ep.steps if s["agent"] == "player_0"]
    probe_calls = calls(ep, "probe")
    assert len(probe_calls) == sum(bool(s.get("probes")) for s in steps)  # one call per action
    for s in steps:
        if not s.get("probes"):
            continue
        assert s["probe_moment"] == "action" and len(s["probes"]) == 3
        targets = {p["subject"].get("target") for p in s["probes"]} - {None}
        assert len(targets) == 1 and sorted(p["order"] for p in s["probes"]) == [0, 1, 2]
    question = probe_calls[0]["messages"][-1]["content"]
    assert "q3:" in question and "q4:" not in question
    lines = [ln for ln in question.splitlines() if ln[:3] in ("q1:", "q2:", "q3:")]
    assert lines[0].startswith("q1: Do you know")  # introspection, first order, second order
    assert lines[1].startswith("q2: Does player") and "aware of the fact" in lines[2]


def test_questions_group_by_teammate_and_fact() -> None:
    def q(i: int, order: int, target: str | None, room: int = 5) -> Question:
        subject = {"room": room} if target is None else {"room": room, "target": target}
        return Question(f"q{i}", "?", ("yes", "no"), "room_contents", order, subject)

    asked = [q(1, 2, "bravo"), q(2, 1, "charlie"), q(3, 0, None), q(4, 1, "bravo"),
             q(5, 2, "charlie"), q(6, 0, None, room=8)]  # fmt: skip
    groups = probe_groups(asked, "target")
    assert [[x.id for x in g] for g in groups] == [["q3", "q4", "q1"], ["q2", "q5"], ["q6"]]
    assert probe_groups(asked, True) == [asked]
    assert probe_groups(asked, "question") == [[x] for x in asked]


def test_no_legal_action_menu_and_one_answer_format_even_after_an_invalid_answer() -> None:
    def invalid_first(request: LLMRequest) -> str:
        if "Answer these questions" in request.messages[-1]["content"]:
            return "q1: yes\nq2: no\nq3: no"
        if "Please update your belief state" in request.messages[-1]["content"]:
            return "Below is your current belief: nothing."
        n = sum(1 for m in request.messages if m["role"] == "user")
        return "Fly to the moon." if n == 1 else "Action selection: Inspect Bomb"

    client = ScriptedClient(invalid_first)
    agent = LLMAgent(client, preset="paper000")
    team = [agent, *(make_agent("heuristic", SPEC) for _ in range(2))]
    ep = play_episode(SPEC, team, seed=3, env_kwargs={"probes": "one", "max_cycles": 9})
    actions = calls(ep, "action")
    first = next(s for s in ep.steps if s["agent"] == "player_0")
    assert not first["valid"] and first["info"]["failure"]["kind"] == "unparseable"
    for call in actions:
        system = call["messages"][0]["content"]
        user = call["messages"][-1]["content"]
        prompt = system + "\n" + user
        assert "Legal actions:" not in prompt and "legal actions" not in system
        assert sum(prompt.count(f) for f in FORMATS) == 1 and "fixed format" in system
    after = actions[1]["messages"][-1]["content"]
    assert "your answer was invalid: Your action is invalid." in after
    # the variant keeps the suite's menu and its own format, still one
    menu, _ = play("paper000-menu", rounds=2)
    for call in calls(menu, "action"):
        prompt = call["messages"][0]["content"] + "\n" + call["messages"][-1]["content"]
        assert "Legal actions:" in prompt and "Action selection" not in prompt
        assert sum(prompt.count(f) for f in FORMATS) == 1


def test_without_a_menu_a_number_names_no_action() -> None:
    client = ScriptedClient(["Action selection: 2. Message to Team: \"go\""])
    agent = LLMAgent(client, preset="paper000-nobelief", probes=False)
    team = [agent, *(make_agent("heuristic", SPEC) for _ in range(2))]
    ep = play_episode(SPEC, team, seed=3, env_kwargs={"max_cycles": 1})
    first = ep.steps[0]
    assert not first["valid"] and "a number names no action" in first["info"]["failure"]["message"]
    with_menu = LLMAgent(ScriptedClient(["Action: 2"]), preset="paper000-menu", probes=False)
    ep = play_episode(SPEC, [with_menu, *team[1:]], seed=3, env_kwargs={"max_cycles": 1})
    assert ep.steps[0]["valid"]


# ------------------------------------------------------------------ protocol descriptions
PROTOCOLS = Path(__file__).parents[2] / "llm_agents" / "protocols"


@pytest.mark.parametrize("name", ["paper000", "paper000-nobelief", "paper000-menu"])
def test_the_checked_in_protocol_descriptions_match_the_prompts(name: str) -> None:
    """Each paper-000 preset's description (llm_agents/protocols/<preset>.toml, the protocols
    branch's format) against the prompts of a short episode: the calls of each decision, the
    messages of each call (the kept history counted for the action and probe calls, the probe
    call's including the decision it follows), the menu, the questions per probe call and the
    preset's game arguments."""
    d = tomllib.loads((PROTOCOLS / f"{name}.toml").read_text())
    p = PRESETS[name]
    assert d["preset"] == name and d["game"] == p.game == "BombDefusal"
    assert p.env_kwargs == d["probe_game_args"]
    for key in ("decoding", "temperature", "history", "invalid", "reprompts"):
        assert p.settings[key] == d[key], key
    client = ScriptedClient(script)
    team = [LLMAgent(client, preset=name), *(make_agent("heuristic", SPEC) for _ in range(2))]
    ep = play_episode(SPEC, team, seed=0, env_kwargs={**p.env_kwargs, **d["episode"]})
    decisions = [s for s in ep.steps if s["agent"] == "player_0"]
    assert len(decisions) == 2
    for i, step in enumerate(decisions):
        assert step["valid"], f"decision {i + 1}"
        calls = step["info"]["llm_calls"]
        expected = d["first_calls"] if i == 0 and "first_calls" in d else d["calls"]
        assert [c["step"] for c in calls] == expected, f"decision {i + 1}"
        for c in calls:
            kept = 2 * min(i + (c["step"] == "probe"), d["history"])
            extra = kept if c["step"] in ("action", "probe") else 0
            assert len(c["messages"]) == d["messages"][c["step"]] + extra, (i, c["step"])
            assert c["decoding"] == d["decoding"] and c.get("temperature", 0.0) == d["temperature"]
        action = next(c for c in calls if c["step"] == "action")
        user = action["messages"][-1]["content"]
        assert ("Legal actions:" in user) == (d["menu"] == "list"), name
        if "answer" in d:
            block = user.split("Format your response as\n", 1)[1].splitlines()
            assert [ln.split(":")[0] for ln in block if ":" in ln] == d["answer"]
        else:
            assert "Format your response" not in user and "fixed format" in action["messages"][0][
                "content"
            ]
        probe = next(c for c in calls if c["step"] == "probe")["messages"][-1]["content"]
        asked = re.findall(r"^q(\d+): ", probe, re.M)
        assert len(asked) == d["probe_questions"], probe
