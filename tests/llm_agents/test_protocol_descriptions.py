"""Every preset's real prompts against its checked-in protocol description.

Each preset has a description, ``llm_agents/protocols/<preset>.toml``
(:func:`tom_llm_agents.presets.protocol_description`): the calls of a decision in order (and of
the first decision, where it differs), the messages of each call, the decoding, the sampling,
the language, the menu of actions shown, the answer fields asked for, the examples (how many, of
which kinds) and the invalid-output policy. The test plays one short episode of each preset on its
game with a scripted model that answers every call validly (``tom_llm_agents.fake``), dumps every
prompt it sent (to ``$TOM_ENVS_PROMPT_DUMP/<preset>.txt`` when that variable names a folder), and
checks each decision's calls against the description: a prompt change that changes a protocol
fails here until its description says so.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tom_envs.agents import make_agent
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode
from tom_llm_agents import LLMAgent, ScriptedClient
from tom_llm_agents.client import LLMRequest
from tom_llm_agents.fewshot import EXAMPLE_SETS, examples_for
from tom_llm_agents.presets import PRESETS, PROTOCOL_DIR, protocol_description
from tom_llm_agents.protocol_report import partner_for

#: The headers an agent's list of actions starts with (English, Chinese; all, shortlist).
MENU_HEADERS = ("Legal actions:", "合法动作：", "Recommended candidate actions", "推荐的候选动作")
SHORTLIST_HEADERS = ("Recommended candidate actions", "推荐的候选动作")
FORMAT_HEADS = ("Format your response as\n", "请按以下格式回答：\n")


def protocol_script(request: LLMRequest) -> str:
    """A valid answer to every kind of call: verdicts, probe answers, predictions, actions (the
    first listed action by the number rule, after every field), free text otherwise."""
    if request.prompt is not None:
        return "x"
    text = "\n".join(m["content"] for m in request.messages)
    last = request.messages[-1]["content"]
    if "action verification agent" in text:
        return "The action is safe. Verification: Okay"
    if re.search(r"^q1: ", last, re.M):
        return "\n".join(f"q{i}: yes" for i in range(1, 13))
    if "Prediction: <option>" in last:
        return "Reasoning: r\nPrediction: 1"
    if any(head in last for head in FORMAT_HEADS):
        return "Reasoning: r\nMessage: hi\nAction: 1\n动作：1"
    if "Please update your belief state" in last:  # 000: the new observation kept as the belief
        seen = last.split("Your new observation:", 1)[-1].split("\n\nPlease update", 1)[0]
        return "Below is your current belief: " + seen.strip()
    if "fixed format" in request.messages[0]["content"]:  # 000: App. A.1's format, no list
        rooms = re.findall(r"You are currently in Room (\d+)", last)
        target = 3 if rooms and rooms[-1] == "0" else 0  # room 0 neighbours every room
        return f'Action selection: Move to Room {target}. Message to Team: "on my way"'
    return "An analysis in a few words."


def option_logprobs(request: LLMRequest) -> list[dict[str, float]]:
    """Every option name's tokens, for LM scoring."""
    names = ("R", "P", "S", "J", "F", "B")
    return [{" Option": -0.2, **{f" {n}": -1.0 - i / 10 for i, n in enumerate(names)}}]


def _steps_match(pattern: list[str], steps: list[str]) -> bool:
    """``["lm+", "prediction+"]``: one or more calls of a step marked ``+``."""
    regex = "".join(
        f"(?:{re.escape(p[:-1])};)+" if p.endswith("+") else f"{re.escape(p)};" for p in pattern
    )
    return re.fullmatch(regex, "".join(f"{s};" for s in steps)) is not None


def _cjk_share(text: str) -> float:
    letters = [c for c in text if c.isalpha()]
    return sum("\u4e00" <= c <= "\u9fff" for c in letters) / max(1, len(letters))


def _dump(name: str, decisions: list[dict], folder: Path) -> None:
    lines = [f"# {name}: every prompt of one short episode (scripted model)"]
    for i, step in enumerate(decisions):
        for call in step["info"]["llm_calls"]:
            lines.append(f"\n=== decision {i + 1}, call {call['step']} (sample {call['sample']})")
            for m in call["messages"]:
                lines.append(f"--- {m['role']}\n{m['content']}")
            lines.append(f"--- reply\n{call['reply']}")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.txt").write_text("\n".join(lines), encoding="utf-8")


def test_every_preset_has_a_description() -> None:
    assert {p.stem for p in PROTOCOL_DIR.glob("*.toml")} == set(PRESETS)
    for name, p in PRESETS.items():
        d = protocol_description(name)
        assert d["preset"] == name and d["game"] == p.game
        s = p.settings
        for key in ("decoding", "temperature", "history", "invalid", "reprompts"):
            assert s[key] == d[key], (name, key)
        assert s.get("top_p") == d.get("top_p"), name
        assert s.get("verify_rounds", 2) == d.get("verify_cap", s.get("verify_rounds", 2))


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_preset_prompts_follow_the_protocol_description(name: str, tmp_path: Path) -> None:
    d = protocol_description(name)
    p = PRESETS[name]
    spec = game_spec(p.game)
    n = spec.load().make_bundle(**spec.kwargs).game.num_players
    partner = partner_for(p.game)
    extra = {"oracle_partner": partner} if "oracle" in p.settings["strategy"] else {}
    agent = LLMAgent(
        ScriptedClient(protocol_script, logprobs=option_logprobs), preset=name, **extra
    )
    seats = [agent, *(make_agent(partner, spec) for _ in range(n - 1))]
    ep = play_episode(spec, seats, seed=0, env_kwargs=dict(d["episode"]))
    decisions = [s for s in ep.steps if s["agent"] == "player_0" and s["info"].get("llm_calls")]
    _dump(name, decisions, Path(os.environ.get("TOM_ENVS_PROMPT_DUMP") or tmp_path))
    assert decisions, f"{name}: the model was never asked"
    for key, value in p.env_kwargs.items():
        assert ep.env_kwargs[key] == value  # the preset's game arguments were played

    logprob_steps = set(d.get("logprob_steps", []))
    asked_actions = 0
    for i, step in enumerate(decisions):
        assert step["valid"], f"{name}: decision {i + 1} was not valid"
        calls = step["info"]["llm_calls"]
        steps = [c["step"] for c in calls]
        pattern = d["first_calls"] if i == 0 and "first_calls" in d else d["calls"]
        assert _steps_match(pattern, steps), f"{name} decision {i + 1}: {steps} != {pattern}"
        for call in calls:
            expected = d["messages"][call["step"]]
            if call["step"] == "action":
                expected += 2 * min(asked_actions, d["history"])
            elif call["step"] == "probe":  # asked after the action: its exchange is kept
                expected += 2 * min(asked_actions + 1, d["history"])
            assert len(call["messages"]) == expected, (name, i, call["step"])
            lp = call["step"] in logprob_steps
            assert call["decoding"] == ("logprobs" if lp else d["decoding"]), (name, call["step"])
            temperature = 0.0 if lp else d["temperature"]
            assert call.get("temperature", 0.0) == temperature, (name, call["step"])
        action = next((c for c in calls if c["step"] == "action"), None)
        if action is None:
            continue
        asked_actions += 1
        system = action["messages"][0]["content"]
        user = action["messages"][-1]["content"]
        # examples: how many, and of which kinds
        assert len(re.findall(r"^Example \d+:", system, re.M)) == d["examples"], name
        if "example_kinds" in d:
            kinds = [e.kind for e in examples_for(p.settings["examples"], spec.id)]
            assert {k: kinds.count(k) for k in set(kinds)} == d["example_kinds"], name
        # language
        assert (_cjk_share(user) > 0.3) == (d["language"] == "zh"), name
        # the menu of actions
        listed = [ln for ln in user.splitlines() if ln.startswith("- ")]
        headers = [h for h in MENU_HEADERS if h in user]
        if d["menu"] == "list":
            assert headers and not any(h in user for h in SHORTLIST_HEADERS) and listed, name
        elif d["menu"] == "shortlist":
            shortlist = step["info"]["llm"].get("notes", {}).get("top_k")
            if shortlist:  # more legal actions than the shortlist: only those are shown
                assert any(h in user for h in SHORTLIST_HEADERS), name
                assert [ln[2:] for ln in listed] == shortlist and len(shortlist) == d["shortlist"]
        else:  # "observation" (the game's text lists them) or "none" (nothing listed)
            assert not headers, f"{name}: the agent listed the actions ({headers})"
            if d["menu"] == "none" and "Below is your current belief" not in user:
                assert not listed, name  # (000's belief state, App. A.2, has bullets of its own)
        # the answer fields
        if "answer" in d:
            head = next(h for h in FORMAT_HEADS if h in user)
            block = user.split(head, 1)[1].splitlines()
            labels = [
                re.split(r"[:：]", ln, maxsplit=1)[0] for ln in block if re.search("[:：]", ln)
            ]
            assert labels == d["answer"], f"{name}: answer fields {labels}"
    assert asked_actions or logprob_steps, f"{name}: no action was generated"


def test_the_example_sets_match_their_descriptions() -> None:
    """The kinds a description names are the example set's."""
    kinds = [e.kind for e in EXAMPLE_SETS["paper003"]]
    assert protocol_description("paper003")["example_kinds"] == {k: kinds.count(k) for k in kinds}
