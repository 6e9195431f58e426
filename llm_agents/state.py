"""The attributes the parts of :class:`~tom_llm_agents.agent.LLMAgent` share, typed once.

:class:`LLMAgent` is assembled from mixins (:class:`~tom_llm_agents.settings.SettingsMixin`: its
settings and their record; :class:`~tom_llm_agents.answering.AnsweringMixin`: how it asks the
model) whose methods read what ``LLMAgent.__init__`` and ``reset`` set. :class:`AgentState` declares
those attributes (annotations only: nothing is set here, nothing changes at run time) and the
methods one part calls on another, so that a type checker reads every part against one
definition: a misspelt attribute or a wrong type in a mixin is an error, not an ``Any``.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any

from tom_envs.core.agents import BaseAgent

if TYPE_CHECKING:
    from tom_envs.core.agents import Turn
    from tom_llm_agents.client import BaseLLMClient
    from tom_llm_agents.fewshot import Example
    from tom_llm_agents.prompting.base import Decider, DecisionContext, MemoryEntry, Piece


class AgentState(BaseAgent):
    """What an :class:`~tom_llm_agents.agent.LLMAgent` holds (see its ``__init__``)."""

    # the resolved settings (SettingsMixin.apply_settings) and their sources
    _settings: dict[str, Any]
    preset: str | None
    strategy: str
    decoding: str
    invalid: str
    reprompts: int
    fallback: str
    temperature: float
    top_p: float | None
    max_tokens: int | None
    extra: dict[str, Any]
    memory_setting: Any
    memory_size: int
    history_size: int
    verify_rounds: int
    examples_setting: str
    probes_enabled: bool
    probe_batch: bool | str
    answer_format_setting: str
    skip_forced: bool
    interface: str
    language: str
    hide_history: bool
    hide_payoffs: bool
    step_tokens: int | None
    field_chars: int
    grounding: str
    menu: str
    timeout: float
    max_retries: int
    retry_delay_s: float
    oracle_partner: str | None
    # what it talks to and how it decides
    client: BaseLLMClient
    decider: Decider
    pieces: list[Piece]
    # the episode's state (reset)
    memory: list[MemoryEntry]
    history: list[tuple[str, str]]
    episode_stats: dict[str, float]
    templates: ModuleType
    examples: tuple[Example, ...]
    team_reward: bool
    _step_usage: dict[str, float]
    _last_calls: list[dict[str, Any]]
    _chat: bool
    _dead: str | None

    if TYPE_CHECKING:
        # defined by SettingsMixin, read by AnsweringMixin
        @property
        def constrained(self) -> bool: ...

        # defined by LLMAgent, called by its mixins

        def _text_for(self, turn: Turn) -> Any: ...

        def prompt_parts(self, text: Any) -> tuple[str, str]: ...

        def asks_message(self, ctx: DecisionContext) -> bool: ...
