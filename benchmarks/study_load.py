"""Load test of a study: N simulated participants at once, in pairs and alone, against a real
``tom-envs study serve`` (a separate process, its journal fsync'd), then every record checked.

    .venv/bin/python benchmarks/study_load.py --participants 60 --json runs/bench/study_load.json

The study (written to the work folder): the iterated Prisoner's Dilemma, 6 rounds, a practice
round with a bot, then counterbalanced a game with another person (waiting room ``--wait`` s,
fallback to tit-for-tat) and a game with tit-for-tat, a survey after each game and at the end.
Every participant is a coroutine (httpx over loopback) that answers every page and plays with a
think time drawn from a seeded generator (``--think`` s on average), all of them at once. Then the
server is stopped (SIGTERM) and the script checks that every participant completed, that every
move a participant got acknowledged is in the journal exactly once, that every episode ended, and
that the exported dataset replays on the engine (``tom-envs study verify``). It prints and writes
(``--json``) the wall time, the requests, the move latencies (p50, p95, max) and these counts.
Exit status 1 when a record is missing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
STUDY = '''[study]
name = "load"
title = "Load test"
[consent]
text = "We record your moves."
[instructions]
text = "Play."
[assignment]
design = "within"
order = "counterbalanced"
seed = 1
[matching]
wait_seconds = {wait}
leave_grace_seconds = 120
[[games]]
name = "pd"
game = "PrisonersDilemma"
kwargs = {{ horizon = 6 }}
seed = 10
[games.practice]
episodes = 1
partner = "always_0"
kwargs = {{ horizon = 2 }}
[[conditions]]
name = "person"
partner = "human"
fallback = "tft"
[[conditions]]
name = "tft"
partner = "tit_for_tat"
[[survey.episode]]
id = "enjoy"
kind = "likert"
text = "Enjoyed?"
scale = ["no", "yes"]
[[survey.end]]
id = "comments"
kind = "text"
text = "Comments?"
required = false
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Participant:
    """One simulated person: answers every page, plays, counts what was acknowledged."""

    def __init__(self, client: httpx.AsyncClient, pid: str, key: str, rng: np.random.Generator,
                 think: float) -> None:  # fmt: skip
        self.c, self.pid, self.h = client, pid, {"X-Participant-Key": key}
        self.rng, self.think = rng, think
        self.acked = 0
        self.latencies: list[float] = []
        self.requests = 0

    async def get(self) -> dict[str, Any]:
        self.requests += 1
        r = await self.c.get(f"/api/p/{self.pid}", headers=self.h)
        r.raise_for_status()
        return r.json()

    async def post(self, path: str, body: dict[str, Any]) -> httpx.Response:
        self.requests += 1
        return await self.c.post(f"/api/p/{self.pid}{path}", json=body, headers=self.h)

    async def run(self) -> str:
        for _ in range(2000):
            s = await self.get()
            kind = s["kind"]
            if kind == "done":
                return kind
            await asyncio.sleep(float(self.rng.exponential(self.think)))
            if kind == "consent":
                await self.post("/step", {"step": s["step"], "agree": True})
            elif kind in ("instructions", "intro"):
                await self.post("/step", {"step": s["step"]})
            elif kind == "survey":
                answers = {i["id"]: (i["options"][-1] if i["options"] else "ok") for i in s["items"]}
                await self.post("/step", {"step": s["step"], "answers": answers})
            elif kind == "play" and s["board"]["your_turn"]:
                await self.move(s["board"])
            else:
                await asyncio.sleep(0.2)  # waiting for a partner
        return "unfinished"

    async def move(self, board: dict[str, Any]) -> None:
        action = board["actions"][int(self.rng.integers(len(board["actions"])))]["id"]
        t = time.perf_counter()
        r = await self.post("/act", {"step": board["step"], "action": action})
        if r.status_code == 200:
            self.latencies.append(time.perf_counter() - t)
            self.acked += 1


def serve(study: Path, data: Path, port: int) -> subprocess.Popen[bytes]:
    """``tom-envs study serve`` in its own process, ready to take requests."""
    from tom_envs.serve.study.launch import serve_process

    try:
        return serve_process(study, data, port, "--per-client", "10000", cwd=ROOT, tries=600)
    except RuntimeError as exc:
        raise SystemExit(f"the server did not start: {exc}") from exc


async def crowd(port: int, keys: dict[str, str], think: float, seed: int) -> list[Participant]:
    limits = httpx.Limits(max_connections=len(keys) * 2)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=120,
                                 limits=limits) as client:  # fmt: skip
        people = [Participant(client, pid, key, np.random.default_rng([seed, k]), think)
                  for k, (pid, key) in enumerate(keys.items())]  # fmt: skip
        ends = await asyncio.gather(*(p.run() for p in people))
    for p, end in zip(people, ends, strict=True):
        p.end = end  # type: ignore[attr-defined]
    return people


def check(data: Path, people: list[Participant]) -> dict[str, Any]:
    """The records: every participant, every acknowledged move, every episode."""
    events = [json.loads(x) for x in (data / "journal.jsonl").read_text().splitlines() if x]
    moves: dict[str, int] = {}
    for e in events:
        if e["ev"] == "move" and e["rec"].get("human"):
            pid = e["rec"]["participant"]
            moves[pid] = moves.get(pid, 0) + 1
    started = {e["sid"] for e in events if e["ev"] == "started"}
    ended = {e["sid"] for e in events if e["ev"] == "ended"}
    pairs = sum(1 for e in events if e["ev"] == "started" and len(e["members"]) == 2)
    return {
        "completed": sum(1 for e in events if e["ev"] == "completed"),
        "moves_acknowledged": sum(p.acked for p in people),
        "moves_journaled": sum(moves.values()),
        "participants_with_every_move": sum(moves.get(p.pid, 0) == p.acked for p in people),
        "episodes": len(started), "episodes_ended": len(started & ended),
        "human_human_episodes": pairs,
        "fallbacks": sum(1 for e in events if e["ev"] == "timeout"),
        "seq_contiguous": [e["seq"] for e in events] == list(range(len(events))),
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--participants", type=int, default=60)
    ap.add_argument("--think", type=float, default=0.3, help="mean think time per page (s)")
    ap.add_argument("--wait", type=float, default=20, help="waiting room limit (s)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", help="folder for the study and its data (default: a temporary one)")
    ap.add_argument("--json", help="write the report here")
    args = ap.parse_args(argv)
    work = Path(args.work or tempfile.mkdtemp(prefix="study-load-"))
    work.mkdir(parents=True, exist_ok=True)
    study, data = work / "load.toml", work / "data"
    study.write_text(STUDY.format(wait=args.wait))
    sys.path.insert(0, str(ROOT))
    from tom_envs.serve.study.server import participant_key, study_secret

    data.mkdir(parents=True, exist_ok=True)
    secret = study_secret(data / "secret.key")
    keys = {f"load{k:06d}": participant_key(secret, f"load{k:06d}") for k in range(args.participants)}
    port = free_port()
    proc = serve(study, data, port)
    t0, cpu0 = time.perf_counter(), os.times()
    try:
        people = asyncio.run(crowd(port, keys, args.think, args.seed))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    wall = time.perf_counter() - t0
    cpu = os.times()
    report = _report(args, people, wall, cpu.children_user + cpu.children_system
                     - cpu0.children_user - cpu0.children_system, check(data, people))  # fmt: skip
    verify = subprocess.run([sys.executable, "-m", "tom_envs.cli", "study", "export", str(study),
                             "--data", str(data), "--out", str(work / "dataset")], cwd=ROOT,
                            capture_output=True, text=True)  # fmt: skip
    replay = subprocess.run([sys.executable, "-m", "tom_envs.cli", "study", "verify",
                             str(work / "dataset")], cwd=ROOT, capture_output=True, text=True)  # fmt: skip
    report["dataset_replays"] = verify.returncode == 0 and replay.returncode == 0
    print(json.dumps(report, indent=1))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    r = report["records"]
    ok = (r["completed"] == args.participants and r["moves_acknowledged"] == r["moves_journaled"]
          and r["participants_with_every_move"] == args.participants
          and r["episodes"] == r["episodes_ended"] and r["seq_contiguous"]
          and report["dataset_replays"])  # fmt: skip
    print("every record complete" if ok else "RECORDS MISSING", file=sys.stderr)
    return 0 if ok else 1


def _report(args: argparse.Namespace, people: list[Participant], wall: float, server_cpu: float,
            records: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    lat = np.array([x for p in people for x in p.latencies]) if people else np.zeros(1)
    return {
        "command": "python benchmarks/study_load.py " + " ".join(sys.argv[1:]),
        "participants": args.participants, "think_s": args.think, "wait_s": args.wait,
        "wall_s": round(wall, 2), "server_cpu_s": round(server_cpu, 2),
        "requests": sum(p.requests for p in people),
        "moves": int(lat.size),
        "move_latency_ms": {"p50": round(float(np.percentile(lat, 50)) * 1000, 1),
                            "p95": round(float(np.percentile(lat, 95)) * 1000, 1),
                            "max": round(float(lat.max()) * 1000, 1)},
        "unfinished": sum(1 for p in people if getattr(p, "end", "") != "done"),
        "records": records,
        "cpus": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()],
    }  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
