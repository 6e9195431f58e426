"""SB3 PPO training speed on the batched engine beside the per-env path, interleaved in one sitting.

    nice -n 15 .venv/bin/python benchmarks/ppo_batched.py [--cases capture_greedy,...]
                                                          [--steps 65536] [--repeats 3]

Each case trains ``tom-envs train ppo`` (``baselines/ppo_sb3.py``) with one configuration twice
per repeat, ``--engine envs`` and ``--engine batched`` (the order alternates between repeats),
and records the learner steps, wall seconds and CPU seconds of this process (``time.process_time``,
one torch thread) of ``model.learn`` (the final evaluation is not timed). Reported: the median
over the repeats of learner steps per CPU-second and per wall-second, env moves per CPU-second
(the rules' steps: in per-env self-play of a turn-based game, each learner step also plays the
other seats' moves with the live network), and batched / envs. On a shared machine compare the
per-CPU-second rates; the wall rates move with the load (recorded).

Cases (``CASES``): ``capture_greedy`` and ``rps_tft`` give both paths the same transitions
(a deterministic partner: ``tests/baselines/test_ppo_batched.py``), so their ratio is the cost of
the same learning; ``bomb_self_play`` and ``overcooked_self_play`` differ in what is trained on
(the batched path trains every seat's decisions; see ``baselines/ppo_batched.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from tom_baselines import ppo_sb3  # noqa: E402

COMMON = dict(n_steps=64, batch_size=1024, n_epochs=4, hidden=64, eval_episodes=1, progress=False)
#: name -> (settings, env moves per learner step on the per-env path, on the batched path)
CASES: dict[str, tuple[dict[str, Any], float, float]] = {
    "capture_greedy": ({"game": "CollabCapture", "partners": ["greedy"], "num_envs": 64}, 1, 1),
    "rps_tft": ({"game": "RockPaperScissors", "partners": ["tit_for_tat"], "num_envs": 64}, 1, 1),
    "bomb_self_play": ({"game": "BombDefusal", "self_play": True, "num_envs": 64,
                        "env_kwargs": ["shaping=true", "probes='none'"]}, 3, 1),
    "overcooked_self_play": ({"game": "Overcooked", "self_play": True, "num_envs": 32,
                              "env_kwargs": ["observation=features"]}, 1, 0.5),
}  # fmt: skip


def once(case: str, engine: str, steps: int, out: str) -> dict[str, float]:
    """One timed training run."""
    settings, moves_envs, moves_batched = CASES[case]
    args = ppo_sb3.Args(**{**COMMON, **settings, "total_steps": steps, "engine": engine,
                           "out": os.path.join(out, f"{case}-{engine}")})  # fmt: skip
    load = os.getloadavg()[0]
    s = ppo_sb3.train(args)
    assert s["engine"] == engine, s["engine"]
    moves = moves_envs if engine == "envs" else moves_batched
    return {"steps": s["global_step"], "wall_s": s["wall_s"], "cpu_s": s["cpu_s"], "load1": load,
            "moves": s["global_step"] * moves}  # fmt: skip


def main() -> None:
    """Run the cases and print a markdown table (``--json`` for the raw runs)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--steps", type=int, default=65536)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--json", default=None)
    a = p.parse_args()
    raw: dict[str, dict[str, list[dict[str, float]]]] = {}
    with tempfile.TemporaryDirectory() as out:
        for case in a.cases.split(","):
            if case not in CASES:
                raise SystemExit(f"--cases: {case!r} is not one of {sorted(CASES)}")
            raw[case] = {"envs": [], "batched": []}
            for r in range(a.repeats):
                for engine in ("envs", "batched") if r % 2 == 0 else ("batched", "envs"):
                    raw[case][engine].append(once(case, engine, a.steps, out))
    print("| case | path | learner steps / CPU-s | env moves / CPU-s | learner steps / wall-s "
          "| load | batched / envs (per CPU-s) |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for case, runs in raw.items():
        med = {e: statistics.median(x["steps"] / x["cpu_s"] for x in rs) for e, rs in runs.items()}
        for engine, rs in runs.items():
            moves = statistics.median(x["moves"] / x["cpu_s"] for x in rs)
            wall = statistics.median(x["steps"] / x["wall_s"] for x in rs)
            loads = [x["load1"] for x in rs]
            ratio = f"{med['batched'] / med['envs']:.1f}x" if engine == "batched" else ""
            print(f"| {case} | {engine} | {med[engine]:,.0f} | {moves:,.0f} | {wall:,.0f} | "
                  f"{min(loads):.1f}-{max(loads):.1f} | {ratio} |")  # fmt: skip
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(raw, fh, indent=1)


if __name__ == "__main__":
    main()
