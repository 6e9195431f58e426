"""Gymnasium single-agent view of any game: one learning seat, named partner bots in the others.

Registered as ``gymnasium.make("tom_envs/<Game>Vs<Bot>-v0")``; also built directly::

    SingleAgentEnv("RockPaperScissors", partners="tit_for_tat", seat=0)

The observation is the seat's vector (``Box``); the legal-action mask is ``info["action_mask"]``
and :meth:`SingleAgentEnv.action_masks` (the sb3-contrib MaskablePPO convention). The text layer is
there too (:meth:`text_observation`, :meth:`parse_action`) for LLM loops. The reward is the seat's
own reward, summed over everything that happens until it acts again. Partners are reset with the
episode seed, so ``reset(seed)`` fixes the whole episode.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, ClassVar

import gymnasium
import numpy as np

from tom_envs.core.agents import Agent, EpisodeInfo, Turn, as_agent_action
from tom_envs.core.game import IllegalActionError, ParseResult, TextObservation


class SingleAgentEnv(gymnasium.Env):
    """One seat of a registered game as a Gymnasium environment.

    Args:
        game: a registered game name or id.
        partners: one agent spec for every other seat, or a list (one per other seat, in order).
        seat: the learner's seat.
        render_mode: ``None`` or ``"ansi"``.
        env_kwargs: game keyword arguments (override the registered defaults).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"]}

    def __init__(
        self,
        game: str,
        partners: str | Sequence[str] = "random",
        seat: int = 0,
        render_mode: str | None = None,
        **env_kwargs: Any,
    ) -> None:
        from tom_envs.agents import make_agent
        from tom_envs.registration import game_spec

        self.spec_ = game_spec(game)
        kwargs = {**self.spec_.kwargs, **env_kwargs}
        self.aec = self.spec_.load().raw_env(render_mode=render_mode, **kwargs)
        self.bundle = self.aec.bundle
        n = self.bundle.game.num_players
        if not 0 <= seat < n:
            raise ValueError(f"seat must be in [0, {n}), got {seat}")
        specs = [partners] * (n - 1) if isinstance(partners, str) else list(partners)
        if len(specs) != n - 1:
            raise ValueError(f"{self.spec_.name} needs {n - 1} partner specs, got {len(specs)}")
        self.seat = seat
        self.agent = f"player_{seat}"
        self.partner_specs = specs
        others = [i for i in range(n) if i != seat]
        self.partners: dict[int, Agent] = {
            i: make_agent(s, self.spec_, self.bundle) for i, s in zip(others, specs, strict=True)
        }
        self.render_mode = render_mode
        self.observation_space = self.aec.observation_space(self.agent)["observation"]
        self.action_space = self.aec.action_space(self.agent)
        self._mask = np.zeros(self.bundle.game.num_actions, dtype=np.int8)
        self._decisions: dict[int, int] = {}

    def _info(self, episode: int | None) -> EpisodeInfo:
        g = self.bundle.game
        return EpisodeInfo(
            env_id=self.spec_.id,
            agent=self.agent,
            player=self.seat,
            num_players=g.num_players,
            num_actions=g.num_actions,
            seed=episode,
            reward_range=g.reward_range,
            max_steps=g.max_steps,
            tags=g.tags,
        )

    def _advance(self) -> tuple[np.ndarray, float, bool, bool]:
        """Let partners act until it is the learner's turn or the episode ends."""
        reward = 0.0
        while True:
            agent = self.aec.agent_selection
            obs, rew, term, trunc, _ = self.aec.last()
            if agent == self.agent:
                reward += float(self.aec._cumulative_rewards.get(self.agent, 0.0))
                if term or trunc:
                    return obs, reward, bool(term), bool(trunc)
                self._mask = obs["action_mask"].copy()
                return obs, reward, False, False
            player = int(agent.rsplit("_", 1)[1])
            if term or trunc:
                self.aec.step(None)
                continue
            turn = Turn(
                agent,
                player,
                self.aec.view(agent),
                obs["observation"],
                obs["action_mask"],
                float(rew),
                self._decisions.get(player, 0),
            )
            choice = as_agent_action(self.partners[player].act(turn))
            action = choice.action
            if action is None or int(action) not in turn.legal_actions:
                raise IllegalActionError(f"partner {self.partner_specs} chose illegal {action!r}")
            self._decisions[player] = self._decisions.get(player, 0) + 1
            if choice.message is not None and self.bundle.game.tags.communication:
                self.aec.send_message(agent, choice.message)  # partners' chat reaches the learner
            self.aec.step(int(action))

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """New episode; partners are reseeded from the same seed."""
        super().reset(seed=seed)
        episode_seed = int(self.np_random.integers(2**31 - 1))
        self.aec.reset(seed=episode_seed)
        self._decisions = {}
        info = self._info(episode_seed)
        for i, partner in self.partners.items():
            partner.reset(dataclasses.replace(info, agent=f"player_{i}", player=i))
        obs, _, term, trunc = self._advance()
        if term or trunc:
            raise RuntimeError("episode ended before the learner's first turn")
        return obs["observation"], {"action_mask": self._mask.copy()}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """The learner acts; partners reply; returns the learner's next observation."""
        if self.aec.agent_selection != self.agent:
            raise IllegalActionError("the episode is over: call reset()")
        if isinstance(action, np.ndarray) and action.ndim == 0:
            action = action[()]  # a 0-d array (as RL libraries return) -> numpy scalar, checked
        self.aec.step(action)
        obs, reward, term, trunc = self._advance()
        if term or trunc:
            self._mask = np.zeros_like(self._mask)
        return obs["observation"], reward, term, trunc, {"action_mask": self._mask.copy()}

    def action_masks(self) -> np.ndarray:
        """Legal actions now, as a boolean array (sb3-contrib's MaskablePPO reads this)."""
        return self._mask.astype(bool)

    def text_observation(self) -> TextObservation:
        """The learner's text observation (rules, observation, legal actions)."""
        return self.aec.text_observation(self.agent)

    def parse_action(self, text: str) -> ParseResult:
        """Parse free text into the learner's action."""
        return self.aec.parse_action(self.agent, text)

    def render(self) -> str | None:
        """``"ansi"``: the whole state as text."""
        return self.aec.render()
