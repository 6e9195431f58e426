"""Paper 002's Overcooked LLM chef: an LLM chooses mid-level actions, grounded by the game.

The grounding (mid-level vocabulary, shortest paths, when to ask again) is game code,
:mod:`tom_envs.games.overcooked.midlevel`, usable by bots, planners and people; this module is the
LLM-specific part, so that ``tom_envs`` imports nothing from ``llm_agents``.

* The plain ``llm`` agent plays Overcooked through the mid-level interface by default
  (``interface="midlevel"``, paper 002 App. A); ``interface=primitive`` plays cell by cell.
* :class:`MidLevelLLMAgent` is the same with the mid-level memory length explicit::

      tom-envs run Overcooked --agents llm:preset=paper002-overcooked:local=true planner
      tom-envs run Overcooked --agents tom_llm_agents.overcooked:MidLevelLLMAgent:local=true planner
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tom_envs.core.agents import AgentAction, BaseAgent, EpisodeInfo, Turn
from tom_envs.games.overcooked.midlevel import MidLevelAgent
from tom_envs.games.overcooked.rules import OvercookedConfig

if TYPE_CHECKING:
    from tom_llm_agents.agent import LLMAgent


class _MidLevelInner(BaseAgent):
    """The LLM agent as the chooser inside the Overcooked mid-level interface."""

    def __init__(self, outer: LLMAgent) -> None:
        super().__init__()
        self.outer = outer
        self.name = outer.name

    def reset(self, info: EpisodeInfo) -> None:
        self.outer._reset_llm(info)

    def act(self, turn: Turn) -> AgentAction:
        return self.outer._act_llm(turn)


def midlevel_wrapper(agent: LLMAgent, memory: int = 5) -> MidLevelAgent:
    """A :class:`MidLevelAgent` whose chooser is ``agent`` (its LLM decision loop)."""
    agent._in_midlevel = True
    wrapper = MidLevelAgent(
        _MidLevelInner(agent), OvercookedConfig(), name=f"midlevel:{agent.name}", memory=memory
    )
    return wrapper


class MidLevelLLMAgent:
    """The paper's Overcooked LLM agent: an :class:`~tom_llm_agents.agent.LLMAgent` choosing
    mid-level actions, grounded into moves by the game's mid-level controller.

    Every keyword argument except ``memory`` goes to :class:`~tom_llm_agents.agent.LLMAgent`
    (``model=``, ``base_url=``, ``preset=``, ``strategy=``, ``local=true``, ...); the kitchen and
    rules come from the views, so one spec works on every layout.

    Args:
        memory: how many previous mid-level actions the chooser is shown.
        **llm_kwargs: the LLM agent's settings.
    """

    def __init__(self, memory: int = 5, **llm_kwargs: Any) -> None:
        from tom_llm_agents.agent import LLMAgent

        llm_kwargs.setdefault("interface", "midlevel")
        self.inner = LLMAgent(**llm_kwargs)
        self.wrapper = midlevel_wrapper(self.inner, memory)
        self.name = self.wrapper.name
        self.spec = self.name
        if self.inner.answer_probes is None:
            self.answer_probes = None  # type: ignore[assignment]  # probes switched off

    def config(self) -> dict[str, Any]:
        """The LLM's settings plus the mid-level memory."""
        return {**self.inner.config(), "midlevel_memory": self.wrapper.memory}

    def reset(self, info: EpisodeInfo) -> None:
        """New episode."""
        self.wrapper.reset(info)

    def act(self, turn: Turn) -> AgentAction:
        """Ask for a mid-level action when one is needed, then play its grounded move."""
        return self.wrapper.act(turn)

    def answer_probes(self, turn: Turn, probes: Any) -> dict[str, str]:
        """Probes are answered by the LLM on the primitive turn's text."""
        if self.inner.answer_probes is None:
            return {}
        return self.inner.answer_probes(turn, probes)

    def end_episode(self, turn: Turn) -> None:
        """Nothing to do."""
