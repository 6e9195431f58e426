"""Registry-derived API conformance: PettingZoo's and Gymnasium's own checkers plus the suite's.

Everything is parametrised over ``GAMES`` / ``single_agent_specs()``: a registered game gets these
tests for free. PettingZoo's checkers have known blind spots (``api_test`` plays one episode,
``parallel_seed_test`` compares one step, ``render_test`` insists on building a ``"human"`` env);
``test_determinism_fuzz.py`` covers the first two, and the render probe is adapted below.
"""

from __future__ import annotations

import importlib
import math
import pickle
import re
import subprocess
import sys
import warnings

import gymnasium
import numpy as np
import pettingzoo
import pytest
from conformance_helpers import (
    all_games,
    bundle_of,
    default_max_cycles,
    is_simultaneous,
    legal_choice,
    make_aec,
    make_parallel,
    make_raw,
    parallel_games,
    single_agents,
)
from gymnasium import spaces
from pettingzoo.test import (
    api_test,
    parallel_api_test,
    parallel_seed_test,
    render_test,
    seed_test,
    state_test,
)

from tom_envs.core.agents import Agent, RandomAgent
from tom_envs.core.contract import OPTIONAL_HOOKS, Bot, BotTable, GameModule
from tom_envs.core.game import GameTags, agent_names
from tom_envs.core.params import Param
from tom_envs.registration import GAMES, NAMESPACE, game_spec, single_agent_specs
from tom_envs.single_agent import SingleAgentEnv

# PettingZoo's checkers warn about perfectly valid things (all-zero first observations, Dict
# observation spaces); those warnings are not findings.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

MODULE_API = ("raw_env", "env", "parallel_env", "make_bundle", "bot_table")
TAG_VALUES = {
    "chance": {"deterministic", "stochastic"},
    "information": {"perfect", "imperfect"},
    "utility": {"zero_sum", "general_sum", "identical"},
}


# ------------------------------------------------------------------------------ registry
def test_registry_is_consistent() -> None:
    assert GAMES, "no game is registered"
    names = [s.name.lower() for s in GAMES]
    assert len(set(names)) == len(names), f"duplicate game names (case-insensitive): {names}"
    ids = [s.id for s in GAMES]
    assert len(set(ids)) == len(ids)
    sa_ids = [s.id for s in single_agent_specs()]
    assert len(set(sa_ids)) == len(sa_ids), "two single-agent views share a Gymnasium id"
    assert not set(sa_ids) & set(ids)


@all_games
def test_spec_and_module(spec) -> None:
    assert re.fullmatch(r"[A-Z][A-Za-z0-9]*", spec.name), spec.name
    assert spec.id == f"{NAMESPACE}/{spec.name}-v{spec.version}"
    for key in (spec.id, spec.name, spec.name.upper(), f"{spec.name}-v{spec.version}"):
        assert game_spec(key) == spec
    mod = spec.load()
    assert isinstance(mod, GameModule), f"{spec.module} does not satisfy the GameModule contract"
    for attr in MODULE_API:
        assert callable(getattr(mod, attr, None)), f"{spec.module} lacks {attr}()"
    assert isinstance(mod.NAME, str) and mod.NAME
    assert isinstance(mod.PARAMS, tuple) and all(isinstance(p, Param) for p in mod.PARAMS)
    for hook in OPTIONAL_HOOKS:
        assert getattr(mod, hook, None) is None or callable(getattr(mod, hook))
    for fn in (mod.raw_env, mod.env, mod.parallel_env):  # module functions: pickled by name
        assert pickle.loads(pickle.dumps(fn)) is fn
    if not spec.parallel:
        with pytest.raises(ValueError, match="no Parallel version"):
            mod.parallel_env(**spec.kwargs)
    assert spec.id in pettingzoo.aec_registry
    assert (spec.id in pettingzoo.parallel_registry) == spec.parallel
    # A Parallel version exists exactly for simultaneous-move games.
    assert spec.parallel == is_simultaneous(spec)
    for agent in spec.demo_agents:
        assert isinstance(agent, str) and agent


@all_games
def test_game_facts(spec) -> None:
    game = bundle_of(spec).game
    assert isinstance(game.tags, GameTags)
    for attr, allowed in TAG_VALUES.items():
        assert getattr(game.tags, attr) in allowed, f"tags.{attr}={getattr(game.tags, attr)!r}"
    assert isinstance(game.num_players, int) and game.num_players >= 1
    assert isinstance(game.num_actions, int) and game.num_actions >= 1
    lo, hi = game.reward_range
    assert lo <= hi and not math.isnan(lo) and not math.isnan(hi)
    assert game.max_steps is None or (isinstance(game.max_steps, int) and game.max_steps >= 1)


@all_games
def test_spaces_match_the_bundle(spec) -> None:
    env = make_raw(spec)
    bundle = env.bundle
    game, enc = bundle.game, bundle.encoder
    assert env.possible_agents == bundle.agents == agent_names(game.num_players)
    assert env.metadata["name"] and "ansi" in env.metadata["render_modes"]
    for agent in env.possible_agents:
        assert env.observation_space(agent) is env.observation_space(agent)
        assert env.action_space(agent) is env.action_space(agent)
        obs_space = env.observation_space(agent)
        assert isinstance(obs_space, spaces.Dict)
        assert set(obs_space.spaces) == {"observation", "action_mask"}
        box = obs_space["observation"]
        assert isinstance(box, spaces.Box) and box.dtype == np.float32
        assert box.shape == tuple(enc.observation_shape)
        assert np.all(box.low == enc.low) and np.all(box.high == enc.high)
        mask = obs_space["action_mask"]
        assert mask.shape == (game.num_actions,) and mask.dtype == np.int8
        act = env.action_space(agent)
        assert isinstance(act, spaces.Discrete) and act.n == game.num_actions
    assert env.state_space.shape == tuple(enc.state_shape)
    assert env.state_space.dtype == np.float32


@all_games
def test_bots_and_populations(spec) -> None:
    table = spec.load().bot_table(**spec.kwargs)
    assert isinstance(table, BotTable)
    bundle = bundle_of(spec)
    names = table.names()
    assert names and len(set(names)) == len(names)
    for bot in table.bots:
        assert isinstance(bot, Bot)
        agent = table.make(bot.name, bundle)
        assert isinstance(agent, Agent), f"bot {bot.name!r} does not implement the Agent protocol"
        assert table.make(bot.name, bundle) is not agent, "a bot factory must build a new agent"
        desc = table.describe(bot.name)
        assert isinstance(desc, str) and desc.strip(), f"bot {bot.name!r} has no description"
    for pop, members in table.populations.items():
        assert members, f"population {pop!r} is empty"
        assert set(members) <= set(names), f"population {pop!r} names unknown bots"
    with pytest.raises(KeyError, match=re.escape(repr(names[0]))):
        table.make("no_such_bot", bundle)
    # the static names registration lists (without importing the game) are the table's
    assert spec.bots == tuple(names), f"GameSpec(bots=...) of {spec.name} != its bot_table"
    sa_bots = [sa.bot for sa in single_agent_specs() if sa.game == spec]
    assert sa_bots == names, "every bot must have a single-agent view"


def test_import_registers_without_importing_any_game() -> None:
    """``import tom_envs`` (which registers every id) imports no game module and not networkx."""
    script = (
        "import sys, tom_envs, pettingzoo, gymnasium\n"
        "assert 'tom_envs/Hanabi-v0' in pettingzoo.aec_registry\n"
        "assert 'tom_envs/PrisonersDilemmaVsTitForTat-v0' in gymnasium.registry\n"
        "games = sorted(m for m in sys.modules if m.startswith('tom_envs.games.'))\n"
        "print(games, 'networkx' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[] False", out.stdout


def test_bot_table_validates_and_names_the_bots() -> None:
    def bot(name: str) -> Bot:
        return Bot(name, lambda bundle: RandomAgent(), "d")

    table = BotTable((bot("a"), bot("b")), {"both": ["a", "b"]}, game="G")
    assert table.names() == ["a", "b"] and "a" in table and "c" not in table
    assert table.populations == {"both": ("a", "b")} and table.population("both") == ("a", "b")
    assert table.describe("b") == "d"
    with pytest.raises(KeyError, match=r"unknown G bot 'c'; choose from \['a', 'b'\]"):
        table.describe("c")
    with pytest.raises(KeyError, match="no population 'x'"):
        table.population("x")
    with pytest.raises(TypeError):
        table.populations["new"] = ("a",)  # read-only
    with pytest.raises(ValueError, match="unique"):
        BotTable((bot("a"), bot("a")))
    with pytest.raises(ValueError, match="unknown bots"):
        BotTable((bot("a"),), {"p": ("a", "z")})
    with pytest.raises(ValueError, match="empty"):
        BotTable((bot("a"),), {"p": ()})


# ---------------------------------------------------------------------------- PettingZoo
#: PettingZoo's stock checkers, unchanged: each API's ``api_test`` (on an env) and ``seed_test``
#: (on a constructor), with the cycles each plays; the Parallel ones for the Parallel games.
STOCK_CHECKERS = {
    "api_test": (api_test, make_aec, False, 1000),
    "seed_test": (seed_test, make_aec, True, 500),
    "parallel_api_test": (parallel_api_test, make_parallel, False, 1000),
    "parallel_seed_test": (parallel_seed_test, make_parallel, True, 500),
}


@pytest.mark.parametrize(
    ("checker", "spec"),
    [
        pytest.param(name, spec, id=f"{name}-{spec.name}")
        for name in STOCK_CHECKERS
        for spec in GAMES
        if spec.parallel or not name.startswith("parallel_")
    ],
)
def test_pettingzoo_stock_checker(checker, spec) -> None:
    check, make, constructor, cycles = STOCK_CHECKERS[checker]
    check((lambda: make(spec)) if constructor else make(spec), num_cycles=cycles)


@all_games
def test_pettingzoo_render_test(spec) -> None:
    # PettingZoo's stock test, unchanged: "human" (a window or, without a display, the text on
    # stdout; returns None), "ansi" and "rgb_array" on every step of a short episode.
    render_test(
        lambda render_mode=None: make_aec(spec, render_mode=render_mode, max_cycles=3),
        custom_tests={"ansi": lambda res: isinstance(res, str) and bool(res)},
    )


@all_games
def test_render_modes(spec) -> None:
    env = make_aec(spec, render_mode="ansi")
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    for i, agent in enumerate(env.agent_iter()):
        text = env.render()
        assert isinstance(text, str) and text.strip()
        if i >= 20:
            break
        _, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else legal_choice(rng, env.observe(agent)["action_mask"]))
    env.close()
    quiet = make_aec(spec)
    quiet.reset(seed=0)
    assert quiet.render() is None
    with pytest.warns(UserWarning, match="not supported"):
        unsupported = make_raw(spec, render_mode="rgb_array_unsupported")
    assert unsupported.render_mode is None


def _joint_step_counter(env):
    """Counts joint steps of an AEC env from the rules (``current_players`` at each joint start)."""
    u = env.unwrapped
    pending = {"left": len(u.game.current_players(u.game_state)), "joint": 0, "moves": 0}

    def on_move() -> None:
        pending["moves"] += 1
        pending["left"] -= 1
        if pending["left"] == 0:
            pending["joint"] += 1
            if not u.game.is_terminal(u.game_state):
                pending["left"] = len(u.game.current_players(u.game_state))

    return pending, on_move


@all_games
@pytest.mark.parametrize("k", [1, 3])
def test_max_cycles_aec(spec, k) -> None:
    """``max_cycles=k`` truncates after exactly k cycles (joint steps if simultaneous, else
    rounds of moves), unless the rules end the episode first."""
    game = bundle_of(spec).game
    env = make_aec(spec, max_cycles=k)
    rng = np.random.default_rng(k)
    for seed in (0, 1):
        env.reset(seed=seed)
        counter, on_move = _joint_step_counter(env)
        ended = None
        for agent in env.agent_iter(100_000):
            _, _, term, trunc, _ = env.last()
            if term or trunc:
                if ended is None:
                    ended = (term, trunc)
                    cycles = (
                        counter["joint"] if is_simultaneous(spec)
                        else counter["moves"] // game.num_players
                    )
                    if trunc:
                        assert not term
                        assert cycles == k, f"truncated after {cycles} cycles, max_cycles={k}"
                    else:
                        assert cycles <= k
                        assert game.is_terminal(env.unwrapped.game_state)
                env.step(None)
                continue
            assert ended is None, "an agent acted after the episode ended"
            env.step(legal_choice(rng, env.observe(agent)["action_mask"]))
            on_move()
        assert ended is not None and not env.agents


@parallel_games
@pytest.mark.parametrize("k", [1, 3])
def test_max_cycles_parallel(spec, k) -> None:
    game = bundle_of(spec).game
    env = make_parallel(spec, max_cycles=k)
    rng = np.random.default_rng(k)
    for seed in (0, 1):
        obs, _ = env.reset(seed=seed)
        steps = 0
        while env.agents:
            joint = {a: legal_choice(rng, obs[a]["action_mask"]) for a in env.agents}
            obs, _, terms, truncs, _ = env.step(joint)
            steps += 1
            assert steps <= k, f"no truncation after max_cycles={k} steps"
        assert not any(ob["action_mask"].any() for ob in obs.values()), "done agents' masks"
        if any(truncs.values()):
            assert steps == k and all(truncs.values()) and not any(terms.values())
        else:
            assert all(terms.values()) and game.is_terminal(env.unwrapped.game_state)


@all_games
def test_default_max_cycles_comes_from_the_spec(spec) -> None:
    env = pettingzoo.make("aec", spec.id).unwrapped
    assert env.max_cycles == spec.max_cycles
    assert make_aec(spec).unwrapped.max_cycles == default_max_cycles(spec)


@parallel_games
def test_pettingzoo_state_test(spec) -> None:
    state_test(make_aec(spec), make_parallel(spec), num_cycles=50)


@all_games
def test_state_space_aec(spec) -> None:
    """The AEC half of PettingZoo's state_test, which also applies to sequential games."""
    st = importlib.import_module("pettingzoo.test.state_test")
    env = make_aec(spec)
    st.test_state_space(env)
    env.reset(seed=0)
    assert env.state_space.contains(env.state())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rng = np.random.default_rng(0)
        env.reset(seed=0)
        for agent in env.agent_iter(200):
            _, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else legal_choice(rng, env.observe(agent)["action_mask"]))
            assert env.state_space.contains(env.state())


# ----------------------------------------------------------------------------- Gymnasium
def test_every_single_agent_view_is_registered() -> None:
    for sa in single_agent_specs():
        assert sa.id in gymnasium.registry, sa.id
        assert sa.id.startswith(f"{NAMESPACE}/{sa.game.name}Vs")


@single_agents
def test_gymnasium_random_legal_rollout(sa) -> None:
    env = gymnasium.make(sa.id)
    inner: SingleAgentEnv = env.unwrapped
    game = inner.bundle.game
    rng = np.random.default_rng(0)
    for seed in (0, 1):
        obs, info = env.reset(seed=seed)
        steps = 0
        while True:
            assert env.observation_space.contains(obs)
            mask = info["action_mask"]
            assert mask.dtype == np.int8 and mask.shape == (game.num_actions,)
            assert mask.sum() >= 1
            assert np.array_equal(inner.action_masks(), mask.astype(bool))
            action = legal_choice(rng, mask)
            if steps % 10 == 0:
                text = inner.text_observation()
                assert set(text.legal_actions) == set(np.flatnonzero(mask).tolist())
                assert inner.parse_action(text.legal_actions[action]).action == action
            obs, reward, term, trunc, info = env.step(action)
            steps += 1
            assert isinstance(reward, float) and math.isfinite(reward)
            if term or trunc:
                assert not info["action_mask"].any()
                break
            if game.max_steps is not None:
                assert steps < game.max_steps, "the learner acted more than max_steps times"
            assert steps < 100_000
        assert env.observation_space.contains(obs)


@all_games
def test_single_agent_env_for_every_seat(spec) -> None:
    """``SingleAgentEnv`` works with the learner in any seat, not only the registered seat 0."""
    game = bundle_of(spec).game
    for seat in range(game.num_players):
        env = SingleAgentEnv(spec.name, partners="random", seat=seat)
        obs, info = env.reset(seed=seat)
        rng = np.random.default_rng(seat)
        for _ in range(100_000):
            obs, reward, term, trunc, info = env.step(legal_choice(rng, info["action_mask"]))
            assert env.observation_space.contains(obs) and math.isfinite(reward)
            if term or trunc:
                break
        assert term or trunc
    with pytest.raises(ValueError):
        SingleAgentEnv(spec.name, seat=game.num_players)
