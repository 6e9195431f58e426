"""The papers' protocols as the presets run them (papers 001-004), against a scripted model.

* A preset's game arguments reach the game in ``run``, ``eval`` and ``reproduce`` (paper 001's
  Guandan in Chinese, 004 Table 2's R/P/S names), and a run that sets them otherwise is refused
  before anything is played.
"""

from __future__ import annotations

import pytest

from tom_envs.agents import make_agent
from tom_envs.core.agents import EnvKwargsConflict, with_required_env_kwargs
from tom_envs.registration import game_spec
from tom_envs.runner import Episode, play_episode, run
from tom_llm_agents import LLMAgent, ScriptedClient


def seats(spec, agent, partner: str = "random") -> list:
    n = spec.load().make_bundle(**spec.kwargs).game.num_players
    return [agent, *(make_agent(partner, spec) for _ in range(n - 1))]


def mine(ep: Episode) -> list[dict]:
    return [s for s in ep.steps if s["agent"] == "player_0"]


# ----------------------------------------------------------------------------- game arguments
def test_paper001_plays_chinese_guandan_in_every_command() -> None:
    spec = game_spec("Guandan")
    agent = LLMAgent(ScriptedClient(["动作：1"]), preset="paper001")
    assert agent.required_env_kwargs("Guandan") == {"language": "zh"}
    assert agent.required_env_kwargs("Hanabi") == {}  # a preset's arguments are its game's
    ep = play_episode(spec, seats(spec, agent), seed=0, env_kwargs={"max_cycles": 3})
    assert ep.env_kwargs["language"] == "zh" and ep.config["env_kwargs"]["language"] == "zh"
    asked = [c for s in mine(ep) for c in s["info"]["llm_calls"]]
    assert asked and all("动作" in c["messages"][-1]["content"] for c in asked)  # Chinese
    (ep2,) = run(spec, [lambda: agent] + [lambda: make_agent("random", spec)] * 3, 1,
                 env_kwargs={"max_cycles": 3})  # fmt: skip
    assert ep2.env_kwargs["language"] == "zh"


def test_a_run_that_contradicts_the_preset_is_refused_before_playing() -> None:
    spec = game_spec("Guandan")
    client = ScriptedClient(["Action: 1"])
    agent = LLMAgent(client, preset="paper001")
    with pytest.raises(EnvKwargsConflict, match=r"language='zh'.*language='en'.*game_args=none"):
        play_episode(spec, seats(spec, agent), seed=0, env_kwargs={"language": "en"})
    assert client.requests == []  # nothing was asked
    waived = LLMAgent(client, preset="paper001", game_args="none")
    assert waived.config()["game_args"] == "none"
    assert with_required_env_kwargs(spec, [waived], {"language": "en"}) == {"language": "en"}
    a, b = LLMAgent(client, preset="paper001"), LLMAgent(client, preset="paper001")
    assert with_required_env_kwargs(spec, [a, b], {}) == {"language": "zh"}


def test_paper004_table2_names_are_the_presets_own(tmp_path) -> None:
    rps, ipd = game_spec("RockPaperScissors"), game_spec("PrisonersDilemma")
    agent = LLMAgent(ScriptedClient(["Action: Option P"]), preset="paper004")
    ep = play_episode(rps, seats(rps, agent, "always_0"), seed=0, env_kwargs={"horizon": 2})
    assert ep.env_kwargs["action_names"] == "rps"
    assert (
        "Option R, Option P and Option S"
        in mine(ep)[0]["info"]["llm_calls"][0]["messages"][0]["content"]
    )
    ep = play_episode(ipd, seats(ipd, agent, "always_0"), seed=0, env_kwargs={"horizon": 1})
    assert "action_names" not in ep.env_kwargs  # R/P/S names are Rock, Paper, Scissors only
    table3 = LLMAgent(ScriptedClient(["Action: Option J"]), preset="paper004-cot3shot")
    assert table3.required_env_kwargs("RockPaperScissors") == {}


def test_cli_run_refuses_a_contradicting_game_argument(capsys) -> None:
    pytest.importorskip("openai")
    from tom_envs.cli import main

    spec = "llm:model=m:base_url=http://127.0.0.1:9/v1:preset=paper001"
    code = main(["run", "Guandan", "--agents", spec, "random", "random", "random",
                 "--kw", "language=en", "--no-endpoint-check"])  # fmt: skip
    assert code == 2
    assert "requires the game argument language='zh'" in capsys.readouterr().err


def test_eval_validation_refuses_a_contradicting_game_argument(tmp_path) -> None:
    pytest.importorskip("openai")
    from tom_envs.evaluation.config import ConfigError, parse_config, validate

    data = {
        "name": "x",
        "episodes": 1,
        "agents": {"random": "random"},
        "games": [{"game": "Guandan", "kwargs": {"language": "en"}}],
        "matchups": [{"game": "Guandan", "seats": ["p001", "random", "random", "random"]}],
    }
    # the endpoint is the command line's (--agent p001=...): a file may not name a host
    llm = {"p001": "llm:model=m:base_url=http://127.0.0.1:9/v1:preset=paper001"}
    with pytest.raises(ConfigError, match="language='zh'"):
        validate(parse_config(data, agents=llm, out=str(tmp_path)), check_endpoints=False)
    data["games"][0]["kwargs"] = {"language": "zh"}
    assert validate(parse_config(data, agents=llm, out=str(tmp_path)), check_endpoints=False)


def test_shipped_paper_configs_state_the_papers_settings() -> None:
    from tom_envs.evaluation.config import load_config

    assert load_config("paper001").games["Guandan"].kwargs["language"] == "zh"
    assert load_config("paper004").episodes >= 30  # "at least 30 episodes" (004 App. C)


# ----------------------------------------------------------------------------- 001 re-prompts
def test_paper001_reprompts_speak_chinese_and_list_only_the_shortlist() -> None:
    spec = game_spec("Guandan")
    agent = LLMAgent(ScriptedClient(["胡说八道 nonsense"]), preset="paper001")
    ep = play_episode(spec, seats(spec, agent), seed=0, env_kwargs={"max_cycles": 3})
    checked = 0
    for step in mine(ep):
        shortlist = step["info"].get("llm", {}).get("notes", {}).get("top_k")
        for call in step["info"]["llm_calls"]:
            if call["step"] != "reprompt":
                continue
            text = call["messages"][-1]["content"]
            assert text.startswith("你的回答无法使用") and "could not" not in text
            assert not any(w in text for w in ("legal action", "choose one", "candidate"))
            listed = text.rsplit("严格选择一个：", 1)[1].rstrip("。").split("; ")
            if shortlist:  # the top-5 of a longer legal list: only those
                assert listed == shortlist and len(listed) == 5
                checked += 1
    assert checked, "no re-prompt over a shortlist was sent"


def test_an_answer_outside_the_shortlist_is_refused_in_the_prompts_language() -> None:
    spec = game_spec("Guandan")
    text = spec.load().make_bundle(**{**spec.kwargs, "language": "zh"}).text
    outside: dict[str, str] = {}

    def recommender(view) -> dict[int, float]:  # the five lowest actions; the model names the top
        if len(view.legal_actions) > 5:
            outside["text"] = text.action_text(view, max(view.legal_actions))
        return {a: -float(a) for a in view.legal_actions}

    def script(request) -> str:
        return f"动作：{outside.get('text', '过牌')}"

    agent = LLMAgent(ScriptedClient(script), preset="paper001", recommender=recommender)
    ep = play_episode(spec, seats(spec, agent), seed=0, env_kwargs={"max_cycles": 3})
    reprompts = [
        c["messages"][-1]["content"]
        for s in mine(ep)
        if s["info"].get("llm", {}).get("notes", {}).get("top_k")  # a shortlist was shown
        for c in s["info"]["llm_calls"]
        if c["step"] == "reprompt"
    ]
    assert reprompts and all("不是当前的候选动作之一" in r for r in reprompts)


# ----------------------------------------------------------------------------- 002
@pytest.mark.parametrize(
    ("preset", "top_p"), [("paper002", 1.0), ("paper002-overcooked", 0.9), ("paper002-collab", 0.9)]
)
def test_paper002_samples_as_the_authors_did(preset: str, top_p: float) -> None:
    """temperature 0.6; top_p 1 for Hanabi, 0.9 for the others (the authors' code)."""
    from tom_llm_agents.presets import PRESETS

    client = ScriptedClient(lambda r: "Verification: Okay\nExplanation: e\nAction: 1")
    agent = LLMAgent(client, preset=preset)
    spec = game_spec(PRESETS[preset].game)
    play_episode(spec, seats(spec, agent), seed=0, env_kwargs={"max_cycles": 2})
    assert client.requests and all(
        r.temperature == 0.6 and r.top_p == top_p and r.seed is not None for r in client.requests
    )
    assert "temperature" not in PRESETS[preset].unstated


def _hanabi_vetoing(vetoes: int):
    seen = {"verify": 0}

    def script(r) -> str:
        system = r.messages[0]["content"]
        last = r.messages[-1]["content"]
        if "action verification agent" in last or "action verification agent" in system:
            seen["verify"] += 1
            if seen["verify"] <= vetoes:
                return (
                    f"Playing blind loses a life (check {seen['verify']}). Verification: Not Okay"
                )
            return "Safe. Verification: Okay"
        if "Theory of Mind inference agent" in last:
            return "Partner Action Explanation: none\nSuggestion: none"
        return "Explanation: e\nAction: " + ("A" if "not appropriate" in last else "G")

    return script


def test_paper002_verifier_critique_returns_to_the_generators_conversation() -> None:
    spec = game_spec("Hanabi")
    agent = LLMAgent(ScriptedClient(_hanabi_vetoing(1)), preset="paper002")
    ep = play_episode(spec, seats(spec, agent), seed=0, env_kwargs={"max_cycles": 1})
    (step,) = mine(ep)
    calls = step["info"]["llm_calls"]
    assert [c["step"] for c in calls] == ["action", "verify", "revise", "verify"]
    first, revise = calls[0], calls[2]
    assert revise["messages"][: len(first["messages"])] == first["messages"]  # same conversation
    assert revise["messages"][len(first["messages"])] == {
        "role": "assistant",
        "content": first["reply"],
    }
    note = revise["messages"][-1]["content"]
    assert note.startswith("Your selected action: G. Play my Card 0 is not appropriate. ")
    assert "Playing blind loses a life (check 1). Verification: Not Okay" in note
    assert "Please choose another action." in note
    listed = note.split("List of Available Actions:\n")[1].splitlines()
    assert "G. Play my Card 0" not in listed and "A. Reveal Bobs Red color cards" in listed
    assert step["action_text"].startswith("A. ")
    assert step["info"]["llm"]["notes"]["verify"] == {"vetoes": 1, "cap": 10, "cap_reached": False}


def test_paper002_verifier_cap_is_recorded_when_reached() -> None:
    spec = game_spec("Hanabi")
    agent = LLMAgent(ScriptedClient(_hanabi_vetoing(99)), preset="paper002", verify_rounds=3)
    (step,) = mine(play_episode(spec, seats(spec, agent), seed=0, env_kwargs={"max_cycles": 1}))
    notes = step["info"]["llm"]["notes"]
    assert notes["verify"] == {"vetoes": 3, "cap": 3, "cap_reached": True}
    assert [c["step"] for c in step["info"]["llm_calls"]].count("revise") == 3
    assert agent.config()["verify_rounds"] == 3


def test_paper002_overcooked_prompt_has_the_conventions_line() -> None:
    spec = game_spec("Overcooked")
    client = ScriptedClient(["Explanation: e\nAction: 1"])
    agent = LLMAgent(client, preset="paper002-overcooked")
    play_episode(spec, seats(spec, agent, "greedy"), seed=0, env_kwargs={"max_cycles": 2})
    system = client.requests[0].messages[0]["content"]
    assert (
        "We have agreed to follow the following conventions: 1. We will try to maximize the "
        "number of deliveries. 2. We will try to be efficient and prepare for the next soup "
        "while the current soup is cooking." in system
    )
    assert system.index("Overcooked has the following rules") < system.index("conventions")


@pytest.mark.parametrize("grounding", ["parser", "fuzzy"])
def test_fuzzy_grounding_is_a_named_option(grounding: str) -> None:
    spec = game_spec("CollabEscape")
    replies = ["Analysis: run\nAction: I will go to rom 5 quickly", "I go to the room, five"]
    agent = LLMAgent(
        ScriptedClient(lambda r: replies[r.sample % 2] if r.sample < 2 else replies[1]),
        preset="paper002-collab",
        grounding=grounding,
        reprompts=0,
    )
    assert agent.config()["grounding"] == grounding
    ep = play_episode(spec, seats(spec, agent, "greedy"), seed=0, env_kwargs={"max_cycles": 1})
    (step,) = mine(ep)
    notes = step["info"]["llm"].get("notes", {})
    if grounding == "parser":  # the suite's default: not read, a counted fallback
        assert not step["valid"] and "grounding" not in notes
    else:  # the authors': the closest action, recorded as such
        assert step["valid"] and notes["grounding"]["said"] == "i will go to rom 5 quickly"
        assert notes["grounding"]["action"] == step["action_text"]
        assert agent.episode_stats["fuzzy_grounded"] == 1


def test_fuzzy_grounding_never_grounds_an_unmarked_reply() -> None:
    from tom_llm_agents.answering import fuzzy_ground

    options = {0: "Move to room 2", 1: "Wait"}
    assert fuzzy_ground("no idea really", options) is None  # the authors drew at random
    assert fuzzy_ground("Action: wiat", options)[0] == 1
    assert fuzzy_ground("Action: room 2", options)[:2] == (0, "room 2")
    assert fuzzy_ground("Action: " + "x" * 100_000, options) is not None  # cut, linear


# ----------------------------------------------------------------------------- 003
STEPS_REPLY = (
    "World state: nothing built\nPartner modelling: # Partner Modelling # Long-term goal: x\n"
    "Reflection: no mistake\nAction: wait()"
)
PARTNER_WORDS = ("Partner modelling", "Partner Modelling", "Long-term goal", "Short-term goal",
                 "Partner resources", "Reflection:", "altruism")  # fmt: skip


def _coblock_calls(preset: str) -> list[dict]:
    spec = game_spec("CoBlock")
    agent = LLMAgent(ScriptedClient([STEPS_REPLY]), preset=preset)
    ep = play_episode(spec, seats(spec, agent, "cooperative"), seed=0, env_kwargs={"max_cycles": 2})
    assert all(s["valid"] for s in mine(ep))
    return [c for s in mine(ep) for c in s["info"]["llm_calls"]]


def test_paper003_is_one_generation_with_the_four_steps_and_eight_examples() -> None:
    from tom_llm_agents.fewshot import EXAMPLE_SETS

    calls = _coblock_calls("paper003")
    assert [c["step"] for c in calls] == ["action", "action"]  # one call per decision
    system, user = calls[0]["messages"][0]["content"], calls[0]["messages"][-1]["content"]
    assert system.count("\nExample ") == 8
    fmt = user.split("Format your response as\n", 1)[1].splitlines()
    assert [ln.split(":")[0] for ln in fmt[:4]] == [
        "World state",
        "Partner modelling",
        "Reflection",
        "Action",
    ]
    kinds = [e.kind for e in EXAMPLE_SETS["paper003"]]
    assert kinds.count("independent") == 2 and kinds.count("skill-dependent") == 3
    assert kinds.count("goal-dependent") == 3 and len(kinds) == 8
    for e in EXAMPLE_SETS["paper003"]:  # each example shows all four steps
        shown = e.render(1, False, fields=["world_state", "partner_modelling", "reflection"])
        assert all(f"\n{lab}: " in shown for lab in ("World state", "Partner modelling",
                                                       "Reflection", "Action"))  # fmt: skip


def test_paper003_baseline_examples_contain_no_partner_modelling() -> None:
    calls = _coblock_calls("paper003-baseline")
    assert [c["step"] for c in calls] == ["action", "action"]
    system, user = calls[0]["messages"][0]["content"], calls[0]["messages"][-1]["content"]
    assert system.count("\nExample ") == 8 and "World state: " in system
    for word in PARTNER_WORDS:
        assert word not in system and word not in user, word
    full = _coblock_calls("paper003")[0]["messages"][0]["content"]
    assert all(word in full for word in ("Partner modelling", "Long-term goal", "Reflection:"))


def test_every_paper003_example_command_is_a_coblock_command() -> None:
    from tom_envs.games.coblock.text import CoBlockText
    from tom_llm_agents.fewshot import EXAMPLE_SETS

    spec = game_spec("CoBlock")
    text = spec.load().make_bundle(**spec.kwargs).text
    assert isinstance(text, CoBlockText)
    for e in EXAMPLE_SETS["paper003"]:
        assert not isinstance(text._read(e.action), str), e.action  # a command, not feedback
        for tag in ("<Motives>", "<World>", "<Inventory>", "<Dialogue>", "<ComparisonResult>"):
            assert tag in e.situation


def test_paper003_three_call_variant_is_labelled_and_costs_three_calls() -> None:
    from tom_llm_agents.presets import PRESETS

    assert "variant, not the paper's protocol" in PRESETS["paper003-3call"].reproduces
    steps = [c["step"] for c in _coblock_calls("paper003-3call")]
    assert steps == ["partner_modelling", "action", "partner_modelling", "self_reflection",
                     "action"]  # fmt: skip


# ----------------------------------------------------------------------------- 004
@pytest.mark.parametrize(
    ("game", "settings", "payoffs"),
    [
        ("RockPaperScissors", {"preset": "paper004-cot"}, True),
        ("PrisonersDilemma", {"preset": "paper004-cot"}, True),
        ("RockPaperScissors", {"strategy": "cot", "hide_payoffs": True}, False),
        ("Hanabi", {"strategy": "cot"}, False),
        ("CollabEscape", {"strategy": "cot+tom"}, False),
    ],
)
def test_the_cot_instruction_speaks_of_payoffs_only_where_there_are_some(
    game: str, settings: dict, payoffs: bool
) -> None:
    spec = game_spec(game)
    client = ScriptedClient(lambda r: "Reasoning: r\nPrediction: 1\nAction: 1")
    agent = LLMAgent(client, **settings)
    kw = {"horizon": 1} if "Rock" in game or "Prisoner" in game else {"max_cycles": 2}
    play_episode(spec, seats(spec, agent, "random"), seed=0, env_kwargs=kw)
    asked = [
        r.messages[-1]["content"] for r in client.requests if "step by step" in str(r.messages)
    ]
    assert asked and all(("rules and payoffs" in a) == payoffs for a in asked)
    assert all("Let's think step by step" in a for a in asked)


def test_paper004_never_reads_a_contraction_as_an_option() -> None:
    """The SmolLM2 run of the issue: "What's" read as Option S made a decision "valid"."""
    spec = game_spec("RockPaperScissors")
    replies = ["What's the best move? Let's see what the player's next move is.", "Action: S"]
    client = ScriptedClient(lambda r: replies[0] if r.sample == 0 else replies[1])
    agent = LLMAgent(client, preset="paper004")
    ep = play_episode(spec, seats(spec, agent, "always_0"), seed=0, env_kwargs={"horizon": 1})
    (step,) = mine(ep)
    steps = [c["step"] for c in step["info"]["llm_calls"]]
    assert steps[:2] == ["action", "resample"]  # the first reply named no option
    assert step["valid"] and step["action_text"] == "Option S"
