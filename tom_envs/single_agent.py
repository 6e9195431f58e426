"""Gymnasium single-agent view of any game: one learning seat, named partner bots in the others.

Registered as ``gymnasium.make("tom_envs/<Game>Vs<Bot>-v0")``; also built directly::

    SingleAgentEnv("RockPaperScissors", partners="tit_for_tat", seat=0)

The observation is the seat's vector (``Box``); the legal-action mask is ``info["action_mask"]``
and :meth:`SingleAgentEnv.action_masks` (the sb3-contrib MaskablePPO convention). The text layer is
there too (:meth:`text_observation`, :meth:`parse_action`) for LLM loops. The reward is the seat's
own reward, summed over everything that happens until it acts again, so an episode's rewards sum
to the seat's return in the AEC game. Partners are reset with the episode seed, so ``reset(seed)``
fixes the whole episode.

Illegal actions (``illegal_action=``):

* ``"raise"`` (the default of the class): an action in the action space that is not legal now
  raises :class:`~tom_envs.core.game.IllegalActionError` and changes nothing, as the AEC game does;
* ``"terminate"``: the episode ends (``terminated=True``) with reward ``illegal_reward`` (default
  ``-1.0``) and ``info["illegal_action"] = True``, as PettingZoo's ``TerminateIllegalWrapper``
  does. Nothing is substituted for the illegal move; the episode simply stops there.

The registered Gymnasium ids use ``"terminate"``: Gymnasium's API (and its ``check_env``) takes
every element of ``action_space`` as a valid argument of ``step``, and an unmasked exploration
sample in a ``gymnasium.make_vec(..., vectorization_mode="async")`` worker or an SB3
``make_vec_env`` env must not kill the worker. Pass ``gymnasium.make(id, illegal_action="raise")``
to get the strict behaviour. Either way a value outside the action space (``-1``, ``1.5``,
``"a"``) raises: that is a bug in the caller, not an exploration sample.

The episode is played by the one episode driver (:class:`tom_envs.driver.EpisodeDriver`) with
the learner's seat external. A partner that fails (raises, or answers illegally) raises
:class:`~tom_envs.core.agents.AgentFailure` (the driver's ``on_failure="raise"`` policy): a
training loop never learns against silently substituted partner moves.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import gymnasium
import numpy as np

from tom_envs.core.agents import Agent
from tom_envs.core.game import IllegalActionError, ParseResult, ResetNeeded, TextObservation
from tom_envs.driver import EpisodeDriver, FailurePolicy, draw_episode_seed


class SingleAgentEnv(gymnasium.Env):
    """One seat of a registered game as a Gymnasium environment.

    Args:
        game: a registered game name or id.
        partners: one agent spec for every other seat, or a list (one per other seat, in order)
            of specs or agent objects. Specs are built as untrusted ones (``random``, the game's
            bots and populations, installed plugins: :mod:`tom_envs.core.trust`); pass an agent
            object (e.g. ``make_agent(spec, game, trusted=True)``) for anything else.
        seat: the learner's seat.
        render_mode: ``None``, ``"ansi"``, ``"rgb_array"`` or ``"human"`` (the game's renderer,
            :mod:`tom_envs.core.render`; another mode warns and renders nothing).
        trusted: build the partner specs as the command line's (``make_agent(...,
            trusted=True)``: any agent ``tom-envs run`` can play, ``module:Class`` included);
            only for specs the person running the command gave (a trainer's ``--partners``).
        illegal_action: ``"raise"`` or ``"terminate"`` (see the module docstring).
        illegal_reward: the reward of an illegal action under ``"terminate"``.
        env_kwargs: game keyword arguments (override the registered defaults).
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "rgb_array", "human"],
        "render_fps": 4,
    }
    #: The values of ``illegal_action``.
    ILLEGAL_ACTION_POLICIES: ClassVar[tuple[str, ...]] = ("raise", "terminate")

    def __init__(
        self,
        game: str,
        partners: str | Sequence[str | Agent] = "random",
        seat: int = 0,
        render_mode: str | None = None,
        illegal_action: str = "raise",
        illegal_reward: float = -1.0,
        trusted: bool = False,
        **env_kwargs: Any,
    ) -> None:
        from tom_envs.agents import make_agent
        from tom_envs.registration import game_spec

        if illegal_action not in self.ILLEGAL_ACTION_POLICIES:
            raise ValueError(
                f"argument 'illegal_action': got {illegal_action!r}; allowed: "
                + ", ".join(repr(p) for p in self.ILLEGAL_ACTION_POLICIES)
            )
        if (
            isinstance(illegal_reward, bool)
            or not isinstance(illegal_reward, (int, float))
            or (not np.isfinite(illegal_reward))
        ):
            raise ValueError(
                f"argument 'illegal_reward': got {illegal_reward!r}; allowed: a finite number"
            )
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
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
            i: make_agent(s, self.spec_, self.bundle, trusted=trusted) if isinstance(s, str) else s
            for i, s in zip(others, specs, strict=True)
        }  # seats read at every reset: a partner replaced here plays from the next episode
        self.env_kwargs = dict(env_kwargs)
        self.render_mode = self.aec.render_mode
        self.observation_space = self.aec.observation_space(self.agent)["observation"]
        self.action_space = self.aec.action_space(self.agent)
        self._mask = np.zeros(self.bundle.game.num_actions, dtype=np.int8)
        self._illegal_end = False

    def _is_illegal_in_space(self, action: Any) -> bool:
        """An action of the action space (an int in range) that is not legal now."""
        if isinstance(action, bool) or not isinstance(action, int):
            return False
        return 0 <= action < self._mask.shape[0] and not self._mask[action]

    def _advance(self) -> tuple[dict[str, np.ndarray], float, bool, bool]:
        """Partners act until it is the learner's turn or the episode ends."""
        nxt = self.driver.advance()
        obs = self.aec.observe(self.agent)
        reward = self.driver.reward_since[self.agent]  # since its last move (the driver's count)
        if nxt is None:
            over = self.driver.over()
            term = over and any(self.aec.terminations.values())
            return obs, reward, bool(term), bool(over and not term)
        self._mask = obs["action_mask"].copy()
        return obs, reward, False, False

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """New episode; partners are reseeded from the same seed."""
        super().reset(seed=seed)
        self.episode_seed = draw_episode_seed(self.np_random)
        n = self.bundle.game.num_players
        self.driver = EpisodeDriver(
            self.spec_,
            [self.partners.get(i) for i in range(n)],
            self.episode_seed,
            self.env_kwargs,
            env=self.aec,
            policy=FailurePolicy(on_failure="raise"),
            record_steps=False,
        )
        self.driver.start()
        self._illegal_end = False
        obs, _, term, trunc = self._advance()
        if term or trunc:
            raise RuntimeError("episode ended before the learner's first turn")
        return obs["observation"], {"action_mask": self._mask.copy()}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """The learner acts; partners reply; returns the learner's next observation."""
        if getattr(self, "driver", None) is None:
            raise ResetNeeded("step() before reset(): call reset(seed=...) first")
        if self._illegal_end or self.aec.agent_selection != self.agent or self.driver.over():
            raise IllegalActionError("the episode is over: call reset()")
        if isinstance(action, np.ndarray) and action.ndim == 0:
            action = action[()]  # a 0-d array (as RL libraries return) -> numpy scalar, checked
        if isinstance(action, np.integer):
            action = int(action)
        if self.illegal_action == "terminate" and self._is_illegal_in_space(action):
            self._mask = np.zeros_like(self._mask)
            self._illegal_end = True
            obs = self.aec.observe(self.agent)["observation"]
            info = {"action_mask": self._mask.copy(), "illegal_action": True}
            return obs, self.illegal_reward, True, False, info
        self.driver.play(self.agent, action)
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

    def render(self) -> str | np.ndarray | None:
        """The whole state in ``render_mode``: text (``"ansi"``), every seat's board as an image
        (``"rgb_array"``), a window or the text on stdout (``"human"``), or ``None``."""
        return self.aec.render()
