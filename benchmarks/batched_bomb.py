"""Throughput of the batched bomb-defusal engine beside the PettingZoo env, in one sitting.

Cases (uniformly random legal moves, drawn from the masks by a seeded generator inside the timed
loop):

* ``contract``: ``BombVectorEnv(B)`` as the contract of ``tom_envs.core.vector`` steps it:
  ``action_masks()`` ``(B, 3, 10)``, ``step((B, 3) actions)`` with every seat's observation
  ``(B, 3, 348)`` (``benchmarks/batched.py`` runs the same case beside the other engines);
* ``acting``: what MAPPO's batched collector asks: the engine without contract observations,
  and per step the acting seat's observation ``observe()`` ``(B, 348)``, its mask
  ``legal_mask()`` and the global state ``state()`` ``(B, 130)``;
* ``rules``: dynamics and masks only;
* ``seeded``: ``contract`` with ``missions="seeded"`` (each mission drawn exactly as
  ``reset(seed)`` draws it, by the scalar rules: about 0.1 ms of Python per new mission);
* ``aec``: the PettingZoo env (``probes='none'``): ``env.last()`` (observation + mask), ``step``.

Reports moves/s (one move = one seat's action in one mission = one env step): the median of
``--repeats`` timed loops of ``--seconds`` each, per wall second and per CPU second of this
process (the second is what transfers on a shared machine), and the load averages.

    .venv/bin/python benchmarks/batched_bomb.py --num-envs 1024 --seconds 3 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np

from tom_envs.core.vector import sample_legal
from tom_envs.games.bomb_defusal.env import raw_env
from tom_envs.games.bomb_defusal.vector import BombVectorEnv


def batched(B: int, seconds: float, case: str, seed: int) -> tuple[float, float]:
    """(moves per wall second, moves per CPU second)."""
    missions = "seeded" if case == "seeded" else "batched"
    venv = BombVectorEnv(B, missions=missions, observations=case in ("contract", "seeded"))
    venv.reset(seed=seed)
    rng = np.random.default_rng(seed)
    rows = np.arange(B)

    def one() -> None:
        if case in ("contract", "seeded", "rules"):
            venv.step(sample_legal(venv.action_masks(), rng))
        else:
            venv.observe(), venv.state()
            joint = np.full((B, venv.num_agents), venv.noop)
            joint[rows, venv.current_player] = sample_legal(venv.legal_mask(), rng)
            venv.step(joint)

    for _ in range(20):  # warm-up
        one()
    steps, t0, c0 = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - t0 < seconds:
        one()
        steps += B
    return steps / (time.perf_counter() - t0), steps / (time.process_time() - c0)


def aec(seconds: float, seed: int) -> tuple[float, float]:
    env = raw_env(probes="none")
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    moves, t0, c0 = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - t0 < seconds:
        env.reset(seed=int(rng.integers(2**31)))
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            moves += 1
    return moves / (time.perf_counter() - t0), moves / (time.process_time() - c0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--num-envs", type=int, default=1024)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cases", default="contract,acting,rules,seeded,aec")
    ap.add_argument("--json", default=None, help="write every run here")
    args = ap.parse_args(argv)
    load_before = os.getloadavg()
    out = {}
    for name in args.cases.split(","):
        if name == "aec":
            runs = [aec(args.seconds, args.seed) for _ in range(args.repeats)]
        else:
            runs = [batched(args.num_envs, args.seconds, name, args.seed)
                    for _ in range(args.repeats)]  # fmt: skip
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        out[name] = {"moves_per_s": wall, "moves_per_cpu_s": cpu, "runs": runs}
        spread = (max(r[0] for r in runs) - min(r[0] for r in runs)) / wall
        print(f"{name:9s} B={args.num_envs if name != 'aec' else 1:5d}  {wall:12,.0f} moves/s  "
              f"{cpu:12,.0f} moves/CPU-s  (spread {spread:.0%})", flush=True)  # fmt: skip
    if "contract" in out and "aec" in out:
        for key in ("moves_per_s", "moves_per_cpu_s"):
            print(f"contract / aec ({key}): {out['contract'][key] / out['aec'][key]:.1f}x")
    load_after = os.getloadavg()
    print(f"load average before {load_before}, after {load_after}; cpus {os.cpu_count()}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cases": out, "load_before": load_before, "load_after": load_after,
                       "args": vars(args)}, f, indent=1)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
