"""LLM faults that must fail fast and never stick (issue #31), against a loopback endpoint.

Every fault is played by a real HTTP server on 127.0.0.1 (:class:`FaultyEndpoint`) and met by the
real ``openai`` client: a 429 asking to wait an hour, 500s and 429s in a row (the circuit
breaker), a reply trickled a byte at a time, a 10 MB reply (with and without Content-Length), an
empty reply followed by a good one. Each test states its bound by counts (requests, bytes) and by
a wall-clock ceiling far above what the fixed client needs and far below what the old one took.
"""

from __future__ import annotations

import time
from importlib.util import find_spec

import pytest

from tom_envs.agents import make_agent
from tom_envs.registration import game_spec
from tom_envs.runner import Episode, play_episode
from tom_llm_agents.client import LLMRequest
from tom_llm_agents.failures import CircuitBreaker, LLMError, RetryPolicy
from tom_llm_agents.openai_client import OpenAIClient, is_reasoning_model

pytestmark = pytest.mark.skipif(
    find_spec("openai") is None, reason="the openai package (the llm extra) is not installed"
)

PD = game_spec("PrisonersDilemma")
FAST = RetryPolicy(max_retries=2, base_delay_s=0.01, max_delay_s=0.05, jitter=0.0)


def req(text: str = "hello", **kw) -> LLMRequest:
    return LLMRequest(messages=[{"role": "user", "content": text}], **kw)


def play(agent, horizon: int = 2) -> Episode:
    return play_episode(
        PD, [agent, make_agent("tit_for_tat", PD)], seed=0, env_kwargs={"horizon": horizon}
    )


def mine(ep: Episode) -> list[dict]:
    return [s for s in ep.steps if s["agent"] == "player_0"]


# ----------------------------------------------------------------------------- rate limits
def test_a_retry_after_of_an_hour_fails_the_call_at_once(faulty_endpoint) -> None:
    ep = faulty_endpoint([{"status": 429, "headers": {"Retry-After": "3600"}}])
    c = OpenAIClient("m", ep.base_url, api_key="k", retry=RetryPolicy(max_retries=5))
    t0 = time.monotonic()
    with pytest.raises(LLMError) as err:
        c.complete(req())
    assert time.monotonic() - t0 < 5  # was 73 s per decision
    assert err.value.kind == "rate_limited" and "Retry-After" in str(err.value)
    assert len(ep.requests) == 1  # no retry: the server asked for an hour
    assert c.breaker.is_open  # and the next calls are not sent either
    with pytest.raises(LLMError, match="circuit breaker open"):
        c.complete(req("again"))
    assert len(ep.requests) == 1


def test_retry_after_in_milliseconds_and_dates_are_read() -> None:
    from email.utils import formatdate

    from tom_llm_agents.failures import retry_after

    class Exc(Exception):
        def __init__(self, headers: dict) -> None:
            self.response = type("R", (), {"headers": headers})()

    assert retry_after(Exc({"retry-after-ms": "1500"})) == 1.5
    assert retry_after(Exc({"retry-after": "7"})) == 7.0
    assert 3500 < retry_after(Exc({"retry-after": formatdate(time.time() + 3600)})) <= 3600
    assert retry_after(Exc({"retry-after": "soon"})) is None
    policy = RetryPolicy(max_retry_after_s=60)
    assert policy.waits_too_long(Exc({"retry-after": "61"}))
    assert not policy.waits_too_long(Exc({"retry-after": "60"}))


def test_a_short_retry_after_is_waited_for(faulty_endpoint) -> None:
    ep = faulty_endpoint([{"status": 429, "headers": {"Retry-After": "0.3"}}, {"content": "ok"}])
    c = OpenAIClient("m", ep.base_url, api_key="k", retry=FAST)
    t0 = time.monotonic()
    r = c.complete(req())
    assert r.text == "ok" and r.retries == 1 and time.monotonic() - t0 >= 0.3
    assert len(ep.requests) == 2


@pytest.mark.parametrize("status", [500, 503, 429])
def test_server_errors_and_rate_limits_open_the_breaker(faulty_endpoint, status: int) -> None:
    ep = faulty_endpoint([{"status": status, "headers": {"Retry-After": "0"}}])
    c = OpenAIClient(
        "m",
        ep.base_url,
        api_key="k",
        retry=RetryPolicy(max_retries=9, base_delay_s=0.0, jitter=0.0),
        breaker=CircuitBreaker(threshold=3, cooldown_s=1000),
    )
    with pytest.raises(LLMError) as err:
        c.complete(req())
    assert len(ep.requests) == 3 and c.breaker.is_open  # 3 of the 10 attempts allowed
    assert err.value.kind == ("rate_limited" if status == 429 else "endpoint")
    for i in range(5):
        with pytest.raises(LLMError, match="circuit breaker open"):
            c.complete(req(f"later {i}"))
    assert len(ep.requests) == 3  # refused without a request


def test_an_agent_facing_an_hour_long_retry_after_fails_its_episode_fast(faulty_endpoint) -> None:
    ep = faulty_endpoint([{"status": 429, "headers": {"Retry-After": "3600"}}])
    agent = make_agent(f"llm:model=m:base_url={ep.base_url}:max_retries=5", PD, trusted=True)
    t0 = time.monotonic()
    episode = play(agent, horizon=5)
    assert time.monotonic() - t0 < 10
    steps = mine(episode)
    assert all(s["fallback"] for s in steps)
    assert steps[0]["failure"]["kind"] == "rate_limited"
    assert len(ep.requests) == 1 and episode.status == "failed"


# ----------------------------------------------------------------------------- slow replies
def test_a_trickled_reply_cannot_stretch_the_deadline(faulty_endpoint) -> None:
    # a 200-byte body at 0.2 s a byte would take 40 s; every byte resets a read timeout
    ep = faulty_endpoint([{"trickle": 0.2, "content": "Action: Option J"}])
    c = OpenAIClient(
        "m", ep.base_url, api_key="k", timeout=1.0, retry=RetryPolicy(max_retries=1, jitter=0)
    )
    t0 = time.monotonic()
    with pytest.raises(LLMError) as err:
        c.complete(req())
    took = time.monotonic() - t0
    assert took < 2 * 1.0 + 1.0 + 1.5  # two attempts of 1 s, one backoff of 1 s, slack
    assert err.value.kind == "endpoint" and "wall clock" in str(err.value)
    assert len(ep.requests) == 2 and max(ep.sent) < 20  # each cut off after ~5 bytes


def test_a_total_deadline_bounds_a_call_with_its_retries(faulty_endpoint) -> None:
    ep = faulty_endpoint([{"trickle": 0.2, "content": "x"}])
    c = OpenAIClient(
        "m",
        ep.base_url,
        api_key="k",
        timeout=1.0,
        deadline_s=1.5,
        retry=RetryPolicy(max_retries=10, base_delay_s=0.01, jitter=0),
        breaker=CircuitBreaker(0),
    )
    t0 = time.monotonic()
    with pytest.raises(LLMError):
        c.complete(req())
    assert time.monotonic() - t0 < 1.5 + 1.0
    assert len(ep.requests) == 2  # 1 s, then the 0.5 s left


# ----------------------------------------------------------------------------- large replies
@pytest.mark.parametrize("chunked", [False, True])
def test_a_10mb_reply_is_refused_at_the_cap(faulty_endpoint, chunked: bool) -> None:
    ep = faulty_endpoint([{"big": 10_000_000, "chunked": chunked}])
    cap = 64 * 1024
    c = OpenAIClient("m", ep.base_url, api_key="k", max_reply_bytes=cap, retry=FAST)
    with pytest.raises(LLMError) as err:
        c.complete(req())
    assert err.value.kind == "oversized"
    assert len(ep.requests) == 1  # never retried: the same request would get the same reply
    assert not c.breaker.is_open  # the server works; it answered too much
    time.sleep(0.2)  # the server notices the closed connection
    # with Content-Length the body is never read; without it, reading stops at the cap (the
    # kernel's socket buffers hold at most a few MB of what the server wrote)
    assert ep.sent[0] < 10_000_000


def test_an_oversized_reply_is_a_recorded_fallback_and_kept_out_of_the_file(
    faulty_endpoint, tmp_path
) -> None:
    ep = faulty_endpoint([{"big": 10_000_000}])
    agent = make_agent(
        f"llm:model=m:base_url={ep.base_url}:max_reply_bytes=65536:max_retries=0", PD, trusted=True
    )
    episode = play(agent, horizon=3)
    steps = mine(episode)
    assert [s["failure"]["kind"] for s in steps] == ["oversized"] * 3
    assert all(s["fallback"] and not s["valid"] for s in steps)
    path = episode.write(tmp_path / "episode.jsonl")
    assert path.stat().st_size < 50_000  # was 130 MB per episode file with 10 MB replies
    assert agent.config()["max_reply_bytes"] == 65536


def test_the_scripted_path_applies_the_same_cap() -> None:
    from tom_llm_agents.fake import ScriptedClient

    c = ScriptedClient(["y" * 5000], max_reply_bytes=4096, retry=FAST)
    with pytest.raises(LLMError) as err:
        c.complete(req())
    assert err.value.kind == "oversized" and len(c.requests) == 1


def test_error_messages_are_bounded() -> None:
    err = LLMError("z" * 10_000_000)
    assert len(str(err)) < 1000


# ----------------------------------------------------------------------------- the cache
def test_an_empty_reply_is_not_cached_and_not_replayed(faulty_endpoint, tmp_path) -> None:
    ep = faulty_endpoint([{"content": ""}, {"content": "Action: Option J"}])
    c = OpenAIClient("m", ep.base_url, api_key="k", cache_dir=tmp_path, retry=FAST)
    assert c.complete(req()).text == ""  # the transient empty answer
    assert c.stats.not_cached == 1 and not list(tmp_path.rglob("*.json"))
    again = OpenAIClient("m", ep.base_url, api_key="k", cache_dir=tmp_path, retry=FAST)
    r = again.complete(req())  # the endpoint has recovered: asked again, not replayed
    assert r.text == "Action: Option J" and not r.cached and len(ep.requests) == 2
    third = OpenAIClient("m", ep.base_url, api_key="k", cache_dir=tmp_path, retry=FAST)
    r = third.complete(req())
    assert r.cached and r.text == "Action: Option J" and len(ep.requests) == 2


def test_transient_failures_are_never_cached(faulty_endpoint, tmp_path) -> None:
    ep = faulty_endpoint([{"status": 500}, {"status": 503}, {"content": "fine"}])
    c = OpenAIClient("m", ep.base_url, api_key="k", cache_dir=tmp_path, retry=FAST)
    assert c.complete(req()).text == "fine"
    assert len(list(tmp_path.rglob("*.json"))) == 1  # the answer only
    assert c.complete(req()).cached and len(ep.requests) == 3


@pytest.mark.parametrize("cached", [True, False])
def test_identical_requests_in_flight_at_once_are_sent_once(tmp_path, cached: bool) -> None:
    import threading

    from tom_llm_agents.fake import ScriptedClient

    def slow(request: LLMRequest) -> str:
        time.sleep(0.2)
        return "Action: Option J"

    kw = {"cache_dir": tmp_path} if cached else {}
    clients = [ScriptedClient(slow, **kw) for _ in range(8)]  # one per episode's agent
    out: list = [None] * 8
    threads = [
        threading.Thread(target=lambda i=i: out.__setitem__(i, clients[i].complete(req())))
        for i in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sent = sum(len(c.requests) for c in clients)
    assert all(r.text == "Action: Option J" for r in out)
    if cached:  # one paid request; the seven others get its answer as a cache hit
        assert sent == 1 and sum(r.cached for r in out) == 7
    else:  # without a cache each caller asks for a fresh answer
        assert sent == 8 and not any(r.cached for r in out)
    batch = ScriptedClient(slow, **kw)
    answers = batch.complete_many([req("same"), req("same"), req("other")])
    assert [a.text for a in answers] == ["Action: Option J"] * 3
    assert len(batch.requests) == (2 if cached else 3)


def test_a_replayed_answer_costs_nothing(tmp_path) -> None:
    from tom_llm_agents.fake import ScriptedClient

    c = ScriptedClient(["x" * 40], model="m", prices={"m": (1.0, 2.0)}, cache_dir=tmp_path)
    first = c.complete(req())
    assert first.cost_usd and first.cost_usd > 0
    replay = c.complete(req())
    assert replay.cached and replay.cost_usd == 0.0


def test_an_agent_with_an_empty_reply_asks_again_and_the_rerun_does_not_replay_it(
    faulty_endpoint, tmp_path
) -> None:
    ep = faulty_endpoint([{"content": ""}, {"content": "Action: Option J"}])
    spec = f"llm:model=m:base_url={ep.base_url}:cache_dir={tmp_path}"
    first = play(make_agent(spec, PD, trusted=True), horizon=1)
    assert mine(first)[0]["valid"]  # the re-prompt got the answer
    n = len(ep.requests)
    second = play(make_agent(spec, PD, trusted=True), horizon=1)
    # the first request of the decision (answered empty) is sent again, the rest is replayed
    assert len(ep.requests) == n + 1 and mine(second)[0]["valid"]


# ----------------------------------------------------------------------------- identity
def test_the_endpoint_is_keyed_by_its_full_url_also_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-key-000000")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://user:pw@Example.org:8080/a/v1/?key=sk-x")
    a = make_agent("llm:model=m", PD, trusted=True).config()["endpoint"]
    monkeypatch.setenv("OPENAI_BASE_URL", "http://example.org:8080/b/v1")
    b = make_agent("llm:model=m", PD, trusted=True).config()["endpoint"]
    assert a == "http://example.org:8080/a/v1" and b == "http://example.org:8080/b/v1"
    monkeypatch.delenv("OPENAI_BASE_URL")
    c = make_agent("llm:model=m", PD, trusted=True).config()["endpoint"]
    assert c == "https://api.openai.com/v1"
    from tom_envs.identity import config_hash

    cfgs = [
        make_agent(f"llm:model=m:base_url=http://h:1/{p}/v1", PD, trusted=True).config()
        for p in ("x", "y")
    ]
    assert config_hash(cfgs[0]) != config_hash(cfgs[1])


# ----------------------------------------------------------------------------- reasoning models
def test_reasoning_models_get_their_wire_format_and_their_tokens_counted(faulty_endpoint) -> None:
    usage = {
        "prompt_tokens": 100,
        "completion_tokens": 900,
        "total_tokens": 1000,
        "completion_tokens_details": {"reasoning_tokens": 850},
    }
    ep = faulty_endpoint([{"content": "Action: Option J", "usage": usage}])
    agent = make_agent(
        f"llm:model=o3-mini:base_url={ep.base_url}:max_completion_tokens=4000"
        ":reasoning_effort=low:price_in=1:price_out=4",
        PD,
        trusted=True,
    )
    episode = play(agent, horizon=1)
    body = ep.requests[0]
    assert "temperature" not in body and "top_p" not in body and "max_tokens" not in body
    assert body["max_completion_tokens"] == 4000 and body["reasoning_effort"] == "low"
    (step,) = mine(episode)
    assert step["valid"]
    (call,) = step["info"]["llm_calls"]
    assert call["usage"]["reasoning_tokens"] == 850
    assert call["usage"]["cost_usd"] == pytest.approx((100 * 1 + 900 * 4) / 1e6)
    assert episode.metrics["usage/reasoning_tokens/player_0"] == 850
    cfg = agent.config()
    assert (cfg["reasoning"], cfg["reasoning_effort"], cfg["token_param"]) == (
        True,
        "low",
        "max_completion_tokens",
    )
    assert cfg["max_tokens"] == 4000


def test_other_endpoints_keep_their_sampling_parameters(faulty_endpoint) -> None:
    ep = faulty_endpoint([{"content": "Action: Option J"}])
    play(
        make_agent(f"llm:model=qwen:base_url={ep.base_url}:temperature=0.4", PD, trusted=True),
        horizon=1,
    )
    body = ep.requests[0]
    assert body["temperature"] == 0.4 and "max_tokens" in body
    assert "max_completion_tokens" not in body and "reasoning_effort" not in body
    ep2 = faulty_endpoint([{"content": "Action: Option J"}])
    play(
        make_agent(f"llm:model=o3:base_url={ep2.base_url}:reasoning=false", PD, trusted=True),
        horizon=1,
    )
    assert "temperature" in ep2.requests[0]  # the rule is overridden by the spec


@pytest.mark.parametrize(
    ("name", "reasoning"),
    [
        ("o1", True),
        ("o3-mini", True),
        ("o4-mini-2025-04-16", True),
        ("openai/o3", True),
        ("gpt-5", True),
        ("gpt-5-mini", True),
        ("gpt-5-chat-latest", False),
        ("gpt-4o-mini", False),
        ("qwen2.5-7b", False),
        ("smollm2-135m-instruct-q4_1", False),
        ("llama-3-o1-finetune", False),
    ],
)
def test_the_model_name_rule(name: str, reasoning: bool) -> None:
    assert is_reasoning_model(name) is reasoning


def test_resampling_at_temperature_zero_is_refused() -> None:
    with pytest.raises(ValueError, match="resample at temperature 0"):
        make_agent(
            "llm:model=m:base_url=http://127.0.0.1:9/v1:preset=paper004:temperature=0",
            PD,
            trusted=True,
        )
    make_agent(
        "llm:model=m:base_url=http://127.0.0.1:9/v1:preset=paper004", PD, trusted=True
    )  # 0.7: fine
    make_agent(
        "llm:model=m:base_url=http://127.0.0.1:9/v1:preset=paper004:temperature=0:reasoning=true",
        PD,
        trusted=True,
    )
    with pytest.raises(ValueError, match="disagree"):
        make_agent(
            "llm:model=m:base_url=http://h/v1:max_tokens=5:max_completion_tokens=6",
            PD,
            trusted=True,
        )
