"""MAPPO on the batched engines (baselines/mappo_batched.py): the batched collector's rollouts are
the per-env collector's, bit for bit, on a fixed seed; the Overcooked event rewards are the rules';
the engine is chosen (or refused) for stated reasons; training on it learns.

Tiny budgets only; the real runs are in docs/results/baselines_rl.md.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from test_mappo import tiny  # noqa: E402  (the small MAPPO settings of tests/baselines/test_mappo.py)

from tom_baselines import mappo, mappo_batched, mappo_policy  # noqa: E402
from tom_envs.games.overcooked.rules import OvercookedConfig, OvercookedGame  # noqa: E402
from tom_envs.registration import game_spec  # noqa: E402


def nets(collector) -> tuple:
    env = collector.envs[0]
    meta = {"num_players": collector.game.num_players, "num_actions": collector.game.num_actions,
            "obs_dim": int(np.prod(env.bundle.encoder.observation_shape)),
            "state_dim": int(np.prod(env.state_space.shape)), "hidden": 32, "recurrent": False,
            "actor_agent_id": False}  # fmt: skip
    torch.manual_seed(0)
    return mappo_policy.build_nets(meta)


def rollouts(args: mappo.Args, game: str, kwargs: dict, updates: int) -> tuple[list, list]:
    spec = game_spec(game)
    collector = mappo.make_collector(args, spec, {**spec.kwargs, **kwargs}, {})
    actor, critic = nets(collector)
    vn = mappo_policy.ValueNorm()
    torch.manual_seed(1)
    datas, finished = [], []
    for _ in range(updates):
        datas.append(collector.collect(actor, critic, vn))
        finished.append(collector.pop_finished())
    return datas, finished, collector


def assert_same(a: tuple, b: tuple) -> None:
    (da, fa), (db, fb) = a, b
    for (data_a, steps_a), (data_b, steps_b) in zip(da, db, strict=True):
        assert steps_a == steps_b
        assert set(data_a) == set(data_b)
        for key in data_a:
            assert np.array_equal(data_a[key], data_b[key]), key
    assert fa == fb


def test_bomb_batched_rollouts_equal_the_per_env_collectors(tmp_path) -> None:
    """Seeded missions: the same episodes, observations, actions, rewards, closes, carry-overs."""
    kw = {"probes": "none", "shaping": True}
    runs = {}
    for engine in ("envs", "batched-seeded"):
        args = tiny(tmp_path, game="BombDefusal", engine=engine, num_envs=5, num_steps=60)
        datas, finished, collector = rollouts(args, "BombDefusal", kw, updates=3)
        runs[engine] = (datas, finished)
        assert type(collector).__name__ == ("Collector" if engine == "envs" else "BatchedCollector")
    assert_same(runs["envs"], runs["batched-seeded"])
    datas = [d for d, _ in runs["envs"][0]]
    assert sum(d["done"].sum() for d in datas) >= 5  # episodes end, rewards flow
    assert sum(d["reward"].sum() for d in datas) > 0
    assert sum(len(f) for f in runs["envs"][1]) >= 5


def test_overcooked_batched_rollouts_equal_the_per_env_collectors(tmp_path) -> None:
    kw = {"layout": "cramped_room", "observation": "features", "horizon": 25}
    events = ["potting_onion=3", "useful_plate=3", "soup_from_pot=5", "pickup_onion=0.5"]
    runs = {}
    for engine in ("envs", "batched"):
        args = tiny(tmp_path, game="Overcooked", engine=engine, num_envs=3, num_steps=40,
                    event_rewards=events)  # fmt: skip
        datas, finished, _ = rollouts(args, "Overcooked", kw, updates=2)
        runs[engine] = (datas, finished)
    assert_same(runs["envs"], runs["batched"])
    assert runs["envs"][0][0][0]["reward"].sum() > 0  # the shaped events were paid


def test_overcooked_event_counts_are_the_rules_events() -> None:
    """Random play, 16 kitchens x 400 steps: each event's weight is a distinct power of ten."""
    names = mappo_batched.OVERCOOKED_EVENTS
    for cooking in ("auto", "interact"):
        weights = {e: 10.0**i for i, e in enumerate(names)}
        venv = mappo_batched.EventCountingOvercooked(16, weights, layout="cramped_room",
                                                     cooking=cooking, horizon=400)  # fmt: skip
        game = OvercookedGame(OvercookedConfig(layout="cramped_room", cooking=cooking, horizon=400))
        venv.reset(seed=0)
        states = [game.initial_state(np.random.default_rng(0)) for _ in range(16)]
        rng = np.random.default_rng(1)
        seen = set()
        for _ in range(399):
            # interact often so that events happen under random play
            a = np.where(rng.random((16, 2)) < 0.4, 5, rng.integers(0, 5, (16, 2)))
            venv.step(a)
            for i in range(16):
                states[i], _, ev = game.transition(states[i], int(a[i, 0]), int(a[i, 1]))
                want = sum(weights.get(e.rpartition(":")[2], 0.0) for e in ev)
                seen |= {e.rpartition(":")[2] for e in ev}
                assert venv.bonus[i] == want, (i, ev)
        expected = {"pickup_onion", "pickup_plate", "potting_onion"}
        assert expected <= seen, seen


def test_engine_choice_is_explicit(tmp_path) -> None:
    spec = game_spec("BombDefusal")
    auto = tiny(tmp_path, game="BombDefusal")
    assert isinstance(mappo.make_collector(auto, spec, spec.kwargs, {}),
                      mappo_batched.BatchedCollector)  # fmt: skip
    partners = {1: "heuristic"}
    assert isinstance(mappo.make_collector(auto, spec, spec.kwargs, partners),
                      mappo.Collector)  # fmt: skip
    forced = tiny(tmp_path, game="BombDefusal", engine="batched")
    with pytest.raises(ValueError, match="self-play only"):
        mappo.make_collector(forced, spec, spec.kwargs, partners)
    with pytest.raises(ValueError, match="no chat"):
        mappo.make_collector(forced, spec, {"symbolic_messages": True}, {})
    rps = game_spec("RockPaperScissors")
    with pytest.raises(ValueError, match="has no batched engine"):
        mappo.make_collector(tiny(tmp_path, engine="batched"), rps, rps.kwargs, {})
    with pytest.raises(ValueError, match="engine must be one of"):
        mappo.make_collector(tiny(tmp_path, engine="jax"), spec, spec.kwargs, {})


def test_batched_training_learns_a_small_mission(tmp_path) -> None:
    """One single-phase bomb, 4 rounds: the team's return rises over a few updates."""
    args = tiny(tmp_path, game="BombDefusal", env_kwargs=["bomb_phases='1'", "max_rounds=4"],
                num_envs=64, num_steps=16, total_steps=64 * 16 * 25, update_epochs=4,
                num_minibatches=4, hidden=64, lr=2e-3, anneal_lr=False, seed=3)  # fmt: skip
    summary = mappo.train(args)
    assert summary["engine"] == "batched (batched missions)"
    import csv

    with open(summary["curve_csv"]) as fh:
        rows = [r for r in csv.DictReader(fh) if r.get("return_mean")]
    first = np.mean([float(r["return_mean"]) for r in rows[:3]])
    last = np.mean([float(r["return_mean"]) for r in rows[-3:]])
    assert last >= first + 2.0, (first, last)  # of at most 10 points per episode
    ckpt = torch.load(summary["checkpoint"], weights_only=True)
    assert ckpt["meta"]["engine"] == "batched (batched missions)"
    assert ckpt["meta"]["resolved_env_kwargs"]["bomb_phases"] in ([1], (1,), "1")


def test_overcooked_event_counts_from_random_states() -> None:
    """From random states (any held item, soups on counters, ready pots): each event's count is
    the rules' events, one step from there; soups taken from a pot are ``soup_from_pot`` and
    ``pickup_soup``, soups taken off a counter ``pickup_soup`` only (both cases reached)."""
    names = mappo_batched.OVERCOOKED_EVENTS
    weights = {e: 10.0**i for i, e in enumerate(names)}
    B, cook_time = 64, 4
    venv = mappo_batched.EventCountingOvercooked(B, weights, layout="cramped_room",
                                                 horizon=60, cook_time=cook_time)  # fmt: skip
    game = OvercookedGame(venv.config)
    floor = np.array([venv._cell_of[p] for p in venv.layout.floor])
    rng = np.random.default_rng(0)
    seen: dict[str, int] = {}
    for trial in range(12):
        venv.reset(seed=trial)
        venv.pos[:] = [rng.choice(floor, 2, replace=False) for _ in range(B)]
        venv.facing[:] = rng.integers(4, size=(B, 2))
        venv.held[:] = rng.integers(6, size=(B, 2))
        venv.pot_n[:] = rng.integers(4, size=venv.pot_n.shape)
        venv.pot_tick[:] = np.where(venv.pot_n > 0, rng.integers(-1, cook_time + 1,
                                                                 venv.pot_n.shape), -1)  # fmt: skip
        venv.counters[:] = rng.integers(6, size=venv.counters.shape)
        states = [venv.state(i) for i in range(B)]
        actions = np.where(rng.random((B, 2)) < 0.7, 5, rng.integers(5, size=(B, 2)))
        venv.step(actions)
        for i in range(B):
            _, _, ev = game.transition(states[i], int(actions[i, 0]), int(actions[i, 1]))
            names_i = [e.rpartition(":")[2] for e in ev]
            assert venv.bonus[i] == sum(weights[e] for e in names_i), (trial, i, ev)
            for e in names_i:
                seen[e] = seen.get(e, 0) + 1
    assert seen.get("soup_from_pot", 0) > 0
    assert seen.get("pickup_soup", 0) > seen["soup_from_pot"]  # counter pickups too
