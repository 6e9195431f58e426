"""The Gymnasium single-agent view with text in and text out (the registered ``-text`` ids).

``gymnasium.make("tom_envs/<Game>Vs<Bot>-text-v<N>")`` is the single-agent view
``tom_envs/<Game>Vs<Bot>-v<N>`` (seat 0 learns, the named bot plays the other seats) whose
observation is the learner's prompt (rules, observation, legal actions) and whose action is the
learner's answer in free text, the way LLM-RL libraries step an environment::

    env = gymnasium.make("tom_envs/PrisonersDilemmaVsTitForTat-text-v0")
    obs, info = env.reset(seed=0)               # obs: a str
    while True:
        obs, reward, terminated, truncated, info = env.step(my_llm(obs))
        if terminated or truncated:
            break

Any other view is wrapped the same way: ``TextSingleAgentEnv(SingleAgentEnv(game, partners,
seat=k))``. The answer is read by the game's parser; an invalid one follows the invalid-answer
policy (:mod:`tom_envs.wrappers.answers`: ``"reask"`` by default, ``on_invalid=`` as a keyword
of ``gymnasium.make``). A re-ask returns the same prompt with the feedback, reward 0 (or
``invalid_reward``) and the episode going on; ``"terminate"`` ends it with ``invalid_reward``
(-1 by default). ``info`` holds the view's ``action_mask`` and the text wrappers' keys
(``text_observation``, ``answer``, ``invalid_policy``); :meth:`TextSingleAgentEnv.episode_record`
the episode's answers.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np

from tom_envs.core.game import IllegalActionError, TextObservation
from tom_envs.single_agent import SingleAgentEnv
from tom_envs.wrappers.answers import (
    InvalidAnswerPolicy,
    answer_tools,
    prompt_text,
    seat_info,
    split_policy_args,
)
from tom_envs.wrappers.spaces import AnswerSpace, TextSpace


class TextSingleAgentEnv(gymnasium.Env):
    """A Gymnasium single-agent view of the suite with text observations and text actions.

    Args:
        env: the view: a :class:`~tom_envs.single_agent.SingleAgentEnv`, or
            ``gymnasium.make("tom_envs/<Game>Vs<Bot>-v<N>")`` (its wrappers are kept: the view is
            stepped through them).
        on_invalid, **policy: the invalid-answer policy, as for
            :class:`~tom_envs.wrappers.aec.TextAECEnv`.
    """

    def __init__(
        self,
        env: gymnasium.Env,
        *,
        on_invalid: str | InvalidAnswerPolicy = "reask",
        **policy: Any,
    ) -> None:
        made_by = "SingleAgentEnv, or gymnasium.make('tom_envs/<Game>Vs<Bot>-v0')"
        tools = answer_tools(env, gymnasium.Env, SingleAgentEnv, made_by, on_invalid, policy,
                             seats=lambda v: (v.bundle.game, [v.agent]))  # fmt: skip
        view: SingleAgentEnv = tools.env
        self.env = env
        self.view = view
        self.policy, self._masks, self._judge = tools.policy, tools.masks, tools.judge
        self.metadata = dict(view.metadata)
        self.render_mode = view.render_mode
        self.observation_space = TextSpace()
        self.action_space = AnswerSpace(self.policy.max_answer_chars, _legal_texts(self))
        self._tobs: TextObservation | None = None  # the learner's text while it must answer

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[str, dict[str, Any]]:
        """A new episode of the view (partners reseeded from the same seed)."""
        super().reset(seed=seed)
        _, info = self.env.reset(seed=seed, options=options)
        self._judge.reset(self.view.episode_seed)
        self._tobs = tobs = self.view.text_observation()
        obs = prompt_text(tobs, None, self.policy.feedback_template)
        return obs, {**info, **seat_info(info["action_mask"], tobs, None, self.policy)}

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """The learner answers in free text; the partners reply; returns its next prompt."""
        tobs = self._tobs
        if tobs is None:
            raise IllegalActionError("the episode is over: call reset()")
        view, policy = self.view, self.policy
        agent = view.agent
        record = self._judge.judge(
            agent,
            action,
            view.parse_action,  # type: ignore[arg-type]
            lambda: view.aec.view(agent).legal_actions,
            tobs.legal_actions.__getitem__,
        )
        penalty = 0.0 if record["valid"] else policy.reward
        outcome = record["outcome"]
        template = policy.feedback_template
        if outcome == "reask":
            obs = prompt_text(tobs, record["feedback"], template)
            info = seat_info(self._masks(tobs.legal_actions), tobs, record, policy)
            return obs, penalty, False, False, info
        if outcome == "terminate":
            self._tobs = None
            info = seat_info(self._masks(), None, record, policy)
            return prompt_text(tobs, None, template), penalty, True, False, info
        message = record.get("message")
        if message:
            try:
                view.aec.send_message(agent, message)  # delivered with the action below
            except IllegalActionError as exc:
                record["message_error"] = str(exc)
        _, reward, terminated, truncated, info = self.env.step(record["played"])
        done = terminated or truncated
        tobs = view.text_observation()
        self._tobs = None if done else tobs
        info = {
            **info,
            **seat_info(info["action_mask"], None if done else tobs, record, policy),
        }
        obs = prompt_text(tobs, None, template)
        return obs, float(reward) + penalty, bool(terminated), bool(truncated), info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions now, as booleans (all false when it must not answer)."""
        tobs = self._tobs
        return self._masks(() if tobs is None else tobs.legal_actions).astype(bool)

    def render(self) -> str | np.ndarray | None:
        """The view's render (``render_mode``)."""
        return self.env.render()  # type: ignore[return-value]

    def close(self) -> None:
        """Close the view."""
        self.env.close()

    def episode_record(self) -> dict[str, Any]:
        """This episode's answers as plain data (see ``TextAECEnv.episode_record``)."""
        view = self.view
        return self._judge.record(
            env=view.spec_.id,
            partners=list(view.partner_specs),
            seat=view.seat,
            env_kwargs=dict(view.env_kwargs),
        )


def _legal_texts(env: TextSingleAgentEnv) -> Any:
    """The learner's legal actions as text while it must answer (the answer space's sampler)."""
    ref = weakref.ref(env)

    def legal() -> Mapping[int, str] | None:
        owner = ref()
        return None if owner is None or owner._tobs is None else owner._tobs.legal_actions

    return legal


def text_single_agent_env(
    game: str,
    partners: str | Sequence[str] = "random",
    seat: int = 0,
    render_mode: str | None = None,
    on_invalid: str = "reask",
    **kwargs: Any,
) -> TextSingleAgentEnv:
    """The entry point of the registered ``-text`` ids: ``SingleAgentEnv(game, partners, seat,
    render_mode, **env_kwargs)`` (an illegal action would raise: the parser only yields legal
    ones) inside :class:`TextSingleAgentEnv`; ``kwargs`` are the policy's fields
    (:data:`~tom_envs.wrappers.answers.POLICY_ARGS`) and the game's arguments."""
    policy, env_kwargs = split_policy_args(kwargs)
    view = SingleAgentEnv(game, partners, seat, render_mode, illegal_action="raise", **env_kwargs)
    return TextSingleAgentEnv(view, on_invalid=on_invalid, **policy)


__all__ = ["TextSingleAgentEnv", "text_single_agent_env"]
