"""Every registered batched engine computes what the AEC env computes, env by env, step by step.

Registry-driven: every :class:`~tom_envs.registration.GameSpec` with a ``vector`` engine is
checked, a new engine included, at the spec's own arguments and at the configurations of
:data:`CASES` (the branches of each engine: windows, scenarios, maps, layouts, player counts,
mission draws). In each case ``B`` engine envs run beside ``B`` AEC envs (``test_vector_reference
.Reference``) whose seats are played by the game's bots and random agents (every bot at every seat
across the envs, actions drawn through the Turn API); every step compares

* every seat's observation and mask (turn-based engines: the game's mask, the no-op for the
  waiting seats only, and the seat to act),
* the rewards of every seat, ``terminated``, ``truncated`` and, where an episode ended, its final
  observations (every seat),

and every episode the engine starts (autoreset) is replayed from ``engine.start_state(i)``. Where
a step draws chance, the reference draws the engine's outcome
(:meth:`~test_vector_reference.Reference.align_chance`), or the test fails: the engine's step is
then none of the rules' outcomes. The contract's attributes (the encoder, sizes, bounds, agents,
actions) are checked against the AEC env's spaces; ``max_cycles`` truncation against the AEC
env's. Fixed seeds; episodes are short (small horizons) so that each run crosses autoresets.

What a per-game test still proves beyond this (kept in ``tests/games/<game>/test_vector.py``):
distributions of the engines' own draws (decks, missions, the killer's roaming), random states
(Overcooked), known values, the vectorised partners, argument checks.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pytest
from test_vector_reference import Reference

from tom_envs.core.vector import BatchedEngine, VectorGame
from tom_envs.registration import GAMES, GameSpec

VECTOR_SPECS = [s for s in GAMES if s.vector]


class Case(NamedTuple):
    """One configuration of an engine, played beside the AEC env."""

    kw: dict[str, Any]  # game keyword arguments (over the spec's)
    B: int  # envs
    steps: int  # lockstep steps compared
    opts: dict[str, Any] | None = None  # engine options (missions=...)
    skip_bots: tuple[str, ...] = ()  # bots too slow here (planners on big missions)
    ends: bool = True  # episodes must end (and restart) inside the steps
    paid: bool = True  # some step must pay a reward


#: Per game, besides the spec's own configuration (first, with ``DEFAULT``'s size).
CASES: dict[str, list[Case]] = {
    "RockPaperScissors": [Case({"horizon": 9}, 12, 19), Case({"horizon": 5, "window": 20}, 8, 11)],
    "BattleOfSexes": [Case({"horizon": 7, "window": 3}, 12, 15)],
    "PrisonersDilemma": [Case({"horizon": 6, "window": 1, "include_round": False}, 12, 13)],
    "CollabCapture": [
        Case({"scenario": "both_closed", "thief_distance": "graph", "max_turns": 12}, 9, 40),
        Case({"scenario": "door12_closed", "swap_capture": False, "max_turns": 9}, 9, 30),
        Case({"scenario": "door34_closed", "starts": (5, 8, 3), "max_turns": 15}, 9, 40),
    ],
    "CollabEscape": [
        Case({"scenario": "together", "max_turns": 25}, 12, 60),
        Case({"scenario": "split", "max_turns": 12}, 9, 40),
        Case({"scenario": "together", "map": "prompt", "fixes_needed": 3, "max_turns": 20}, 9, 45),
        Case({"scenario": "split", "map": "prompt", "max_turns": None}, 9, 40),
    ],
    "Overcooked": [
        Case({"layout": "cramped_room", "cook_time": 3, "horizon": 45}, 6, 91),
        Case({"layout": "forced_coordination", "cooking": "interact", "horizon": 30}, 6, 61,
             paid=False),
        Case({"layout": "counter_circuit", "observation": "features", "horizon": 25}, 6, 51,
             paid=False),
        Case({"layout": "asymmetric_advantages", "observation": "lossless", "horizon": 20,
              "random_start": True}, 6, 41, paid=False),
        Case({"layout": "coordination_ring", "cook_time": 3, "horizon": 40}, 6, 81, paid=False),
    ],
    "Hanabi": [
        Case({"players": 3}, 6, 150),
        Case({"players": 4, "bomb_score": "stacks"}, 4, 120),
        Case({"players": 5}, 4, 120),
        Case({"players": 2, "colors": 2, "ranks": 3, "max_information_tokens": 3}, 6, 150),
        Case({"players": 3, "colors": 1, "ranks": 5, "hand_size": 2, "max_life_tokens": 1}, 6, 80),
    ],
    "BombDefusal": [
        Case({}, 6, 120, {"missions": "seeded"}),
        Case({"shaping": True, "wrong_tool": "explode"}, 6, 100),
        Case({"teammate_locations": False, "layout": "mturk"}, 6, 100),
        Case({"num_agents": 4, "colors": "red,green,blue,yellow", "bomb_phases": "1,2,3,4,4"}, 4,
             120, skip_bots=("cbs",)),
        Case({"map": "random", "map_seed": 3, "num_rooms": 7, "bomb_phases": "1,1,2,2,3,3,2,3",
              "max_rounds": 12}, 4, 120, {"missions": "seeded"}, skip_bots=("cbs",)),
    ],
}  # fmt: skip
#: The spec's own configuration: envs and steps (the games' own horizons are long: these runs
#: need not reach an episode's end; the cases above do).
DEFAULT = {"Hanabi": (6, 200), "BombDefusal": (6, 120), "Overcooked": (4, 60),
           "RockPaperScissors": (8, 101), "BattleOfSexes": (8, 101), "PrisonersDilemma": (8, 101)}
#: Bots left out of the reference's seats everywhere (too slow at every step of every env).
SLOW_BOTS: dict[str, tuple[str, ...]] = {"Overcooked": ("planner",)}


def _cases() -> list[Any]:
    out = []
    for spec in VECTOR_SPECS:
        B, steps = DEFAULT.get(spec.name, (8, 40))
        rows = [Case({}, B, steps, ends=False, paid=False), *CASES.get(spec.name, [])]
        out += [pytest.param(spec, case, id=f"{spec.name}-{k}") for k, case in enumerate(rows)]
    return out


def _setup(spec: GameSpec, kw: dict[str, Any], opts: dict[str, Any], B: int,
           skip: tuple[str, ...] = ()) -> tuple[Any, Reference]:  # fmt: skip
    """The engine (final observations kept) and the reference (bots and random agents). Seat
    ``p`` of env ``i`` plays name ``(i + p) % len(names)``: every one at every seat."""
    module = spec.load()
    kwargs = {**spec.kwargs, **kw}
    engine = spec.load_vector()(B, keep_final_obs=True, **kwargs, **opts)
    bundle, table = module.make_bundle(**kwargs), module.bot_table(**kwargs)
    skip = (*skip, *SLOW_BOTS.get(spec.name, ()))
    names = [None, *(n for n in table.names() if n not in skip)]
    n = bundle.game.num_players
    agents = [
        [table.make(names[(i + p) % len(names)], bundle) if names[(i + p) % len(names)] else None
         for p in range(n)] for i in range(B)
    ]  # fmt: skip
    cycles = {"max_cycles": opts["max_cycles"]} if "max_cycles" in opts else {}
    noop = engine.num_actions - 1 if engine.turn_based else None
    ref = Reference(lambda: module.raw_env(**kwargs, **cycles), agents, list(range(B)), noop)
    return engine, ref


def _start(engine: Any, ref: Reference, rows: Any) -> None:
    for i in rows:
        ref.reset(int(i), engine.start_state(int(i)))


def _check_contract(engine: Any, ref: Reference) -> None:
    env = ref.envs[0]
    agent = env.possible_agents[0]
    space = env.observation_space(agent)["observation"]
    assert isinstance(engine, BatchedEngine) and isinstance(engine, VectorGame)
    assert type(engine.encoder) is type(env.bundle.encoder)  # the game's own layout
    assert engine.encoder.observation_shape == space.shape == (engine.obs_size,)
    assert (engine.obs_low, engine.obs_high) == (float(space.low.min()), float(space.high.max()))
    assert tuple(engine.agents) == tuple(env.possible_agents)
    assert engine.num_agents == len(env.possible_agents)
    extra = 1 if engine.turn_based else 0  # the no-op
    assert engine.num_actions == env.game.num_actions + extra
    assert engine.turn_based == (env.game.tags.dynamics == "sequential")


def _compare_now(engine: Any, ref: Reference, obs: np.ndarray, t: int) -> None:
    r_obs, r_masks = ref.observe()
    masks = engine.action_masks()
    assert obs.dtype == np.float32 and np.array_equal(obs, r_obs), f"observations, step {t}"
    if engine.turn_based:
        assert np.array_equal(masks[:, :, :-1], r_masks), f"masks, step {t}"
        assert np.array_equal(masks[:, :, -1], ~r_masks.any(axis=2)), f"no-op, step {t}"
        assert np.array_equal(engine.current_player, ref.current_player()), f"seat, step {t}"
    else:
        assert np.array_equal(masks, r_masks), f"masks, step {t}"


def play_beside(engine: Any, ref: Reference, steps: int, stochastic: bool) -> dict[str, int]:
    """``steps`` lockstep steps of ``engine`` and ``ref`` with every comparison; counts."""
    seen = {"ends": 0, "truncations": 0, "rewarded": 0}
    obs = np.array(engine.reset(seed=7), copy=True)
    _start(engine, ref, range(engine.num_envs))
    for t in range(steps):
        _compare_now(engine, ref, obs, t)
        a = ref.actions()
        obs, rewards, term, trunc = engine.step(a)
        obs = np.array(obs, copy=True)
        done = term | trunc
        after = np.where(done[:, None, None], engine.final_obs, obs) if done.any() else obs
        if stochastic:
            for i in range(engine.num_envs):
                ref.align_chance(i, a, after[i], rewards[i], bool(term[i]))
        r_rew, r_term, r_trunc = ref.step(a)
        assert rewards.dtype == np.float64 and np.array_equal(rewards, r_rew), f"rewards, step {t}"
        assert np.array_equal(term, r_term), f"terminated, step {t}"
        assert np.array_equal(trunc, r_trunc), f"truncated, step {t}"
        if done.any():
            final, _ = ref.observe()
            assert np.array_equal(engine.final_obs[done], final[done]), f"final obs, step {t}"
            _start(engine, ref, np.flatnonzero(done))
        seen["ends"] += int(term.sum())
        seen["truncations"] += int(trunc.sum())
        seen["rewarded"] += int((rewards != 0).any(axis=1).sum())
    return seen


@pytest.mark.parametrize(("spec", "case"), _cases())
def test_engine_matches_the_aec_env(spec: GameSpec, case: Case) -> None:
    engine, ref = _setup(spec, case.kw, case.opts or {}, case.B, case.skip_bots)
    _check_contract(engine, ref)
    stochastic = ref.envs[0].game.tags.chance == "stochastic"
    seen = play_beside(engine, ref, case.steps, stochastic)
    assert seen["ends"] > 0 or not case.ends, seen  # episodes ended and restarted meanwhile
    assert seen["rewarded"] > 0 or not case.paid, seen  # and something was paid


@pytest.mark.parametrize("spec", VECTOR_SPECS, ids=[s.name for s in VECTOR_SPECS])
def test_max_cycles_truncates_as_the_aec_env(spec: GameSpec) -> None:
    engine, ref = _setup(spec, {}, {"max_cycles": 3}, 4)
    stochastic = ref.envs[0].game.tags.chance == "stochastic"
    steps = 3 * engine.num_agents if engine.turn_based else 3  # a cycle: every seat's move
    seen = play_beside(engine, ref, 2 * steps + 1, stochastic)
    assert seen["truncations"] > 0, seen  # (each step's truncations equal the AEC env's)
