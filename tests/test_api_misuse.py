"""API misuse gets a clear error everywhere (issue #31): every game, AEC, Parallel and Gymnasium.

Registry-driven: each game's raw AEC env and (for simultaneous games) its Parallel env, and every
registered single-agent Gymnasium view, are misused in each way below. Each misuse must raise the
suite's error with a message that says what to do (``ResetNeeded``: "call reset()";
``UnknownAgentError``: the agents; ``IllegalActionError``: the action and what is allowed), never
an ``AttributeError``/``IndexError`` from inside, and never pass silently.
"""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest

from tom_envs.core.game import IllegalActionError, ResetNeeded, UnknownAgentError
from tom_envs.registration import GAMES, single_agent_specs

BAD_AGENTS = ["player_99", "bob", "", None, 5, "player_0 "]
BAD_ACTIONS = [-1, 10**9, 1.5, "a", None, [0], np.int64(-1), True]


def expect(kind: type[Exception], pattern: str, fn, *args) -> None:
    """``fn(*args)`` raises ``kind`` (never an internal error) with ``pattern`` in its message."""
    with pytest.raises(kind, match=pattern):
        fn(*args)


def play_to_the_end(env) -> None:
    rng = np.random.default_rng(0)
    for _ in range(100_000):
        if not env.agents:
            return
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    raise AssertionError("the episode did not end")


@pytest.mark.parametrize("spec", GAMES, ids=lambda g: g.name)
def test_aec_misuse(spec) -> None:
    module = spec.load()
    env = module.raw_env(**spec.kwargs)
    before = [
        ("step", lambda: env.step(0)), ("last", env.last), ("observe", lambda: env.observe("player_0")),
        ("state", env.state), ("view", lambda: env.view("player_0")),
        ("probes", lambda: env.probes("player_0")),
        ("text_observation", lambda: env.text_observation("player_0")),
        ("parse_action", lambda: env.parse_action("player_0", "x")),
        ("send_message", lambda: env.send_message("player_0", "hi")),
    ]  # fmt: skip
    for _, call in before:
        expect(ResetNeeded, r"reset\(\)", call)
    env.reset(seed=0)
    for agent in BAD_AGENTS:
        for call in (env.observe, env.view, env.probes, env.text_observation,
                     env.observation_space, env.action_space):  # fmt: skip
            expect(UnknownAgentError, "unknown agent.*the agents are player_0", call, agent)
        expect(UnknownAgentError, "unknown agent", env.parse_action, agent, "x")
        expect(UnknownAgentError, "unknown agent", env.send_message, agent, "x")
    for action in BAD_ACTIONS:
        fresh = module.raw_env(**spec.kwargs)
        fresh.reset(seed=0)
        selected = fresh.agent_selection
        expect(IllegalActionError, r"action|integer|range|illegal", fresh.step, action)
        assert fresh.agent_selection == selected  # nothing changed
    # a finished episode: stepping a done agent, then anything after every agent is done
    play_to_the_end(env)
    expect(IllegalActionError, r"over.*reset\(\)", env.step, 0)
    expect(ResetNeeded, r"ended.*reset\(\)", env.last)


PARALLEL = [s for s in GAMES if s.parallel]


@pytest.mark.parametrize("spec", PARALLEL, ids=lambda g: g.name)
def test_parallel_misuse(spec) -> None:
    module = spec.load()
    env = module.parallel_env(**spec.kwargs)
    expect(ResetNeeded, r"reset\(\)", env.step, {"player_0": 0})
    expect(ResetNeeded, r"reset\(\)", env.state)
    expect(ResetNeeded, r"reset\(\)", env.view, "player_0")
    expect(ResetNeeded, r"reset\(\)", env.probes, "player_0")
    env.reset(seed=0)
    for agent in BAD_AGENTS:
        for call in (env.view, env.probes, env.text_observation, env.observation_space,
                     env.action_space):  # fmt: skip
            expect(UnknownAgentError, "unknown agent.*the agents are player_0", call, agent)
    live = list(env.agents)
    expect(IllegalActionError, "exactly the live agents", env.step, {"player_99": 0})
    expect(IllegalActionError, "exactly the live agents", env.step, {})
    expect(IllegalActionError, r"a joint action is a dict", env.step, 0)
    for action in BAD_ACTIONS:
        expect(IllegalActionError, r"action|integer|range|illegal", env.step,
               dict.fromkeys(live, action))  # fmt: skip
    assert env.agents == live  # nothing changed
    while env.agents:
        env.step({a: env.action_space(a).sample() for a in env.agents})
    expect(IllegalActionError, r"over.*reset\(\)", env.step, dict.fromkeys(live, 0))


VIEWS = [s.id for s in single_agent_specs()]


@pytest.mark.parametrize("view", VIEWS)
def test_gymnasium_view_misuse(view: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = gymnasium.make(view).unwrapped
    expect(ResetNeeded, r"reset\(\)", env.step, 0)
    env.reset(seed=0)
    for action in BAD_ACTIONS:
        expect(IllegalActionError, r"action|integer|range|illegal", env.step, action)
    done = False
    while not done:
        _, _, term, trunc, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        done = term or trunc
    expect(IllegalActionError, r"over.*reset\(\)", env.step, 0)


def test_unknown_agent_errors_work_as_key_and_value_errors() -> None:
    """Code that catches KeyError (a mapping lookup) or ValueError (a bad argument) keeps working."""
    env = GAMES[0].load().raw_env()
    env.reset(seed=0)
    for kind in (KeyError, ValueError):
        with pytest.raises(kind):
            env.observation_space("player_99")
    assert issubclass(UnknownAgentError, KeyError) and issubclass(ResetNeeded, RuntimeError)
