"""Benchmark every game in tom_envs.GAMES (but the teaching example) and, when installed, its closest
peers, in one sitting.

    .venv/bin/python benchmarks/run.py [--seconds S] [--repeats R] [--games NAME ...]
                                       [--modes aec,parallel,...] [--peers auto|none]
                                       [--json out.json]

Each measurement is a subprocess that prints one JSON line: ``benchmarks/ours.py`` in this venv for
tom_envs, ``benchmarks/peers/bench_*.py`` in the peers' venv (``${PEERS_DIR:-~/peers}/venv``, made
by ``benchmarks/setup_peers.sh``) for the peers. Within one repeat the jobs run game by game,
ours then its peers; odd repeats run the list backwards, so slow drift of the machine hits both
sides alike. Reported numbers are medians over the repeats, with the spread (max-min)/median.

A new game is benchmarked by being in ``tom_envs.registration.GAMES``; its peer comparison is one
entry of ``PEERS`` in ``benchmarks/peer_cases.py``. Another configuration of a game (Hanabi with 4
players) is an entry of ``VARIANTS`` there, benchmarked and compared under its own name.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from ours import ALL_MODES, modes_for  # noqa: E402
from peer_cases import PEERS, SUITES, VARIANTS  # noqa: E402

import tom_envs  # noqa: E402
from tom_envs.registration import GAMES, GameSpec, game_spec  # noqa: E402


@dataclass(frozen=True)
class BenchGame:
    """One benchmarked configuration: a registered game, or a :data:`VARIANTS` entry."""

    name: str
    spec: GameSpec
    kwargs: dict[str, Any] = field(default_factory=dict, hash=False)


def bench_game(name: str) -> BenchGame:
    """A :data:`VARIANTS` name or a registered game's name or id (``KeyError`` otherwise)."""
    if name in VARIANTS:
        game, kwargs = VARIANTS[name]
        return BenchGame(name, game_spec(game), dict(kwargs))
    spec = game_spec(name)
    return BenchGame(spec.name, spec)


# ----------------------------------------------------------------------------- jobs


@dataclass
class Job:
    suite: str  # "tom_envs" or a key of SUITES
    game: str
    cmd: list[str]
    n_cases: int


def peer_python(peers_dir: str) -> str:
    return os.path.join(peers_dir, "venv", "bin", "python")


def available_suites(py: str, wanted: Iterable[str]) -> dict[str, str]:
    """suite -> "" if importable in the peers' venv, else the reason it is not."""
    out = {}
    for s in sorted(set(wanted)):
        if not os.path.exists(py):
            out[s] = f"no peer venv at {py} (run: bash benchmarks/setup_peers.sh)"
            continue
        r = subprocess.run(
            [py, "-c", f"import {SUITES[s].module}"],
            capture_output=True,
            text=True,
            env=_child_env(),
        )
        out[s] = "" if r.returncode == 0 else (r.stderr.strip().splitlines() or ["?"])[-1]
    return out


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYGAME_HIDE_SUPPORT_PROMPT"] = "1"
    env.pop("PYTHONPATH", None)  # the peers' venv must not see this repo's packages
    return env


def build_jobs(
    games: list[BenchGame],
    modes: list[str],
    seconds: float,
    seed: int,
    suites_ok: dict[str, str],
    py: str,
) -> list[Job]:
    jobs = []
    for bg in games:
        spec = bg.spec
        game_modes = modes_for(spec, modes)
        if game_modes:
            jobs.append(
                Job(
                    "tom_envs",
                    bg.name,
                    [
                        sys.executable,
                        os.path.join(HERE, "ours.py"),
                        "--game",
                        spec.name,
                        "--label",
                        bg.name,
                        "--kwargs",
                        json.dumps(bg.kwargs),
                        "--modes",
                        ",".join(game_modes),
                        "--seconds",
                        str(seconds),
                        "--seed",
                        str(seed),
                    ],
                    len(game_modes),
                )
            )
        by_suite: dict[str, list[dict[str, Any]]] = {}
        for pc in PEERS.get(bg.name, ()):
            if suites_ok.get(pc.suite) == "":
                by_suite.setdefault(pc.suite, []).append({**pc.case, "label": pc.key})
        for suite, cases in by_suite.items():
            jobs.append(
                Job(
                    suite,
                    bg.name,
                    [
                        py,
                        os.path.join(HERE, SUITES[suite].script),
                        "--seconds",
                        str(seconds),
                        "--seed",
                        str(seed),
                        "--cases",
                        json.dumps(cases),
                    ],
                    len(cases),
                )
            )
    return jobs


def run_job(job: Job, seconds: float) -> dict[str, Any]:
    timeout = 120 + job.n_cases * seconds * 5
    t0 = time.perf_counter()
    try:
        r = subprocess.run(
            job.cmd, capture_output=True, text=True, timeout=timeout, env=_child_env(), cwd=HERE
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout:.0f}s"}
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode != 0 or not lines:
        tail = (r.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"exit {r.returncode}: {tail[:300]}"}
    out = json.loads(lines[-1])
    out["wall"] = time.perf_counter() - t0
    return out


# ----------------------------------------------------------------------------- stats and tables

METRICS = (
    "moves_per_s",
    "joint_per_s",
    "eps_per_s",
    "moves_per_episode",
    "joint_per_episode",
    "obs_chars_per_move",
    "moves_per_cpu_s",
)


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    med = {m: statistics.median(r[m] for r in runs) for m in METRICS if m in runs[0]}
    vals = [r["moves_per_s"] for r in runs]
    med["spread"] = (max(vals) - min(vals)) / med["moves_per_s"] if med["moves_per_s"] else 0.0
    med["n"] = len(runs)
    return med


def fmt(x: float | None, digits: int = 0) -> str:
    if x is None:
        return "-"
    return f"{x:,.{digits}f}"


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def table(header: list[str], rows: list[list[str]]) -> str:
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)
    ]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), sep, *(line(r) for r in rows)])


def ours_table(games: list[BenchGame], ours: dict[str, dict[str, dict[str, Any]]]) -> str:
    header = [
        "game",
        "AEC moves/s",
        "AEC joint/s",
        "AEC eps/s",
        "Parallel joint/s",
        "Parallel eps/s",
        "text moves/s",
        "text chars/obs",
        "LLM-loop moves/s",
        "text wrapper moves/s",
        "rules joint/s",
        "max spread",
    ]
    rows = []
    for bg in games:
        g = ours.get(bg.name, {})

        def get(mode: str, metric: str, g: dict = g) -> float | None:
            return g.get(mode, {}).get(metric)

        spreads = [m["spread"] for m in g.values()]
        rows.append(
            [
                bg.name,
                fmt(get("aec", "moves_per_s")),
                fmt(get("aec", "joint_per_s")),
                fmt(get("aec", "eps_per_s"), 1),
                fmt(get("parallel", "joint_per_s")),
                fmt(get("parallel", "eps_per_s"), 1),
                fmt(get("text", "moves_per_s")),
                fmt(get("text", "obs_chars_per_move")),
                fmt(get("llm", "moves_per_s")),
                fmt(get("textenv", "moves_per_s")),
                fmt(get("rules", "joint_per_s")),
                pct(max(spreads) if spreads else None),
            ]
        )
    return table(header, rows)


MODE_TEXT = {
    "aec": "AEC + last()",
    "parallel": "Parallel",
    "text": "text_observation",
    "llm": "LLM loop (prompt+parse)",
    "textenv": "text wrapper (TextAECEnv)",
    "rules": "rules engine",
}


def comparisons(games: list[BenchGame], ours: dict, peers: dict) -> list[dict[str, Any]]:
    rows = []
    for bg in games:
        for pc in PEERS.get(bg.name, ()):
            p = peers.get(pc.key)
            if p is None:
                continue
            for mode in pc.ours:
                o = ours.get(bg.name, {}).get(mode)
                if o is None:
                    continue
                cpu_o, cpu_p = o.get("moves_per_cpu_s"), p.get("moves_per_cpu_s")
                rows.append(
                    {
                        "game": bg.name,
                        "ours_mode": mode,
                        "peer": pc.key,
                        "peer_label": pc.label,
                        "ours_moves_per_s": o["moves_per_s"],
                        "peer_moves_per_s": p["moves_per_s"],
                        "ours_joint_per_s": o["joint_per_s"],
                        "peer_joint_per_s": p["joint_per_s"],
                        "ratio": o["moves_per_s"] / p["moves_per_s"],
                        "ratio_cpu": cpu_o / cpu_p if cpu_o and cpu_p else None,
                        "ours_moves_per_episode": o["moves_per_episode"],
                        "peer_moves_per_episode": p["moves_per_episode"],
                        "ours_spread": o["spread"],
                        "peer_spread": p["spread"],
                    }
                )
    return rows


def comparison_table(rows: list[dict[str, Any]]) -> str:
    header = [
        "game",
        "ours (mode)",
        "peer",
        "ours moves/s",
        "peer moves/s",
        "ours joint/s",
        "peer joint/s",
        "ours/peer",
        "per CPU s",
        "moves/ep ours|peer",
        "spread ours|peer",
    ]
    out = []
    for r in rows:
        out.append(
            [
                r["game"],
                MODE_TEXT[r["ours_mode"]],
                r["peer_label"],
                fmt(r["ours_moves_per_s"]),
                fmt(r["peer_moves_per_s"]),
                fmt(r["ours_joint_per_s"]),
                fmt(r["peer_joint_per_s"]),
                f"{r['ratio']:.2f}x",
                "-" if r.get("ratio_cpu") is None else f"{r['ratio_cpu']:.2f}x",
                f"{r['ours_moves_per_episode']:.0f} | {r['peer_moves_per_episode']:.0f}",
                f"{pct(r['ours_spread'])} | {pct(r['peer_spread'])}",
            ]
        )
    return table(header, out)


UNITS = """\
Units: a "move" is one agent's action (one AEC step() with an action, one TextArena step());
a "joint step" is one application of the rules (one Parallel step(), one OpenSpiel apply_actions).
In these 2-player simultaneous games 1 joint step = 2 moves, so an AEC step is half a joint step:
our AEC "steps/s" equal moves/s, while OpenSpiel's and PettingZoo-Parallel's "steps/s" are joint/s.
Both columns are given for every row and the ratio ours/peer is the same in either unit (it would
be off by 2x if our AEC steps/s were put beside OpenSpiel steps/s). TextArena "joint" = moves/2
(pairs of player turns; an IPD round is 4 turns: 2 chat + 2 decisions). eps/s are not comparable
across rows: episode lengths differ (moves/ep column). "per CPU s" is the ratio of moves per
second of each process's own CPU time: on a shared machine the wall clock also counts the time
other processes held the CPU."""


# ----------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--seconds", type=float, default=3.0, help="timed loop per case (default 3)")
    p.add_argument("--repeats", type=int, default=3, help="interleaved repeats (default 3)")
    p.add_argument(
        "--games", nargs="*", default=None,
        help="names or ids, or VARIANTS names such as Hanabi4p (default: every game of GAMES "
        "but the teaching example, and every variant)",
    )
    p.add_argument("--modes", default=",".join(ALL_MODES), help=f"our modes, of {ALL_MODES}")
    p.add_argument(
        "--peers",
        choices=("auto", "none"),
        default="auto",
        help="auto: measure the peers whose venv is installed; none: ours only",
    )
    p.add_argument(
        "--peers-dir", default=os.environ.get("PEERS_DIR", os.path.expanduser("~/peers"))
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default=None, help="write every run and the summary here")
    args = p.parse_args(argv)

    try:
        games = (
            [bench_game(g) for g in args.games]
            if args.games
            else [BenchGame(g.name, g) for g in GAMES if not g.example]  # not the teaching example
            + [bench_game(v) for v in VARIANTS]
        )
    except KeyError as e:
        p.error(str(e.args[0]))
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if set(modes) - set(ALL_MODES):
        p.error(f"unknown modes {sorted(set(modes) - set(ALL_MODES))}; choose from {ALL_MODES}")
    py = peer_python(args.peers_dir)
    wanted = {pc.suite for g in games for pc in PEERS.get(g.name, ())}
    suites_ok = available_suites(py, wanted) if args.peers == "auto" else {}
    for s, why in suites_ok.items():
        if why:
            print(f"# peer {s} skipped: {why}", file=sys.stderr)

    jobs = build_jobs(games, modes, args.seconds, args.seed, suites_ok, py)
    n_cases = sum(j.n_cases for j in jobs)
    print(
        f"# {len(games)} games, {len(jobs)} jobs / {n_cases} cases per repeat, {args.repeats} "
        f"repeats x {args.seconds:g}s: >= {n_cases * args.seconds * args.repeats / 60:.1f} min",
        file=sys.stderr,
    )

    runs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    versions: dict[str, dict[str, str]] = {}
    errors: list[dict[str, Any]] = []
    loads: list[float] = []
    cpus = os.cpu_count() or 1
    if os.getloadavg()[0] > 0.5 * cpus:
        print(
            f"# WARNING: load average {os.getloadavg()[0]:.1f} on {cpus} cpus before starting: "
            "other processes compete for the CPU, absolute numbers will be low and noisy "
            "(ratios from interleaved runs suffer less)",
            file=sys.stderr,
        )
    for rep in range(args.repeats):
        order = jobs if rep % 2 == 0 else list(reversed(jobs))
        for job in order:
            job.cmd[job.cmd.index("--seed") + 1] = str(args.seed + rep)
            load_before = os.getloadavg()[0]
            out = run_job(job, args.seconds)
            loads.append(load_before)
            if "error" in out:
                errors.append(
                    {"repeat": rep, "suite": job.suite, "game": job.game, "error": out["error"]}
                )
                print(
                    f"# [{rep + 1}/{args.repeats}] {job.suite:10s} {job.game}: FAILED "
                    f"{out['error']}",
                    file=sys.stderr,
                )
                continue
            versions[job.suite] = out["versions"]
            brief = []
            for res in out["results"]:
                res["repeat"] = rep
                runs.setdefault((job.suite, res["case"]), []).append(res)
                brief.append(f"{res['case'].split(':', 1)[-1]} {res['moves_per_s']:,.0f}")
            print(
                f"# [{rep + 1}/{args.repeats}] {job.suite:10s} {job.game}: moves/s "
                + ", ".join(brief)
                + f"  ({out['wall']:.1f}s)",
                file=sys.stderr,
            )

    ours: dict[str, dict[str, dict[str, Any]]] = {}
    peers: dict[str, dict[str, Any]] = {}
    for (suite, case), rs in runs.items():
        if suite == "tom_envs":
            game, mode = case.split(":", 1)
            ours.setdefault(game, {})[mode] = summarize(rs)
        else:
            peers[case] = summarize(rs)
    comps = comparisons(games, ours, peers)

    stamp = datetime.datetime.now().isoformat(timespec="seconds")
    load_txt = (
        f"1-min load avg before jobs: median {statistics.median(loads):.1f}, max {max(loads):.1f}"
        if loads
        else "no jobs ran"
    )
    print(
        f"\n## tom_envs {tom_envs.__version__} throughput ({stamp}, {platform.node()}, "
        f"{cpus} cpus, Python {platform.python_version()}; median of {args.repeats} "
        f"x {args.seconds:g}s, random legal actions, observations every step; {load_txt})\n"
    )
    print(ours_table(games, ours))
    if comps:
        print("\n## ours vs peers (same sitting, interleaved; medians)\n")
        print(comparison_table(comps))
        print()
        print(UNITS)
        print(
            "\nversions: "
            + "; ".join(
                f"{s}: " + ", ".join(f"{k} {v}" for k, v in vs.items())
                for s, vs in sorted(versions.items())
            )
        )
    slow = [g for g, m in ours.items() if "aec" in m and m["aec"]["moves_per_s"] < 20_000]
    if slow:
        print(
            f"\nNOTE: below 20k AEC moves/s: {', '.join(slow)}. Profile with: "
            f"python benchmarks/ours.py --game {VARIANTS.get(slow[0], (slow[0],))[0]} "
            f"--modes aec --profile"
        )
    if errors:
        print(
            f"\n{len(errors)} job(s) failed: "
            + "; ".join(
                f"{e['suite']}/{e['game']} (repeat {e['repeat'] + 1}): {e['error']}" for e in errors
            )
        )

    if args.json:
        payload = {
            "date": stamp,
            "host": platform.node(),
            "cpus": cpus,
            "loadavg_before_jobs": loads,
            "args": vars(args),
            "versions": versions,
            "ours": ours,
            "peers": peers,
            "comparisons": comps,
            "errors": errors,
            "runs": [{"suite": s, **r} for (s, _c), rs in runs.items() for r in rs],
        }
        with open(args.json, "w") as fh:
            json.dump(payload, fh, indent=1)
        print(f"\nwrote {args.json}")
    return 1 if errors and not runs else 0


if __name__ == "__main__":
    sys.exit(main())
