"""Hanabi with RL: Stable-Baselines3's MaskablePPO on a Gymnasium single-agent view, unchanged.

``tom_envs/HanabiVsConvention-v0`` seats the learner in seat 0 beside the convention bot. SB3's own
``make_vec_env`` builds it by id, and sb3-contrib's MaskablePPO reads the legal actions from the
env's ``action_masks()`` (also in ``info["action_mask"]``), so no glue code is needed. A short run
only shows the loop (Hanabi needs millions of steps); the learned policy is scored beside uniformly
random legal play with sb3-contrib's masked evaluation.

    python examples/hanabi_sb3.py                        # a few updates, about a minute
    python examples/hanabi_sb3.py --total-steps 1000000  # learning, for hours
"""

import argparse

import gymnasium
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.evaluation import evaluate_policy
from stable_baselines3.common.env_util import make_vec_env

import tom_envs  # noqa: F401  (registers the tom_envs/ ids)

ENV_ID = "tom_envs/HanabiVsConvention-v0"


def random_legal_score(episodes: int, seed: int) -> float:
    """Mean return of uniformly random legal play in seat 0."""
    env = gymnasium.make(ENV_ID)
    rng = np.random.default_rng(seed)
    total = 0.0
    for ep in range(episodes):
        _, info = env.reset(seed=seed + ep)
        done = False
        while not done:
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            _, reward, terminated, truncated, info = env.step(action)
            total += float(reward)
            done = terminated or truncated
    return total / episodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--total-steps", type=int, default=2048)
    parser.add_argument("--n-envs", type=int, default=4)
    parser.add_argument("--episodes", type=int, default=10, help="evaluation episodes")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)  # small networks: one thread is fastest
    venv = make_vec_env(ENV_ID, n_envs=args.n_envs, seed=args.seed)
    print(f"{ENV_ID}: observation {venv.observation_space.shape}, {venv.action_space.n} actions")
    model = MaskablePPO("MlpPolicy", venv, n_steps=128, batch_size=128, seed=args.seed,
                        device="cpu", verbose=0)  # fmt: skip
    model.learn(args.total_steps)
    mean, std = evaluate_policy(model, make_vec_env(ENV_ID, n_envs=1, seed=args.seed + 1000),
                                n_eval_episodes=args.episodes, warn=False)  # fmt: skip
    print(f"MaskablePPO after {model.num_timesteps} steps: score {mean:.2f} ± {std:.2f} "
          f"over {args.episodes} episodes with the convention bot")
    print(f"random legal play: score {random_legal_score(args.episodes, args.seed + 1000):.2f}")


if __name__ == "__main__":
    main()
