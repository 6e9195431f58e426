"""Shared helpers of the registry-derived conformance tests.

Every conformance test is parametrised over :data:`tom_envs.registration.GAMES` (ids = the game
name) or :func:`tom_envs.registration.single_agent_specs` (ids = the Gymnasium id), so a game gets
the whole suite just by being added to ``GAMES``. Nothing here knows about a particular game.

Helpers:

* ``all_games`` / ``parallel_games`` / ``single_agents``: the parametrize markers.
* :func:`make_aec`, :func:`make_parallel` (through ``pettingzoo.make``), :func:`make_raw`,
  :func:`make_raw_parallel` (the module's ``raw_env`` / ``parallel_env`` with the spec's kwargs).
* :func:`play_aec_episode`, :func:`play_parallel_episode`, :func:`rules_episode`: seeded
  random-legal play through the AEC API, the Parallel API and the pure rules engine.
* :func:`freeze` / :func:`assert_same`: exact structural comparison of nested data (numpy arrays
  compared by dtype, shape and bytes), with a message naming the first difference.
* :func:`aec_snapshot` / :func:`parallel_snapshot`: everything observable about an env, to check
  that a rejected action left no trace.

Test modules import these helpers as ``from conformance_helpers import ...``: this module registers
itself under that unique name, because pytest drops ``sys.modules["conftest"]`` whenever it loads
another ``conftest.py`` (e.g. one in ``tests/games/<game>/``), which would break
``from conftest import ...``.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pettingzoo
import pytest

import tom_envs  # noqa: F401  (importing registers every id with PettingZoo and Gymnasium)
from tom_envs.core.game import SIMULTANEOUS, GameBundle
from tom_envs.registration import GAMES, GameSpec, SingleAgentSpec, single_agent_specs

sys.modules.setdefault("conformance_helpers", sys.modules[__name__])

GAME_SPECS: tuple[GameSpec, ...] = tuple(GAMES)
PARALLEL_SPECS: tuple[GameSpec, ...] = tuple(s for s in GAMES if s.parallel)
SINGLE_AGENT_SPECS: tuple[SingleAgentSpec, ...] = tuple(single_agent_specs())

#: ``max_cycles`` used for games whose rules impose no episode length (random play may not end).
DEFAULT_CYCLE_CAP = 200
#: Hard safety net on AEC iterations in one episode (a hung episode fails instead of hanging).
MAX_ITERATIONS = 200_000


def _game_id(spec: GameSpec) -> str:
    return spec.name


def _sa_id(spec: SingleAgentSpec) -> str:
    return spec.id


all_games = pytest.mark.parametrize("spec", GAME_SPECS, ids=_game_id)
parallel_games = pytest.mark.parametrize("spec", PARALLEL_SPECS, ids=_game_id)
single_agents = pytest.mark.parametrize("sa", SINGLE_AGENT_SPECS, ids=_sa_id)


# --------------------------------------------------------------------------- construction
_BUNDLES: dict[str, GameBundle] = {}


def bundle_of(spec: GameSpec) -> GameBundle:
    """The spec's configured game (cached by name: ``GameSpec`` holds a dict, so is unhashable)."""
    if spec.name not in _BUNDLES:
        _BUNDLES[spec.name] = spec.load().make_bundle(**spec.kwargs)
    return _BUNDLES[spec.name]


def default_max_cycles(spec: GameSpec) -> int | None:
    """The spec's ``max_cycles``, or a cap when neither the spec nor the rules bound an episode."""
    if spec.max_cycles is not None:
        return spec.max_cycles
    return DEFAULT_CYCLE_CAP if bundle_of(spec).game.max_steps is None else None


def _with_cap(spec: GameSpec, kwargs: dict[str, Any]) -> dict[str, Any]:
    out = dict(kwargs)
    out.setdefault("max_cycles", default_max_cycles(spec))
    return out


def make_aec(spec: GameSpec, **kwargs: Any) -> Any:
    """``pettingzoo.make("aec", spec.id, ...)`` (order-enforcing wrapper included)."""
    kw = _with_cap(spec, kwargs)
    max_cycles = kw.pop("max_cycles")
    return pettingzoo.make("aec", spec.id, max_cycles=max_cycles, **kw)


def make_parallel(spec: GameSpec, **kwargs: Any) -> Any:
    """``pettingzoo.make("parallel", spec.id, ...)``."""
    kw = _with_cap(spec, kwargs)
    max_cycles = kw.pop("max_cycles")
    return pettingzoo.make("parallel", spec.id, max_cycles=max_cycles, **kw)


def make_raw(spec: GameSpec, **kwargs: Any) -> Any:
    """The unwrapped AEC env: ``spec.load().raw_env(**spec.kwargs)``."""
    return spec.load().raw_env(**_with_cap(spec, {**spec.kwargs, **kwargs}))


def make_raw_parallel(spec: GameSpec, **kwargs: Any) -> Any:
    """The Parallel env straight from the game module."""
    return spec.load().parallel_env(**_with_cap(spec, {**spec.kwargs, **kwargs}))


# ------------------------------------------------------------------------------ play
def legal_choice(rng: np.random.Generator, mask: np.ndarray) -> int:
    """A uniformly random legal action from an action mask."""
    legal = np.flatnonzero(np.asarray(mask))
    assert legal.size > 0, f"the acting agent's action mask has no legal action: {mask}"
    return int(legal[rng.integers(legal.size)])


StepHook = Callable[[Any, Any], None]


def play_aec_episode(
    env: Any, rng: np.random.Generator, seed: int | None, on_step: StepHook | None = None
) -> int:
    """Reset ``env`` with ``seed`` and play random legal actions until every agent is done.

    ``on_step(env, action)`` is called after the reset (``action`` is ``None``) and after every
    ``step`` (including the dead steps). Returns the number of live moves.
    """
    env.reset(seed=seed)
    if on_step is not None:
        on_step(env, None)
    moves = 0
    for _ in env.agent_iter(MAX_ITERATIONS):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            action = None
        else:
            action = legal_choice(rng, obs["action_mask"])
            moves += 1
        env.step(action)
        if on_step is not None:
            on_step(env, action)
    assert not env.agents, f"episode did not end within {MAX_ITERATIONS} AEC iterations"
    return moves


def random_joint_action(
    rng: np.random.Generator, env: Any, obs: Mapping[str, Any]
) -> dict[str, int]:
    """A random legal action for every live agent of a Parallel env (agents in order)."""
    return {a: legal_choice(rng, obs[a]["action_mask"]) for a in env.agents}


ParallelHook = Callable[[Any, Any, Any], None]


def play_parallel_episode(
    env: Any, rng: np.random.Generator, seed: int | None, on_step: ParallelHook | None = None
) -> int:
    """Reset a Parallel env with ``seed`` and play random legal joint actions to the end.

    ``on_step(env, joint, result)`` is called after the reset (``joint`` is ``None`` and
    ``result`` is ``(obs, infos)``) and after every step (``result`` is the 5-tuple).
    Returns the number of joint steps.
    """
    obs, infos = env.reset(seed=seed)
    if on_step is not None:
        on_step(env, None, (obs, infos))
    steps = 0
    while env.agents:
        assert steps < MAX_ITERATIONS, f"episode did not end within {MAX_ITERATIONS} steps"
        joint = random_joint_action(rng, env, obs)
        result = env.step(joint)
        obs = result[0]
        steps += 1
        if on_step is not None:
            on_step(env, joint, result)
    return steps


@dataclasses.dataclass
class RulesStep:
    """One state of a rules-level episode and what was done from it (``None`` at the end)."""

    state: Any
    actions: dict[int, int] | None
    rewards: tuple[float, ...] | None


def rules_episode(
    bundle: GameBundle,
    seed: int,
    rng: np.random.Generator,
    max_steps: int | None = None,
) -> list[RulesStep]:
    """Random-legal play on the pure rules engine (``game.step``); chance comes from ``seed``."""
    game = bundle.game
    chance = np.random.default_rng(seed)
    state = game.initial_state(chance)
    limit = max_steps or game.max_steps or DEFAULT_CYCLE_CAP * game.num_players
    out: list[RulesStep] = []
    for _ in range(limit):
        if game.is_terminal(state):
            break
        players = game.current_players(state)
        actions = {}
        for p in players:
            legal = game.legal_actions(state, p)
            assert legal, f"player {p} must act but has no legal action"
            actions[p] = int(legal[rng.integers(len(legal))])
        result = game.step(state, actions, chance)
        out.append(RulesStep(state, actions, tuple(result.rewards)))
        state = result.state
    out.append(RulesStep(state, None, None))
    return out


def seeds(count: int, start: int = 0) -> range:
    """A fixed list of episode seeds: tests check the same episodes on every machine and load."""
    return range(start, start + count)


def is_simultaneous(spec: GameSpec) -> bool:
    """Whether the game's tags say simultaneous moves."""
    return bundle_of(spec).game.tags.dynamics == SIMULTANEOUS


# ------------------------------------------------------------------------ comparison
_PLAIN = (int, str, bytes, bool, type(None))


def freeze(x: Any) -> Any:
    """A hashable, exactly comparable form of nested data (arrays by dtype, shape and bytes)."""
    if type(x) in _PLAIN:
        return x
    if type(x) is tuple:
        try:  # fast path: plain nested tuples (histories) compare exactly as they are
            hash(x)
        except TypeError:
            pass
        else:
            if not _has_special(x):
                return x
    if isinstance(x, np.ndarray):
        return ("ndarray", x.dtype.str, x.shape, x.tobytes())
    if isinstance(x, np.generic):
        return ("np", x.dtype.str, x.tobytes())
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        fields = tuple((f.name, freeze(getattr(x, f.name))) for f in dataclasses.fields(x))
        return (type(x).__qualname__, fields)
    if isinstance(x, Mapping):
        items = [(freeze(k), freeze(v)) for k, v in x.items()]
        return ("map", tuple(sorted(items, key=lambda kv: repr(kv[0]))))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(freeze(v) for v in x))
    if isinstance(x, (set, frozenset)):
        return ("set", tuple(sorted((freeze(v) for v in x), key=repr)))
    if isinstance(x, float) and math.isnan(x):
        return ("nan",)
    return x


def _has_special(t: tuple) -> bool:
    """Whether a hashable tuple holds anything ``==`` would not compare exactly (floats, whose
    NaN is unequal to itself and ``1.0 == 1``; numpy scalars; dataclasses; nested such)."""
    for v in t:
        tv = type(v)
        if tv in _PLAIN:
            continue
        if tv is tuple:
            if _has_special(v):
                return True
            continue
        return True
    return False


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """Where ``a`` and ``b`` first differ (``None`` when equal under :func:`freeze`)."""
    if freeze(a) == freeze(b):
        return None
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        if set(a) != set(b):
            return f"{path or '<root>'}: keys {sorted(map(str, a))} != {sorted(map(str, b))}"
        for k in a:
            d = first_difference(a[k], b[k], f"{path}[{k!r}]")
            if d:
                return d
    if (
        dataclasses.is_dataclass(a)
        and dataclasses.is_dataclass(b)
        and type(a) is type(b)
        and not isinstance(a, type)
    ):
        for f in dataclasses.fields(a):
            d = first_difference(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")
            if d:
                return d
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        for i, (u, v) in enumerate(zip(a, b, strict=True)):
            d = first_difference(u, v, f"{path}[{i}]")
            if d:
                return d
    ra, rb = repr(a), repr(b)
    return f"{path or '<root>'}: {ra[:300]} != {rb[:300]}"


def assert_same(a: Any, b: Any, what: str) -> None:
    """Assert exact structural equality, naming the first difference."""
    diff = first_difference(a, b)
    assert diff is None, f"{what}: {diff}"


# ------------------------------------------------------------------------- snapshots
def aec_snapshot(env: Any, text: bool = False, rng: bool = True) -> dict[str, Any]:
    """Everything observable about an AEC env now (``env`` may be wrapped)."""
    u = env.unwrapped
    snap: dict[str, Any] = {
        "agent_selection": u.agent_selection,
        "agents": list(u.agents),
        "game_state": u.game_state,
        "state": u.state(),
        "obs": {a: u.observe(a) for a in u.agents},
        "rewards": dict(u.rewards),
        "cumulative_rewards": dict(u._cumulative_rewards),
        "terminations": dict(u.terminations),
        "truncations": dict(u.truncations),
        "infos": dict(u.infos),
    }
    if text:
        snap["text"] = {a: u.text_observation(a) for a in u.agents}
    if rng:
        snap["rng"] = u.np_random.bit_generator.state
    return snap


def parallel_snapshot(env: Any, text: bool = False, rng: bool = True) -> dict[str, Any]:
    """Everything observable about a Parallel env between steps."""
    u = env.unwrapped
    snap: dict[str, Any] = {
        "agents": list(u.agents),
        "game_state": u.game_state,
        "state": u.state(),
        "views": {a: u.view(a) for a in u.possible_agents},
        "vectors": {a: u.bundle.encoder.encode(u.view(a)) for a in u.possible_agents},
    }
    if text:
        snap["text"] = {a: u.text_observation(a) for a in u.possible_agents}
    if rng:
        snap["rng"] = u.np_random.bit_generator.state
    return snap
