"""The client for any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp servers...).

:class:`OpenAIClient` talks through the ``openai`` package; only the wire format lives here: the
request's arguments (a JSON schema as ``response_format``; a reasoning model's
``max_completion_tokens`` and ``reasoning_effort``, without the sampling parameters it refuses),
the response record (a reasoning model's thinking split off by :func:`split_reasoning`, its
reasoning tokens counted, the three log-probability layouts made one) and the server's refusal of
constrained decoding. Retries, the cache, prices, the budget and concurrency are
:class:`~tom_llm_agents.client.BaseLLMClient`'s (see :mod:`tom_llm_agents.client`).

**Bounded transport.** Every request of every client of a process runs on one event loop in a
daemon thread (:func:`run_on_loop`; synchronous callers wait for it), so that:

* an attempt has a *wall-clock* deadline, ``timeout`` seconds from the first byte sent to the
  last byte read (``asyncio.wait_for`` cancels the request mid-read): a server that trickles its
  reply a byte at a time cannot hold a call longer (the HTTP library's own ``timeout`` is per
  read and restarts with every byte);
* the response body is read through a capped stream (:func:`capped_http_client`): a
  ``Content-Length`` over ``max_reply_bytes`` is refused before the body is read, and reading
  stops at the cap otherwise (kind ``"oversized"``); compressed bodies are not asked for, and one
  sent anyway is inflated under the same cap;
* many episodes in many threads share one connection pool per client and wait on sockets, not on
  threads.

**Reasoning models** (``reasoning``): OpenAI's o-series and GPT-5 models refuse ``temperature``
and ``top_p`` and take ``max_completion_tokens`` instead of ``max_tokens``. With
``reasoning=True`` neither sampling parameter is sent and the generation budget goes as
``max_completion_tokens`` (set ``token_param`` to choose the field for any model);
``reasoning=None`` (the default) applies :func:`is_reasoning_model` to the model's name.
``reasoning_effort`` (``"minimal"``, ``"low"``, ``"medium"``, ``"high"``) is sent when given.
Reasoning tokens are read from ``usage.completion_tokens_details.reasoning_tokens`` into
:attr:`~tom_llm_agents.client.LLMResponse.reasoning_tokens`.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import re
import threading
import time
import weakref
import zlib
from collections.abc import Coroutine, Mapping
from typing import Any, TypeVar

from tom_llm_agents.client import (
    ENV_API_KEY,
    ENV_BASE_URL,
    ENV_MODEL,
    BaseLLMClient,
    LLMRequest,
    LLMResponse,
)
from tom_llm_agents.failures import (
    DeadlineExceeded,
    ReplyTooLarge,
    SchemaUnsupported,
    redact,
)

T = TypeVar("T")

#: Reasoning efforts a request may carry (OpenAI's values).
REASONING_EFFORTS = ("minimal", "low", "medium", "high")
#: Fields that may carry the generation budget.
TOKEN_PARAMS = ("max_tokens", "max_completion_tokens")
#: Model names that refuse ``temperature``/``top_p`` (:func:`is_reasoning_model`): OpenAI's
#: o-series (o1, o3, o4-mini...) and GPT-5 models except their ``-chat`` variants, with or
#: without a provider prefix (``openai/o3-mini``).
REASONING_MODEL_RULE = r"^(o\d+(?:-[\w.-]+)?|gpt-5(?!-chat)(?:[\w.-]*))$"


def is_reasoning_model(model: str) -> bool:
    """Whether ``model`` is a reasoning model that refuses sampling parameters, by its name
    (:data:`REASONING_MODEL_RULE`, applied to the name after any ``provider/`` prefix)."""
    name = model.rsplit("/", 1)[-1].strip().lower()
    return re.match(REASONING_MODEL_RULE, name) is not None


def split_reasoning(text: str) -> tuple[str, str | None]:
    """``"<think>r</think> answer"`` -> ``("answer", "r")``; text without a think block as is."""
    stripped = text.lstrip()
    if stripped.startswith("<think>"):
        end = stripped.find("</think>")
        if end >= 0:
            return stripped[end + len("</think>") :].lstrip(), stripped[
                len("<think>") : end
            ].strip()
        return "", stripped[len("<think>") :].strip()  # cut off while thinking
    return text, None


def _schema_format(schema: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": dict(schema), "strict": True},
    }


def _top_alternatives(logprobs: Any) -> list[dict[str, float]] | None:
    """Normalise the three logprob layouts (chat, legacy completions, llama.cpp completions)."""
    if logprobs is None:
        return None
    data = logprobs.model_dump() if hasattr(logprobs, "model_dump") else dict(logprobs)
    out: list[dict[str, float]] = []
    content = data.get("content")
    if content:
        for tok in content:
            alts = {a["token"]: float(a["logprob"]) for a in tok.get("top_logprobs") or []}
            alts.setdefault(tok["token"], float(tok["logprob"]))
            out.append(alts)
        return out
    tops = data.get("top_logprobs")
    if tops:
        for i, alts in enumerate(tops):
            entry = {k: float(v) for k, v in (alts or {}).items()}
            tokens, lps = data.get("tokens") or [], data.get("token_logprobs") or []
            if i < len(tokens) and i < len(lps) and lps[i] is not None:
                entry.setdefault(tokens[i], float(lps[i]))
            out.append(entry)
        return out
    return None


def _refuses_schema(exc: BaseException) -> bool:
    status = getattr(exc, "status_code", None)
    text = str(exc).lower()
    return status in (400, 422) and any(
        w in text for w in ("response_format", "json_schema", "schema", "grammar")
    )


def _reasoning_tokens(usage: Any) -> int:
    details = getattr(usage, "completion_tokens_details", None)
    if details is None and usage is not None:
        details = (getattr(usage, "model_extra", None) or {}).get("completion_tokens_details")
    if isinstance(details, Mapping):
        value = details.get("reasoning_tokens")
    else:
        value = getattr(details, "reasoning_tokens", None)
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


# ---------------------------------------------------------------------------- the event loop
class _Loop:
    """One event loop per process, in a daemon thread (made again after a fork)."""

    lock = threading.Lock()
    loop: asyncio.AbstractEventLoop | None = None
    thread: threading.Thread | None = None
    pid = 0

    @classmethod
    def get(cls) -> asyncio.AbstractEventLoop:
        with cls.lock:
            alive = cls.thread is not None and cls.thread.is_alive()
            if cls.loop is None or cls.pid != os.getpid() or not alive:
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                thread = threading.Thread(target=run, name="tom-llm-transport", daemon=True)
                thread.start()
                ready.wait()
                cls.loop, cls.thread, cls.pid = loop, thread, os.getpid()
            return cls.loop


def run_on_loop(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on the process's transport loop and wait for its result (from any thread
    but the loop's own)."""
    loop = _Loop.get()
    if threading.current_thread() is _Loop.thread:
        raise RuntimeError("a synchronous LLM call from inside the transport loop; use acomplete")
    future = asyncio.run_coroutine_threadsafe(coro, loop)
    try:
        return future.result()
    except BaseException:
        future.cancel()
        raise


# ---------------------------------------------------------------------------- capped transport
def _httpx_module(openai: Any) -> Any:
    """The HTTP library the installed ``openai`` package is built on (``httpx`` or ``httpx2``)."""
    base = getattr(openai, "DefaultAsyncHttpxClient", None)
    for cls in getattr(base, "__mro__", ()):
        top = cls.__module__.split(".")[0]
        if top in ("httpx", "httpx2") and cls.__name__ == "AsyncClient":
            return importlib.import_module(top)
    return importlib.import_module("httpx")


def capped_http_client(openai: Any, max_bytes: int, timeout: float) -> Any:
    """An async HTTP client for ``openai.AsyncOpenAI`` whose responses are read through a cap of
    ``max_bytes`` (:class:`~tom_llm_agents.failures.ReplyTooLarge` beyond it) and which asks for
    uncompressed bodies (a compressed one is inflated under the same cap)."""
    httpx = _httpx_module(openai)

    class CappedStream(httpx.AsyncByteStream):  # type: ignore[name-defined,misc]
        def __init__(self, inner: Any, encoding: str) -> None:
            self.inner = inner
            self.inflate = (
                zlib.decompressobj(16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS)
                if encoding in ("gzip", "deflate")
                else None
            )

        async def __aiter__(self) -> Any:
            total = 0
            async for chunk in self.inner:
                if self.inflate is not None:
                    chunk = self.inflate.decompress(chunk, max_bytes + 1 - total)
                total += len(chunk)
                if total > max_bytes:
                    raise ReplyTooLarge(f"reply over the cap of {max_bytes} bytes")
                yield chunk

        async def aclose(self) -> None:
            await self.inner.aclose()

    class CappedTransport(httpx.AsyncBaseTransport):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            limits = httpx.Limits(max_connections=1000, max_keepalive_connections=256)
            self.inner = httpx.AsyncHTTPTransport(limits=limits)

        async def handle_async_request(self, request: Any) -> Any:
            response = await self.inner.handle_async_request(request)
            length = response.headers.get("content-length", "")
            encoding = response.headers.get("content-encoding", "identity").strip().lower()
            if encoding not in ("identity", "gzip", "deflate", ""):
                await response.aclose()
                raise ReplyTooLarge(f"reply in an encoding that cannot be capped: {encoding!r}")
            if encoding in ("identity", "") and length.isdigit() and int(length) > max_bytes:
                await response.aclose()
                raise ReplyTooLarge(f"reply of {length} bytes is over the cap of {max_bytes} bytes")
            if encoding not in ("identity", ""):
                del response.headers["content-encoding"]
                if "content-length" in response.headers:
                    del response.headers["content-length"]
            response.stream = CappedStream(response.stream, encoding)
            return response

        async def aclose(self) -> None:
            await self.inner.aclose()

    return openai.DefaultAsyncHttpxClient(
        transport=CappedTransport(),
        timeout=timeout,
        headers={"Accept-Encoding": "identity"},
    )


#: ``{event loop: {(base_url, key, timeout, cap): AsyncOpenAI}}`` (see ``_async_client``).
_SHARED: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], Any]] = weakref.WeakKeyDictionary()
_SHARED_LOCK = threading.Lock()
_WARM: list[bool] = []


def _warm_imports(openai: Any) -> None:
    """Import, once per process, what the first request would import lazily (the HTTP stack,
    the async backend, the chat resources and types): done in a command's main process, the
    worker processes it forks start with them instead of each importing them under load."""
    if _WARM:
        return
    _WARM.append(True)
    httpx = _httpx_module(openai)
    core = "httpcore2" if httpx.__name__ == "httpx2" else "httpcore"
    for name in (core, "h11", "anyio._backends._asyncio", "openai.resources.chat.completions",
                 "openai.resources.completions", "openai.types.chat.chat_completion",
                 "openai.types.completion"):  # fmt: skip
        try:
            importlib.import_module(name)
        except ImportError:  # another version of the package: imported at the first request
            continue


class OpenAIClient(BaseLLMClient):
    """Any OpenAI-compatible endpoint through the ``openai`` package.

    Args:
        model: model name; default ``$TOM_ENVS_LLM_MODEL``.
        base_url: endpoint (``http://host:port/v1``); default ``$OPENAI_BASE_URL`` or OpenAI's.
        api_key: the key; default ``$OPENAI_API_KEY`` (or the variable named by
            ``api_key_env``); local servers without a key get a placeholder.
        api_key_env: environment variable holding the key.
        timeout: seconds per attempt, wall clock, from sending to the last byte of the reply.
        extra_body: extra JSON fields for every request (server-specific options).
        reasoning: the model refuses ``temperature``/``top_p`` (none is sent) and takes
            ``max_completion_tokens``; ``None``: by the model's name (:func:`is_reasoning_model`).
        reasoning_effort: ``"minimal"``, ``"low"``, ``"medium"`` or ``"high"`` (sent as
            ``reasoning_effort``), or ``None``.
        token_param: the field of the generation budget (``"max_tokens"`` or
            ``"max_completion_tokens"``); ``None``: ``max_completion_tokens`` for reasoning models.
        **kwargs: :class:`BaseLLMClient` options (``cache_dir``, ``retry``, ``prices``,
            ``max_concurrency``, ``json_schema``, ``deadline_s``, ``max_reply_bytes``).
    """

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        api_key_env: str = ENV_API_KEY,
        timeout: float = 120.0,
        extra_body: Mapping[str, Any] | None = None,
        reasoning: bool | None = None,
        reasoning_effort: str | None = None,
        token_param: str | None = None,
        **kwargs: Any,
    ) -> None:
        model = model or os.environ.get(ENV_MODEL)
        if not model:
            raise ValueError(f"no model given: pass model=... or set ${ENV_MODEL}")
        base_url = base_url or os.environ.get(ENV_BASE_URL) or None
        key = api_key or os.environ.get(api_key_env) or ("no-key" if base_url else None)
        if key is None:
            raise ValueError(
                f"no API key: set ${api_key_env} (or pass base_url=... for a local server)"
            )
        if reasoning_effort is not None and reasoning_effort not in REASONING_EFFORTS:
            raise ValueError(
                f"reasoning_effort must be one of {list(REASONING_EFFORTS)}, got {reasoning_effort!r}"
            )
        if token_param is not None and token_param not in TOKEN_PARAMS:
            raise ValueError(
                f"token_param must be one of {list(TOKEN_PARAMS)}, got {token_param!r}"
            )
        super().__init__(model, endpoint=base_url or "https://api.openai.com/v1", **kwargs)
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ImportError("the openai package is needed: pip install 'tom-envs[llm]'") from exc
        _warm_imports(openai)
        self._openai = openai
        self._key = key
        self._secrets = [key]
        self.base_url = base_url
        self.timeout = float(timeout)
        self.extra_body = dict(extra_body or {})
        self.reasoning = is_reasoning_model(model) if reasoning is None else bool(reasoning)
        self.reasoning_effort = reasoning_effort
        self.token_param = token_param or (
            "max_completion_tokens" if self.reasoning else "max_tokens"
        )
        # one AsyncOpenAI per event loop (the transport loop; a caller's own loop for acomplete)
        self._async: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()

    def __repr__(self) -> str:
        return f"OpenAIClient(model={self.model!r}, base_url={self.base_url!r})"

    def wire_options(self) -> dict[str, Any]:
        """The reasoning settings that change answers (in the cache key when set)."""
        out: dict[str, Any] = {}
        if self.reasoning:
            out["reasoning"] = True
        if self.reasoning_effort is not None:
            out["reasoning_effort"] = self.reasoning_effort
        if self.token_param != "max_tokens":
            out["token_param"] = self.token_param
        return out

    def _kwargs(self, request: LLMRequest, constrained: bool) -> dict[str, Any]:
        kw: dict[str, Any] = {"model": self.model}
        extra = {**self.extra_body, **request.extra}
        if request.prompt is not None or self.token_param == "max_tokens":
            kw["max_tokens"] = request.max_tokens
        else:  # sent in the body: older ``openai`` packages do not name the field
            extra["max_completion_tokens"] = request.max_tokens
        if not self.reasoning:
            kw["temperature"] = request.temperature
            if request.top_p is not None:
                kw["top_p"] = request.top_p
        if self.reasoning_effort is not None and request.prompt is None:
            extra["reasoning_effort"] = self.reasoning_effort
        if request.seed is not None:
            kw["seed"] = request.seed
        if request.stop:
            kw["stop"] = list(request.stop)
        if extra:
            kw["extra_body"] = extra
        if request.prompt is not None:
            kw["prompt"] = request.prompt
            if request.top_logprobs:
                kw["logprobs"] = request.top_logprobs
        else:
            kw["messages"] = [dict(m) for m in request.messages]
            if request.top_logprobs:
                kw["logprobs"] = True
                kw["top_logprobs"] = request.top_logprobs
            if constrained and request.schema is not None:
                kw["response_format"] = _schema_format(request.schema)
        return kw

    def _response(self, raw: Any, request: LLMRequest, constrained: bool, t0: float) -> LLMResponse:
        latency = time.perf_counter() - t0
        choices = getattr(raw, "choices", None) or []
        if not choices:
            # no answer at all (an empty or malformed body): an endpoint fault, retried, never
            # cached
            from tom_llm_agents.failures import TransientLLMError

            raise TransientLLMError("the endpoint answered without a choice")
        choice = choices[0]
        text = (choice.text if request.prompt is not None else choice.message.content) or ""
        reasoning = None
        if request.prompt is None:
            message = choice.message
            reasoning = getattr(message, "reasoning_content", None) or getattr(
                message, "reasoning", None
            )
            extra = getattr(message, "model_extra", None) or {}
            reasoning = reasoning or extra.get("reasoning_content") or extra.get("reasoning")
            text, thought = split_reasoning(text)
            reasoning = str(reasoning) if reasoning else thought
        usage = getattr(raw, "usage", None)
        served = getattr(raw, "model", None)
        return LLMResponse(
            text=text,
            reasoning=reasoning,
            # a server that names no model (llama.cpp answers "-") is recorded by the asked name
            model=served if served and served.strip("- ") else self.model,
            tokens_in=int(getattr(usage, "prompt_tokens", 0) or 0),
            tokens_out=int(getattr(usage, "completion_tokens", 0) or 0),
            reasoning_tokens=_reasoning_tokens(usage),
            latency_s=latency,
            constrained=constrained and request.schema is not None and request.prompt is None,
            finish_reason=getattr(choice, "finish_reason", None),
            logprobs=_top_alternatives(getattr(choice, "logprobs", None))
            if request.top_logprobs
            else None,
        )

    # ------------------------------------------------------------------ transport
    def _async_client(self) -> Any:
        """The ``AsyncOpenAI`` of this event loop for this endpoint, key, timeout and cap: one
        per process and loop, shared by every client with the same settings (the many agents of
        an evaluation's threads share one connection pool, and making a client, which costs
        tens of milliseconds of the loop's time, happens once)."""
        loop = asyncio.get_running_loop()
        client = self._async.get(loop)
        if client is not None:
            return client
        key = (self.base_url, self._key, self.timeout, self.max_reply_bytes)
        with _SHARED_LOCK:
            per_loop = _SHARED.setdefault(loop, {})
            client = per_loop.get(key)
            if client is None:
                client = self._openai.AsyncOpenAI(
                    base_url=self.base_url,
                    api_key=self._key,
                    timeout=self.timeout,
                    max_retries=0,
                    http_client=capped_http_client(
                        self._openai, self.max_reply_bytes, self.timeout
                    ),
                )
                per_loop[key] = client
        self._async[loop] = client
        return client

    async def _asend(
        self, request: LLMRequest, constrained: bool, timeout: float | None = None
    ) -> LLMResponse:
        client = self._async_client()
        kw = self._kwargs(request, constrained)
        limit = self.timeout if timeout is None else min(self.timeout, timeout)
        t0 = time.perf_counter()
        try:
            if request.prompt is not None:
                call = client.completions.create(**kw)
            else:
                call = client.chat.completions.create(**kw)
            raw = await asyncio.wait_for(call, limit)
        except TimeoutError:
            raise DeadlineExceeded(
                f"no complete reply within {limit:g}s (wall clock, the whole reply)"
            ) from None
        except self._openai.APIStatusError as exc:
            if constrained and "response_format" in kw and _refuses_schema(exc):
                raise SchemaUnsupported(redact(str(exc), self._secrets)) from None
            raise
        return self._response(raw, request, constrained, t0)

    def _send(self, request: LLMRequest, constrained: bool) -> LLMResponse:
        """One attempt, run on the transport loop (its deadline can cancel a read)."""
        return run_on_loop(self._asend(request, constrained))

    def _call(self, request: LLMRequest) -> LLMResponse:
        """The retry loop on the transport loop (waits included)."""
        return run_on_loop(self._acall(request))

    def _call_many(self, requests: Any) -> list[LLMResponse | BaseException]:
        """Concurrent requests on the transport loop, at most ``max_concurrency`` at once."""

        async def gather() -> list[LLMResponse | BaseException]:
            sem = asyncio.Semaphore(self.max_concurrency)

            async def one(r: LLMRequest) -> LLMResponse:
                async with sem:
                    return await self._acall(r)

            results = await asyncio.gather(*(one(r) for r in requests), return_exceptions=True)
            out: list[LLMResponse | BaseException] = []
            for r in results:
                if isinstance(r, BaseException) and not isinstance(r, Exception):
                    raise r  # cancellation and the like end the batch
                out.append(r)
            return out

        return run_on_loop(gather())

    def close(self) -> None:
        """Forget this client's connections (the shared pool closes with its event loop)."""
        self._async = weakref.WeakKeyDictionary()
