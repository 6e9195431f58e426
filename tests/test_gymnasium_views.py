"""The Gymnasium single-agent views under the libraries that consume them, unmodified.

* Gymnasium's stock ``check_env`` (no check swapped out) on every registered single-agent id;
* the illegal-action policy: ``"raise"`` (the class default) refuses and changes nothing,
  ``"terminate"`` (the registered ids) ends the episode with the penalty and says so in ``info``;
  a value outside the action space raises under both;
* ``gymnasium.make_vec(..., vectorization_mode="async")`` workers survive unmasked samples;
* SB3's ``make_vec_env("tom_envs/...", n_envs=2)`` on every id, and PPO / MaskablePPO learn a few
  steps on games whose legal actions depend on the deal.
"""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env, data_equivalence

import tom_envs  # noqa: F401  (registers the ids)
from tom_envs.core.game import IllegalActionError
from tom_envs.registration import single_agent_specs
from tom_envs.single_agent import SingleAgentEnv

IDS = [sa.id for sa in single_agent_specs()]
# games whose first legal actions depend on the seed: an unmasked sample is often illegal
DEALT = ["tom_envs/HanabiVsSimple-v0", "tom_envs/GuandanVsRandom-v0"]


@pytest.mark.parametrize("env_id", IDS)
def test_stock_check_env(env_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # check_env's advice (Box bounds, ...) is not a failure
        check_env(gymnasium.make(env_id).unwrapped)
    capsys.readouterr()  # "human" prints the board on stdout where there is no display


VARIANTS = [
    ("tom_envs/HanabiVsSimple-v0", {"players": 3}),
    ("tom_envs/HanabiVsConvention-v0", {"players": 5}),
    ("tom_envs/GuandanVsHeuristic-v0", {"language": "zh"}),
    ("tom_envs/CoBlockVsHelper-v0", {"task_type": "goal_dependent"}),
    ("tom_envs/OvercookedVsGreedy-v0", {"layout": "counter_circuit"}),
    ("tom_envs/CollabCaptureVsOptimal-v0", {"scenario": "both_closed"}),
    ("tom_envs/BombDefusalVsHeuristic-v0", {"map": "random", "num_rooms": 7}),
]


@pytest.mark.parametrize(("env_id", "kwargs"), VARIANTS, ids=[v[0] for v in VARIANTS])
def test_stock_check_env_on_variants(env_id: str, kwargs: dict, capsys) -> None:
    env = gymnasium.make(env_id, **kwargs)
    assert all(env.unwrapped.env_kwargs[k] == v for k, v in kwargs.items())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env.unwrapped)
    capsys.readouterr()


def _first_illegal(info: dict) -> int:
    illegal = np.flatnonzero(info["action_mask"] == 0)
    assert illegal.size, "this seed's first turn has no illegal action"
    return int(illegal[0])


def test_raise_is_the_class_default_and_changes_nothing() -> None:
    env, twin = SingleAgentEnv("Hanabi", "simple"), SingleAgentEnv("Hanabi", "simple")
    _, info = env.reset(seed=1)
    twin.reset(seed=1)
    with pytest.raises(IllegalActionError, match="not legal"):
        env.step(_first_illegal(info))
    legal = int(np.flatnonzero(info["action_mask"])[0])
    assert data_equivalence(env.step(legal), twin.step(legal))  # the refusal left no trace


@pytest.mark.parametrize("env_id", DEALT)
def test_terminate_ends_the_episode_with_the_penalty(env_id: str) -> None:
    env = gymnasium.make(env_id, illegal_reward=-3.0)
    _, info = env.reset(seed=2)
    obs, reward, term, trunc, info = env.step(_first_illegal(info))
    assert (reward, term, trunc, info["illegal_action"]) == (-3.0, True, False, True)
    assert not info["action_mask"].any() and env.observation_space.contains(obs)
    with pytest.raises(IllegalActionError, match="call reset"):
        env.step(0)
    _, info = env.reset(seed=2)  # a fresh episode plays on normally
    _, _, term, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert "illegal_action" not in info
    for bad in (-1, 10**6, 1.5, "a", None):  # outside the action space: a caller's bug, raised
        env.reset(seed=3)
        with pytest.raises(IllegalActionError):
            env.step(bad)


def test_the_policy_is_checked_and_raise_can_be_asked_for() -> None:
    env = gymnasium.make(DEALT[0], illegal_action="raise")
    _, info = env.reset(seed=1)
    with pytest.raises(IllegalActionError):
        env.step(_first_illegal(info))
    with pytest.raises(ValueError, match=r"argument 'illegal_action'.*'raise', 'terminate'"):
        SingleAgentEnv("Hanabi", "simple", illegal_action="ignore")
    with pytest.raises(ValueError, match="argument 'illegal_reward'"):
        SingleAgentEnv("Hanabi", "simple", illegal_reward=float("nan"))


@pytest.mark.parametrize("env_id", DEALT)
def test_async_vector_workers_survive_unmasked_samples(env_id: str) -> None:
    envs = gymnasium.make_vec(env_id, num_envs=2, vectorization_mode="async")
    try:
        envs.reset(seed=0)
        envs.action_space.seed(0)
        ended = illegal = 0
        for _ in range(40):
            _, _, term, trunc, info = envs.step(envs.action_space.sample())  # never masked
            ended += int(np.sum(term | trunc))
            illegal += int(np.sum(info.get("illegal_action", np.zeros(2, bool))))
        assert illegal > 0 and ended >= illegal  # illegal samples happened and ended episodes
        obs, *_ = envs.step(envs.action_space.sample())  # the workers are still alive
        assert obs.shape[0] == 2
    finally:
        envs.close()


@pytest.mark.parametrize("env_id", IDS)
def test_sb3_make_vec_env_unchanged(env_id: str) -> None:
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env(env_id, n_envs=2, seed=0)
    try:
        obs = venv.reset()
        assert obs.shape == (2, *venv.observation_space.shape)
        masks = np.stack(venv.env_method("action_masks"))
        assert masks.shape == (2, venv.action_space.n) and masks.any(axis=1).all()
        for _ in range(5):
            obs, rewards, _, infos = venv.step(np.array([venv.action_space.sample()] * 2))
            assert np.isfinite(rewards).all() and len(infos) == 2
        image = venv.env_method("render", indices=[0])[0]  # SB3 asked for rgb_array
        assert isinstance(image, np.ndarray) and image.ndim == 3
    finally:
        venv.close()


def test_sb3_ppo_and_maskable_ppo_learn_on_dealt_games() -> None:
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    ppo = PPO("MlpPolicy", make_vec_env(DEALT[0], n_envs=2, seed=0), n_steps=16, batch_size=16,
              n_epochs=1, seed=0, device="cpu")  # fmt: skip
    ppo.learn(32)
    assert ppo.num_timesteps == 32
    masked = MaskablePPO("MlpPolicy", make_vec_env(DEALT[1], n_envs=2, seed=0), n_steps=16,
                         batch_size=16, n_epochs=1, seed=0, device="cpu")  # fmt: skip
    masked.learn(32)
    assert masked.num_timesteps == 32
