"""The LLM agent answers next-action questions (tom_envs.partners.prediction) in a separate call:
its acting prompts are the same with questions on or off, its answer is read as the option it
names, and the calls are counted in the estimate printed before the first call (the bench's
literal ToM column, issue #36)."""

from __future__ import annotations

import dataclasses
from importlib.util import find_spec
from pathlib import Path

import pytest

from tom_envs.agents import make_agent
from tom_envs.evaluation.backends import Job, run_job
from tom_envs.evaluation.cost import estimate_jobs
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode

pytestmark = pytest.mark.skipif(
    find_spec("openai") is None, reason="the openai package (the llm extra) is not installed"
)

RPS = game_spec("RockPaperScissors")
QUESTION = "Reply with the number of one option only."


def _agent(script):
    from tom_llm_agents.agent import LLMAgent
    from tom_llm_agents.fake import ScriptedClient

    client = ScriptedClient(script)
    return LLMAgent(client=client, probes=False), client


def test_questions_leave_the_acting_prompts_unchanged_and_are_read() -> None:
    acting = {}
    for predict in ("off", "every:2"):
        agent, client = _agent(
            lambda r: "Action: Rock" if QUESTION not in r.messages[-1]["content"] else "2"
        )
        ep = play_episode(
            RPS, [agent, make_agent("alternating", RPS)], 0, {"horizon": 5}, predict=predict
        )
        asked = [r for r in client.requests if QUESTION in r.messages[-1]["content"]]
        acting[predict] = [r.messages for r in client.requests if r not in asked]
        if predict == "off":
            assert not asked
            continue
        # decisions 0, 2 and 4 of the agent are asked, one call each, counted in its usage
        entries = [s["predict"][0] for s in ep.steps if s.get("predict")]
        assert len(asked) == len(entries) == 3
        assert all(e["action"] == e["order"][1] for e in entries)  # "2" = the second shown option
        assert ep.metrics["usage/calls/player_0"] == len(client.requests)
        for r in asked:  # options only: no answer, no partner name or policy in the question
            assert "alternating" not in r.messages[-1]["content"]
    assert acting["off"] == acting["every:2"]


def test_the_estimate_counts_the_questions(faulty_endpoint, tmp_path: Path) -> None:
    ep = faulty_endpoint([{"content": "Action: Option J"}])
    spec = f"llm:model=m:base_url={ep.base_url}:temperature=0:probes=false"
    pd = game_spec("PrisonersDilemma")
    base = Job("c", pd.name, {"horizon": 4}, (spec, "tit_for_tat"), ("agent", "partner"), 0,
               str(tmp_path), (), 1.0, (True, False))  # fmt: skip
    jobs = {
        p: [dataclasses.replace(base, seed=s, predict=p) for s in (0, 1)] for p in ("off", "all")
    }
    off, on = estimate_jobs(jobs["off"]), estimate_jobs(jobs["all"])
    assert ep.requests == []  # offline
    assert on.calls == off.calls + 8  # one question at each of 4 decisions, 2 episodes
    for job in jobs["all"]:
        assert run_job(job).ok
    assert len(ep.requests) == on.calls  # what the estimate said, exactly
