"""The PettingZoo Parallel adapter for simultaneous-move games (same rules, same renderings)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium.utils import seeding
from pettingzoo import ParallelEnv

from tom_envs.core.aec import SeatSpaces
from tom_envs.core.game import (
    IllegalActionError,
    ParseResult,
    ResetNeeded,
    TextObservation,
    agent_index,
    unknown_agent,
)
from tom_envs.core.render import render


class TomParallelEnv(SeatSpaces, ParallelEnv):
    """PettingZoo Parallel environment over a simultaneous-move :class:`GameBundle`.

    Seeded with the same ``reset(seed)`` it plays exactly the episodes of the AEC version.
    Misuse gets the AEC version's clear errors (``ResetNeeded``, ``UnknownAgentError``,
    ``IllegalActionError``).

    Args:
        bundle: the configured game (its ``tags.dynamics`` must be ``"simultaneous"``).
        name: PettingZoo metadata name.
        render_mode: ``None``, ``"ansi"``, ``"rgb_array"`` or ``"human"`` (see
            :mod:`tom_envs.core.render`); another mode warns and renders nothing.
        max_cycles: truncate after this many joint steps; ``None`` for the rules' limit.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "rgb_array", "human"],
        "name": "tom_env",
    }

    #: a sequential game is refused (the shared constructor: :class:`SeatSpaces`)
    simultaneous_only = True

    def _seat(self, agent: Any) -> int:
        """The seat of ``agent`` (:class:`UnknownAgentError` listing the agents), once an
        episode has started (:class:`ResetNeeded` before)."""
        if self.game_state is None:
            raise ResetNeeded("used before reset(): call reset(seed=...) first")
        if not isinstance(agent, str) or agent not in self.possible_agents:
            raise unknown_agent(agent, self.possible_agents)
        return agent_index(agent)

    def view(self, agent: str) -> Any:
        """The structured player view."""
        return self.game.observe(self.game_state, self._seat(agent))

    def _obs(self, agent: str, live: bool = True) -> dict[str, np.ndarray]:
        view = self.view(agent)
        mask = np.zeros(self.game.num_actions, dtype=np.int8)
        legal = list(view.legal_actions)
        if legal and live and not self.game.is_terminal(self.game_state):
            mask[legal] = 1
        return {"observation": self.bundle.encoder.encode(view), "action_mask": mask}

    def sample_mask(self, agent: str) -> np.ndarray | None:
        """The mask ``action_space(agent).sample()`` draws from (``None`` if ``agent`` is done)."""
        if self.game_state is None or agent not in self.agents:
            return None
        return self.game.legal_mask(self.game_state, agent_index(agent))

    def reset(
        self, seed: int | None = None, options: dict | None = None
    ) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, dict]]:
        """Start an episode; returns observations and infos for every agent."""
        if seed is not None:
            self.np_random, self._np_random_seed = seeding.np_random(seed)
        self.game_state = self.game.initial_state(self.np_random)
        self.agents = list(self.possible_agents)
        self._cycles = 0
        self.last_events: tuple[str, ...] = ()
        return {a: self._obs(a) for a in self.agents}, {a: {} for a in self.agents}

    def step(
        self, actions: dict[str, Any], messages: dict[str, str] | None = None
    ) -> tuple[dict, dict, dict, dict, dict]:
        """Apply one joint action (and chat messages, in games with communication).

        Missing, extra, illegal or malformed actions or messages raise ``IllegalActionError`` and
        change nothing.
        """
        if self.game_state is None:
            raise ResetNeeded("step() before reset(): call reset(seed=...) first")
        if not self.agents:
            raise IllegalActionError("the episode is over: call reset()")
        if not isinstance(actions, dict):
            raise IllegalActionError(
                f"a joint action is a dict {{agent: action}}, got {type(actions).__name__}"
            )
        if set(actions) != set(self.agents):
            raise IllegalActionError(
                f"a joint action needs exactly the live agents {self.agents}, got {sorted(actions)}"
            )
        joint = {agent_index(a): act for a, act in actions.items()}
        chat = None
        if messages:
            unknown = set(messages) - set(self.agents)
            if unknown:
                raise IllegalActionError(f"messages from agents not playing: {sorted(unknown)}")
            chat = {agent_index(a): m for a, m in messages.items()}
        result = self.game.step(self.game_state, joint, self.np_random, chat)
        self.game_state = result.state
        self.last_events = result.events
        self._cycles += 1
        terminal = self.game.is_terminal(self.game_state)
        truncated = not terminal and self.max_cycles is not None and self._cycles >= self.max_cycles
        agents = self.agents
        obs = {a: self._obs(a, live=not truncated) for a in agents}  # done agents: zero masks
        rewards = {a: float(result.rewards[agent_index(a)]) for a in agents}
        terms = dict.fromkeys(agents, terminal)
        truncs = dict.fromkeys(agents, truncated)
        infos: dict[str, dict] = {a: {} for a in agents}
        if terminal or truncated:
            self.agents = []
        return obs, rewards, terms, truncs, infos

    def state(self) -> np.ndarray:
        """Global state vector for centralised critics."""
        if self.game_state is None:
            raise ResetNeeded("state() before reset(): call reset(seed=...) first")
        return self.bundle.encoder.encode_state(self.game_state)

    def text_observation(self, agent: str) -> TextObservation:
        """Rules prompt, observation text and legal actions as text, from ``agent``'s view."""
        return self.bundle.text.text_observation(self.view(agent))

    def parse_action(self, agent: str, text: object) -> ParseResult:
        """Parse free text into a legal action for ``agent``; never raises on the text (only on
        misuse: before ``reset()``, an unknown agent)."""
        self._seat(agent)
        if agent not in self.agents:
            return ParseResult(None, f"{agent} is not playing now")
        return self.bundle.text.parse_action(self.view(agent), text)  # type: ignore[arg-type]

    def probes(self, agent: str) -> list[Any]:
        """Theory-of-Mind probes to put to ``agent`` now, with ground truth (empty if none)."""
        seat = self._seat(agent)
        fn = self.bundle.probes
        return [] if fn is None else list(fn(self.game_state, seat))

    def render(self) -> str | np.ndarray | None:
        """The whole state in ``render_mode``: text, an RGB image, or a window (``None``)."""
        if self.render_mode is not None and self.game_state is None:
            raise ResetNeeded("render() before reset(): call reset(seed=...) first")
        return render(self.bundle, self.game_state, self.render_mode)

    def close(self) -> None:
        """Nothing to release."""
