"""One client for any OpenAI-compatible endpoint, with one response record (BALROG's split).

:class:`~tom_llm_agents.openai_client.OpenAIClient` talks to OpenAI, vLLM, Ollama, llama.cpp
servers or anything else that speaks the OpenAI API, chosen by ``base_url``, ``model`` and a key
from the arguments or the environment (``OPENAI_BASE_URL``, ``TOM_ENVS_LLM_MODEL``,
``OPENAI_API_KEY`` or the variable named by ``api_key_env``). Everything that is not the wire
format lives once, in :class:`BaseLLMClient` (here; the failure handling it applies is in
:mod:`tom_llm_agents.failures`):

* retries with exponential backoff (and ``Retry-After``) on rate limits, timeouts, connection
  failures and server errors (:class:`~tom_llm_agents.failures.RetryPolicy`); other errors fail
  at once;
* one response record, :class:`LLMResponse`: text, model, tokens in/out, latency, cost when the
  model is priced (``prices={"model": (usd_per_1M_in, usd_per_1M_out)}``), token log-probabilities;
* a disk cache keyed by the full request (:class:`DiskCache`), so a re-run is reproducible and
  free; the key never includes the API key;
* async concurrency (:meth:`BaseLLMClient.acomplete`, :meth:`BaseLLMClient.complete_many` with at
  most ``max_concurrency`` requests in flight);
* constrained decoding: a request may carry a JSON schema (the agent sends an ``enum`` of the
  legal actions). If the server refuses ``response_format=json_schema`` the client remembers it and
  sends plain requests from then on (the agent then parses free text);
* failures by kind (:attr:`~tom_llm_agents.failures.LLMError.kind`): ``"endpoint"`` (connection
  refused, timeouts and server errors after the retries, or the circuit breaker open),
  ``"context_overflow"`` (HTTP 400 saying the prompt does not fit the context window: never
  retried) and ``"request"`` (any other refused request);
* a circuit breaker (:class:`~tom_llm_agents.failures.CircuitBreaker`): after ``threshold``
  consecutive connection failures (attempts, retries included) the client stops calling the
  endpoint and every request fails at once with kind ``"endpoint"`` until ``cooldown_s`` has
  passed; then one trial request is let through (a success closes the breaker, a failure opens it
  again). A dead endpoint therefore costs a few seconds, not ``max_retries`` backoffs per decision;
* reasoning text: a reasoning model's ``reasoning_content`` (vLLM, DeepSeek) or a leading
  ``<think>…</think>`` block is split from the answer and kept in :attr:`LLMResponse.reasoning`.

The cache key is built from :attr:`BaseLLMClient.cache_endpoint` (by default the endpoint URL):
the bundled local server sets it to the model file's name, so its ephemeral port never enters
the key and a re-run hits the cache.

API keys are kept in a private attribute, never in ``repr``, logs, cache files, responses or
exception messages (:func:`~tom_llm_agents.failures.redact`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from tom_envs.progress import llm_call
from tom_llm_agents.failures import (
    CircuitBreaker,
    CircuitOpen,
    LLMError,
    RetryPolicy,
    SchemaUnsupported,
    is_connection_failure,
    is_context_overflow,
    redact,
)

log = logging.getLogger("tom_llm_agents")

#: Bumped when the cached response format changes (old entries are then ignored).
CACHE_VERSION = 1

ENV_BASE_URL = "OPENAI_BASE_URL"
ENV_MODEL = "TOM_ENVS_LLM_MODEL"
ENV_API_KEY = "OPENAI_API_KEY"
ENV_CACHE_DIR = "TOM_ENVS_LLM_CACHE"


@dataclass
class LLMRequest:
    """Everything that determines an answer; its JSON (plus endpoint and model) is the cache key.

    Attributes:
        messages: chat messages ``{"role", "content"}`` (chat completions).
        prompt: raw text for the completions endpoint (used instead of ``messages`` when set).
        max_tokens: generation budget.
        temperature: sampling temperature (0: greedy).
        top_p: nucleus sampling, if set.
        seed: sampling seed, for servers that honour it.
        stop: stop sequences.
        schema: a JSON schema the answer must follow (constrained decoding where supported).
        top_logprobs: how many alternatives' log-probabilities to return per token (0: none).
        sample: distinguishes repeated samples of one request in the cache; never sent.
        extra: extra JSON fields sent with this request (server-specific sampling options).
    """

    messages: list[dict[str, str]] = field(default_factory=list)
    prompt: str | None = None
    max_tokens: int = 256
    temperature: float = 0.0
    top_p: float | None = None
    seed: int | None = None
    stop: list[str] = field(default_factory=list)
    schema: dict[str, Any] | None = None
    top_logprobs: int = 0
    sample: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the request part of the cache key)."""
        return asdict(self)


@dataclass
class LLMResponse:
    """The one response record every client returns.

    Attributes:
        text: the generated text.
        model: the model that answered (as the server names it).
        tokens_in: prompt tokens.
        tokens_out: generated tokens.
        latency_s: wall time of the request that produced it (0 for a cache hit's replay is not
            used: the original latency is kept and ``cached`` tells).
        cost_usd: price of the call when the model is priced, else ``None``.
        cached: served from the disk cache (no request was made).
        constrained: the answer was decoded under the request's JSON schema.
        finish_reason: the server's reason for stopping (``"stop"``, ``"length"``...).
        logprobs: per generated token, the top alternatives as ``{token: logprob}``.
        retries: how many retries the request needed.
        reasoning: a reasoning model's thinking text, kept apart from ``text``.
    """

    text: str
    model: str
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    cost_usd: float | None = None
    cached: bool = False
    constrained: bool = False
    finish_reason: str | None = None
    logprobs: list[dict[str, float]] | None = None
    retries: int = 0
    reasoning: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LLMResponse:
        """Inverse of :meth:`to_dict` (unknown keys ignored)."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


class DiskCache:
    """Responses on disk, one JSON file per request key (``root/ab/abcdef….json``).

    Writes are atomic (temporary file + rename), so concurrent episodes and processes may share a
    directory. A response is stored once and replayed with ``cached=True``.
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> LLMResponse | None:
        """The stored response for ``key``, if any."""
        path = self._path(key)
        try:
            data = json.loads(path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return None
        if data.get("version") != CACHE_VERSION:
            return None
        return LLMResponse.from_dict(data["response"])

    def put(self, key: str, response: LLMResponse, request: Mapping[str, Any]) -> None:
        """Store ``response`` (with the request it answers, for inspection) under ``key``."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {"version": CACHE_VERSION, "request": request, "response": response.to_dict()}
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w") as fh:
                json.dump(record, fh)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("*/*.json")) if self.root.exists() else 0


@dataclass
class ClientStats:
    """Counters over a client's life (thread-safe updates through :meth:`add`)."""

    requests: int = 0
    cache_hits: int = 0
    retries: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    schema_fallbacks: int = 0

    def add(self, **counts: int) -> None:
        """Increment counters."""
        for k, v in counts.items():
            setattr(self, k, getattr(self, k) + v)


class BaseLLMClient:
    """Retries, cache, pricing, concurrency and capability fallback; subclasses only send.

    Subclasses implement :meth:`_send` (one attempt, no retries) and may implement
    :meth:`_asend` (the default runs :meth:`_send` in a worker thread).

    Attributes:
        model: the model name sent with every request.
        endpoint: where requests go (never holds a key).
        cache_endpoint: what stands for the endpoint in the cache key (default ``endpoint``; the
            local server uses its model file, so an ephemeral port does not change the key).
        capabilities: ``{"json_schema": bool | None}``; ``None`` until the server has answered.
        stats: :class:`ClientStats`.
        breaker: the :class:`~tom_llm_agents.failures.CircuitBreaker` guarding the endpoint.
    """

    def __init__(
        self,
        model: str,
        *,
        endpoint: str = "",
        cache_dir: str | Path | None = None,
        retry: RetryPolicy | None = None,
        prices: Mapping[str, tuple[float, float]] | None = None,
        max_concurrency: int = 4,
        json_schema: bool | None = None,
        cache_endpoint: str | None = None,
        breaker: CircuitBreaker | None = None,
    ) -> None:
        self.model = model
        self.endpoint = endpoint
        self.cache_endpoint = cache_endpoint if cache_endpoint is not None else endpoint
        self.breaker = breaker if breaker is not None else CircuitBreaker()
        cache_dir = cache_dir if cache_dir is not None else os.environ.get(ENV_CACHE_DIR) or None
        self.cache = DiskCache(cache_dir) if cache_dir else None
        self.retry = retry or RetryPolicy()
        self.prices = dict(prices or {})
        self.max_concurrency = max(1, int(max_concurrency))
        self.capabilities: dict[str, bool | None] = {"json_schema": json_schema}
        self.stats = ClientStats()
        self._lock = threading.Lock()
        self._secrets: list[str | None] = []

    # ------------------------------------------------------------------ helpers
    def cache_key(self, request: LLMRequest) -> str:
        """SHA-256 of the cache endpoint, model and full request (never the API key)."""
        payload = {
            "endpoint": self.cache_endpoint,
            "model": self.model,
            "request": request.to_dict(),
        }
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()

    def cost(self, model: str, tokens_in: int, tokens_out: int) -> float | None:
        """USD for a call, when ``model`` (or the client's model) is priced."""
        price = self.prices.get(model) or self.prices.get(self.model)
        if price is None:
            return None
        return (tokens_in * price[0] + tokens_out * price[1]) / 1e6

    def _count(self, **counts: int) -> None:
        with self._lock:
            self.stats.add(**counts)

    def _constrain(self, request: LLMRequest) -> bool:
        return request.schema is not None and self.capabilities.get("json_schema") is not False

    def _finish(self, response: LLMResponse, retries: int) -> LLMResponse:
        response.retries = retries
        if response.cost_usd is None:
            response.cost_usd = self.cost(response.model, response.tokens_in, response.tokens_out)
        self._count(
            requests=1,
            retries=retries,
            tokens_in=response.tokens_in,
            tokens_out=response.tokens_out,
        )
        llm_call()  # the command's progress display counts it (tom_envs.progress)
        return response

    def _give_up(self, exc: BaseException) -> LLMError:
        if isinstance(exc, CircuitOpen):
            return exc
        message = redact(f"{type(exc).__name__}: {exc}", self._secrets)
        if is_context_overflow(exc):
            kind = "context_overflow"
        elif isinstance(exc, LLMError):
            kind = exc.kind
        elif is_connection_failure(exc) or self.retry.retryable(exc):
            kind = "endpoint"
        else:
            kind = "request"
        return LLMError(f"{self.model} at {self.endpoint or 'default endpoint'}: {message}", kind)

    def _circuit_open(self) -> CircuitOpen:
        return CircuitOpen(
            f"{self.model} at {self.endpoint or 'default endpoint'}: circuit breaker open after "
            f"{self.breaker.failures} consecutive connection failures; not calling it for "
            f"{self.breaker.cooldown_s:g}s"
        )

    def _attempt_failed(self, exc: BaseException, retries: int) -> float | None:
        """Book-keeping after a failed attempt: the wait before the next, or ``None`` (give up)."""
        if is_connection_failure(exc):
            if self.breaker.failure():
                return None
        else:
            self.breaker.success()  # the server answered (with an error)
        return self.retry.delay(retries, exc)

    def _note_schema_refused(self) -> None:
        if self.capabilities.get("json_schema") is not False:
            log.info("%s refused json_schema decoding; falling back to plain text", self.model)
        self.capabilities["json_schema"] = False
        self._count(schema_fallbacks=1)

    def _cached(self, request: LLMRequest) -> tuple[str, LLMResponse | None]:
        key = self.cache_key(request)
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            hit.cached = True
            self._count(cache_hits=1)
        return key, hit

    def _store(self, key: str, request: LLMRequest, response: LLMResponse) -> None:
        if self.cache is not None:
            self.cache.put(key, response, request.to_dict())

    # ------------------------------------------------------------------ sync
    def complete(self, request: LLMRequest) -> LLMResponse:
        """Answer one request: from the cache, else from the server with retries."""
        key, hit = self._cached(request)
        if hit is not None:
            return hit
        retries = 0
        while True:
            if not self.breaker.allow():
                raise self._circuit_open()
            constrained = self._constrain(request)
            try:
                response = self._send(request, constrained)
            except SchemaUnsupported:
                self.breaker.success()
                self._note_schema_refused()
                continue
            except Exception as exc:
                wait = self._attempt_failed(exc, retries)
                if wait is None:
                    raise self._give_up(exc) from None
                log.warning(
                    "%s: retry %d in %.1fs (%s)", self.model, retries + 1, wait, type(exc).__name__
                )
                time.sleep(wait)
                retries += 1
                continue
            break
        self.breaker.success()
        response = self._finish(response, retries)
        self._store(key, request, response)
        return response

    def _send(self, request: LLMRequest, constrained: bool) -> LLMResponse:
        """One attempt, no retries (subclasses)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ async
    async def acomplete(self, request: LLMRequest) -> LLMResponse:
        """:meth:`complete` for asyncio code (retries wait with ``asyncio.sleep``)."""
        key, hit = self._cached(request)
        if hit is not None:
            return hit
        retries = 0
        while True:
            if not self.breaker.allow():
                raise self._circuit_open()
            constrained = self._constrain(request)
            try:
                response = await self._asend(request, constrained)
            except SchemaUnsupported:
                self.breaker.success()
                self._note_schema_refused()
                continue
            except Exception as exc:
                wait = self._attempt_failed(exc, retries)
                if wait is None:
                    raise self._give_up(exc) from None
                await asyncio.sleep(wait)
                retries += 1
                continue
            break
        self.breaker.success()
        response = self._finish(response, retries)
        self._store(key, request, response)
        return response

    async def _asend(self, request: LLMRequest, constrained: bool) -> LLMResponse:
        """One async attempt; the default runs :meth:`_send` in a worker thread."""
        return await asyncio.to_thread(self._send, request, constrained)

    def complete_many(self, requests: Sequence[LLMRequest]) -> list[LLMResponse]:
        """Answer many requests concurrently (at most ``max_concurrency`` in flight), in order."""
        requests = list(requests)
        if len(requests) <= 1:
            return [self.complete(r) for r in requests]
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self._gather(requests))
        with ThreadPoolExecutor(self.max_concurrency) as pool:  # called from async code
            return list(pool.map(self.complete, requests))

    async def _gather(self, requests: Sequence[LLMRequest]) -> list[LLMResponse]:
        sem = asyncio.Semaphore(self.max_concurrency)

        async def one(r: LLMRequest) -> LLMResponse:
            async with sem:
                return await self.acomplete(r)

        try:
            return list(await asyncio.gather(*(one(r) for r in requests)))
        finally:
            await self._aclose()

    async def _aclose(self) -> None:
        """Release per-event-loop resources (subclasses)."""
