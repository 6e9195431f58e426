"""The teaching example (docs/quickstart.md "Adding a game"): its rules and bots, and the
registry-driven conformance path run on it explicitly (the suite also runs it, as every game)."""

from __future__ import annotations

import numpy as np
import pettingzoo
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, parallel_api_test

import tom_envs  # noqa: F401  (registers the ids)
from tom_envs.agents import make_agent
from tom_envs.core.contract import GameModule
from tom_envs.games.example import env as example
from tom_envs.games.example.rules import ExampleGame, ExampleState
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode
from tom_envs.single_agent import SingleAgentEnv

SPEC = game_spec("Example")

# PettingZoo's and Gymnasium's checkers warn about valid Dict observation spaces: not findings.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def test_a_match_pays_both_players_one() -> None:
    game = ExampleGame()
    s = game.initial_state(np.random.default_rng(0))
    r = game.step(s, {0: 2, 1: 2}, None)
    assert r.rewards == (1.0, 1.0) and r.state == ExampleState(1, ((2, 2),), 1)
    r = game.step(r.state, {0: 0, 1: 1}, None)
    assert r.rewards == (0.0, 0.0) and r.state.matches == 1
    view = game.observe(r.state, 1)
    assert (view.my_last, view.partner_last, view.matches) == (1, 0, 1)


def test_the_module_is_a_registered_game_module() -> None:
    assert isinstance(example, GameModule) and SPEC.load() is example and SPEC.example
    assert SPEC.bots == tuple(example.bot_table().names()) == ("copycat", "stubborn")


def test_bots_and_text() -> None:
    agents = [make_agent("copycat", SPEC), make_agent("stubborn", SPEC)]
    ep = play_episode(SPEC, agents, seed=0, env_kwargs={"rounds": 4}, record_text=True)
    assert ep.returns == {"player_0": 4.0, "player_1": 4.0}  # both red every round
    assert ep.steps[0]["action_text"] == "red"
    env = example.raw_env()
    env.reset(seed=0)
    assert env.parse_action("player_0", "I name <action>blue</action>").action == 2
    assert env.parse_action("player_0", "purple").action is None


def test_conformance_path() -> None:
    api_test(pettingzoo.make("aec", SPEC.id), num_cycles=100)
    parallel_api_test(pettingzoo.make("parallel", SPEC.id), num_cycles=100)
    check_env(SingleAgentEnv("Example", partners="copycat"))
