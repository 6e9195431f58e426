"""The client for any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp servers...).

:class:`OpenAIClient` talks through the ``openai`` package; only the wire format lives here: the
request's arguments (a JSON schema as ``response_format``), the response record (a reasoning
model's thinking split off by :func:`split_reasoning`, the three log-probability layouts made one)
and the server's refusal of constrained decoding. Retries, the cache, prices and concurrency are
:class:`~tom_llm_agents.client.BaseLLMClient`'s (see :mod:`tom_llm_agents.client`).
"""

from __future__ import annotations

import asyncio
import os
import time
import weakref
from collections.abc import Mapping
from typing import Any

from tom_llm_agents.client import (
    ENV_API_KEY,
    ENV_BASE_URL,
    ENV_MODEL,
    BaseLLMClient,
    LLMRequest,
    LLMResponse,
)
from tom_llm_agents.failures import SchemaUnsupported, redact


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


class OpenAIClient(BaseLLMClient):
    """Any OpenAI-compatible endpoint through the ``openai`` package.

    Args:
        model: model name; default ``$TOM_ENVS_LLM_MODEL``.
        base_url: endpoint (``http://host:port/v1``); default ``$OPENAI_BASE_URL`` or OpenAI's.
        api_key: the key; default ``$OPENAI_API_KEY`` (or the variable named by
            ``api_key_env``); local servers without a key get a placeholder.
        api_key_env: environment variable holding the key.
        timeout: seconds per attempt (connect and read).
        extra_body: extra JSON fields for every request (server-specific options).
        **kwargs: :class:`BaseLLMClient` options (``cache_dir``, ``retry``, ``prices``,
            ``max_concurrency``, ``json_schema``).
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
        super().__init__(model, endpoint=base_url or "https://api.openai.com/v1", **kwargs)
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ImportError("the openai package is needed: pip install 'tom-envs[llm]'") from exc
        self._openai = openai
        self._key = key
        self._secrets = [key]
        self.base_url = base_url
        self.timeout = timeout
        self.extra_body = dict(extra_body or {})
        self._sync = openai.OpenAI(base_url=base_url, api_key=key, timeout=timeout, max_retries=0)
        # one AsyncOpenAI per event loop (threads may each run their own loop)
        self._async: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()

    def __repr__(self) -> str:
        return f"OpenAIClient(model={self.model!r}, base_url={self.base_url!r})"

    def _kwargs(self, request: LLMRequest, constrained: bool) -> dict[str, Any]:
        kw: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        }
        if request.top_p is not None:
            kw["top_p"] = request.top_p
        if request.seed is not None:
            kw["seed"] = request.seed
        if request.stop:
            kw["stop"] = list(request.stop)
        extra = {**self.extra_body, **request.extra}
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
        choice = raw.choices[0]
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
            latency_s=latency,
            constrained=constrained and request.schema is not None and request.prompt is None,
            finish_reason=getattr(choice, "finish_reason", None),
            logprobs=_top_alternatives(getattr(choice, "logprobs", None))
            if request.top_logprobs
            else None,
        )

    def _send(self, request: LLMRequest, constrained: bool) -> LLMResponse:
        kw = self._kwargs(request, constrained)
        t0 = time.perf_counter()
        try:
            if request.prompt is not None:
                raw = self._sync.completions.create(**kw)
            else:
                raw = self._sync.chat.completions.create(**kw)
        except self._openai.APIStatusError as exc:
            if constrained and "response_format" in kw and _refuses_schema(exc):
                raise SchemaUnsupported(redact(str(exc), self._secrets)) from None
            raise
        return self._response(raw, request, constrained, t0)

    def _async_client(self) -> Any:
        loop = asyncio.get_running_loop()
        with self._lock:
            client = self._async.get(loop)
            if client is None:
                client = self._openai.AsyncOpenAI(
                    base_url=self.base_url, api_key=self._key, timeout=self.timeout, max_retries=0
                )
                self._async[loop] = client
        return client

    async def _asend(self, request: LLMRequest, constrained: bool) -> LLMResponse:
        client = self._async_client()
        kw = self._kwargs(request, constrained)
        t0 = time.perf_counter()
        try:
            if request.prompt is not None:
                raw = await client.completions.create(**kw)
            else:
                raw = await client.chat.completions.create(**kw)
        except self._openai.APIStatusError as exc:
            if constrained and "response_format" in kw and _refuses_schema(exc):
                raise SchemaUnsupported(redact(str(exc), self._secrets)) from None
            raise
        return self._response(raw, request, constrained, t0)

    async def _aclose(self) -> None:
        with self._lock:
            client = self._async.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    def close(self) -> None:
        """Close the HTTP connections."""
        self._sync.close()
