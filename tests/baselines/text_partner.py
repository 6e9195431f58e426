"""A text-reading partner for the RL baselines' tests: the suite's LLM agent
(:class:`tom_llm_agents.agent.LLMAgent`, which reads ``turn.text()`` and maps its answer back
through the game's parser) on the scripted fake client, no network. Trainers build it from the
trusted spec ``text_partner:ScriptedLLMPartner`` (this folder is on the tests' import path), as
they build any agent ``tom-envs run`` can play.
"""

from __future__ import annotations

import json
from typing import Any

from tom_llm_agents.agent import LLMAgent
from tom_llm_agents.fake import ScriptedClient

#: Every request any instance sent (the tests count the partner's decisions by them).
REQUESTS: list[Any] = []


def _reply(request: Any) -> str:
    """Name one of the legal actions the prompt's answer schema lists, in turn."""
    REQUESTS.append(request)
    legal = request.schema["properties"]["action"]["enum"]
    return json.dumps({"action": legal[len(REQUESTS) % len(legal)]})


class ScriptedLLMPartner(LLMAgent):
    """The LLM agent with JSON answers on a scripted client: a partner that needs the text layer."""

    def __init__(self) -> None:
        super().__init__(ScriptedClient(_reply), decoding="json")
