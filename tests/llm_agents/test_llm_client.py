"""The client's shared logic: retries, backoff, cache, cost, concurrency, schema fallback, secrets.

Most tests use the scripted client (same base class, no network); the retry and redaction tests
also run the real ``openai`` client against a tiny loopback endpoint that answers 429/500 first.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from importlib.util import find_spec

import pytest

from tom_llm_agents import client as client_mod
from tom_llm_agents.client import LLMRequest, LLMResponse
from tom_llm_agents.failures import CircuitBreaker, LLMError, RetryPolicy, TransientLLMError
from tom_llm_agents.fake import ScriptedClient
from tom_llm_agents.openai_client import OpenAIClient, _top_alternatives

needs_openai = pytest.mark.skipif(
    find_spec("openai") is None, reason="the openai package (the llm extra) is not installed"
)

FAST = RetryPolicy(max_retries=3, base_delay_s=0.01, max_delay_s=0.05, jitter=0.0)
SECRET = "sk-test-DO-NOT-LEAK-0123456789"


def req(text: str = "hello", **kw) -> LLMRequest:
    return LLMRequest(messages=[{"role": "user", "content": text}], **kw)


def test_transient_errors_are_retried_with_exponential_backoff(monkeypatch) -> None:
    waits: list[float] = []
    monkeypatch.setattr(client_mod.time, "sleep", waits.append)
    c = ScriptedClient([TransientLLMError("503"), TransientLLMError("429"), "ok"], retry=FAST)
    r = c.complete(req())
    assert r.text == "ok" and r.retries == 2
    assert waits == [0.01, 0.02]
    assert c.stats.retries == 2 and c.stats.requests == 1


def test_other_errors_fail_at_once_and_retries_are_bounded(monkeypatch) -> None:
    monkeypatch.setattr(client_mod.time, "sleep", lambda s: None)
    c = ScriptedClient([ValueError("bad request")], retry=FAST)
    with pytest.raises(LLMError, match="bad request"):
        c.complete(req())
    assert len(c.requests) == 1
    # the retry bound alone (the circuit breaker, which counts these too, switched off)
    c = ScriptedClient([TransientLLMError("down")], retry=FAST, breaker=CircuitBreaker(0))
    with pytest.raises(LLMError, match="down"):
        c.complete(req())
    assert len(c.requests) == FAST.max_retries + 1


def test_backoff_caps_and_honours_retry_after() -> None:
    policy = RetryPolicy(max_retries=10, base_delay_s=1.0, max_delay_s=8.0, jitter=0.0)
    assert [policy.delay(k, TransientLLMError("x")) for k in range(5)] == [1, 2, 4, 8, 8]
    assert policy.delay(10, TransientLLMError("x")) is None
    assert policy.delay(0, KeyError("x")) is None


@needs_openai
def test_real_openai_errors_429_and_500_are_retried(fake_endpoint) -> None:
    ep = fake_endpoint([429, 500])
    c = OpenAIClient("fake", ep.base_url, api_key=SECRET, retry=FAST)
    r = c.complete(req())
    assert r.text == '{"action": "Option J"}' and r.retries == 2
    assert (r.tokens_in, r.tokens_out) == (11, 3)
    assert len(ep.requests) == 3


@needs_openai
def test_real_openai_client_error_is_not_retried(fake_endpoint) -> None:
    ep = fake_endpoint([400])
    c = OpenAIClient("fake", ep.base_url, api_key=SECRET, retry=FAST)
    with pytest.raises(LLMError):
        c.complete(req())
    assert len(ep.requests) == 1


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@needs_openai
def test_api_key_never_in_repr_errors_or_cache(tmp_path, fake_endpoint) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    c = OpenAIClient("m", url, api_key=SECRET, retry=RetryPolicy(max_retries=1, base_delay_s=0.01))
    assert SECRET not in repr(c) and SECRET not in str(vars(c).get("stats"))
    with pytest.raises(LLMError) as err:
        c.complete(req())
    assert SECRET not in str(err.value)
    ep = fake_endpoint()
    c = OpenAIClient("m", ep.base_url, api_key=SECRET, cache_dir=tmp_path)
    r = c.complete(req())
    headers = {k.lower(): v for k, v in ep.requests[0]["headers"].items()}
    assert headers["authorization"] == f"Bearer {SECRET}"  # sent, as it must be
    stored = "".join(p.read_text() for p in tmp_path.rglob("*.json"))
    assert stored and SECRET not in stored and SECRET not in json.dumps(r.to_dict())
    other = OpenAIClient("m", ep.base_url, api_key="another-key-entirely")
    assert other.cache_key(req()) == c.cache_key(req())


@needs_openai
def test_configuration_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("TOM_ENVS_LLM_MODEL", "env-model")
    monkeypatch.setenv("MY_KEY", SECRET)
    c = OpenAIClient(api_key_env="MY_KEY")
    assert (c.model, c.base_url) == ("env-model", "http://127.0.0.1:9/v1")
    monkeypatch.delenv("TOM_ENVS_LLM_MODEL")
    with pytest.raises(ValueError, match="no model"):
        OpenAIClient()
    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match="no API key"):
        OpenAIClient("m")


def test_disk_cache_makes_reruns_free_and_identical(tmp_path) -> None:
    c = ScriptedClient(["first", "second", "third"], cache_dir=tmp_path)
    a = c.complete(req())
    b = c.complete(req())
    assert (a.text, a.cached, b.text, b.cached) == ("first", False, "first", True)
    assert c.complete(req(temperature=0.7)).text == "second"  # any field changes the key
    assert c.complete(req(sample=1)).text == "third"  # a second sample is a new entry
    assert len(c.requests) == 3 and c.stats.cache_hits == 1
    again = ScriptedClient(["never used"], cache_dir=tmp_path)  # a new process, same directory
    assert again.complete(req()).text == "first" and not again.requests


def test_cost_when_priced() -> None:
    c = ScriptedClient(["x" * 40], model="m", prices={"m": (1.0, 2.0)})
    r = c.complete(req("y" * 400))
    assert r.cost_usd == pytest.approx((100 * 1.0 + 10 * 2.0) / 1e6)
    assert ScriptedClient(["x"]).complete(req()).cost_usd is None


def test_complete_many_runs_concurrently_and_keeps_order() -> None:
    lock = threading.Lock()
    live = {"now": 0, "max": 0}

    def slow(request: LLMRequest) -> str:
        with lock:
            live["now"] += 1
            live["max"] = max(live["max"], live["now"])
        time.sleep(0.05)
        with lock:
            live["now"] -= 1
        return request.messages[0]["content"]

    c = ScriptedClient(slow, max_concurrency=3)
    out = c.complete_many([req(str(i)) for i in range(7)])
    assert [r.text for r in out] == [str(i) for i in range(7)]
    assert 1 < live["max"] <= 3


def test_schema_refusal_falls_back_to_plain_requests() -> None:
    c = ScriptedClient(["plain answer"], supports_schema=False)
    schema = {"type": "object", "properties": {"action": {"enum": ["a"]}}}
    r = c.complete(req(schema=schema))
    assert r.text == "plain answer" and not r.constrained
    assert c.capabilities["json_schema"] is False and c.stats.schema_fallbacks == 1
    assert not c.complete(req("again", schema=schema)).constrained
    assert c.stats.schema_fallbacks == 1


def test_logprob_layouts_are_normalised() -> None:
    chat = {
        "content": [
            {
                "token": "J",
                "logprob": -0.1,
                "top_logprobs": [{"token": "J", "logprob": -0.1}, {"token": "F", "logprob": -2.0}],
            }
        ]
    }
    legacy = {"tokens": [" J"], "token_logprobs": [-0.3], "top_logprobs": [{" F": -1.5}]}
    assert _top_alternatives(chat) == [{"J": -0.1, "F": -2.0}]
    assert _top_alternatives(legacy) == [{" F": -1.5, " J": -0.3}]
    assert _top_alternatives(None) is None


def test_response_round_trips_through_a_dict() -> None:
    r = LLMResponse("t", "m", 1, 2, 0.5, 0.0, logprobs=[{"a": -1.0}])
    assert LLMResponse.from_dict({**r.to_dict(), "unknown": 1}) == r


@needs_openai
def test_async_batches_from_many_threads(fake_endpoint) -> None:
    ep = fake_endpoint()
    c = OpenAIClient("fake", ep.base_url, api_key="k", max_concurrency=3)
    results: list[list[LLMResponse]] = []

    def work(tag: str) -> None:
        results.append(c.complete_many([req(f"{tag}{i}") for i in range(4)]))

    threads = [threading.Thread(target=work, args=(t,)) for t in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 2 and all(len(r) == 4 for r in results)
    assert len(ep.requests) == 8 and c.stats.requests == 8
