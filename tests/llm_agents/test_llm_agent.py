"""The agent's logic with a scripted client: parsing, the invalid-output policy, memory, usage,
every strategy's wiring, predictions, probes, oracles, specs. The real model is in
test_llm_local.py."""

from __future__ import annotations

import json
from importlib.util import find_spec

import pytest

from tom_envs.agents import make_agent
from tom_envs.core.aec import TomAECEnv
from tom_envs.core.agents import EpisodeInfo, Turn
from tom_envs.core.game import GameTags
from tom_envs.registration import game_spec
from tom_envs.runner import Episode, play_episode
from tom_llm_agents import LLMAgent, ScriptedClient
from tom_llm_agents.client import LLMRequest
from tom_llm_agents.failures import LLMError
from tom_llm_agents.prompting import PIECES, PRESETS, build_strategy, strategy_names
from tom_llm_agents.prompting.oracles import matrix_partner_oracle

needs_openai = pytest.mark.skipif(
    find_spec("openai") is None, reason="the openai package (the llm extra) is not installed"
)

PD = game_spec("PrisonersDilemma")
SHORT = {"horizon": 3}


def play(agent: LLMAgent, partner: str = "tit_for_tat", spec=PD, **kw) -> Episode:
    return play_episode(spec, [agent, make_agent(partner, spec)], seed=0, env_kwargs=kw or SHORT)


def mine(ep: Episode) -> list[dict]:
    return [s for s in ep.steps if s["agent"] == "player_0"]


def text_of(request: LLMRequest) -> str:
    return (
        "\n".join(m["content"] for m in request.messages)
        if request.messages
        else (request.prompt or "")
    )


def test_constrained_answer_is_parsed_and_usage_recorded() -> None:
    c = ScriptedClient(['{"action": "Option F"}'])
    ep = play(LLMAgent(c, decoding="json"))
    steps = mine(ep)
    assert [s["action_text"] for s in steps] == ["Option F"] * 3
    assert all(s["valid"] for s in steps)
    schema = c.requests[0].schema
    assert schema["properties"]["action"]["enum"] == ["Option J", "Option F"]
    usage = steps[0]["info"]["usage"]
    assert usage["calls"] == 1 and usage["tokens_in"] > 0 and usage["reprompts"] == 0
    m = ep.metrics
    assert m["valid_action_pct/player_0"] == 100.0
    assert m["usage/calls/player_0"] == 3 and m["usage/fallbacks/player_0"] == 0
    assert m["usage/tokens_out/player_0"] == sum(s["info"]["usage"]["tokens_out"] for s in steps)
    (call,) = steps[0]["info"]["llm_calls"]  # the call record holds what was sent and received
    assert call["decoding"] == "json" and call["reply"] == '{"action": "Option F"}'
    assert call["messages"] == c.requests[0].messages and call["cache_hit"] is False
    assert call["usage"]["tokens_in"] == usage["tokens_in"] and "latency_s" in call


def test_invalid_output_reprompts_with_the_games_feedback() -> None:
    c = ScriptedClient(["I like turtles", "still no idea", "Action: Option F"])
    agent = LLMAgent(c, reprompts=2)
    ep = play(agent, horizon=1)
    (step,) = mine(ep)
    assert step["valid"] and step["action_text"] == "Option F"
    assert step["info"]["usage"]["reprompts"] == 2
    second = c.requests[1].messages
    assert second[-2] == {"role": "assistant", "content": "I like turtles"}
    assert "could not match 'I like turtles'" in second[-1]["content"]  # the game's parser speaks
    assert "Option J; Option F" in second[-1]["content"]
    assert [cl["step"] for cl in step["info"]["llm_calls"]] == ["action", "reprompt", "reprompt"]
    assert all(cl["decoding"] == "free" for cl in step["info"]["llm_calls"])


def test_fallback_after_k_reprompts_is_counted_invalid() -> None:
    c = ScriptedClient(["no"])
    agent = LLMAgent(c, reprompts=1, fallback="first")
    ep = play(agent)
    steps = mine(ep)
    assert all(not s["valid"] and s["action_text"] == "Option J" for s in steps)
    assert ep.invalid["player_0"] == 3
    assert ep.metrics["valid_action_pct/player_0"] == 0.0
    assert ep.metrics["usage/fallbacks/player_0"] == 3
    assert ep.metrics["usage/reprompts/player_0"] == 3
    assert agent.valid_action_pct == 0.0 and len(c.requests) == 6
    for s in steps:  # a fallback is marked as one, with its cause, never as the model's move
        assert s["info"]["fallback"] is True and s["info"]["fallback_cause"] == "unparseable"
        assert s["info"]["failure"]["kind"] == "unparseable"


def test_random_fallback_is_seeded() -> None:
    picks = []
    for _ in range(2):
        ep = play(LLMAgent(ScriptedClient(["no"]), reprompts=0), horizon=6)
        picks.append([s["action"] for s in mine(ep)])
    assert picks[0] == picks[1] and len(set(picks[0])) == 2


def test_plain_text_mode_reads_labelled_fields() -> None:
    reply = "Reasoning: they copy me, so cooperating pays.\nAction: Option J"
    c = ScriptedClient([reply])
    ep = play(LLMAgent(c, strategy="cot"), horizon=1)
    (step,) = mine(ep)
    assert step["action_text"] == "Option J"
    assert step["info"]["llm"]["fields"]["reasoning"].startswith("they copy me")
    assert c.requests[0].schema is None
    user = c.requests[0].messages[-1]["content"]
    # one answer format, stated once, every field described, equal to what is parsed
    assert user.endswith(
        "Format your response as\nReasoning: <your step-by-step reasoning, in a few sentences>\n"
        "Action: <one of the legal actions>\nDo not say anything else."
    )
    assert user.count("Action:") == 1 and "JSON" not in text_of(c.requests[0])


def test_schema_refused_by_server_falls_back_to_parsing() -> None:
    c = ScriptedClient(["Action: Option F"], supports_schema=False)
    ep = play(LLMAgent(c, decoding="json"), horizon=2)
    assert all(s["valid"] and s["action_text"] == "Option F" for s in mine(ep))
    assert "Action: <one of the legal actions>" in text_of(c.requests[-1])  # plain format now


def test_episodic_memory_and_chat_history() -> None:
    c = ScriptedClient(["Action: Option F"])
    play(LLMAgent(c, memory=5, history=1))
    third = c.requests[2]
    body = text_of(third)
    assert "Your previous decisions (most recent last):" in body
    assert "- decision 1: Option F\n- decision 2: Option F" in body
    assert "reward" not in body.split("Your previous decisions")[1].split("\n\n")[0]
    roles = [m["role"] for m in third.messages]
    assert roles == ["system", "user", "assistant", "user"]  # one past exchange kept verbatim
    assert "Your previous decisions" not in text_of(c.requests[0])


def test_model_errors_become_counted_fallbacks() -> None:
    c = ScriptedClient([ValueError("server exploded")])
    ep = play(LLMAgent(c), horizon=2)
    steps = mine(ep)
    assert all(not s["valid"] and s["info"]["fallback"] for s in steps)
    assert "server exploded" in steps[0]["info"]["llm"]["error"]
    assert steps[0]["info"]["failure"]["kind"] == "endpoint"
    assert ep.length == 2


def test_self_verification_vetoes_and_reasks() -> None:
    def script(r: LLMRequest) -> str:
        if r.schema and "verification" in r.schema["properties"]:
            bad = "Selected action: Option J" in text_of(r)
            return json.dumps({"analysis": "hm", "verification": "Not Okay" if bad else "Okay"})
        enum = r.schema["properties"]["action"]["enum"]
        return json.dumps({"action": enum[0]})

    c = ScriptedClient(script)
    ep = play(LLMAgent(c, strategy="verify", decoding="json"), horizon=1)
    (step,) = mine(ep)
    assert step["action_text"] == "Option F"
    notes = step["info"]["llm"]["notes"]
    assert notes["vetoed"] == ["Option J"]
    assert notes["verification"][0] == {"action": "Option J", "okay": False}


def test_predictions_reach_the_games_tom_metrics() -> None:
    def script(r: LLMRequest) -> str:
        if r.schema and "prediction" in r.schema["properties"]:
            return '{"prediction": "Option J"}'
        return '{"action": "Option J"}'

    for strategy in ("social", "predict"):
        c = ScriptedClient(script)
        ep = play(LLMAgent(c, strategy=strategy, decoding="json"))
        assert all(s["prediction"] == {"partner_action": 0} for s in mine(ep))
        assert ep.metrics["tom_accuracy"] == 100.0  # tit-for-tat copies J: always right
        prompts = [text_of(r) for r in c.requests]
        social = any("I predict that the other player will choose Option J" in p for p in prompts)
        assert social == (strategy == "social")


def lm_logprobs(r: LLMRequest) -> list[dict[str, float]]:
    if r.prompt.endswith("A:"):
        return [{" Option": -0.2, " I": -3.0}]
    return [{" J": -2.0, " F": -0.5}]


def test_lm_decider_scores_actions_by_token_logprobs() -> None:
    c = ScriptedClient(["x"], logprobs=lm_logprobs)
    ep = play(LLMAgent(c, strategy="lm+predict_lm"), horizon=1)
    (step,) = mine(ep)
    notes = step["info"]["llm"]["notes"]
    assert step["action_text"] == "Option F"
    assert notes["lm_scores"] == {"Option J": -2.2, "Option F": -0.7} and notes["lm_exact"]
    assert step["prediction"] == {"partner_action": 1}
    assert all(r.prompt is not None and r.max_tokens == 1 for r in c.requests)
    assert "You have chosen Option F for this round." in c.requests[-1].prompt
    assert len(c.requests) == 4  # " Option" once, then " J"/" F" once, for act and predict


def test_lm_decider_falls_back_to_qa_without_logprobs() -> None:
    c = ScriptedClient(['{"action": "Option J"}'])
    ep = play(LLMAgent(c, strategy="lm", decoding="json"), horizon=1)
    (step,) = mine(ep)
    assert step["valid"] and "lm_fallback" in step["info"]["llm"]["notes"]


def test_tom_planning_shortlists_the_recommenders_top_k() -> None:
    c = ScriptedClient(
        lambda r: (
            json.dumps({"evaluation": "ok", "action": r.schema["properties"]["action"]["enum"][0]})
            if r.schema
            else "they cooperate"
        )
    )
    spec = game_spec("RockPaperScissors")
    agent = LLMAgent(
        c,
        strategy="tom2",
        recommender=lambda view: {0: 0.1, 1: 0.9, 2: 0.5},
        top_k=2,
        decoding="json",
    )
    ep = play(agent, partner="always_0", spec=spec, horizon=1)
    (step,) = mine(ep)
    action_req = c.requests[-1]
    assert action_req.schema["properties"]["action"]["enum"] == ["Option F", "Option B"]
    assert "top 2 of 3 by the action recommender" in text_of(action_req)
    assert "second-order Theory of Mind" in text_of(c.requests[0])
    assert step["action_text"] == "Option F"


@pytest.mark.parametrize("strategy", sorted(PIECES) + sorted(PRESETS) + ["qa", "cot", "lm"])
def test_every_strategy_name_runs_with_a_scripted_model(strategy: str) -> None:
    def script(r: LLMRequest) -> str:
        if r.schema is None:
            return "Below is your current belief: fine."
        props = r.schema["properties"]
        return json.dumps(
            {k: (v["enum"][-1] if "enum" in v else "short") for k, v in props.items()}
        )

    c = ScriptedClient(script, logprobs=lm_logprobs)
    agent = LLMAgent(c, strategy=strategy, oracle_partner="tit_for_tat", decoding="json")
    ep = play(agent, horizon=2)
    assert all(s["valid"] for s in mine(ep)), strategy
    assert ep.metrics["usage/calls/player_0"] >= 2


def test_strategy_strings() -> None:
    decider, pieces = build_strategy("social+cot+s2a+verify")
    assert decider.name == "cot"
    assert [p.name for p in pieces] == ["s2a", "social", "verify"]  # priority order
    assert [p.name for p in build_strategy("paper002")[1]] == ["tom", "verify"]
    with pytest.raises(ValueError, match="unknown"):
        build_strategy("qa+telepathy")
    with pytest.raises(ValueError, match="one decider"):
        build_strategy("qa+cot")
    with pytest.raises(ValueError, match="oracle"):
        build_strategy("oracle")
    assert {"qa", "lm", "belief", "tom2", "reflexion", "paper003"} <= set(strategy_names())


class OracleSpy(LLMAgent):
    """Records what an oracle says before every decision."""

    def __init__(self, oracle, **kw) -> None:
        super().__init__(ScriptedClient(["Action: Option F"]), **kw)
        self.spy_oracle = oracle
        self.seen: list[int] = []

    def act(self, turn: Turn):
        self.seen.append(self.spy_oracle(turn))
        return super().act(turn)


def test_matrix_oracle_knows_the_partners_next_action() -> None:
    config = PD.load().make_bundle(**SHORT, game="ipd").game.config
    for partner in ("tit_for_tat", "alternating", "win_stay_lose_shift"):
        spy = OracleSpy(matrix_partner_oracle(partner, config))
        ep = play(spy, partner=partner, horizon=5)
        actual = [s["action"] for s in ep.steps if s["agent"] == "player_1"]
        assert spy.seen == actual, partner


def test_oracle_strategy_states_the_true_action() -> None:
    c = ScriptedClient(['{"action": "Option J"}'])
    play(
        LLMAgent(c, strategy="oracle_max", oracle_partner="always_1", decoding="json"),
        partner="always_1",
        horizon=1,
    )
    body = text_of(c.requests[0])
    assert "The other player will choose Option F in this round." in body
    assert "maximizes your own points" in body


@needs_openai
def test_agent_spec_and_no_keys_in_specs() -> None:
    agent = make_agent(
        "llm:model=m:base_url=http://127.0.0.1:9/v1:strategy=cot+social:memory=2", PD, trusted=True
    )
    assert isinstance(agent, LLMAgent)
    assert agent.client.base_url == "http://127.0.0.1:9/v1"
    assert agent.strategy == "cot+social" and agent.memory_size == 2
    assert agent.name == "llm:m:cot+social"
    with pytest.raises(ValueError, match="API key"):
        make_agent("llm:model=m:api_key=sk-123", PD)


@needs_openai
def test_api_key_never_reaches_a_trajectory(tmp_path, fake_endpoint, monkeypatch) -> None:
    secret = "sk-test-SECRET-trajectory-0000"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    ep_server = fake_endpoint(content='{"action": "Option J"}')
    agent = make_agent(f"llm:model=fake:base_url={ep_server.base_url}", PD, trusted=True)
    path = play(agent).write(tmp_path / "ep.jsonl")
    text = path.read_text()
    steps = Episode.read(path).steps
    assert steps and all(st["valid"] and not st.get("fallback") for st in steps)
    assert secret not in text


def test_chat_games_get_a_message_field() -> None:
    env = PD.load().raw_env(**PD.kwargs, **SHORT)
    env.reset(seed=0)
    c = ScriptedClient(['{"message": "let us cooperate", "action": "Option J"}'])
    agent = LLMAgent(c, decoding="json")
    tags = GameTags("simultaneous", "deterministic", "perfect", "general_sum", communication=True)
    agent.reset(EpisodeInfo(PD.id, "player_0", 0, 2, 2, 0, (0, 10), 3, tags))
    turn = Turn(
        "player_0",
        0,
        env.view("player_0"),
        None,
        None,
        0.0,
        0,
        lambda: env.text_observation("player_0"),
        lambda t: env.parse_action("player_0", t),
    )
    out = agent.act(turn)
    assert out.message == "let us cooperate" and out.action == 0
    assert "message" in c.requests[0].schema["properties"]


def probe_script(r: LLMRequest) -> str:
    if r.schema and "q1" in r.schema["properties"]:
        return json.dumps(dict.fromkeys(r.schema["properties"], "yes"))
    return '{"action": "Option J"}'


@pytest.mark.parametrize("batch", [True, False])
def test_probes_are_answered_and_scored_by_the_runner(batch: bool, probe_bundle) -> None:
    c = ScriptedClient(probe_script)
    env = TomAECEnv(probe_bundle(horizon=3), "probe_test")
    agent = LLMAgent(c, probe_batch=batch, decoding="json")
    ep = play_episode(PD, [agent, make_agent("tit_for_tat", PD)], seed=0, env=env)
    steps = mine(ep)
    assert all(len(s["probes"]) == 2 and s["probes"][0]["reply"] == "yes" for s in steps)
    assert ep.metrics["probe_acc/all"] == pytest.approx(100 * 4 / 6)
    # probe calls count in the step's usage and calls (one batched call, or one per question)
    probe_calls = 1 if batch else 2
    assert steps[0]["info"]["usage"]["calls"] == 1 + probe_calls
    assert [c["step"] for c in steps[0]["info"]["llm_calls"]] == ["action"] + [
        "probe"
    ] * probe_calls
    question = text_of(c.requests[1])
    assert "q1: Did the other player choose Option J in the last round? (yes or no)" in question
    assert ("q2: Is this the first round?" in question) == batch


def test_probe_answers_in_plain_text(probe_bundle) -> None:
    def script(r: LLMRequest) -> str:
        return "q1: No.\nq2: yes" if "q1:" in text_of(r) else "Action: Option J"

    env = TomAECEnv(probe_bundle(horizon=1), "probe_test")
    agent = LLMAgent(ScriptedClient(script))
    ep = play_episode(PD, [agent, make_agent("tit_for_tat", PD)], seed=0, env=env)
    assert [p["reply"] for p in mine(ep)[0]["probes"]] == ["no", "yes"]


def test_llm_errors_do_not_escape_probes(probe_bundle) -> None:
    agent = LLMAgent(ScriptedClient(['{"action": "Option J"}', LLMError("gone")]), reprompts=0)
    env = TomAECEnv(probe_bundle(horizon=1), "probe_test")
    ep = play_episode(PD, [agent, make_agent("tit_for_tat", PD)], seed=0, env=env)
    assert "probe_error" in mine(ep)[0] or mine(ep)[0]["probes"]
