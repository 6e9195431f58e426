"""What an LLM agent will cost, measured before the first paid call: the agent's dry run.

``with agent.dry_run() as probe:`` swaps the agent's client for a :class:`DryRunClient`, which
never touches the network: it answers every request at once with a valid reply (the first
candidate action the prompt lists, in the answer format the request asks for) and counts what
the real endpoint would have been sent: the requests, their prompt tokens (estimated from the
text: :func:`tom_envs.evaluation.cost.estimate_tokens`) and their generation budgets. A command plays one episode per cell
with the agents in dry run (:mod:`tom_envs.evaluation.cost`), so the figures come from the
agent's own prompts, protocol and calls per decision, and the game's own episode length, with the
partner's real moves; it multiplies them by the episodes to play.

What the dry run does *not* know, and the estimate says: answers are assumed valid on the first
try (an invalid answer adds up to ``reprompts`` further calls), and the length of real answers
(the completion tokens are given as an upper bound: the sum of the calls' ``max_tokens``
budgets, which also bounds a reasoning model's reasoning tokens).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from tom_envs.evaluation.cost import estimate_tokens
from tom_llm_agents.client import BaseLLMClient, LLMRequest, LLMResponse
from tom_llm_agents.settings import endpoint_id


def _request_text(request: LLMRequest) -> str:
    if request.prompt is not None:
        return request.prompt
    return "\n".join(str(m.get("content", "")) for m in request.messages)


@dataclass
class DryRunUsage:
    """What a dry run counted.

    Attributes:
        model: the model the agent calls.
        endpoint: the endpoint's identity (:func:`~tom_llm_agents.settings.endpoint_id`).
        price: USD per million prompt and completion tokens, or ``None`` (unpriced).
        calls: requests the agent made.
        prompt_tokens: their estimated prompt tokens.
        completion_tokens_max: the sum of their generation budgets (``max_tokens``).
        reprompts: the most further attempts one invalid answer can cost (the agent's cap).
    """

    model: str
    endpoint: str
    price: tuple[float, float] | None
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens_max: int = 0
    reprompts: int = 0


class DryRunClient(BaseLLMClient):
    """Answers offline, validly, and counts (see the module docstring); never sends, never
    caches, never counts against a budget or the progress display."""

    def __init__(self, real: BaseLLMClient) -> None:
        super().__init__(
            real.model,
            endpoint=real.endpoint,
            prices=real.prices,
            json_schema=real.capabilities.get("json_schema"),
            cache_endpoint=real.cache_endpoint,
        )
        price = real.prices.get(real.model)
        self.usage = DryRunUsage(
            real.model,
            endpoint_id(real.cache_endpoint or real.endpoint),
            (float(price[0]), float(price[1])) if price is not None else None,
        )
        self.legal: list[str] = []

    def complete(self, request: LLMRequest) -> LLMResponse:
        return self._call(request)

    def complete_many(self, requests: Any) -> list[LLMResponse]:
        return [self._call(r) for r in requests]

    async def acomplete(self, request: LLMRequest) -> LLMResponse:
        return self._call(request)

    def _call(self, request: LLMRequest) -> LLMResponse:
        text = _request_text(request)
        reply = self._reply(request, text)
        self.usage.calls += 1
        self.usage.prompt_tokens += estimate_tokens(text)
        self.usage.completion_tokens_max += int(request.max_tokens)
        return LLMResponse(
            text=reply,
            model=self.model,
            tokens_in=estimate_tokens(text),
            tokens_out=estimate_tokens(reply),
            constrained=request.schema is not None and self._constrain(request),
            finish_reason="stop",
            logprobs=[{" " + self._choice(text): 0.0}] if request.top_logprobs else None,
        )

    def _choice(self, text: str) -> str:
        """The first legal action the request's text shows (the shortlist, after vetoes), else
        the first legal action."""
        last = text[-20000:]
        best, where = (self.legal[0] if self.legal else ""), len(last) + 1
        for option in self.legal:
            i = last.find(option)
            if 0 <= i < where:
                best, where = option, i
        return best

    def _reply(self, request: LLMRequest, text: str) -> str:
        choice = self._choice(text)
        schema = request.schema if self._constrain(request) else None
        props = (schema or {}).get("properties") if isinstance(schema, dict) else None
        if isinstance(props, dict):
            answer: dict[str, Any] = {}
            for name, prop in props.items():
                options = prop.get("enum") if isinstance(prop, dict) else None
                if name == "action" and options:
                    answer[name] = choice if choice in options else options[0]
                elif options:
                    answer[name] = options[0]
                else:
                    answer[name] = "yes"
            return json.dumps(answer, ensure_ascii=False)
        return f"Yes.\nAction: {choice}"


@contextmanager
def dry_run(agent: Any) -> Iterator[DryRunUsage]:
    """``with dry_run(agent) as usage:`` the agent plays through a :class:`DryRunClient`;
    ``usage`` fills in as it plays (see the module docstring). The real client is put back on
    exit."""
    real = agent.client
    dry = DryRunClient(real)
    dry.usage.reprompts = 1 if agent.invalid == "forfeit" else int(agent.reprompts)
    act = agent._act_llm

    def act_knowing_the_options(turn: Any) -> Any:
        try:
            dry.legal = list(turn.text().legal_actions.values())
        except Exception:  # the agent reports the game's failure itself
            dry.legal = []
        return act(turn)

    agent.client = dry
    agent._act_llm = act_knowing_the_options
    try:
        yield dry.usage
    finally:
        agent.client = real
        del agent._act_llm  # the class's method again
