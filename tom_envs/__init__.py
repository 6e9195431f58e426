"""tom-envs: multi-agent games for studying Theory of Mind and coordination.

Importing the package registers every game with PettingZoo and every single-agent view with
Gymnasium, lazily: no game module is imported until an environment is made::

    import pettingzoo, gymnasium, tom_envs
    env = pettingzoo.make("aec", "tom_envs/RockPaperScissors-v0")
    solo = gymnasium.make("tom_envs/PrisonersDilemmaVsTitForTat-v0")
    llm = gymnasium.make("tom_envs/PrisonersDilemmaVsTitForTat-text-v0")   # text in, text out

Text observations and text actions for any game: :mod:`tom_envs.wrappers`.
"""

from __future__ import annotations

from tom_envs.core.agents import Agent, AgentAction, BaseAgent, EpisodeInfo, RandomAgent, Turn
from tom_envs.core.game import (
    Game,
    GameBundle,
    GameTags,
    IllegalActionError,
    ParseResult,
    TextObservation,
)
from tom_envs.registration import GAMES, GameSpec, game_spec, register_all

__version__ = "0.1.0"

register_all()

__all__ = [
    "GAMES",
    "Agent",
    "AgentAction",
    "BaseAgent",
    "EpisodeInfo",
    "Game",
    "GameBundle",
    "GameSpec",
    "GameTags",
    "IllegalActionError",
    "ParseResult",
    "RandomAgent",
    "TextObservation",
    "Turn",
    "__version__",
    "game_spec",
    "register_all",
]
