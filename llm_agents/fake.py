"""A scripted client for tests and offline examples: no network, no model.

:class:`ScriptedClient` shares every piece of :class:`~tom_llm_agents.client.BaseLLMClient` (retries,
cache, pricing, concurrency, schema fallback); only the answer comes from a script. A script is a
list of replies (used in turn, the last one repeated) or a function of the request. A reply that is
an exception instance is raised instead of answered, to test retries and failures.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from tom_llm_agents.client import BaseLLMClient, LLMRequest, LLMResponse
from tom_llm_agents.failures import SchemaUnsupported

Reply = str | BaseException | LLMResponse
Script = Sequence[Reply] | Callable[[LLMRequest], Reply]


class ScriptedClient(BaseLLMClient):
    """Answers from a script.

    Args:
        script: replies in order (the last repeats), or ``request -> reply``.
        model: the model name reported.
        supports_schema: when False, a request with a schema raises
            :class:`~tom_llm_agents.failures.SchemaUnsupported` (like a server that refuses it).
        logprobs: ``request -> [{token: logprob}, ...]`` for requests that ask for log-probs.
        **kwargs: :class:`BaseLLMClient` options (``cache_dir``, ``retry``, ``prices``...).

    Attributes:
        requests: every request that reached the "server" (cache hits excluded).
    """

    def __init__(
        self,
        script: Script,
        model: str = "scripted",
        *,
        supports_schema: bool = True,
        logprobs: Callable[[LLMRequest], list[dict[str, float]]] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(model, endpoint="scripted://", **kwargs)
        self.script = script
        self.supports_schema = supports_schema
        self.logprobs_fn = logprobs
        self.requests: list[LLMRequest] = []
        self._i = 0
        self._script_lock = threading.Lock()

    def _next(self, request: LLMRequest) -> Reply:
        with self._script_lock:
            self.requests.append(request)
        if callable(self.script):
            return self.script(request)
        with self._script_lock:
            replies = list(self.script)
            reply = replies[min(self._i, len(replies) - 1)]
            self._i += 1
            return reply

    def _send(self, request: LLMRequest, constrained: bool) -> LLMResponse:
        if constrained and request.schema is not None and not self.supports_schema:
            raise SchemaUnsupported("response_format json_schema is not supported")
        reply = self._next(request)
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, LLMResponse):
            return reply
        prompt = request.prompt or " ".join(m["content"] for m in request.messages)
        return LLMResponse(
            text=reply,
            model=self.model,
            tokens_in=max(1, len(prompt) // 4),
            tokens_out=max(1, len(reply) // 4),
            latency_s=0.0,
            constrained=constrained and request.schema is not None,
            finish_reason="stop",
            logprobs=self.logprobs_fn(request)
            if self.logprobs_fn is not None and request.top_logprobs
            else None,
        )
