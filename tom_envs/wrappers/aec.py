"""The PettingZoo AEC text wrapper: the seat's prompt in, the seat's answer (free text) out."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils.env import AECIterable
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import BaseWrapper

from tom_envs.core.aec import TomAECEnv
from tom_envs.core.game import IllegalActionError, TextObservation
from tom_envs.core.wrappers import AgentIterable
from tom_envs.wrappers.answers import prompt_text, seat_info
from tom_envs.wrappers.spaces import TextObs, TextSpaces


class TextAECEnv(TextSpaces, BaseWrapper):
    """A tom_envs AEC environment with text observations and text actions.

    ``observe(agent)`` (and ``last()``) is the seat's prompt: the text layer's rules, observation
    and legal actions (``env.text_observation(agent).prompt()``), with the feedback on its last
    answer appended when it is asked again. ``step(answer)`` reads the acting seat's answer with
    the game's parser (``env.parse_action``) and plays the action it names; an invalid answer
    follows the invalid-answer policy (:mod:`tom_envs.wrappers.answers`). Spaces:
    :class:`~tom_envs.wrappers.spaces.TextSpace` and
    :class:`~tom_envs.wrappers.spaces.AnswerSpace`. The loop is PettingZoo's::

        env = TextAECEnv(pettingzoo.make("aec", "tom_envs/Hanabi-v0"))
        env.reset(seed=0)
        for agent in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            env.step(None if term or trunc else my_llm(obs))

    ``infos[agent]``: ``action_mask`` (int8 over the game's actions; zeros unless ``agent`` must
    answer now), ``text_observation`` (the :class:`~tom_envs.core.game.TextObservation` of the
    seat that must answer: rules, observation, ``legal_actions`` as ``{action: text}``,
    ``answer_format``; ``None`` for the others), ``answer`` (from the seat's first answer on, the
    record of its last one: the text, ``valid``, the parser's ``feedback``, the parsed
    ``action``, the ``outcome``, the action ``played`` and its ``played_text``, ``attempt``,
    ``fallback`` and its ``failure``, the chat ``message``; keys and types never change, ``-1``
    standing for no action: :meth:`~tom_envs.wrappers.answers.AnswerJudge.judge`) and
    ``invalid_policy``. :meth:`episode_record` returns the episode's answers, counts and policy
    as plain data.

    A chat message the parser reads from an answer (bomb defusal, CoBlock) goes with the action;
    one the game refuses is dropped and named in the answer's ``message_error``.

    Args:
        env: an AEC environment of the suite (``pettingzoo.make("aec", "tom_envs/...")`` or a
            game module's ``raw_env``/``env``).
        on_invalid: ``"reask"``, ``"forfeit"``, ``"terminate"``, or a whole
            :class:`~tom_envs.wrappers.answers.InvalidAnswerPolicy`.
        **policy: the policy's other fields: ``max_reasks`` (re-asks of one decision before an
            invalid answer forfeits, default 2), ``fallback`` (the forfeited move, ``"random"``
            seeded by the episode, or ``"first"``), ``invalid_reward`` (each invalid answer's
            reward; default -1 under ``"terminate"``, else 0), ``max_answer_chars`` (longer
            answers are invalid, unread; default 100,000) and ``feedback_template`` (the sentence
            after a re-asked seat's prompt, holding ``{feedback}``).
    """

    _raw: TomAECEnv
    wraps = (AECEnv, TomAECEnv, "pettingzoo.make('aec', 'tom_envs/...')")

    def _setup(self) -> None:
        self._infos: dict[str, dict[str, Any]] | None = None
        # The text of the seat that must answer now, and the state and observation it is of.
        self._tobs: TextObservation | None = None
        self._tobs_agent: str | None = None
        self._tobs_state: Any = None
        self._obs: TextObs | None = None

    def _sampler(self, agent: str) -> Callable[[], Mapping[int, str] | None]:
        ref = weakref.ref(self)

        def legal() -> Mapping[int, str] | None:
            owner = ref()
            if owner is None or owner._tobs_agent != agent or owner._tobs is None:
                return None
            return owner._tobs.legal_actions

        return legal

    @property
    def unwrapped(self) -> TomAECEnv:
        """The suite's AEC env under every wrapper."""
        return self._raw

    # ------------------------------------------------------------------ state
    @property
    def infos(self) -> dict[str, dict[str, Any]]:  # pyright: ignore[reportIncompatibleVariableOverride]
        """Each live seat's info (see the class docstring)."""
        if self._infos is None:
            raise AttributeError("infos cannot be accessed before reset")
        return self._infos

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start an episode (the env's ``reset``); the fallback generator follows the seed."""
        self.env.reset(seed=seed, options=options)
        self._judge.reset(seed)
        zeros = self._masks()
        self._infos = {
            a: seat_info(zeros.copy(), None, None, self.policy) for a in self._raw.agents
        }
        self._tobs_state = None
        self._select()

    def _select(self) -> None:
        """After a reset or a step: drop the seats that left, and prepare the selected seat's text
        and info when it must answer."""
        raw = self._raw
        infos = self._infos
        assert infos is not None
        terminations = raw.terminations
        if len(infos) != len(terminations):
            for gone in [a for a in infos if a not in terminations]:
                del infos[gone]
        agent = raw.agent_selection
        self._obs = None
        if agent in terminations and not (terminations[agent] or raw.truncations[agent]):
            state = raw.game_state
            if agent != self._tobs_agent or state is not self._tobs_state or self._tobs is None:
                self._tobs = raw.text_observation(agent)
                self._tobs_agent, self._tobs_state = agent, state
            tobs = self._tobs
            infos[agent] = seat_info(
                self._masks(tobs.legal_actions), tobs, infos[agent].get("answer"), self.policy
            )
        else:
            self._tobs = self._tobs_agent = self._tobs_state = None

    def observe(self, agent: str) -> TextObs:
        """``agent``'s prompt (with the feedback on its last answer when it is asked again)."""
        if self._infos is None:
            EnvLogger.error_observe_before_reset()
        template = self.policy.feedback_template
        if agent == self._tobs_agent and self._tobs is not None:
            if self._obs is None:
                feedback = self._judge.feedback.get(agent)
                self._obs = TextObs(prompt_text(self._tobs, feedback, template))
            return self._obs
        return TextObs(prompt_text(self._raw.text_observation(agent), None, template))

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """The selected seat's prompt, cumulative reward, termination, truncation and info."""
        if self._infos is None:
            raise AttributeError("agent_selection cannot be accessed before reset")
        agent = self._raw.agent_selection
        _, reward, terminated, truncated, _ = self._raw.last(observe=False)
        prompt = self.observe(agent) if observe else None
        return prompt, reward, terminated, truncated, self._infos[agent]

    def agent_iter(self, max_iter: int = 2**63) -> AECIterable:
        """PettingZoo's agent iterator (the selected seat until the episode is over)."""
        if self._infos is None:
            raise AttributeError("agent_iter cannot be called before reset")
        return AgentIterable(self._raw, max_iter)

    # ------------------------------------------------------------------- step
    def step(self, action: Any) -> None:
        """The selected seat answers: free text (``None`` for a seat that is done)."""
        if self._infos is None:
            EnvLogger.error_step_before_reset()
        raw = self._raw
        agent = raw.agent_selection
        terminations = raw.terminations
        if agent not in terminations or terminations[agent] or raw.truncations[agent]:
            self.env.step(action)  # a done seat's step, or the env's own error
            self._select()
            return
        tobs = self._tobs if agent == self._tobs_agent and self._tobs is not None else None
        if tobs is None:
            tobs = raw.text_observation(agent)
        record = self._judge.judge(
            agent,
            action,
            partial(raw.parse_action, agent),
            lambda: raw.view(agent).legal_actions,
            tobs.legal_actions.__getitem__,
        )
        penalty = 0.0 if record["valid"] else self.policy.reward
        outcome = record["outcome"]
        if outcome == "played" or outcome == "fallback":
            message = record.get("message")
            if message:
                try:
                    raw.send_message(agent, message)
                except IllegalActionError as exc:
                    record["message_error"] = str(exc)
            self.env.step(record["played"])
            if penalty and agent in raw.rewards:
                raw.rewards[agent] += penalty
                raw._cumulative_rewards[agent] += penalty
        else:
            rewards = raw.rewards
            for a in rewards:
                rewards[a] = 0.0
            rewards[agent] = penalty
            # last() reported the seat's cumulative reward: it starts again from this answer's
            raw._cumulative_rewards[agent] = penalty
            if outcome == "terminate":  # as PettingZoo's TerminateIllegalWrapper ends a game
                raw.terminations = dict.fromkeys(raw.agents, True)
                raw.truncations = dict.fromkeys(raw.agents, False)
                raw.agent_selection = raw.agents[0]
        infos = self._infos
        assert infos is not None
        infos[agent] = seat_info(self._masks(), None, record, self.policy)
        self._select()

    # ----------------------------------------------------------------- record
    def episode_record(self) -> dict[str, Any]:
        """This episode's answers as plain data: the env, the seed, the invalid-answer policy,
        every answer with its outcome (in order), the counts per seat (answers, invalid, reasks,
        fallbacks) and the seat whose answer ended the episode under ``"terminate"``."""
        raw = self._raw
        return self._judge.record(env=raw.metadata["name"], max_cycles=raw.max_cycles)


__all__ = ["TextAECEnv"]
