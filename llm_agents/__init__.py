"""LLM agents over the suite's text layer (``Turn.text()`` / ``Turn.parse()``), for every game.

Three parts, after BALROG (STYLE §12):

* :mod:`tom_llm_agents.client` — one client for any OpenAI-compatible endpoint (retries, one
  :class:`LLMResponse` record, disk cache, async concurrency, constrained decoding), with the wire
  format in :mod:`tom_llm_agents.openai_client` and the failure handling (retry policy, circuit
  breaker, error kinds) in :mod:`tom_llm_agents.failures`;
* :mod:`tom_llm_agents.prompting` — the papers' prompting strategies as composable pieces;
* :mod:`tom_llm_agents.agent` — :class:`LLMAgent`, with episodic memory, the invalid-output policy and
  ToM probe answering; its settings are in :mod:`tom_llm_agents.settings`, its model-facing side
  (answer format, re-prompts, probe answers) in :mod:`tom_llm_agents.answering`.

:mod:`tom_llm_agents.local` runs the bundled SmolLM2-135M on an in-process llama.cpp server (offline),
:mod:`tom_llm_agents.fake` is a scripted client for tests, :mod:`tom_llm_agents.parallel` plays many
episodes at once and :mod:`tom_llm_agents.demo` adds an LLM game to ``tom-envs demo``. Importing this
package does not import ``openai`` (the ``llm`` extra); building an :class:`OpenAIClient` does.
"""

from tom_llm_agents.agent import LLMAgent
from tom_llm_agents.client import BaseLLMClient, DiskCache, LLMRequest, LLMResponse
from tom_llm_agents.failures import LLMError, RetryPolicy
from tom_llm_agents.fake import ScriptedClient
from tom_llm_agents.openai_client import OpenAIClient
from tom_llm_agents.prompting import build_strategy, strategy_names

__all__ = [
    "BaseLLMClient",
    "DiskCache",
    "LLMAgent",
    "LLMError",
    "LLMRequest",
    "LLMResponse",
    "OpenAIClient",
    "RetryPolicy",
    "ScriptedClient",
    "build_strategy",
    "strategy_names",
]
