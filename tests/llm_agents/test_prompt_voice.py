"""One voice per prompt: the prompts the LLM agent actually sends, built for every game and preset.

Each case plays a short seeded episode with a scripted model (it answers "Action: 1", the first
listed legal action under the suite's number rule, after any fields asked for) and checks every
action prompt (the system message and the final user message of an ``action``/``reprompt``/
``resample`` call):

* no foreign seat names: no ``player_k`` ids in games whose own text names seats otherwise;
* exactly one answer-format instruction, and it is the one the agent parses (the game's own
  format sentence, e.g. bomb defusal's "Action selection: ... Message to Team: ...", is gone;
  with ``answer_format="game"``, paper 000's protocol, it is the only one, in the rules);
* no list of legal actions in paper 000's protocol (``menu="none"``, the game's format);
* every required field described (chat games' ``message``, CoT's reasoning);
* no history shown twice (no episodic-memory list where the observation shows the history) and
  no legal-action list shown twice;
* bomb defusal's tool sentence written for the reader's seat.
"""

from __future__ import annotations

import re

import pytest

from tom_envs.agents import make_agent
from tom_envs.registration import GAMES, game_spec
from tom_envs.runner import play_episode
from tom_llm_agents import LLMAgent, ScriptedClient
from tom_llm_agents.client import LLMRequest
from tom_llm_agents.presets import PRESETS
from tom_llm_agents.settings import HISTORY_IN_OBSERVATION

#: Every way a prompt can state an answer format (the agent's and the games' own wordings).
FORMAT_MARKERS = (
    "Format your response",
    "format your response",
    "fixed format",
    "Reply with a JSON object",
    "Answer with one of the numbered",
    "请按以下格式回答",
    "请从编号的合法动作中选择一个",
)
MATRIX = ("RockPaperScissors", "BattleOfSexes", "PrisonersDilemma")
#: Games whose own text names the seats player_k (CoBlock's paper prompt: "You are player_0").
SEATS_AS_IDS = ("CoBlock",)
ACTION_STEPS = ("action", "reprompt", "resample")


def script(request: LLMRequest) -> str:
    text = "\n".join(m["content"] for m in request.messages) if request.messages else ""
    if "action verification agent" in text:
        return "Verification: Okay"
    if "Reply with a JSON object" in text:
        keys = re.findall(r'"(\w+)"', text.split("Reply with a JSON object", 1)[1].split(".")[0])
        body = ", ".join(f'"{k}": "1"' if k == "action" else f'"{k}": "r"' for k in keys)
        return "{" + body + "}"
    return "Reasoning: r\nMessage: hello\nAction: 1"


def run(game: str, preset: str | None, **settings) -> tuple[list[dict], LLMAgent]:
    spec = game_spec(game)
    n = spec.load().make_bundle(**spec.kwargs).game.num_players
    if preset is not None and "oracle" in preset:
        settings.setdefault("oracle_partner", "always_0")
    agent = LLMAgent(ScriptedClient(script), preset=preset, **settings)
    env_kwargs = dict(PRESETS[preset].env_kwargs) if preset else {}
    env_kwargs.update({"horizon": 3} if game in MATRIX else {"max_cycles": 3 * n})
    others = [make_agent("random", spec) for _ in range(n - 1)]
    ep = play_episode(spec, [agent, *others], seed=0, env_kwargs=env_kwargs)
    calls = [
        c
        for s in ep.steps
        if s["agent"] == "player_0"
        for c in s.get("info", {}).get("llm_calls", [])
        if c["step"] in ACTION_STEPS
    ]
    return calls, agent


def prompt_of(call: dict) -> tuple[str, str]:
    """The system message and the user message that asks for the action (a re-prompt's last
    message only says "answer again in the required format": the question is the one before)."""
    messages = call["messages"]
    system = messages[0]["content"] if messages[0]["role"] == "system" else ""
    users = [m["content"] for m in messages if m["role"] == "user"]
    if call["step"] == "reprompt":  # attempt k: k re-prompts follow the question
        assert all("required format" in u or "要求的格式" in u for u in users[-call["sample"] :])
        users = users[: -call["sample"]]
    return system, users[-1]


def check_one_voice(game: str, calls: list[dict], agent: LLMAgent) -> None:
    assert calls, f"{game}: no action prompt was sent"
    for call in calls:
        system, user = prompt_of(call)
        prompt = system + "\n" + user
        if game not in SEATS_AS_IDS:
            assert not re.search(r"player_\d", prompt), f"{game}: a player_k id in the prompt"
        formats = sum(prompt.count(m) for m in FORMAT_MARKERS)
        assert formats == 1, f"{game}: {formats} answer-format instructions"
        if agent.answer_format_setting == "game":  # paper 000: no list, the original's role
            assert "Legal actions:" not in prompt and "legal actions" not in system
        json_mode = "Reply with a JSON object" in prompt
        if agent.answer_format_setting == "game":  # the game's own format, in the rules only
            assert "fixed format" in system and system.count("Action selection:") == 1
            assert "Action selection:" not in user and 'Message: "<' not in user
            continue
        assert "Action selection:" not in prompt and "Message to Team" not in prompt
        if agent._chat and game != "CoBlock":  # CoBlock's message is inside send_message(...)
            assert ('"message": ' if json_mode else 'Message: "<') in user, f"{game}: message"
        else:
            assert 'Message: "<' not in user and '"message": ' not in user
        if game in HISTORY_IN_OBSERVATION and agent.memory_setting == "auto":
            assert "Your previous decisions" not in user, f"{game}: history shown twice"
        legal_lists = user.count("Legal actions:") + user.count("Available actions:")
        legal_lists += user.count("Available Actions:")
        assert legal_lists <= 1, f"{game}: the legal actions listed {legal_lists} times"


CASES = [
    *((p.game, name) for name, p in PRESETS.items()),
    *((s.name, None) for s in GAMES),
]


@pytest.mark.parametrize(("game", "preset"), CASES, ids=[f"{g}-{p or 'qa'}" for g, p in CASES])
def test_every_game_and_preset_speaks_with_one_voice(game: str, preset: str | None) -> None:
    calls, agent = run(game, preset)
    check_one_voice(game, calls, agent)


@pytest.mark.parametrize("game", [s.name for s in GAMES])
def test_constrained_prompts_describe_every_key_once(game: str) -> None:
    calls, agent = run(game, None, strategy="cot", decoding="json")
    check_one_voice(game, calls, agent)
    for call in calls:
        _, user = prompt_of(call)
        assert '"reasoning": ' in user and user.count("Reply with a JSON object") == 1


def test_the_reasoning_field_is_described_where_it_is_asked() -> None:
    calls, _ = run("CollabEscape", "paper002-collab")  # 002's "Explanation: ... Action: ..."
    for call in calls:
        _, user = prompt_of(call)
        assert "Explanation: <brief explanation for selecting the move>" in user
        assert "Analysis:" not in user and "Action: <letter or action>" not in user
    calls, _ = run("CollabEscape", None, strategy="cot")
    for call in calls:
        _, user = prompt_of(call)
        assert "Reasoning: <your step-by-step reasoning" in user


def test_bomb_defusal_tools_are_written_for_each_seat() -> None:
    spec = game_spec("BombDefusal")
    env = spec.load().raw_env(**spec.kwargs)
    env.reset(seed=0)
    names = [a.capitalize() for a in env.unwrapped.bundle.game.config.agents]
    for k, agent in enumerate(env.possible_agents):
        rules = env.unwrapped.text_observation(agent).rules
        assert f"As player {names[k]}, you have" in rules
        others = [n for i, n in enumerate(names) if i != k]
        assert all(f"As player {n}," not in rules for n in others)


def test_game_answer_formats_are_verbatim_in_their_text() -> None:
    """A game's ``answer_format`` is text its prompt really contains (so the agent can remove it)."""
    found = 0
    for spec in GAMES:
        env = spec.load().raw_env(**spec.kwargs)
        env.reset(seed=0)
        for agent in env.possible_agents:
            t = env.unwrapped.text_observation(agent)
            if t.answer_format:
                assert t.answer_format in t.rules or t.answer_format in t.observation
                found += 1
    assert found >= 4  # bomb defusal, CollabCapture, CollabEscape, Guandan


def test_paper004_table2_presets_name_the_rps_actions_r_p_s() -> None:
    """004 App. C: Tables 1-2 name the RPS actions R, P, S; Tables 3 and 10 use J, F, B."""
    calls, _ = run("RockPaperScissors", "paper004")
    system, user = prompt_of(calls[0])
    assert "you can choose between Option R, Option P and Option S" in system
    assert "Q: Which Option do you choose, Option R, Option P or Option S?" in user
    assert "Option J" not in system + user
    letters, _ = run("RockPaperScissors", "paper004-cot3shot")
    system, user = prompt_of(letters[0])
    assert "Option J, Option F and Option B" in system and "Option R" not in system + user
    assert PRESETS["paper004"].env_kwargs == {"action_names": "rps"}
    spec = game_spec("RockPaperScissors")
    env = spec.load().raw_env(**spec.kwargs, action_names="rps", horizon=2)
    env.reset(seed=0)
    u = env.unwrapped
    assert u.text_observation("player_0").legal_actions == {
        0: "Option R",
        1: "Option P",
        2: "Option S",
    }
    for said, action in (("Option P", 1), ("S", 2), ("Action: R", 0), ("2", 1)):
        assert u.parse_action("player_0", said).action == action, said
    with pytest.raises(ValueError, match="Rock, Paper, Scissors only"):
        game_spec("PrisonersDilemma").load().make_bundle(game="ipd", action_names="rps")
