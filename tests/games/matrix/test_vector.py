"""The batched matrix engine beyond the registry-driven parity test (tests/test_vector_parity.py:
observations, masks, rewards and episode ends against the AEC env, every bot, windows): read-only
views, known values and the vectorised partners, which play what the bots play."""

from __future__ import annotations

import numpy as np
import pytest
from test_vector_reference import Reference

from tom_envs.core.vector import GymVectorEnv
from tom_envs.games.matrix.bots import bot_table
from tom_envs.games.matrix.env import make_bundle, raw_env
from tom_envs.games.matrix.vector import MatrixVectorEnv


def test_observations_are_read_only_views_and_the_gym_adapter_copies_them() -> None:
    venv = MatrixVectorEnv(4, game="rps", horizon=5)
    obs = venv.reset(seed=0)
    assert obs is not None
    with pytest.raises(ValueError):
        obs[0, 0, 0] = 1.0
    env = GymVectorEnv(MatrixVectorEnv(4, game="rps", horizon=5))
    first, _ = env.reset(seed=0)
    kept = first.copy()
    env.step(np.zeros(8, dtype=np.int64))
    assert np.array_equal(first, kept)  # the adapter's arrays are the caller's


def test_known_values() -> None:
    venv = MatrixVectorEnv(2, game="ibs", horizon=3, window=2)
    venv.reset()
    obs, rewards, _, _ = venv.step(np.array([[0, 0], [1, 0]]))
    assert obs is not None
    assert rewards.tolist() == [[10.0, 7.0], [0.0, 0.0]]
    # [t/T] + slot 0 (mine, partner's) + slot 1 (not played yet)
    assert obs[1, 0].tolist() == pytest.approx([1 / 3, 0, 1, 1, 0, 0, 0, 0, 0])
    assert obs[1, 1].tolist() == pytest.approx([1 / 3, 1, 0, 0, 1, 0, 0, 0, 0])
    obs, rewards, _, _ = venv.step(np.array([[1, 1], [1, 1]]))
    assert obs is not None
    assert rewards.tolist() == [[7.0, 10.0], [7.0, 10.0]]
    assert obs[1, 0].tolist() == pytest.approx([2 / 3, 0, 1, 0, 1, 0, 1, 1, 0])
    assert venv.scores.tolist() == [[17.0, 17.0], [7.0, 10.0]]


@pytest.mark.parametrize("game", ["rps", "ibs", "ipd"])
def test_vectorised_partners_play_what_the_bots_play(game) -> None:
    from tom_envs.games.matrix.bots import partner_names
    from tom_envs.games.matrix.rules import MatrixConfig
    from tom_envs.games.matrix.vector import MatrixPartner

    kw = {"game": game, "horizon": 8}
    bundle, table = make_bundle(**kw), bot_table(**kw)
    names = [x for x in partner_names(MatrixConfig(**kw)) if x != "random"]
    for name in names:
        B = 6
        agents = [[None, table.make(name, bundle)] for _ in range(B)]  # seat 0 plays at random
        ref = Reference(lambda: raw_env(**kw), agents, seeds=list(range(B)))
        venv = MatrixVectorEnv(B, **kw)
        partner = MatrixPartner(venv, name, seats=(1,))
        both = MatrixPartner(venv, name, seats=(0, 1))
        obs = venv.reset(seed=0)
        for i in range(B):
            ref.reset(i)
        for t in range(2 * 8 + 3):  # across automatic resets
            a = ref.actions()
            mine = partner(obs, venv.action_masks())
            assert np.array_equal(mine[:, 1], a[:, 1]), (name, t)
            assert np.array_equal(both(obs, venv.action_masks())[:, 1], a[:, 1])
            obs, _, term, _ = venv.step(a)
            ref.step(a)
            if term.any():
                for i in range(B):
                    ref.reset(i)


def test_random_partner_is_uniform_and_seeded() -> None:
    from tom_envs.games.matrix.vector import MatrixPartner

    venv = MatrixVectorEnv(3000, game="rps", horizon=5)
    obs = venv.reset()
    a = MatrixPartner(venv, "random", seed=1)(obs, venv.action_masks())
    b = MatrixPartner(venv, "random", seed=1)(obs, venv.action_masks())
    assert np.array_equal(a, b)
    counts = np.bincount(a[:, 1], minlength=3)
    assert (np.abs(counts - 1000) < 5 * np.sqrt(3000 * 2 / 9)).all()


def test_a_learner_against_tit_for_tat_through_the_gym_adapter() -> None:
    from tom_envs.games.matrix.vector import MatrixPartner

    engine = MatrixVectorEnv(4, game="ipd", horizon=10)
    env = GymVectorEnv(engine, seat=0, partner=MatrixPartner(engine, "tit_for_tat"))
    env.reset(seed=0)
    defect = np.array([0, 1, 0, 1])  # envs 1 and 3 defect every round, 0 and 2 cooperate
    rewards = np.stack([env.step(defect)[1] for _ in range(10)])
    assert (rewards[:, [0, 2]] == 8).all()  # mutual cooperation
    assert (rewards[0, [1, 3]] == 10).all() and (rewards[1:, [1, 3]] == 5).all()  # then punished
    # a new episode (autoreset): tit-for-tat opens with cooperation again
    assert env.step(defect)[1].tolist() == [8.0, 10.0, 8.0, 10.0]
