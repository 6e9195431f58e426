"""The numpy batch engine computes what the rules and the encoder compute, env by env."""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.games.overcooked.encode import OvercookedEncoder
from tom_envs.games.overcooked.parity import greedy_policy, record_episode, uniform_policy
from tom_envs.games.overcooked.rules import OvercookedGame
from tom_envs.games.overcooked.vector import OvercookedVectorEnv


@pytest.mark.parametrize(
    ("layout", "cooking", "observation"),
    [("cramped_room", "auto", "both"), ("forced_coordination", "interact", "both"),
     ("counter_circuit", "auto", "features"), ("asymmetric_advantages", "auto", "lossless")],
)  # fmt: skip
def test_vector_env_matches_the_rules_and_the_encoder(layout, cooking, observation) -> None:
    B, T = 4, 200
    venv = OvercookedVectorEnv(
        B, layout=layout, cooking=cooking, observation=observation, horizon=T
    )
    game, enc = OvercookedGame(venv.config), OvercookedEncoder(venv.config)
    seqs = [
        record_episode(
            venv.config, greedy_policy(venv.config, 0.1) if i % 2 else uniform_policy, i
        )[0]
        for i in range(B)
    ]
    obs = venv.reset(seed=0)
    states = [game.initial_state(np.random.default_rng(0)) for _ in range(B)]
    for i in range(B):
        for p in (0, 1):
            assert np.array_equal(obs[i, p], enc.encode(game.observe(states[i], p)))
    total = 0.0
    for t in range(T):
        joint = np.array([seqs[i][t] for i in range(B)])
        obs, rewards, terminated, truncated = venv.step(joint)
        done = bool(terminated.all())
        assert done == (t == T - 1) and terminated.any() == done and not truncated.any()
        for i in range(B):
            states[i], r, _ = game.transition(states[i], *seqs[i][t])
            assert rewards[i, 0] == rewards[i, 1] == r
            total += r
            if done:
                continue
            assert venv.state(i) == states[i]
            if t % 3 == 0:
                for p in (0, 1):
                    assert np.array_equal(obs[i, p], enc.encode(game.observe(states[i], p)))
    assert total > 0  # the greedy sequences deliver soups
    assert venv.t == 0 and (venv.pot_n == 0).all()  # reset automatically at the horizon


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
