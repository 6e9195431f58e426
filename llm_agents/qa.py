"""CoordinationQA answers from an LLM: the ``llm`` answerer of ``tom-envs qa eval``.

Registered as the ``llm`` plugin of group ``tom_envs.qa_answerers`` (see :mod:`tom_envs.plugins`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from tom_envs.qa.evaluate import SYSTEM
from tom_envs.qa.items import QAItem
from tom_llm_agents.client import LLMRequest
from tom_llm_agents.openai_client import OpenAIClient


def llm_answerer(
    client: Any, temperature: float = 0.7, max_tokens: int = 512
) -> Callable[[QAItem, int], str]:
    """Ask an :mod:`llm_agents` client; each trial is a separate sample (``request.sample``)."""

    def answer(item: QAItem, trial: int) -> str:
        request = LLMRequest(
            messages=[
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": item.prompt()},
            ],
            max_tokens=max_tokens,
            temperature=temperature,
            seed=trial,
            sample=trial,
        )
        return client.complete(request).text

    return answer


def make_answerer(args: argparse.Namespace) -> tuple[Callable[[QAItem, int], str], str]:
    """The answerer ``tom-envs qa eval --answerer llm`` uses: ``--local`` (the bundled SmolLM2) or
    ``--model``/``--base-url`` (checked before the first question), at ``--temperature``.

    Raises:
        ValueError: the endpoint is not usable (the message names it).
    """
    from tom_envs.evaluation.config import ConfigError, check_endpoint

    if args.local:
        from tom_llm_agents.local import shared_client

        client: Any = shared_client()
    else:
        try:
            check_endpoint(args.base_url)
        except ConfigError as exc:
            raise ValueError(str(exc)) from exc
        price_in, price_out = getattr(args, "price_in", None), getattr(args, "price_out", None)
        client = OpenAIClient(args.model, args.base_url)
        if price_in is not None and price_out is not None:  # USD per million tokens
            client.prices[client.model] = (float(price_in), float(price_out))
    return llm_answerer(client, args.temperature), f"llm:{client.model}"
