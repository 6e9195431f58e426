"""Throughput of the batched engines (``tom_envs/games/<game>/vector.py``) beside OpenSpiel's single
env with observations, in one sitting.

    .venv/bin/python benchmarks/batched.py [--games rps,ipd,...] [--batch 1024] [--seconds 2]
                                           [--repeats 3] [--peers auto|none] [--json out.json]

For each game and repeat: our engine at batch B, built with observations (every seat's
observation, exactly the single env's encoding, every step), stepped with uniformly random legal
actions drawn vectorised from its masks (``tom_envs.core.vector.sample_legal``; the sampling is
inside the timed loop), then the same actions replayed from the same seed (the engine alone:
"engine" columns); then, where one exists, the peer: OpenSpiel's single env with
``observation_tensor`` of every player after every step (``peers/bench_pyspiel.py`` in the peers'
venv, uniformly random legal actions, whole episodes). Odd repeats run the games backwards.
Reported: the median over the repeats of joint steps/s (one application of the rules to one env:
a joint action of both players in a simultaneous game, one move in a turn-based game) and moves/s
(actions chosen by one agent), the spread (max - min) / median, and ours/peer.

The load average is recorded before every measurement: on a shared machine the absolute numbers
move with the load; compare numbers of one sitting.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from run import _child_env, available_suites, peer_python  # noqa: E402

from tom_envs.core.vector import VectorGame, sample_legal  # noqa: E402


@dataclass(frozen=True)
class Case:
    """One batched engine and its peer."""

    module: str  # tom_envs.games.<game>.vector
    cls: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    peer: dict[str, Any] | None = None  # a bench_pyspiel.py case
    target: str = ""


def _repeated(stage: str) -> dict[str, Any]:
    return {"game": f"repeated_game(stage_game={stage}(),num_repetitions=100)", "obs": True}


CASES: dict[str, Case] = {
    "rps": Case("tom_envs.games.matrix.vector", "MatrixVectorEnv", {"game": "rps"},
                _repeated("matrix_rps"), ">= 2M joint/s and >= 4x peer"),
    "ipd": Case("tom_envs.games.matrix.vector", "MatrixVectorEnv", {"game": "ipd"},
                _repeated("matrix_pd"), ">= 2M joint/s and >= 4x peer"),
    "ibs": Case("tom_envs.games.matrix.vector", "MatrixVectorEnv", {"game": "ibs"},
                _repeated("matrix_bos"), ">= 2M joint/s and >= 4x peer"),
    "collab_capture": Case("tom_envs.games.collab_capture.vector", "CaptureVectorEnv", {},
                           None, ">= 500k joint/s"),
    "collab_escape": Case("tom_envs.games.collab_escape.vector", "EscapeVectorEnv", {},
                          None, ">= 500k joint/s"),
    "bomb_defusal": Case("tom_envs.games.bomb_defusal.vector", "BombVectorEnv", {}, None,
                         ">= 200k moves/s"),
    "overcooked": Case("tom_envs.games.overcooked.vector", "OvercookedVectorEnv",
                       {"layout": "cramped_room"}, None, ">= 500k joint/s"),
    "hanabi": Case("tom_envs.games.hanabi.vector", "HanabiVectorEnv", {"players": 2},
                   {"game": "hanabi", "obs": True}, ">= 100k moves/s"),
}  # fmt: skip


def machine() -> dict[str, Any]:
    """CPU model, cores, OS and Python of this machine."""
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
    }


def ours(case: Case, batch: int, seconds: float, seed: int) -> dict[str, Any]:
    """Our engine at ``batch``, observations every step, two ways:

    * ``joint_per_s``: each step draws uniformly random legal actions from the masks
      (``action_masks()`` + ``sample_legal``) and steps (what a random-policy rollout costs);
    * ``engine_joint_per_s``: the same actions replayed from the same seed (the engine is
      deterministic given its seed and the actions, so they are legal): the engine alone.
    """
    engine_cls = getattr(importlib.import_module(case.module), case.cls)
    env = engine_cls(batch, **case.kwargs)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    step, masks = env.step, env.action_masks
    for _ in range(20):  # warm-up
        step(sample_legal(masks(), rng))
    env.reset(seed=seed)
    played = []
    t0, c0 = time.perf_counter(), time.process_time()
    while True:
        for _ in range(10):
            a = sample_legal(masks(), rng)
            step(a)
            played.append(a)
        if time.perf_counter() - t0 >= seconds:
            break
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    env.reset(seed=seed)
    t1 = time.perf_counter()
    for a in played:
        step(a)
    dt_engine = time.perf_counter() - t1
    joint = len(played) * batch
    moves = joint if env.turn_based else joint * env.num_agents
    return {"joint_per_s": joint / dt, "moves_per_s": moves / dt, "seconds": dt,
            "cpu_joint_per_s": joint / cpu, "engine_joint_per_s": joint / dt_engine,
            "engine_moves_per_s": moves / dt_engine}  # fmt: skip


#: The peer's loop, ``peers/bench_pyspiel.py``'s own episode function, timed with CPU time beside
#: wall time in the peers' Python: argv = benchmarks dir, game string, seconds, seed.
PEER_SCRIPT = r"""
import json, os, sys, time
sys.path.insert(0, os.path.join(sys.argv[1], "peers"))
import pyspiel
from bench_pyspiel import episode_fn
from benchlib import Sampler
game = pyspiel.load_game(sys.argv[2])
seconds, seed = float(sys.argv[3]), int(sys.argv[4])
episode = episode_fn(game, "all", Sampler(seed), seed)  # every player's tensor every step
episode(1_000_000)
moves = joint = eps = 0
t0, c0 = time.perf_counter(), time.process_time()
while time.perf_counter() - t0 < seconds:
    m, j, _ = episode(eps)
    moves, joint, eps = moves + m, joint + j, eps + 1
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps({"joint_per_s": joint / wall, "moves_per_s": moves / wall,
                  "cpu_joint_per_s": joint / cpu, "seconds": wall,
                  "open_spiel": getattr(pyspiel, "__version__", "?")}))
"""


def peer(case: Case, seconds: float, seed: int, py: str) -> dict[str, Any]:
    """OpenSpiel's single env with ``observation_tensor`` of every player after every step."""
    assert case.peer is not None
    cmd = [py, "-c", PEER_SCRIPT, HERE, case.peer["game"], str(seconds), str(seed)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120 + 5 * seconds,
                           env=_child_env(), cwd=HERE)  # fmt: skip
    except subprocess.TimeoutExpired:
        return {"error": "timeout"}
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode != 0 or not lines:
        return {"error": (r.stderr.strip().splitlines() or ["no output"])[-1][:300]}
    return json.loads(lines[-1])


def _median(runs: list[dict[str, Any]], key: str) -> tuple[float | None, float | None]:
    vals = [r[key] for r in runs if key in r]
    if not vals:
        return None, None
    med = statistics.median(vals)
    return med, (max(vals) - min(vals)) / med if med else 0.0


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x / 1e6:.2f}M" if x >= 1e6 else f"{x / 1e3:.0f}k"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--games", default=",".join(CASES), help=f"comma list of {sorted(CASES)}")
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--seconds", type=float, default=2.0)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--peers", choices=("auto", "none"), default="auto")
    p.add_argument(
        "--peers-dir", default=os.environ.get("PEERS_DIR", os.path.expanduser("~/peers"))
    )
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    games = [g.strip() for g in args.games.split(",") if g.strip()]
    unknown = [g for g in games if g not in CASES]
    if unknown:
        p.error(f"--games: unknown {unknown}; choose from {sorted(CASES)}")
    if args.batch < 1 or args.repeats < 1 or args.seconds <= 0:
        p.error("--batch and --repeats must be >= 1 and --seconds > 0")
    missing = []
    for g in list(games):
        try:
            engine_cls = getattr(importlib.import_module(CASES[g].module), CASES[g].cls)
        except (ImportError, AttributeError):
            engine_cls = None
        if engine_cls is None or not issubclass(engine_cls, VectorGame):
            missing.append(g)  # no engine, or one not on the contract of tom_envs.core.vector
            games.remove(g)
    py = peer_python(args.peers_dir)
    peers_ok = args.peers == "auto" and available_suites(py, ["pyspiel"]).get("pyspiel") == ""
    info = machine()
    print(f"machine: {info['cpu']}, {info['cores']} cores, {info['platform']}", flush=True)
    print(f"command: {' '.join([os.path.basename(sys.executable), *sys.argv])}", flush=True)
    if missing:
        print(f"no batched engine on the contract for: {', '.join(missing)}", flush=True)
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {g: {"ours": [], "peer": []} for g in games}
    loads = []
    for r in range(args.repeats):
        order = games if r % 2 == 0 else games[::-1]
        for g in order:
            case = CASES[g]
            load = os.getloadavg()
            loads.append(load)
            res = ours(case, args.batch, args.seconds, args.seed + r)
            res["load"] = load
            runs[g]["ours"].append(res)
            msg = (
                f"  [{r + 1}/{args.repeats}] {g} B={args.batch}: {_fmt(res['joint_per_s'])} joint/s"
            )
            if peers_ok and case.peer is not None:
                load = os.getloadavg()
                loads.append(load)
                pres = peer(case, args.seconds, args.seed + r, py)
                pres["load"] = load
                runs[g]["peer"].append(pres)
                msg += f"; OpenSpiel {_fmt(pres.get('joint_per_s'))} joint/s"
            print(msg + f" (load {load[0]:.1f})", flush=True)
    rows = []
    for g in games:
        case = CASES[g]
        oj, ospread = _median(runs[g]["ours"], "joint_per_s")
        om, _ = _median(runs[g]["ours"], "moves_per_s")
        ej, _ = _median(runs[g]["ours"], "engine_joint_per_s")
        oc, _ = _median(runs[g]["ours"], "cpu_joint_per_s")
        pc, _ = _median(runs[g]["peer"], "cpu_joint_per_s")
        em, _ = _median(runs[g]["ours"], "engine_moves_per_s")
        pj, pspread = _median(runs[g]["peer"], "joint_per_s")
        pm, _ = _median(runs[g]["peer"], "moves_per_s")
        rows.append({"game": g, "batch": args.batch, "ours_joint_per_s": oj,
                     "ours_moves_per_s": om, "ours_spread": ospread,
                     "engine_joint_per_s": ej, "engine_moves_per_s": em,
                     "ours_cpu_joint_per_s": oc, "peer_cpu_joint_per_s": pc,
                     "cpu_ratio": (oc / pc) if (oc and pc) else None, "peer_joint_per_s": pj,
                     "peer_moves_per_s": pm, "peer_spread": pspread,
                     "ratio": (oj / pj) if (oj and pj) else None, "target": case.target})  # fmt: skip
    print()
    print(f"| game | ours B={args.batch} + random legal actions, joint/s | moves/s | spread | "
          "engine alone, joint/s | OpenSpiel single env + obs, joint/s | moves/s | spread | "
          "ours/peer | per CPU second: ours, peer, ratio | target |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        sp = row["ours_spread"]
        psp = row["peer_spread"]
        ratio = f"{row['ratio']:.1f}x" if row["ratio"] else "-"
        cpu_ratio = f"{row['cpu_ratio']:.1f}x" if row["cpu_ratio"] else "-"
        print(f"| {row['game']} | {_fmt(row['ours_joint_per_s'])} | {_fmt(row['ours_moves_per_s'])}"
              f" | {sp:.0%} | {_fmt(row['engine_joint_per_s'])} | {_fmt(row['peer_joint_per_s'])} | {_fmt(row['peer_moves_per_s'])} | "
              f"{'-' if psp is None else f'{psp:.0%}'} | {ratio} | "
              f"{_fmt(row['ours_cpu_joint_per_s'])}, {_fmt(row['peer_cpu_joint_per_s'])}, "
              f"{cpu_ratio} | "
              f"{row['target']} |")  # fmt: skip
    lo = [x[0] for x in loads]
    print(f"\n1-min load average during the run: {min(lo):.1f} - {max(lo):.1f} "
          f"(median {statistics.median(lo):.1f}) on {info['cores']} cores")  # fmt: skip
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": info, "args": vars(args), "rows": rows, "runs": runs,
                       "loads": loads, "date": time.strftime("%Y-%m-%d %H:%M:%S")}, f, indent=1)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
