"""Throughput of the batched bomb-defusal engine beside the PettingZoo env, in one sitting.

Cases (uniformly random legal moves, drawn from the action mask by a seeded generator; the
draw is inside the timed loop, as in ``benchlib``):

* ``batched`` (``BombVectorEnv``, B missions, autoreset, ``missions="batched"``): per step, the
  acting seat's observation ``(B, 348)`` and action mask;
* ``batched-state``: the same plus the global state ``(B, 130)`` (MAPPO's critic input);
* ``batched-rules``: the same without observations (dynamics and masks only);
* ``batched-seeded``: ``batched`` with ``missions="seeded"`` (each mission drawn exactly as
  ``reset(seed)`` draws it, by the scalar rules: about 0.1 ms of Python per new mission);
* ``aec``: the PettingZoo env (``probes='none'``): ``env.last()`` (observation + mask), ``step``.

Reports moves/s (one move = one seat's action in one mission = one env step) as the median of
``--repeats`` timed loops of ``--seconds`` each, and the load averages before and after.

    .venv/bin/python benchmarks/batched_bomb.py --num-envs 1024 --seconds 3 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np

from tom_envs.games.bomb_defusal.env import raw_env
from tom_envs.games.bomb_defusal.vector import BombVectorEnv


def sample(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``mask``."""
    u = rng.random(mask.shape) * mask
    return u.argmax(1)


def batched(
    B: int, seconds: float, observations: str, state: bool, seed: int, missions: str = "batched"
) -> float:
    venv = BombVectorEnv(B, observations=observations, missions=missions)
    venv.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(20):  # warm-up
        venv.step(sample(venv.action_mask, rng))
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        venv.step(sample(venv.action_mask, rng))
        if state:
            venv.state()
        steps += B
    return steps / (time.perf_counter() - t0)


def aec(seconds: float, seed: int) -> float:
    env = raw_env(probes="none")
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    moves, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        env.reset(seed=int(rng.integers(2**31)))
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            moves += 1
    return moves / (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--num-envs", type=int, default=1024)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cases", default="batched,batched-state,batched-rules,batched-seeded,aec")
    ap.add_argument("--json", default=None, help="write every run here")
    args = ap.parse_args(argv)
    load_before = os.getloadavg()
    cases = {
        "batched": lambda: batched(args.num_envs, args.seconds, "acting", False, args.seed),
        "batched-state": lambda: batched(args.num_envs, args.seconds, "acting", True, args.seed),
        "batched-rules": lambda: batched(args.num_envs, args.seconds, "none", False, args.seed),
        "batched-seeded": lambda: batched(
            args.num_envs, args.seconds, "acting", False, args.seed, "seeded"
        ),
        "aec": lambda: aec(args.seconds, args.seed),
    }
    out = {}
    for name in args.cases.split(","):
        runs = [cases[name]() for _ in range(args.repeats)]
        med = statistics.median(runs)
        out[name] = {"moves_per_s": med, "runs": runs}
        print(f"{name:14s} B={args.num_envs if name != 'aec' else 1:5d}  {med:12,.0f} moves/s  "
              f"(spread {(max(runs) - min(runs)) / med:.0%})", flush=True)  # fmt: skip
    if "batched" in out and "aec" in out:
        print(f"batched / aec: {out['batched']['moves_per_s'] / out['aec']['moves_per_s']:.1f}x")
    load_after = os.getloadavg()
    print(f"load average before {load_before}, after {load_after}; cpus {os.cpu_count()}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cases": out, "load_before": load_before, "load_after": load_after,
                       "args": vars(args)}, f, indent=1)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
