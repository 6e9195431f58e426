"""Failures by kind, the circuit breaker, call records, settings from a spec, no wasted calls, the
papers' protocol presets and their missing pieces (App. A.2 belief, few-shot examples, 004's
ablations, Chinese scaffolding, the verifier cap, Overcooked's mid-level default).

Everything here runs against a scripted client or a loopback HTTP endpoint (no model); the real
model plays every preset in test_llm_local.py.
"""

from __future__ import annotations

import dataclasses
import json
import socket
from importlib.util import find_spec

import pytest

from tom_envs.agents import make_agent
from tom_envs.core.agents import EpisodeInfo, Turn
from tom_envs.registration import game_spec
from tom_envs.runner import Episode, play_episode
from tom_llm_agents import LLMAgent, ScriptedClient
from tom_llm_agents.client import LLMRequest
from tom_llm_agents.failures import CircuitBreaker, LLMError, RetryPolicy
from tom_llm_agents.fewshot import EXAMPLE_SETS, examples_for
from tom_llm_agents.openai_client import OpenAIClient
from tom_llm_agents.presets import PRESETS, preset_table
from tom_llm_agents.settings import DEFAULTS, endpoint_id, parse_extra

needs_openai = pytest.mark.skipif(
    find_spec("openai") is None, reason="the openai package (the llm extra) is not installed"
)

PD = game_spec("PrisonersDilemma")
RPS = game_spec("RockPaperScissors")


def play(agent, partner: str = "tit_for_tat", spec=PD, seed: int = 0, **kw) -> Episode:
    n = spec.load().make_bundle(**spec.kwargs).game.num_players
    others = [make_agent(partner, spec) for _ in range(n - 1)]
    return play_episode(spec, [agent, *others], seed=seed, env_kwargs=kw or {"horizon": 3})


def mine(ep: Episode) -> list[dict]:
    return [s for s in ep.steps if s["agent"] == "player_0"]


def text_of(request: LLMRequest) -> str:
    return "\n".join(m["content"] for m in request.messages) if request.messages else request.prompt


def refused_port() -> int:
    """A loopback port nothing listens on (connections are refused at once)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ----------------------------------------------------------------------------- failures (#18)
@needs_openai
def test_dead_endpoint_trips_the_breaker_and_fails_the_episode_fast() -> None:
    url = f"http://127.0.0.1:{refused_port()}/v1"
    agent = make_agent(f"llm:model=m:base_url={url}:retry_delay_s=0.01:max_retries=5", PD,
                       trusted=True)
    attempts = []
    send = agent.client._asend

    async def counting(request, constrained, timeout=None):
        attempts.append(1)
        return await send(request, constrained, timeout)

    agent.client._asend = counting
    ep = play(agent, horizon=10)
    steps = mine(ep)
    # three connection failures open the breaker: no more attempts, not even the five retries,
    # and the nine later decisions fail at once without touching the network
    assert len(attempts) == 3 and agent.client.breaker.is_open
    assert all(not s["valid"] and s["info"]["fallback"] for s in steps)
    assert {s["info"]["failure"]["kind"] for s in steps} == {"endpoint"}
    assert "circuit breaker open" in steps[-1]["info"]["failure"]["message"]
    assert all(s["info"]["llm_calls"] == [] for s in steps)
    assert ep.metrics["valid_action_pct/player_0"] == 0.0
    assert ep.metrics["usage/fallbacks/player_0"] == 10
    # bounded by count, not by a clock: the whole episode cost three connection attempts above


def test_breaker_opens_after_threshold_then_lets_one_trial_through() -> None:
    now = [0.0]
    b = CircuitBreaker(threshold=3, cooldown_s=10.0, clock=lambda: now[0])
    assert not b.failure() and not b.failure() and b.failure()
    assert b.is_open and not b.allow()
    now[0] = 10.0
    assert b.allow() and not b.allow()  # one trial only
    assert b.failure() and not b.allow()  # the trial failed: open again, new cooldown
    now[0] = 20.0
    assert b.allow()
    b.success()
    assert not b.is_open and b.allow() and b.failures == 0
    with pytest.raises(ValueError):
        CircuitBreaker(threshold=-1)


def test_connection_failures_open_the_breaker_in_a_scripted_client() -> None:
    from tom_llm_agents.failures import EndpointUnreachable

    c = ScriptedClient(
        [EndpointUnreachable("refused")] * 10,
        retry=RetryPolicy(max_retries=9, base_delay_s=0.0, jitter=0.0),
        breaker=CircuitBreaker(threshold=2, cooldown_s=1000.0),
    )
    with pytest.raises(LLMError) as err:
        c.complete(LLMRequest(messages=[{"role": "user", "content": "hi"}]))
    assert err.value.kind == "endpoint" and len(c.requests) == 2
    with pytest.raises(LLMError, match="circuit breaker open"):
        c.complete(LLMRequest(messages=[{"role": "user", "content": "again"}]))
    assert len(c.requests) == 2  # refused without a request


@needs_openai
def test_context_overflow_is_its_own_kind_and_never_retried(fake_endpoint) -> None:
    ep_server = fake_endpoint(
        [400] * 5,
        error_message="This model's maximum context length is 4096 tokens; you asked for 9000.",
    )
    agent = make_agent(f"llm:model=m:base_url={ep_server.base_url}:retry_delay_s=0.01", PD,
                       trusted=True)
    ep = play(agent, horizon=1)
    (step,) = mine(ep)
    assert step["info"]["failure"]["kind"] == "context_overflow" and step["info"]["fallback"]
    assert len(ep_server.requests) == 1  # not retried, not re-prompted
    assert not agent.client.breaker.is_open  # the server answered: not a connection failure


def test_a_parser_that_raises_is_feedback_not_a_crash() -> None:
    env = PD.load().raw_env(**PD.kwargs, horizon=2)
    env.reset(seed=0)
    c = ScriptedClient(["Action: ²"])
    agent = LLMAgent(c, reprompts=1)
    agent.reset(EpisodeInfo(PD.id, "player_0", 0, 2, 2, 0, (0, 10), 2, None))

    def hostile(text: str):
        raise ValueError("invalid literal for int()")

    turn = Turn(
        "player_0", 0, env.view("player_0"), None, None, 0.0, 0,
        lambda: env.text_observation("player_0"), hostile,
    )  # fmt: skip
    out = agent.act(turn)
    assert not out.valid and out.info["failure"]["kind"] == "unparseable"
    assert out.info["usage"]["calls"] == 2 and len(out.info["llm_calls"]) == 2  # usage kept
    assert "could not be read" in c.requests[1].messages[-1]["content"]


# ----------------------------------------------------------------------------- records and config
@needs_openai
def test_config_records_resolved_settings_and_no_secret(monkeypatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-secret-config-000")
    agent = make_agent(
        "llm:preset=paper004:model=m:base_url=http://user:pw@127.0.0.1:8000/v1:api_key_env=MY_KEY"
        ":temperature=0.3:top_p=0.9:max_tokens=4096:timeout=5:max_retries=1"
        ':price_in=0.5:price_out=1.5:extra={"top_k":20,"min_p":0.05}',
        PD,
        trusted=True,
    )
    cfg = agent.config()
    assert cfg["endpoint"] == "http://127.0.0.1:8000/v1" and cfg["model"] == "m"
    assert cfg["preset"] == "paper004" and cfg["strategy"] == "qa+predict"
    assert cfg["decoding"] == "free" and cfg["invalid"] == "resample"
    assert (cfg["temperature"], cfg["top_p"], cfg["max_tokens"]) == (0.3, 0.9, 4096)
    assert cfg["extra"] == {"top_k": 20, "min_p": 0.05} and cfg["prices"] == [0.5, 1.5]
    assert (cfg["timeout_s"], cfg["max_retries"]) == (5.0, 1)
    assert {"prompt_version", "memory", "examples", "breaker"} <= set(cfg)
    assert "sk-secret" not in json.dumps(cfg) and "pw" not in json.dumps(cfg)
    assert json.loads(json.dumps(cfg)) == cfg


@needs_openai
def test_generation_settings_reach_the_request_and_prices_the_cost(fake_endpoint) -> None:
    server = fake_endpoint(content="Action: Option J")
    agent = make_agent(
        f"llm:model=m:base_url={server.base_url}:temperature=0.5:top_p=0.8:max_tokens=3000"
        ':extra={"top_k":7}:price_in=1:price_out=2',
        PD,
        trusted=True,
    )
    ep = play(agent, horizon=1)
    body = server.requests[0]["body"]
    assert (body["temperature"], body["top_p"], body["max_tokens"], body["top_k"]) == (
        0.5,
        0.8,
        3000,
        7,
    )
    assert isinstance(body["seed"], int)
    (step,) = mine(ep)
    assert step["info"]["usage"]["cost_usd"] == pytest.approx((11 * 1 + 3 * 2) / 1e6)


@pytest.mark.parametrize(
    "bad",
    ['{"model":"x"}', '{"api_key":"k"}', "[1,2]", '{"top_k":"many"}', "{oops", '{"top_k":1e9}'],
)
def test_extra_fields_are_checked_against_an_allow_list(bad: str) -> None:
    with pytest.raises(ValueError, match="extra"):
        parse_extra(bad)


@pytest.mark.parametrize(
    ("key", "value"),
    [("temperature", 3.0), ("top_p", 0.0), ("max_tokens", 0), ("decoding", "grammar"),
     ("invalid", "retry"), ("examples", "nope"), ("interface", "grid"), ("memory", -1)],
)  # fmt: skip
def test_bad_settings_name_the_argument(key: str, value) -> None:
    with pytest.raises(ValueError, match=key):
        LLMAgent(ScriptedClient(["x"]), **{key: value})


@needs_openai
def test_reasoning_text_is_kept_and_a_nameless_server_reports_the_asked_model(
    fake_endpoint,
) -> None:
    think = fake_endpoint(content="<think>J is safe against tit-for-tat.</think>Action: Option J")
    agent = make_agent(f"llm:model=r1:base_url={think.base_url}", PD, trusted=True)
    (step,) = mine(play(agent, horizon=1))
    (call,) = step["info"]["llm_calls"]
    assert (
        call["reasoning"] == "J is safe against tit-for-tat."
        and call["reply"] == "Action: Option J"
    )
    field = fake_endpoint(
        content="Action: Option F", model="-", message_extra={"reasoning_content": "F pays 10."}
    )
    client = OpenAIClient("asked-name", field.base_url)
    r = client.complete(LLMRequest(messages=[{"role": "user", "content": "go"}]))
    assert r.reasoning == "F pays 10." and r.model == "asked-name"


def test_cache_key_uses_the_stable_cache_endpoint() -> None:
    a = ScriptedClient(["x"], cache_endpoint="local://model.gguf")
    b = ScriptedClient(["x"], cache_endpoint="local://model.gguf")
    b.endpoint = "http://127.0.0.1:54321/v1"  # another ephemeral port
    req = LLMRequest(messages=[{"role": "user", "content": "hi"}])
    assert a.cache_key(req) == b.cache_key(req)
    assert ScriptedClient(["x"]).cache_key(req) != a.cache_key(req)
    assert endpoint_id("local://model.gguf?n_ctx=8") == "local://model.gguf?n_ctx=8"


# ----------------------------------------------------------------------------- no wasted calls
def test_forced_moves_skip_the_model() -> None:
    env = PD.load().raw_env(**PD.kwargs, horizon=2)
    env.reset(seed=0)
    c = ScriptedClient(["Action: Option J"])
    agent = LLMAgent(c)
    agent.reset(EpisodeInfo(PD.id, "player_0", 0, 2, 2, 0, (0, 10), 2, None))
    view = dataclasses.replace(env.view("player_0"), legal_actions=(1,))
    turn = Turn(
        "player_0", 0, view, None, None, 0.0, 0,
        lambda: env.text_observation("player_0"), lambda t: env.parse_action("player_0", t),
    )  # fmt: skip
    out = agent.act(turn)
    assert out.action == 1 and out.valid and out.info["forced"] is True
    assert out.info["usage"]["forced"] == 1 and out.info["usage"]["calls"] == 0
    assert c.requests == [] and out.info["llm_calls"] == []
    asked = LLMAgent(ScriptedClient(["Action: Option F"]), skip_forced=False)
    asked.reset(EpisodeInfo(PD.id, "player_0", 0, 2, 2, 0, (0, 10), 2, None))
    assert asked.act(turn).info["usage"]["calls"] == 1


def test_guandan_forced_passes_are_not_sent(probe_bundle) -> None:
    spec = game_spec("Guandan")
    c = ScriptedClient(lambda r: "Action: 1")
    ep = play_episode(
        spec,
        [LLMAgent(c), *(make_agent("random", spec) for _ in range(3))],
        seed=1,
        env_kwargs={"max_cycles": 40},
    )
    steps = mine(ep)
    forced = [s for s in steps if s["info"].get("forced")]
    assert forced, "a Guandan sample has forced decisions"
    assert len(c.requests) == len(steps) - len(forced)
    assert ep.metrics["usage/forced/player_0"] == len(forced)


def test_probe_switch_turns_probe_calls_off(probe_bundle) -> None:
    from tom_envs.core.aec import TomAECEnv

    c = ScriptedClient(["Action: Option J"])
    agent = LLMAgent(c, probes=False)
    env = TomAECEnv(probe_bundle(horizon=2), "probe_test")
    ep = play_episode(PD, [agent, make_agent("tit_for_tat", PD)], seed=0, env=env)
    assert all("probes" not in s for s in mine(ep)) and len(c.requests) == 2
    assert "probe_acc/all" not in ep.metrics and agent.config()["probes"] is False


# ----------------------------------------------------------------------------- presets
def test_every_preset_builds_and_records_itself() -> None:
    for name, p in PRESETS.items():
        kw = {"oracle_partner": "always_0"} if "oracle" in name else {}
        agent = LLMAgent(ScriptedClient(["x"]), preset=name, **kw)
        cfg = agent.config()
        assert cfg["preset"] == name and cfg["strategy"] == p.settings["strategy"]
        assert cfg["decoding"] == p.settings["decoding"] == "free"  # the papers' protocol
        assert set(p.settings) <= set(DEFAULTS) and p.reproduces and p.game
    assert "paper004-oracle-max-nopayoffs" in preset_table()
    agent = LLMAgent(ScriptedClient(["x"]), preset="paper004", decoding="json", temperature=0.2)
    assert agent.config()["decoding"] == "json" and agent.temperature == 0.2  # spec overrides
    with pytest.raises(ValueError, match="unknown preset"):
        LLMAgent(ScriptedClient(["x"]), preset="paper999")


def test_preset_from_a_spec_string() -> None:
    pytest.importorskip("openai")
    agent = make_agent("llm:preset=paper002:model=m:base_url=http://127.0.0.1:9/v1", PD,
                       trusted=True)
    assert agent.strategy == "explain+tom+verify" and agent.verify_rounds == 10
    assert agent.name == "llm:m:paper002"


def test_paper004_resamples_the_same_prompt_until_valid() -> None:
    c = ScriptedClient(["I am not sure.", "Hmm.", "Action: Option F"])
    ep = play(LLMAgent(c, preset="paper004", strategy="qa"), horizon=1)
    (step,) = mine(ep)
    assert step["valid"] and step["action_text"] == "Option F"
    assert [r.messages for r in c.requests[1:]] == [c.requests[0].messages] * 2  # no feedback
    assert len({r.seed for r in c.requests}) == 3 and c.requests[0].temperature == 0.7
    assert [x["step"] for x in step["info"]["llm_calls"]] == ["action", "resample", "resample"]


def test_paper000_invalid_answer_uses_up_the_turn_and_feedback_follows() -> None:
    spec = game_spec("BombDefusal")
    c = ScriptedClient(
        lambda r: "Action selection: Fly to the moon." if len(c.requests) == 1 else "Inspect Bomb"
    )
    agent = LLMAgent(c, preset="paper000-nobelief", probes=False)
    ep = play(agent, partner="random", spec=spec, max_cycles=2)
    first = mine(ep)[0]
    assert not first["valid"] and first["info"]["failure"]["kind"] == "unparseable"
    assert len(first["info"]["llm_calls"]) == 1  # no second attempt
    later = [r for r in c.requests[1:] if r.messages]
    assert later and "your answer was invalid" in text_of(later[0])


def test_paper000_belief_starts_from_the_app_a2_template() -> None:
    spec = game_spec("BombDefusal")
    c = ScriptedClient(
        ["Below is your current belief: nothing new.\nAction selection: Inspect Bomb"]
    )
    agent = LLMAgent(c, preset="paper000", probes=False)
    ep = play(agent, partner="random", spec=spec, max_cycles=1)
    belief = mine(ep)[0]["info"]["llm"]["notes"]["belief"]
    for part in (
        "**Your role**: You are playing as Player alpha.",
        "Current round: 1 **Total team score**: 0.",
        "Room connectivity:",
        "Bomb Intel:",
        "- Bomb 5: Details currently unknown.",
        "Tool inventory:",
        "- Alpha: Equipped with red and green wire cutters.",
        "Available action options:",
    ):
        assert part in belief, part
    assert belief in text_of(c.requests[0])  # the belief replaces the raw observation


def test_paper004_table3_ablations_remove_history_or_payoffs() -> None:
    def run(name: str) -> str:
        c = ScriptedClient(["Action: Option J"])
        play(LLMAgent(c, preset=name, oracle_partner="tit_for_tat"), horizon=3)
        return text_of(c.requests[-1])

    full, no_history, no_payoffs = (
        run(n)
        for n in (
            "paper004-oracle-max",
            "paper004-oracle-max-nohistory",
            "paper004-oracle-max-nopayoffs",
        )
    )
    assert "In round 2" in full and "If you choose Option J" in full
    assert "In round" not in no_history and "If you choose Option J" in no_history
    assert "If you choose" not in no_payoffs and "In round 2" in no_payoffs
    assert "The other player will choose" in no_history  # the oracle stays


def test_fewshot_examples_are_in_the_answer_format_and_legal() -> None:
    for game, name in (("RockPaperScissors", "paper004-rps"), ("PrisonersDilemma", "paper004-ipd")):
        spec = game_spec(game)
        env = spec.load().raw_env(**spec.kwargs)
        env.reset(seed=0)
        legal = set(env.text_observation("player_0").legal_actions.values())
        assert examples_for("auto", spec.id) == EXAMPLE_SETS[name]
        assert all(e.action in legal for e in EXAMPLE_SETS[name])
    c = ScriptedClient(["Reasoning: J.\nAction: Option F"])
    play(LLMAgent(c, preset="paper004-cot3shot"), spec=RPS, partner="always_0", horizon=1)
    system = c.requests[0].messages[0]["content"]
    assert system.count("Example ") == 3 and "Reasoning: The other player has chosen" in system
    j = ScriptedClient(['{"reasoning": "r", "action": "Option F"}'])
    play(LLMAgent(j, preset="paper004-cot3shot", decoding="json"), spec=RPS, horizon=1)
    assert '{"reasoning": "The other player' in j.requests[0].messages[0]["content"]
    assert len(EXAMPLE_SETS["paper003"]) == 8  # 003 §4.1: eight CoT examples


def test_chinese_game_text_gets_chinese_scaffolding() -> None:
    spec = game_spec("Guandan")
    c = ScriptedClient(["动作：1"])
    ep = play_episode(
        spec,
        [LLMAgent(c, strategy="cot"), *(make_agent("random", spec) for _ in range(3))],
        seed=0,
        env_kwargs={"language": "zh", "max_cycles": 4},
    )
    sent = [text_of(r) for r in c.requests]
    assert sent and all("请按以下格式回答" in t and "推理：" in t for t in sent)
    assert not any(w in t for t in sent for w in ("Format your response", "Let's think", "help me"))
    assert all(s["valid"] for s in mine(ep) if not s["info"].get("forced"))


def test_verifier_loops_to_its_recorded_cap() -> None:
    def script(r: LLMRequest) -> str:
        if "action verification agent" in text_of(r):
            return "The action looks risky. Verification: Not Okay"
        last = r.messages[-1]["content"]
        if "List of Available Actions:" in last:  # the critique: the first action listed again
            listed = last.split("List of Available Actions:\n")[1].split("\n")[0]
            return f"Reasoning: r\nAction: {listed}"
        if "Q: Which Option do you choose" not in last:
            return "My partner has no clear intention yet."  # the ToM-reasoning step
        return "Reasoning: r\nAction: 1"  # the first option

    spec = RPS
    agent = LLMAgent(ScriptedClient(script), strategy="cot+verify", verify_rounds=1)
    (step,) = mine(play(agent, spec=spec, horizon=1))
    assert step["info"]["llm"]["notes"]["verify"] == {"vetoes": 1, "cap": 1, "cap_reached": True}
    # 002's authors relist every action but the one just vetoed: the loop only ends when the
    # verifier agrees, here at the preset's cap of 10 vetoes
    capped = LLMAgent(ScriptedClient(script), preset="paper002", probes=False)
    (step,) = mine(play(capped, spec=spec, horizon=1))
    notes = step["info"]["llm"]["notes"]
    assert notes["verify"] == {"vetoes": 10, "cap": 10, "cap_reached": True}
    assert len(notes["vetoed"]) == 10 and step["valid"]


def test_overcooked_llm_plays_mid_level_actions_by_default() -> None:
    spec = game_spec("Overcooked")
    c = ScriptedClient(["Action: pick up onion from o0"])
    ep = play(LLMAgent(c), partner="random", spec=spec, max_cycles=3)
    first = text_of(c.requests[0])
    assert "pick up onion from o0" in first
    assert mine(ep)[0]["info"]["mid_level"] == "pick up onion from o0"
    p = ScriptedClient(["Action: stay"])
    play(LLMAgent(p, interface="primitive"), partner="random", spec=spec, max_cycles=1)
    assert "pick up onion" not in text_of(p.requests[0])


def test_team_games_speak_of_the_teams_reward() -> None:
    spec = game_spec("Hanabi")
    c = ScriptedClient(
        lambda r: "Lesson." if "Reflect on this outcome" in text_of(r) else "Action: 1"
    )
    play(LLMAgent(c, strategy="qa+reflexion"), partner="random", spec=spec, max_cycles=3)
    reflect = [text_of(r) for r in c.requests if "Reflect on this outcome" in text_of(r)]
    assert reflect and all("your team received a reward" in t for t in reflect)


def test_midlevel_moves_carrying_out_a_fallback_choice_are_fallbacks() -> None:
    """Mid-level Overcooked: a failed choice falls back to "wait"; the primitive moves that carry
    it out are the fallback's too, so a dead model counts as failing on every decision."""
    from tom_envs.agents import make_agent
    from tom_envs.core.agents import AgentAction, BaseAgent
    from tom_envs.games.overcooked.midlevel import MidLevelAgent
    from tom_envs.registration import game_spec
    from tom_envs.runner import play_episode

    class Dead(BaseAgent):
        def act(self, turn):
            return AgentAction(action=None, valid=False)

    spec = game_spec("Overcooked")
    config = spec.load().make_bundle(**spec.kwargs, horizon=30).game.config
    ep = play_episode(spec, [MidLevelAgent(Dead(), config), make_agent("greedy", spec)], 0,
                      {"horizon": 30})  # fmt: skip
    mine = [s for s in ep.steps if s["agent"] == "player_0"]
    assert mine and all(s.get("fallback") for s in mine)
    assert ep.status == "failed"


def test_a_reasoning_budget_reaches_every_step_and_step_tokens_caps_them() -> None:
    """A reasoning model thinks before every answer: ``max_tokens`` (thousands, paper004-r1)
    raises the intermediate steps' budgets too (prediction, verification, probes);
    ``step_tokens`` caps only those steps. (The reasoning text is kept in the call record:
    test_reasoning_text_is_kept_and_a_nameless_server_reports_the_asked_model.)"""

    def script(r: LLMRequest) -> str:
        return "Prediction: Option J" if "predict" in text_of(r) else "Action: Option F"

    c = ScriptedClient(script)
    play(LLMAgent(c, preset="paper004-r1"), spec=RPS, horizon=1)
    assert [r.max_tokens for r in c.requests] == [8192, 8192]  # the action, then the prediction
    c = ScriptedClient(script)
    play(LLMAgent(c, preset="paper004-r1", step_tokens=64), spec=RPS, horizon=1)
    assert [r.max_tokens for r in c.requests] == [8192, 64]
