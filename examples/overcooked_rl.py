"""Overcooked with RL: the batched numpy engine for fast rollouts, then MAPPO for a few updates.

Part 1 steps many kitchens at once with :class:`~tom_envs.games.overcooked.vector.OvercookedVectorEnv`
(what the scalar rules compute, bit for bit; use it for data collection and throughput). Part 2
trains MAPPO (``tom_baselines.mappo``, the ``rl`` extra) in self-play on a short kitchen and
evaluates the checkpoint through the suite's runner; ``tom-envs train mappo Overcooked ...`` runs
the same trainer from the command line with every flag.

    python examples/overcooked_rl.py                       # a few updates, about a minute
    python examples/overcooked_rl.py --total-steps 200000  # enough to learn to deliver soup
"""

import argparse
import tempfile
import time

import numpy as np
import torch

from tom_baselines.mappo import Args, train
from tom_envs.agents import make_agent
from tom_envs.games.overcooked.vector import OvercookedVectorEnv
from tom_envs.registration import game_spec
from tom_envs.runner import run

KITCHEN = {"layout": "cramped_room", "horizon": 64}  # a short episode for a quick example


def rollouts(num_envs: int, steps: int, seed: int) -> None:
    """Random joint actions in ``num_envs`` kitchens at once; soups delivered and steps/s."""
    venv = OvercookedVectorEnv(num_envs, layout="cramped_room", horizon=100)
    rng = np.random.default_rng(seed)
    obs = venv.reset(seed=seed)  # (B, 2, obs_size), egocentric per seat
    soups, t0 = 0, time.perf_counter()
    for _ in range(steps):
        actions = rng.integers(venv.num_actions, size=(num_envs, 2))  # every action is legal
        obs, rewards, _, _ = venv.step(actions)  # rewards (B, 2) shared; terminated, truncated
        soups += int((rewards[:, 0] > 0).sum())
    rate = num_envs * steps / (time.perf_counter() - t0)
    print(f"vector engine: {num_envs} kitchens x {steps} steps, observations {obs.shape}, "
          f"{soups} soups by random play, {rate:,.0f} env steps/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--total-steps", type=int, default=4096, help="MAPPO env steps")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)  # small networks: one thread is fastest
    rollouts(256, 100, args.seed)
    with tempfile.TemporaryDirectory() as out:
        summary = train(Args(
            game="Overcooked", env_kwargs=[f"{k}={v}" for k, v in KITCHEN.items()],
            total_steps=args.total_steps, num_envs=args.num_envs, num_steps=64, seed=args.seed,
            eval_every=0, eval_episodes=4, progress=False, out=out,
        ))  # fmt: skip
        final = summary["final"]
        print(f"MAPPO self-play: {summary['global_step']} env steps, {summary['episodes']} "
              f"episodes, {summary['sps']:.0f} steps/s; policy entropy {final['entropy']:.3f}; "
              f"evaluation return {final['eval/return_mean']:.1f} over 4 episodes")
        # the checkpoint is an agent like any other: seat it beside a built-in bot
        spec = game_spec("Overcooked")
        bundle = spec.load().make_bundle(**KITCHEN)
        ckpt = f"checkpoint:path={summary['checkpoint']}"
        episodes = run(spec, [lambda: make_agent(ckpt, spec, bundle, trusted=True),
                              lambda: make_agent("planner", spec, bundle)], 2, seed=100,
                       env_kwargs=KITCHEN)  # fmt: skip
        print("MAPPO + planner bot:", [e.returns["player_0"] for e in episodes], "(team returns)")

if __name__ == "__main__":
    main()
