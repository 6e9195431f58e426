"""The legal actions offered on request (``menu="tool"``, the bench's ``--legal-actions tool``):
the prompt lists none but offers them; a reply ``LIST`` gets them in a follow-up message, a counted
call under the step ``legal_actions``, at most once per decision."""

from __future__ import annotations

import pytest

from tom_envs.agents import make_agent
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode
from tom_llm_agents import LLMAgent, ScriptedClient
from tom_llm_agents.client import LLMRequest

SPEC = game_spec("BombDefusal")


def _play(agent: LLMAgent) -> list[dict]:
    team = [agent, *(make_agent("heuristic", SPEC) for _ in range(2))]
    ep = play_episode(SPEC, team, seed=3, env_kwargs={"max_cycles": 6})
    return [s for s in ep.steps if s["agent"] == "player_0"]


def asks_then_answers(request: LLMRequest) -> str:
    last = request.messages[-1]["content"]
    if last.startswith("Legal actions:"):
        return "Action: " + last.splitlines()[1].removeprefix("- ")
    return "LIST" if "reply with the single word LIST" in last else "no idea"


def test_the_list_is_given_only_when_asked_and_the_call_is_counted() -> None:
    steps = _play(LLMAgent(ScriptedClient(asks_then_answers), menu="tool", probes=False))
    asked = [s for s in steps if not s["info"].get("forced")]
    assert asked
    for s in asked:
        calls = s["info"]["llm_calls"]
        assert [c["step"] for c in calls] == ["action", "legal_actions"]
        first = calls[0]["messages"][-1]["content"]
        assert "Legal actions:" not in first and "reply with the single word LIST" in first
        assert calls[1]["messages"][-1]["content"].startswith("Legal actions:")
        assert s["valid"] and s["info"]["usage"]["calls"] == 2  # both calls paid and counted


def test_a_second_list_request_is_an_invalid_answer_and_other_menus_ignore_it() -> None:
    # always LIST: the list is given once, the next LIST is an unparseable answer (re-asked)
    steps = _play(LLMAgent(ScriptedClient(["LIST"]), menu="tool", probes=False, reprompts=1))
    s = next(s for s in steps if not s["info"].get("forced"))
    assert [c["step"] for c in s["info"]["llm_calls"]] == ["action", "legal_actions", "reprompt"]
    assert not s["valid"] and s["info"]["failure"]["kind"] == "unparseable"
    # menu=none offers nothing and gives nothing on request
    steps = _play(LLMAgent(ScriptedClient(["LIST"]), menu="none", probes=False, reprompts=0))
    s = next(s for s in steps if not s["info"].get("forced"))
    assert [c["step"] for c in s["info"]["llm_calls"]] == ["action"]
    assert "LIST" not in s["info"]["llm_calls"][0]["messages"][-1]["content"]
    with pytest.raises(ValueError, match="menu='tool' needs decoding='free'"):
        LLMAgent(ScriptedClient(["x"]), menu="tool", decoding="json")
