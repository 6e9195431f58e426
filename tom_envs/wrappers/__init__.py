"""Natural-language wrappers: every game with text observations and text actions, through the
standard PettingZoo and Gymnasium loops.

The vector side of a game is the env itself (``observation`` + ``action_mask``); these wrappers
are its text side, computed from the same player view by the game's text layer:

* :class:`TextAECEnv` (``TextAECEnv(pettingzoo.make("aec", id))``) and :class:`TextParallelEnv`
  (``TextParallelEnv(pettingzoo.make("parallel", id))``): each seat's observation is its prompt
  (rules, observation, legal actions) in a :class:`~tom_envs.wrappers.spaces.TextSpace`;
  ``step`` takes the seat's answer in free text and reads it with the game's parser;
* :class:`TextSingleAgentEnv`: the Gymnasium single-agent views, registered as
  ``gymnasium.make("tom_envs/<Game>Vs<Bot>-text-v<N>")`` for every view of the registry;
* :class:`InvalidAnswerPolicy`: what an invalid answer does (``on_invalid="reask"``,
  ``"forfeit"`` to a recorded fallback, or ``"terminate"``), chosen by the user and recorded in
  every info and in ``episode_record()`` (:mod:`tom_envs.wrappers.answers`).

An LLM in a plain PettingZoo loop::

    env = TextAECEnv(pettingzoo.make("aec", "tom_envs/PrisonersDilemma-v0"))
    env.reset(seed=0)
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        env.step(None if term or trunc else my_llm(obs))

A seat sees exactly what its text layer shows (its prompt, and the feedback on its own answers);
``info["action_mask"]`` and ``info["text_observation"]`` come from the same view.
"""

from __future__ import annotations

from tom_envs.wrappers.aec import TextAECEnv
from tom_envs.wrappers.answers import FEEDBACK_TEMPLATE, InvalidAnswerPolicy
from tom_envs.wrappers.parallel import TextParallelEnv
from tom_envs.wrappers.single_agent import TextSingleAgentEnv, text_single_agent_env
from tom_envs.wrappers.spaces import AnswerSpace, TextObs, TextSpace

__all__ = [
    "FEEDBACK_TEMPLATE",
    "AnswerSpace",
    "InvalidAnswerPolicy",
    "TextAECEnv",
    "TextObs",
    "TextParallelEnv",
    "TextSingleAgentEnv",
    "TextSpace",
    "text_single_agent_env",
]
