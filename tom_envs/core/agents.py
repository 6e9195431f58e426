"""The agent interface shared by bots, planners, tabular learners, trained policies and LLMs.

An agent is told about the episode once (:meth:`Agent.reset` with an :class:`EpisodeInfo`), then
asked for one decision per turn (:meth:`Agent.act` with a :class:`Turn`). A turn carries the
structured player view (for bots), the vector and mask (for RL policies) and the text layer (for
LLMs and people), all of the same view. An agent answers with an action, or with an
:class:`AgentAction` that also carries probe answers (e.g. its prediction of the partner's next
action), raw model text and token counts, which the runner records in the trajectory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from tom_envs.core.game import ParseResult, TextObservation


@dataclass(frozen=True)
class EpisodeInfo:
    """What an agent is told when an episode starts."""

    env_id: str
    agent: str
    player: int
    num_players: int
    num_actions: int
    seed: int | None
    reward_range: tuple[float, float]
    max_steps: int | None
    tags: Any = None


@dataclass
class Turn:
    """One decision: the same player view in every form an agent might want.

    Attributes:
        agent: ``"player_k"``.
        player: ``k``.
        view: the structured player view (a frozen dataclass of the game's ``view.py``).
        observation: the vector observation.
        action_mask: int8 mask of legal actions.
        reward: reward received since this agent's previous decision.
        decision: how many decisions this agent has made in the episode before this one.
    """

    agent: str
    player: int
    view: Any
    observation: np.ndarray
    action_mask: np.ndarray
    reward: float
    decision: int
    _text: Callable[[], TextObservation] | None = field(default=None, repr=False)
    _parse: Callable[[str], ParseResult] | None = field(default=None, repr=False)

    @property
    def legal_actions(self) -> tuple[int, ...]:
        """Legal actions, from the view."""
        return tuple(self.view.legal_actions)

    def text(self) -> TextObservation:
        """Rules prompt, observation text and legal actions as text (computed on request)."""
        if self._text is None:
            raise RuntimeError("this turn has no text layer attached")
        return self._text()

    def parse(self, text: str) -> ParseResult:
        """Parse free text into a legal action, with feedback; never raises."""
        if self._parse is None:
            raise RuntimeError("this turn has no text layer attached")
        return self._parse(text)


@dataclass
class AgentAction:
    """An action plus what the runner should record beside it.

    Attributes:
        action: the chosen action (``None`` only for an agent that failed; the runner then plays a
            counted fallback).
        prediction: probe answers, e.g. ``{"partner_action": 2}``.
        valid: False when the agent's own output was invalid and ``action`` is a fallback.
        message: chat text to broadcast with the action (games with communication).
        info: anything else worth keeping (raw LLM text, tokens, re-prompts, ...).
    """

    action: int | None
    prediction: dict[str, Any] | None = None
    valid: bool = True
    message: str | None = None
    info: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Agent(Protocol):
    """What every agent implements."""

    name: str

    def reset(self, info: EpisodeInfo) -> None:
        """Start of an episode."""

    def act(self, turn: Turn) -> int | AgentAction:
        """Choose an action for this turn."""


class BaseAgent:
    """Convenience base: stores the episode info and a seeded generator; override :meth:`act`."""

    name = "agent"

    def __init__(self) -> None:
        self.info: EpisodeInfo | None = None
        self.rng = np.random.default_rng(0)

    def reset(self, info: EpisodeInfo) -> None:
        """Remember the episode and seed ``self.rng`` from it (same seed, same choices)."""
        self.info = info
        self.rng = np.random.default_rng(None if info.seed is None else [info.seed, info.player])

    def act(self, turn: Turn) -> int | AgentAction:  # pragma: no cover - abstract
        """Choose an action."""
        raise NotImplementedError

    def end_episode(self, turn: Turn) -> None:
        """Called once when the episode ends (final reward in ``turn.reward``)."""


class RandomAgent(BaseAgent):
    """Uniformly random legal actions (every game)."""

    name = "random"

    def act(self, turn: Turn) -> int:
        """A uniformly random legal action."""
        legal = turn.legal_actions
        return int(legal[self.rng.integers(len(legal))])


def as_agent_action(choice: int | AgentAction | np.integer) -> AgentAction:
    """Normalise an agent's answer."""
    if isinstance(choice, AgentAction):
        return choice
    return AgentAction(action=int(choice))
