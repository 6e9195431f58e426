"""Train PPO with RLlib on tom-envs games, with remote env runners and no glue code.

python examples/rllib_ppo.py                                  # Overcooked, then Hanabi: 2 iterations
python examples/rllib_ppo.py --games Hanabi --iterations 50 --runners 2

Overcooked is a simultaneous game (RLlib gets its Parallel env); Hanabi is turn-based (its AEC env:
only the seat to act observes) with action masking. ``ppo_config`` (tom_envs/integrations/rllib.py)
does the rest: observations in the layout RLlib's masking module reads, the masking module itself,
the env registered for the runner processes, and each seat's reward paid so that its return is its
return in the game (RLlib would otherwise drop a reward that reaches a seat with its first
observation). Both games are cooperative, so both seats' mean returns are equal.

Needs the rllib extra, from the checkout: pip install torch==2.13.0 && pip install -e ".[rllib]"
"""

from __future__ import annotations

import argparse
import math

import ray

from tom_envs.integrations.rllib import ppo_config

#: The games and their settings: Overcooked's kitchen cut to 100 steps so episodes end in a batch.
GAMES = {"Overcooked": {"max_cycles": 100}, "Hanabi": {}}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--games", nargs="+", default=list(GAMES), choices=list(GAMES))
    p.add_argument("--iterations", type=int, default=2)
    p.add_argument("--runners", type=int, default=1, help="remote env-runner processes")
    p.add_argument("--batch", type=int, default=256, help="env steps per training iteration")
    args = p.parse_args(argv)
    ray.init(num_cpus=max(2, args.runners + 1), include_dashboard=False, log_to_driver=False)
    try:
        for game in args.games:
            algo = (
                ppo_config(game, num_env_runners=args.runners, **GAMES[game])
                .training(
                    train_batch_size_per_learner=args.batch,
                    minibatch_size=args.batch // 2,
                    num_epochs=2,
                )
                .env_runners(rollout_fragment_length=args.batch // max(args.runners, 1))
                .build_algo()
            )
            try:
                for i in range(args.iterations):
                    runners = algo.train()["env_runners"]
                    returns = runners.get("agent_episode_returns_mean", {})
                    seats = ", ".join(
                        f"{a} {r:.2f}" for a, r in sorted(returns.items()) if not math.isnan(r)
                    )
                    print(f"{game} iteration {i + 1}: "
                          f"{int(runners['num_env_steps_sampled_lifetime'])} env steps; "
                          f"mean return per seat: {seats or 'no episode finished yet'}")  # fmt: skip
            finally:
                algo.stop()
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
