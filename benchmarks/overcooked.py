"""Overcooked beside overcooked-ai 1.1.0: exact parity, and speed.

    .venv/bin/python benchmarks/overcooked.py parity --episodes 1000 --interact-episodes 200
    .venv/bin/python benchmarks/overcooked.py speed --seconds 5 --repeats 3
    .venv/bin/python benchmarks/overcooked.py report     # docs/results/overcooked_benchmarks.md

The command shape is ``benchmarks/gamebench.py``'s. ``parity`` and the peer half of ``speed`` need
overcooked-ai 1.1.0 in its own venv (``~/peers/venv-overcooked``; see
:mod:`tom_envs.games.overcooked.parity`); CI checks parity without it against recorded digests
(``tests/games/overcooked/test_parity_recorded.py``). The scripted pairs' scores are a table:
``tom-envs reproduce overcooked``.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib import Sampler, measure
from gamebench import Part, load, main

from tom_envs.games.overcooked.layout import LAYOUT_NAMES

ROOT = Path(__file__).resolve().parents[1]
#: JaxMARL's CPU figures measured in shared/specs/peers.md §2a (cramped room, steps/s).
JAXMARL_PEERS_MD = {
    1: "29,258",
    64: "277,056",
    1024: "301,504 / 350,383",
}


# ---------------------------------------------------------------------------- parity
def parity(
    episodes: int,
    interact_episodes: int,
    obs_every: int,
    chunk: int,
    progress: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Replay ``episodes`` per layout (cooking ``auto``) and ``interact_episodes`` per layout
    (cooking ``interact``) in overcooked-ai 1.1.0 and in our rules; compare digests of every
    state, the rewards, and (every ``obs_every``-th episode) both players' lossless
    observations. Sequences: 40% uniformly random, 40% greedy bots with ε-noise (ε from 0.05 to
    0.5), 20% greedy with random start cells."""
    from tom_envs.games.overcooked.parity import (
        first_difference,
        greedy_policy,
        record_episode,
        replay_in_peer,
        replay_ours,
        uniform_policy,
    )
    from tom_envs.games.overcooked.rules import OvercookedConfig

    out: dict[str, Any] = {"cases": {}}
    for cooking, n in (("auto", episodes), ("interact", interact_episodes)):
        for layout in LAYOUT_NAMES:
            t0 = time.perf_counter()
            stats = {"episodes": 0, "steps": 0, "mismatches": [], "obs_checked": 0,
                     "soups": 0.0, "random_start": 0}  # fmt: skip
            for start in range(0, n, chunk):
                batch = []
                for i in range(start, min(n, start + chunk)):
                    kind = i % 5  # 0, 1 uniform; 2, 3 greedy; 4 greedy from random cells
                    cfg = OvercookedConfig(layout=layout, cooking=cooking, random_start=kind == 4)
                    eps = 0.05 + 0.45 * ((i * 7919) % 100) / 100
                    policy = uniform_policy if kind < 2 else greedy_policy(cfg, eps)
                    actions, st = record_episode(cfg, policy, seed=i)
                    batch.append((cfg, {"actions": actions, "start": st}, i))
                want_obs = obs_every > 0
                base = OvercookedConfig(layout=layout, cooking=cooking)
                # Observations are checked on a subset (they triple the peer's time).
                with_obs = [b for b in batch if want_obs and b[2] % obs_every == 0]
                without = [b for b in batch if not (want_obs and b[2] % obs_every == 0)]
                for group, obs in ((with_obs, True), (without, False)):
                    if not group:
                        continue
                    header, theirs = replay_in_peer(base, [e for _, e, _ in group], obs=obs)
                    assert header["terrain"] == list(base.kitchen.grid), "terrains differ"
                    for (cfg, ep, i), peer in zip(group, theirs, strict=True):
                        ours = replay_ours(cfg, ep["actions"], ep["start"], obs=obs)
                        diff = first_difference(ours, peer)
                        if diff is not None:
                            traced = replay_in_peer(base, [{**ep, "trace": True}], obs=obs)[1][0]
                            mine = replay_ours(cfg, ep["actions"], ep["start"], obs, trace=True)
                            stats["mismatches"].append(
                                {"episode": i, "where": first_difference(mine, traced) or diff}
                            )
                        stats["episodes"] += 1
                        stats["steps"] += len(ours.rewards)
                        stats["soups"] += sum(ours.rewards) / cfg.delivery_reward
                        stats["obs_checked"] += int(obs)
                        stats["random_start"] += int(cfg.random_start)
            stats["seconds"] = time.perf_counter() - t0
            out["cases"][f"{layout}/{cooking}"] = stats
            progress(
                f"{layout:22s} {cooking:8s} episodes {stats['episodes']} steps {stats['steps']} "
                f"soups {stats['soups']:.0f} mismatches {len(stats['mismatches'])} "
                f"obs-checked {stats['obs_checked']} ({stats['seconds']:.0f} s)"
            )
    return out


# ---------------------------------------------------------------------------- speed
def _peer_bench(cases: list[dict[str, Any]], seconds: float) -> list[dict[str, Any]]:
    from tom_envs.games.overcooked.parity import peer_python

    exe = peer_python()
    if exe is None:
        return []
    script = ROOT / "benchmarks" / "peers" / "bench_overcooked_ai.py"
    proc = subprocess.run(
        [str(exe), str(script), "--seconds", str(seconds), "--cases", json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])["results"]


def _our_single(layout: str, mode: str, seconds: float) -> dict[str, Any]:
    import pettingzoo

    from tom_envs.games.overcooked.env import make_bundle

    sampler = Sampler(0)
    index = sampler.index
    if mode in ("rules+obs", "rules+lossless"):
        observation = "lossless" if mode == "rules+lossless" else "both"
        bundle = make_bundle(layout=layout, observation=observation)
        game, enc = bundle.game, bundle.encoder
        rng = np.random.default_rng(0)

        def episode(seed: int) -> tuple[int, float, int]:
            s = game.initial_state(rng)
            enc.encode(game.observe(s, 0))
            enc.encode(game.observe(s, 1))
            steps = 0
            while not game.is_terminal(s):
                s = game.step(s, {0: index(6), 1: index(6)}, rng).state
                enc.encode(game.observe(s, 0))
                enc.encode(game.observe(s, 1))
                steps += 1
            return 2 * steps, steps, 0

    else:  # the PettingZoo Parallel API: dict observations (vector + mask) of both agents
        env = pettingzoo.make("parallel", "tom_envs/Overcooked-v0", layout=layout)

        def episode(seed: int) -> tuple[int, float, int]:
            env.reset(seed=seed)
            steps = 0
            while env.agents:
                env.step({"player_0": index(6), "player_1": index(6)})
                steps += 1
            return 2 * steps, steps, 0

    return measure(f"tom_envs:{layout}:{mode}", episode, seconds, params={"mode": mode})


def _our_batch(layout: str, batch: int, obs: bool, seconds: float) -> dict[str, Any]:
    from tom_envs.games.overcooked.vector import OvercookedVectorEnv

    venv = OvercookedVectorEnv(batch, layout=layout, observations=obs)
    rng = np.random.default_rng(0)
    venv.reset(seed=0)
    for _ in range(5):
        venv.step(rng.integers(6, size=(batch, 2)))
    steps = 0
    t0 = time.perf_counter()
    while True:
        venv.step(rng.integers(6, size=(batch, 2)))
        steps += 1
        if time.perf_counter() - t0 >= seconds:
            break
    dt = time.perf_counter() - t0
    return {
        "case": f"tom_envs.vector:{layout}:B={batch}:{'obs' if obs else 'raw'}",
        "batch": batch,
        "obs": obs,
        "joint_per_s": steps * batch / dt,
        "batch_steps": steps,
        "seconds": dt,
    }


def speed(
    seconds: float, repeats: int, layouts: list[str], progress: Callable[[str], None] = print
) -> dict[str, Any]:
    """Interleaved, in one run: overcooked-ai (raw, + lossless observations) and ours (rules +
    observations of both chefs; the PettingZoo Parallel env), then our numpy batch engine."""
    from tom_envs.games.overcooked.layout import builtin_layout

    runs: list[dict[str, Any]] = []
    loads = []
    for r in range(repeats):
        for layout in layouts:
            peer_layout = builtin_layout(layout).source
            jobs: list[Callable[[], list[dict[str, Any]]]] = [
                lambda pl=peer_layout: _peer_bench(
                    [
                        {"layout": pl, "obs": False},
                        {"layout": pl, "obs": True},
                        {"layout": pl, "obs": "featurized"},
                    ],
                    seconds,
                ),
                lambda lay=layout: [
                    _our_single(lay, "rules+obs", seconds),
                    _our_single(lay, "rules+lossless", seconds),
                    _our_single(lay, "parallel", seconds),
                ],
            ]
            if r % 2:
                jobs.reverse()
            for job in jobs:
                loads.append(os.getloadavg()[0])
                for res in job():
                    res["repeat"], res["layout"] = r, layout
                    runs.append(res)
                    progress(f"repeat {r} {res['case']:45s} {res['joint_per_s']:12,.0f} steps/s")
    for r in range(repeats):
        for batch, obs in ((1, True), (64, True), (1024, True), (1024, False)):
            loads.append(os.getloadavg()[0])
            res = _our_batch("cramped_room", batch, obs, seconds)
            res["repeat"], res["layout"] = r, "cramped_room"
            runs.append(res)
            progress(f"repeat {r} {res['case']:45s} {res['joint_per_s']:12,.0f} steps/s")
    return {
        "seconds": seconds,
        "repeats": repeats,
        "runs": runs,
        "load_averages": loads,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
    }


# ---------------------------------------------------------------------------- report
def _median(values: list[float]) -> float:
    return float(np.median(values)) if values else float("nan")


def report(runs: Path) -> str:
    """The page from the parts' JSON files."""
    lines = [
        "# Overcooked beside overcooked-ai 1.1.0: exact parity, speed",
        "",
        "Generated by `python benchmarks/overcooked.py report` from the JSON files its parts write "
        "(`runs/bench/overcooked/`); each section names its command. The scripted pairs' scores "
        "are `docs/results/overcooked.md` (`tom-envs reproduce overcooked`).",
        "",
    ]
    pa = load(runs, "parity")
    if pa:
        lines += _parity_section(pa)
    sd = load(runs, "speed")
    if sd:
        lines += _speed_section(sd)
    return "\n".join(lines) + "\n"


def _parity_section(pa: dict[str, Any]) -> list[str]:
    cases = pa["cases"]
    total_eps = sum(c["episodes"] for c in cases.values())
    total_steps = sum(c["steps"] for c in cases.values())
    bad = sum(len(c["mismatches"]) for c in cases.values())
    lines = [
        "## Exact parity with overcooked-ai 1.1.0",
        "",
        f"Command: `{pa.get('command', '')}`. overcooked-ai runs in its own venv "
        "(`~/peers/venv-overcooked`: overcooked-ai 1.1.0, numpy 1.26.4, scipy) through "
        "`benchmarks/peers/overcooked_ai_replay.py`, which replays our joint action sequences and "
        "returns a SHA-1 digest of every state (players' cells, facings and held objects; every "
        "object on counters and in pots with its ingredients and cooking tick; the timestep), "
        "every reward, and for a subset of episodes a digest of both players' "
        "`lossless_state_encoding` at every step. Sequences: 40% uniformly random actions, 40% "
        "greedy bots with ε-random actions (ε from 0.05 to 0.5, so that pots are filled, started, "
        "cooked, served, dishes and onions land on counters, chefs collide), 20% greedy from random "
        'start cells. `cooking="auto"` is compared with overcooked-ai 1.1.0 plus the few lines '
        "later releases ship as `old_dynamics=True` (a full pot starts by itself; 1.1.0 has no "
        'switch for it); `cooking="interact"` with overcooked-ai 1.1.0 unchanged.',
        "",
        f"**{total_eps:,} episodes, {total_steps:,} steps, {bad} mismatches.**",
        "",
        "| layout | cooking | episodes | steps | soups delivered | lossless obs checked | "
        "random starts | mismatches | seconds |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for key, c in cases.items():
        layout, cooking = key.split("/")
        lines.append(
            f"| {layout} | {cooking} | {c['episodes']} | {c['steps']:,} | {c['soups']:.0f} | "
            f"{c['obs_checked']} | {c['random_start']} | {len(c['mismatches'])} | "
            f"{c['seconds']:.0f} |"
        )
    for key, c in cases.items():
        for m in c["mismatches"][:3]:
            lines.append(f"* {key} episode {m['episode']}: {m['where']}")
    lines += [
        "",
        "The same check runs in the test suite when the peer venv exists "
        "(`tests/games/overcooked/test_parity.py`: 20 traced episodes, every state compared "
        "field by field, observations included; skipped with the reason otherwise).",
        "",
    ]
    return lines


def _speed_section(sd: dict[str, Any]) -> list[str]:
    runs = sd["runs"]

    def med(case: str) -> float:
        return _median([r["joint_per_s"] for r in runs if r["case"] == case])

    def spread(case: str) -> str:
        vals = [r["joint_per_s"] for r in runs if r["case"] == case]
        return "/".join(f"{v:,.0f}" for v in vals)

    loads = sd.get("load_averages", [])
    lines = [
        "## Speed",
        "",
        f"Command: `{sd.get('command', '')}`: {sd['repeats']} interleaved repeats of "
        f"{sd['seconds']:g} s per case (ours and overcooked-ai alternate, order reversed every "
        "other repeat), uniformly random joint actions, whole 400-step episodes, on this 2-core VM "
        f"(1-minute load average during the run: {min(loads, default=0):.1f} to "
        f"{max(loads, default=0):.1f}; other sessions were running, so compare ratios, not "
        "absolute numbers). Steps = joint steps (one action per chef). Medians, then every "
        "repeat.",
        "",
        "### Single environment, with observations",
        "",
        "| layout | overcooked-ai 1.1.0 raw | overcooked-ai + featurized obs (both players) | "
        "overcooked-ai + lossless obs (both players) | ours: rules + full obs (planes + features) "
        "of both chefs | ratio to featurized | ratio to lossless | ours: rules + lossless planes "
        "only | ratio to lossless | ours: PettingZoo Parallel env (full obs) | ratio to "
        "featurized |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for layout in sorted({r["layout"] for r in runs if r["case"].startswith("tom_envs:")}):
        src = {"counter_circuit": "counter_circuit_o_1order"}.get(layout, layout)
        raw, obs = f"overcooked_ai:{src}:raw", f"overcooked_ai:{src}:obs"
        feat = f"overcooked_ai:{src}:featurized"
        rules, par = f"tom_envs:{layout}:rules+obs", f"tom_envs:{layout}:parallel"
        lossless = f"tom_envs:{layout}:rules+lossless"
        peer, fpeer = med(obs), med(feat)
        lines.append(
            f"| {layout} | {med(raw):,.0f} | {fpeer:,.0f} ({spread(feat)}) | {peer:,.0f} "
            f"({spread(obs)}) | {med(rules):,.0f} ({spread(rules)}) | "
            f"**{med(rules) / fpeer:.1f}x** | {med(rules) / peer:.1f}x | {med(lossless):,.0f} "
            f"({spread(lossless)}) | **{med(lossless) / peer:.1f}x** | {med(par):,.0f} "
            f"({spread(par)}) | {med(par) / fpeer:.1f}x |"
        )
    lines += [
        "",
        "The issue's reference is overcooked-ai with its featurized observations "
        "(`featurize_state_mdp`, the MLP input of its PPO agents, both players): our default "
        "observation (planes and features) against it is the headline ratio; against "
        "overcooked-ai's lossless planes, ours with the same planes is the like-for-like one.",
        "",
        "*Ours, rules + obs*: `game.step(state, {0: a0, 1: a1}, rng)` (validated) and "
        "`encoder.encode(game.observe(state, p))` for both chefs, i.e. the planes (the same "
        "lossless encoding overcooked-ai computes, value for value) **and** the compact "
        'features. *Lossless only*: the same with `observation="lossless"`, exactly what '
        "overcooked-ai's `env.step` + `lossless_state_encoding_mdp` compute (value for value). "
        '*Parallel env*: `pettingzoo.make("parallel", "tom_envs/Overcooked-v0")` `.step()`, '
        "which adds the PettingZoo bookkeeping (dicts, masks, checks).",
        "",
        "### Batched rollouts (numpy, `tom_envs.games.overcooked.vector.OvercookedVectorEnv`)",
        "",
        "| batch B | ours: steps/s with observations (both chefs) | JaxMARL `overcooked` CPU, "
        "cramped room (shared/specs/peers.md §2a) |",
        "|---|---|---|",
    ]
    for batch in (1, 64, 1024):
        case = f"tom_envs.vector:cramped_room:B={batch}:obs"
        lines.append(
            f"| {batch} | {med(case):,.0f} ({spread(case)}) | {JAXMARL_PEERS_MD.get(batch, '')} |"
        )
    raw = "tom_envs.vector:cramped_room:B=1024:raw"
    lines += [
        f"| 1024, dynamics only (no observations) | {med(raw):,.0f} ({spread(raw)}) | |",
        "",
        "JaxMARL was not re-measured in this run (it needs its own venv with jax; peers.md "
        "measured it on the same kind of VM with `jit(lax.scan(vmap(env.step)))`, observations "
        "folded into a checksum, after 4.8-7 s of compilation). Our batch engine computes, env by "
        "env, exactly what the rules and the encoder compute (`tests/games/overcooked/"
        "test_vector.py`), with no compilation. B=1 shows numpy's per-call overhead: a single env "
        "is faster through the rules engine above.",
        "",
    ]
    return lines


PARTS = (
    Part("parity", "replay action sequences in overcooked-ai and compare every state",
         lambda a: parity(a.episodes, a.interact_episodes, a.obs_every, a.chunk),
         (("--episodes", {"type": int, "default": 1000}),
          ("--interact-episodes", {"type": int, "default": 200}),
          ("--obs-every", {"type": int, "default": 4}),
          ("--chunk", {"type": int, "default": 100}))),
    Part("speed", "single env and batched rollouts beside overcooked-ai",
         lambda a: speed(a.seconds, a.repeats, a.layouts),
         (("--seconds", {"type": float, "default": 5.0}),
          ("--repeats", {"type": int, "default": 3}),
          ("--layouts", {"nargs": "*", "default": ["cramped_room", "counter_circuit"]}))),
)  # fmt: skip

if __name__ == "__main__":
    raise SystemExit(main("overcooked", __doc__, PARTS, report))
