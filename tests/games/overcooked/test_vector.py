"""The batched Overcooked engine beyond the registry-driven parity test (tests/test_vector_parity.py:
observations, rewards and ends against the AEC env on bot and random play, layouts, cooking modes,
observation kinds, random starts): random states of every kind (held items, counters, pot contents
and ticks, urgency) and one step from each equal the rules' and the encoder's; action checks."""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.games.overcooked.encode import OvercookedEncoder
from tom_envs.games.overcooked.rules import OvercookedGame
from tom_envs.games.overcooked.vector import OvercookedVectorEnv


def test_vector_env_checks_actions_and_random_starts() -> None:
    venv = OvercookedVectorEnv(8, random_start=True, observations=False)
    venv.reset(seed=1)
    assert len({tuple(p) for p in venv.pos.tolist()}) > 1
    assert (venv.pos[:, 0] != venv.pos[:, 1]).all()
    with pytest.raises(ValueError):
        venv.step(np.zeros((8, 3), dtype=int))
    with pytest.raises(ValueError):
        venv.step(np.full((8, 2), 6))
    assert venv.step(np.zeros((8, 2), dtype=int))[0] is None


@pytest.mark.parametrize(
    "layout",
    ["cramped_room", "asymmetric_advantages", "coordination_ring", "forced_coordination",
     "counter_circuit"],
)  # fmt: skip
@pytest.mark.parametrize("cooking", ["auto", "interact"])
def test_vector_env_matches_the_rules_from_random_states(layout, cooking) -> None:
    """Random states: any held item, any item on any counter (soups of 1-3 onions included), any
    pot content and tick, times with and without urgency. The observations, and one step of
    random actions (interacting half the time) from there, equal the rules' and the encoder's."""
    B, horizon, cook_time = 64, 60, 4
    venv = OvercookedVectorEnv(B, layout=layout, cooking=cooking, horizon=horizon,
                               cook_time=cook_time)  # fmt: skip
    game, enc = OvercookedGame(venv.config), OvercookedEncoder(venv.config)
    floor = np.array([venv._cell_of[p] for p in venv.layout.floor])
    rng = np.random.default_rng(0)
    seen = {"urgent": 0, "soup_on_counter": 0, "ready_pot": 0, "reward": 0, "counters_full": 0}
    for trial in range(8):
        venv.reset(seed=trial)
        venv.t = int(rng.integers(horizon - 1))
        venv.pos[:] = [rng.choice(floor, 2, replace=False) for _ in range(B)]
        venv.facing[:] = rng.integers(4, size=(B, 2))
        venv.held[:] = np.where(rng.random((B, 2)) < 0.3, 5, rng.integers(6, size=(B, 2)))
        pots, counters = venv.pot_n.shape, venv.counters.shape
        venv.pot_n[:] = rng.integers(4, size=pots)
        venv.pot_tick[:] = np.where(venv.pot_n > 0, rng.integers(-1, cook_time + 1, pots), -1)
        venv.counters[:] = rng.integers(6, size=counters) * (rng.random(counters) < 0.5)
        if trial == 0:
            venv.counters[0] = 3 + np.arange(venv.K) % 3  # one kitchen with every counter full
        states = [venv.state(i) for i in range(B)]
        obs = venv._observe()
        for i, p in np.ndindex(B, 2):
            assert np.array_equal(obs[i, p], enc.encode(game.observe(states[i], p))), (trial, i)
        actions = np.where(rng.random((B, 2)) < 0.5, 5, rng.integers(5, size=(B, 2)))
        obs, rewards, terminated, _ = venv.step(actions)
        assert obs is not None and not terminated.any()
        for i in range(B):
            nxt, r, _ = game.transition(states[i], int(actions[i, 0]), int(actions[i, 1]))
            assert venv.state(i) == nxt and rewards[i, 0] == rewards[i, 1] == r, (trial, i)
            for p in (0, 1):
                assert np.array_equal(obs[i, p], enc.encode(game.observe(nxt, p))), (trial, i, p)
        seen["urgent"] += horizon - venv.t < 40
        seen["soup_on_counter"] += int((venv.counters >= 3).sum())
        seen["ready_pot"] += int((venv.pot_tick >= cook_time).sum())
        seen["reward"] += int((rewards > 0).sum())
        seen["counters_full"] += int((venv.counters > 0).all(axis=1).sum())
    assert all(seen.values()), seen  # the random states reached every case above
