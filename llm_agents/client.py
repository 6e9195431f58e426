"""One client for any OpenAI-compatible endpoint, with one response record (BALROG's split).

:class:`~tom_llm_agents.openai_client.OpenAIClient` talks to OpenAI, vLLM, Ollama, llama.cpp
servers or anything else that speaks the OpenAI API, chosen by ``base_url``, ``model`` and a key
from the arguments or the environment (``OPENAI_BASE_URL``, ``TOM_ENVS_LLM_MODEL``,
``OPENAI_API_KEY`` or the variable named by ``api_key_env``). Everything that is not the wire
format lives once, in :class:`BaseLLMClient` (here; the failure handling it applies is in
:mod:`tom_llm_agents.failures`):

* retries with exponential backoff (and ``Retry-After``) on rate limits, timeouts, connection
  failures and server errors (:class:`~tom_llm_agents.failures.RetryPolicy`); other errors fail
  at once; a ``Retry-After`` longer than ``RetryPolicy.max_retry_after_s`` fails the call at once
  (kind ``"rate_limited"``) instead of sleeping;
* bounded calls: every attempt has a wall-clock deadline that a server trickling its reply cannot
  stretch (:class:`~tom_llm_agents.openai_client.OpenAIClient`'s ``timeout``), the whole call an
  optional total ``deadline_s``, and a reply larger than ``max_reply_bytes`` fails with kind
  ``"oversized"`` (the transport stops reading at the cap: nothing unbounded is held);
* one response record, :class:`LLMResponse`: text, model, tokens in/out (and a reasoning model's
  reasoning tokens), latency, cost when the model is priced
  (``prices={"model": (usd_per_1M_in, usd_per_1M_out)}``), token log-probabilities;
* a disk cache keyed by the full request (:class:`DiskCache`), so a re-run is reproducible and
  free; the key never includes the API key. Only real answers are stored: a failed request, an
  empty reply and a rejected one never are, so a transient fault is not replayed after the
  endpoint recovers. An answer replayed from the cache costs nothing (``cost_usd`` 0). With a
  cache, identical requests in flight at once in a process are sent once (the others wait for
  that answer), so episodes played at once that ask the same greedy question pay for it once;
* the run's spending limit (:mod:`tom_envs.budget`): each request that misses the cache is
  counted before it is sent, and its price after, so ``--max-calls`` / ``--max-cost`` stop a run
  cleanly;
* async concurrency (:meth:`BaseLLMClient.acomplete`, :meth:`BaseLLMClient.complete_many` with at
  most ``max_concurrency`` requests in flight);
* constrained decoding: a request may carry a JSON schema (the agent sends an ``enum`` of the
  legal actions). If the server refuses ``response_format=json_schema`` the client remembers it and
  sends plain requests from then on (the agent then parses free text);
* failures by kind (:attr:`~tom_llm_agents.failures.LLMError.kind`): ``"endpoint"`` (connection
  refused, timeouts and server errors after the retries, or the circuit breaker open),
  ``"rate_limited"`` (429 after the retries, or a too long ``Retry-After``), ``"oversized"``
  (a reply over the size cap), ``"context_overflow"`` (HTTP 400 saying the prompt does not fit
  the context window: never retried) and ``"request"`` (any other refused request);
* a circuit breaker (:class:`~tom_llm_agents.failures.CircuitBreaker`): after ``threshold``
  consecutive endpoint failures (connection failures, timeouts, 429 and 5xx answers; attempts,
  retries included) the client stops calling the endpoint and every request fails at once with
  kind ``"endpoint"`` until ``cooldown_s`` has passed; then one trial request is let through (a
  success closes the breaker, a failure opens it again). A dead, overloaded or failing endpoint
  therefore costs a few seconds, not ``max_retries`` backoffs per decision;
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
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from tom_envs import budget
from tom_envs.progress import llm_call
from tom_llm_agents.failures import (
    CircuitBreaker,
    CircuitOpen,
    LLMError,
    ReplyTooLarge,
    RetryPolicy,
    SchemaUnsupported,
    is_endpoint_failure,
    redact,
)

log = logging.getLogger("tom_llm_agents")

#: Bumped when the cached response format changes (old entries are then ignored).
CACHE_VERSION = 1

ENV_BASE_URL = "OPENAI_BASE_URL"
ENV_MODEL = "TOM_ENVS_LLM_MODEL"
ENV_API_KEY = "OPENAI_API_KEY"
ENV_CACHE_DIR = "TOM_ENVS_LLM_CACHE"

#: Requests being sent in this process, by cache key (single flight: BaseLLMClient.complete).
_FLIGHTS: dict[str, Future[LLMResponse | None]] = {}
_FLIGHTS_LOCK = threading.Lock()

#: The default cap on one reply (its HTTP body; the text and reasoning of a scripted reply).
DEFAULT_MAX_REPLY_BYTES = 4 * 1024 * 1024


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
        tokens_out: generated tokens (a reasoning model's reasoning tokens included, as OpenAI
            counts and bills them).
        latency_s: wall time of the request that produced it (0 for a cache hit's replay is not
            used: the original latency is kept and ``cached`` tells).
        cost_usd: price of the call when the model is priced, else ``None`` (0 for an answer
            replayed from the cache: nothing was paid for it now).
        cached: served from the disk cache (no request was made).
        constrained: the answer was decoded under the request's JSON schema.
        finish_reason: the server's reason for stopping (``"stop"``, ``"length"``...).
        logprobs: per generated token, the top alternatives as ``{token: logprob}``.
        retries: how many retries the request needed.
        reasoning: a reasoning model's thinking text, kept apart from ``text``.
        reasoning_tokens: the reasoning tokens among ``tokens_out``
            (``usage.completion_tokens_details.reasoning_tokens``), 0 when not reported.
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
    reasoning_tokens: int = 0

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
    reasoning_tokens: int = 0
    cost_usd: float = 0.0
    schema_fallbacks: int = 0
    not_cached: int = 0

    def add(self, **counts: float) -> None:
        """Increment counters."""
        for k, v in counts.items():
            setattr(self, k, getattr(self, k) + v)


class BaseLLMClient:
    """Retries, cache, pricing, budget, concurrency and capability fallback; subclasses only send.

    Subclasses implement :meth:`_send` (one attempt, no retries) and may implement
    :meth:`_asend` (the default runs :meth:`_send` in a worker thread), or override
    :meth:`_call` / :meth:`_call_many` to run the retry loop elsewhere (the OpenAI client runs it
    on one event loop per process, where a deadline can cancel a request mid-read).

    Attributes:
        model: the model name sent with every request.
        endpoint: where requests go (never holds a key).
        cache_endpoint: what stands for the endpoint in the cache key (default ``endpoint``; the
            local server uses its model file, so an ephemeral port does not change the key).
        capabilities: ``{"json_schema": bool | None}``; ``None`` until the server has answered.
        stats: :class:`ClientStats`.
        breaker: the :class:`~tom_llm_agents.failures.CircuitBreaker` guarding the endpoint.
        deadline_s: wall-clock bound on one call, retries and waits included (``None``: bounded
            by the attempts' own deadlines and the retry policy only).
        max_reply_bytes: the largest reply accepted (over it: kind ``"oversized"``).
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
        deadline_s: float | None = None,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    ) -> None:
        self.model = model
        self.endpoint = endpoint
        self.cache_endpoint = cache_endpoint if cache_endpoint is not None else endpoint
        self.breaker = breaker if breaker is not None else CircuitBreaker()
        self._cache_dir = cache_dir
        self._disk: DiskCache | None = None
        self.retry = retry or RetryPolicy()
        self.prices = dict(prices or {})
        self.max_concurrency = max(1, int(max_concurrency))
        self.capabilities: dict[str, bool | None] = {"json_schema": json_schema}
        self.stats = ClientStats()
        self.deadline_s = None if deadline_s is None else float(deadline_s)
        if int(max_reply_bytes) < 1024:
            raise ValueError(f"max_reply_bytes must be >= 1024, got {max_reply_bytes!r}")
        self.max_reply_bytes = int(max_reply_bytes)
        self._lock = threading.Lock()
        self._secrets: list[str | None] = []

    # ------------------------------------------------------------------ helpers
    @property
    def cache(self) -> DiskCache | None:
        """The disk cache: ``cache_dir`` if given, else ``$TOM_ENVS_LLM_CACHE`` as it is at the
        time of the request (a command names its run directory's cache after the agents are
        built, and its worker processes inherit it); ``None``: no cache."""
        root = self._cache_dir if self._cache_dir is not None else os.environ.get(ENV_CACHE_DIR)
        if not root:
            return None
        if self._disk is None or self._disk.root != Path(root):
            self._disk = DiskCache(root)
        return self._disk

    def wire_options(self) -> dict[str, Any]:
        """Settings of the wire format that change answers (a reasoning model's effort...):
        part of the cache key when set. None by default."""
        return {}

    def cache_key(self, request: LLMRequest) -> str:
        """SHA-256 of the cache endpoint, model, wire options and full request (never the key)."""
        payload: dict[str, Any] = {
            "endpoint": self.cache_endpoint,
            "model": self.model,
            "request": request.to_dict(),
        }
        wire = self.wire_options()
        if wire:
            payload["wire"] = wire
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()

    def cost(self, model: str, tokens_in: int, tokens_out: int) -> float | None:
        """USD for a call, when ``model`` (or the client's model) is priced. Reasoning tokens are
        part of ``tokens_out`` and priced as output, as OpenAI bills them."""
        price = self.prices.get(model) or self.prices.get(self.model)
        if price is None:
            return None
        return (tokens_in * price[0] + tokens_out * price[1]) / 1e6

    def _count(self, **counts: float) -> None:
        with self._lock:
            self.stats.add(**counts)

    def _constrain(self, request: LLMRequest) -> bool:
        return request.schema is not None and self.capabilities.get("json_schema") is not False

    def _check_size(self, response: LLMResponse) -> None:
        """A reply over the cap fails (transports that stream stop reading at the cap already)."""
        size = len(response.text.encode("utf-8", "replace"))
        if response.reasoning:
            size += len(response.reasoning.encode("utf-8", "replace"))
        if size > self.max_reply_bytes:
            raise ReplyTooLarge(
                f"reply of {size} bytes is over the cap of {self.max_reply_bytes} bytes"
            )

    def _finish(self, response: LLMResponse, retries: int) -> LLMResponse:
        response.retries = retries
        if response.cost_usd is None:
            response.cost_usd = self.cost(response.model, response.tokens_in, response.tokens_out)
        self._count(
            requests=1,
            retries=retries,
            tokens_in=response.tokens_in,
            tokens_out=response.tokens_out,
            reasoning_tokens=response.reasoning_tokens,
            cost_usd=response.cost_usd or 0.0,
        )
        llm_call()  # the command's progress display counts it (tom_envs.progress)
        return response

    def _give_up(self, exc: BaseException) -> LLMError:
        if isinstance(exc, CircuitOpen):
            return exc
        message = redact(f"{type(exc).__name__}: {exc}", self._secrets)
        kind = self.retry.kind(exc)
        if kind == "rate_limited" and self.retry.waits_too_long(exc):
            message += f" (Retry-After over the {self.retry.max_retry_after_s:g}s bound)"
        return LLMError(f"{self.model} at {self.endpoint or 'default endpoint'}: {message}", kind)

    def _circuit_open(self) -> CircuitOpen:
        return CircuitOpen(
            f"{self.model} at {self.endpoint or 'default endpoint'}: circuit breaker open after "
            f"{self.breaker.failures} consecutive endpoint failures (connection, timeout, 429, "
            f"5xx); not calling it for {self.breaker.cooldown_s:g}s"
        )

    def _attempt_failed(self, exc: BaseException, retries: int, started: float) -> float | None:
        """Book-keeping after a failed attempt: the wait before the next, or ``None`` (give up)."""
        if is_endpoint_failure(exc):
            if self.retry.waits_too_long(exc):
                self.breaker.trip()  # the server asked not to be called for that long
                return None
            if self.breaker.failure():
                return None
        else:
            self.breaker.success()  # the server answered (with an error of the request's own)
        wait = self.retry.delay(retries, exc)
        if (
            wait is not None
            and self.deadline_s is not None
            and time.monotonic() - started + wait >= self.deadline_s
        ):
            return None  # the call's total deadline would pass while waiting
        return wait

    def _attempt_timeout(self, started: float) -> float | None:
        """What is left of the call's total deadline for the next attempt (``None``: no total)."""
        if self.deadline_s is None:
            return None
        return max(0.001, self.deadline_s - (time.monotonic() - started))

    def _next_attempt(self, request: LLMRequest) -> bool:
        """Whether the next attempt of ``request`` asks for schema-constrained decoding;
        :class:`CircuitOpen` when the breaker refuses the attempt."""
        if not self.breaker.allow():
            raise self._circuit_open()
        return self._constrain(request)

    def _note_schema_refused(self) -> None:
        """The endpoint answered but refused json_schema decoding: retried as plain text."""
        self.breaker.success()
        if self.capabilities.get("json_schema") is not False:
            log.info("%s refused json_schema decoding; falling back to plain text", self.model)
        self.capabilities["json_schema"] = False
        self._count(schema_fallbacks=1)

    def _cached(self, request: LLMRequest) -> tuple[str, LLMResponse | None]:
        key = self.cache_key(request)
        cache = self.cache
        hit = cache.get(key) if cache is not None else None
        if hit is not None:
            hit.cached = True
            if hit.cost_usd is not None:
                hit.cost_usd = 0.0  # nothing is paid for a replay
            self._count(cache_hits=1)
        return key, hit

    @staticmethod
    def cacheable(response: LLMResponse) -> bool:
        """Whether an answer may be stored: not an empty reply (a transient fault of the server
        that would otherwise be replayed after it recovers)."""
        return bool(response.text.strip())

    def _store(self, key: str, request: LLMRequest, response: LLMResponse) -> None:
        budget.charge(response.cost_usd)
        cache = self.cache
        if cache is None:
            return
        if not self.cacheable(response):
            self._count(not_cached=1)
            return
        cache.put(key, response, request.to_dict())

    # ------------------------------------------------------------------ single flight
    def _claim(self, key: str) -> tuple[bool, Future[LLMResponse | None] | None]:
        """With a cache, one request per key is sent at a time in this process: ``(True, None)``
        when this caller now sends it (and must :meth:`_land` it), ``(False, future)`` when
        another caller is sending it, ``(False, None)`` without a cache (no sharing)."""
        if self.cache is None:
            return False, None
        with _FLIGHTS_LOCK:
            other = _FLIGHTS.get(key)
            if other is not None:
                return False, other
            _FLIGHTS[key] = Future()
            return True, None

    @staticmethod
    def _land(key: str, response: LLMResponse | None) -> None:
        """The request of ``key`` is answered (``None``: it failed); wake who waits for it."""
        with _FLIGHTS_LOCK:
            future = _FLIGHTS.pop(key, None)
        if future is not None:
            future.set_result(response)

    def _answered(
        self, key: str, request: LLMRequest, response: LLMResponse, mine: bool
    ) -> LLMResponse:
        """``response`` stored (:meth:`_store`) and, when this caller claimed ``key``, handed to
        who waits for it (:meth:`_land`)."""
        self._store(key, request, response)
        if mine:
            self._land(key, response)
        return response

    def _replay(self, response: LLMResponse | None) -> LLMResponse | None:
        """Another caller's answer to the same request, as a cache hit would give it (``None``
        when it failed or is not to be reused: this caller then sends its own)."""
        if response is None or not self.cacheable(response):
            return None
        self._count(cache_hits=1)
        cost = 0.0 if response.cost_usd is not None else None
        return replace(response, cached=True, cost_usd=cost, retries=0)

    # ------------------------------------------------------------------ public API
    def complete(self, request: LLMRequest) -> LLMResponse:
        """Answer one request: from the cache, else from the server with retries.

        With a cache, identical requests in flight at once in this process are sent once: the
        others wait for that answer and get it as a cache hit (episodes played at once that
        ask the same greedy question pay for it once)."""
        key, hit = self._cached(request)
        if hit is not None:
            return hit
        mine, other = self._claim(key)
        if other is not None:
            shared = self._replay(other.result())
            if shared is not None:
                return shared
        try:
            budget.reserve_call()  # BudgetExhausted: the request is not sent
            response = self._call(request)
        except BaseException:
            if mine:
                self._land(key, None)
            raise
        return self._answered(key, request, response, mine)

    def complete_many(self, requests: Sequence[LLMRequest]) -> list[LLMResponse]:
        """Answer many requests concurrently (at most ``max_concurrency`` in flight), in order.

        Every answer that arrives is stored in the cache even when another request of the batch
        fails; the first failure is then raised. Identical requests are sent once (see
        :meth:`complete`)."""
        requests = list(requests)
        out: list[LLMResponse | None] = [None] * len(requests)
        sending: list[tuple[int, str, LLMRequest, bool]] = []
        first_of: dict[str, int] = {}
        copies: list[tuple[int, str]] = []
        followers: list[tuple[int, LLMRequest, Future[LLMResponse | None]]] = []
        shared = self.cache is not None  # without a cache every request gets its own answer
        for i, r in enumerate(requests):
            key, hit = self._cached(r)
            if hit is not None:
                out[i] = hit
            elif shared and key in first_of:
                copies.append((i, key))
            else:
                mine, other = self._claim(key)
                if other is not None:
                    followers.append((i, r, other))
                else:
                    first_of[key] = i
                    sending.append((i, key, r, mine))
        first: BaseException | None = None
        if sending:
            try:
                budget.reserve_call(len(sending))
                results = self._call_many([r for _, _, r, _ in sending])
            except BaseException:
                for _, key, _, mine in sending:
                    if mine:
                        self._land(key, None)
                raise
            for (i, key, r, mine), res in zip(sending, results, strict=True):
                if isinstance(res, BaseException):
                    first = first or res
                    if mine:
                        self._land(key, None)
                    continue
                out[i] = self._answered(key, r, res, mine)
        for i, key in copies:
            out[i] = self._replay(out[first_of[key]]) or out[first_of[key]]
        for i, r, other in followers:
            out[i] = self._replay(other.result()) or self.complete(r)
        if first is not None:
            raise first
        return [r for r in out if r is not None]

    async def acomplete(self, request: LLMRequest) -> LLMResponse:
        """:meth:`complete` for asyncio code (retries wait with ``asyncio.sleep``)."""
        key, hit = self._cached(request)
        if hit is not None:
            return hit
        mine, other = self._claim(key)
        if other is not None:
            shared = self._replay(await asyncio.wrap_future(other))
            if shared is not None:
                return shared
        try:
            budget.reserve_call()
            response = await self._acall(request)
        except BaseException:
            if mine:
                self._land(key, None)
            raise
        return self._answered(key, request, response, mine)

    # ------------------------------------------------------------------ retry loops
    def _call(self, request: LLMRequest) -> LLMResponse:
        """One request with retries, the breaker and the schema fallback (sync attempts)."""
        retries = 0
        started = time.monotonic()
        while True:
            constrained = self._next_attempt(request)
            try:
                response = self._send(request, constrained)
                self._check_size(response)
            except SchemaUnsupported:
                self._note_schema_refused()
                continue
            except Exception as exc:
                time.sleep(self._retry_wait(exc, retries, started))
                retries += 1
                continue
            break
        self.breaker.success()
        return self._finish(response, retries)

    def _retry_wait(self, exc: Exception, retries: int, started: float) -> float:
        """Seconds to wait before retrying after ``exc`` (logged); raises the final error when
        the attempt is not retried."""
        wait = self._attempt_failed(exc, retries, started)
        if wait is None:
            raise self._give_up(exc) from None
        log.warning("%s: retry %d in %.1fs (%s)", self.model, retries + 1, wait, type(exc).__name__)
        return wait

    async def _acall(self, request: LLMRequest) -> LLMResponse:
        """:meth:`_call` with async attempts (:meth:`_asend`) and waits."""
        retries = 0
        started = time.monotonic()
        while True:
            constrained = self._next_attempt(request)
            try:
                response = await self._asend(
                    request, constrained, timeout=self._attempt_timeout(started)
                )
                self._check_size(response)
            except SchemaUnsupported:
                self._note_schema_refused()
                continue
            except Exception as exc:
                await asyncio.sleep(self._retry_wait(exc, retries, started))
                retries += 1
                continue
            break
        self.breaker.success()
        return self._finish(response, retries)

    def _call_many(self, requests: Sequence[LLMRequest]) -> list[LLMResponse | BaseException]:
        """Each request's answer or failure (threads, at most ``max_concurrency`` at once)."""

        def one(r: LLMRequest) -> LLMResponse | BaseException:
            try:
                return self._call(r)
            except Exception as exc:
                return exc

        if len(requests) == 1:
            return [one(requests[0])]
        with ThreadPoolExecutor(min(self.max_concurrency, len(requests))) as pool:
            return list(pool.map(one, requests))

    def _send(self, request: LLMRequest, constrained: bool) -> LLMResponse:
        """One attempt, no retries (subclasses)."""
        raise NotImplementedError

    async def _asend(
        self, request: LLMRequest, constrained: bool, timeout: float | None = None
    ) -> LLMResponse:
        """One async attempt; the default runs :meth:`_send` in a worker thread."""
        call = asyncio.to_thread(self._send, request, constrained)
        return await (call if timeout is None else asyncio.wait_for(call, timeout))

    async def _aclose(self) -> None:
        """Release per-event-loop resources (subclasses)."""
