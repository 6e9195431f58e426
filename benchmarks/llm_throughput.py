"""LLM-call throughput of ``tom-envs eval`` against a fixed-latency endpoint (issues 21, 33).

A fake OpenAI-compatible endpoint on loopback answers every ``/v1/chat/completions`` request
after exactly ``--latency`` seconds (default 1 s), with unlimited parallelism (an asyncio server:
a waiting request costs no thread). The benchmark writes an eval config of ``--episodes``
episodes (default 64) of an LLM agent against a partner bot and runs **the command itself**,
``python -m tom_envs.cli eval CONFIG`` in a subprocess, with its defaults (workers = CPU count,
episodes in flight: the default for LLM jobs; add ``--cli-args`` to change them). Every decision
is one call. It reports:

* the call rate over the whole command (start-up and tail included) and in its steady part
  (first request to last answer at the server), against the ideal ``episodes / latency``; the
  target is at least 0.8 x the ideal (51.2 calls/s for 64 episodes at 1 s);
* the peak number of requests the server held at once (a pool or connection limit shows as a
  peak below the episode count);
* the peak memory of the command's process tree (the sum of RSS over the processes, sampled every
  0.1 s, and the sum of PSS, which counts pages shared by forked workers once); target < 1 GB.

Run (not a unit test; about 30 s at the defaults)::

    .venv/bin/python benchmarks/llm_throughput.py --episodes 64 --horizon 20 --latency 1.0

The agent samples (``temperature=0.7``: each episode's requests differ, as in a real run, so the
response cache answers none of them).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class SlowEndpoint:
    """An asyncio HTTP/1.1 server answering chat completions after a fixed delay (and the
    endpoint check's ``GET /models`` at once)."""

    def __init__(self, latency_s: float, content: str = "Action: Option J") -> None:
        self.latency_s = latency_s
        self.content = content
        self.requests = 0
        self.in_flight = 0
        self.peak = 0
        self.first: float | None = None
        self.last: float | None = None
        self.loop = asyncio.new_event_loop()
        self.port = 0
        ready = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self.thread.start()
        ready.wait()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)

        async def start() -> None:
            server = await asyncio.start_server(self._handle, "127.0.0.1", 0, backlog=1024)
            self.port = server.sockets[0].getsockname()[1]
            ready.set()

        self.loop.run_until_complete(start())
        self.loop.run_forever()

    def _body(self) -> bytes:
        return json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "slow",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": self.content},
                    }
                ],
                "usage": {"prompt_tokens": 100, "completion_tokens": 4, "total_tokens": 104},
            }
        ).encode()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                length = 0
                for line in lines:
                    if line.lower().startswith("content-length:"):
                        length = int(line.split(":", 1)[1])
                if length:
                    await reader.readexactly(length)
                if lines[0].startswith("GET"):
                    body = b'{"object": "list", "data": []}'
                else:
                    self.requests += 1
                    self.in_flight += 1
                    self.peak = max(self.peak, self.in_flight)
                    now = time.monotonic()
                    self.first = self.first if self.first is not None else now
                    await asyncio.sleep(self.latency_s)
                    self.in_flight -= 1
                    self.last = time.monotonic()
                    body = self._body()
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    + f"content-length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    def close(self) -> None:
        """Stop the server's loop."""
        self.loop.call_soon_threadsafe(self.loop.stop)


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def _memory_kb(pids: list[int]) -> tuple[int, int]:
    """Sum of RSS and of PSS (kB) over ``pids``."""
    rss = pss = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/smaps_rollup") as fh:
                for line in fh:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
        except OSError:
            continue
    return rss, pss


def main(argv: list[str] | None = None) -> int:
    """Run the command against the endpoint and print the figures beside the targets."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=64)
    parser.add_argument("--horizon", type=int, default=20, help="decisions per episode")
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per call")
    parser.add_argument("--game", default="PrisonersDilemma")
    parser.add_argument("--partner", default="tit_for_tat")
    parser.add_argument("--cli-args", default="", help="further eval arguments, e.g. '--workers 4'")
    args = parser.parse_args(argv)

    server = SlowEndpoint(args.latency)
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "bench.toml"
        spec = f"llm:model=slow:base_url={server.base_url}:temperature=0.7:probes=false"
        cfg.write_text(  # the endpoint is named on the command line (a file may not)
            f'name = "llm-throughput"\nepisodes = {args.episodes}\n'
            f'[agents]\npartner = "{args.partner}"\n'
            f'[[games]]\ngame = "{args.game}"\nkwargs = {{ horizon = {args.horizon} }}\n'
            f'[[matchups]]\ngame = "{args.game}"\nseats = ["llm", "partner"]\n'
        )
        command = [sys.executable, "-m", "tom_envs.cli", "eval", str(cfg), "--agent", f"llm={spec}",
                   "--out", f"{tmp}/run"]  # fmt: skip
        command += args.cli_args.split()
        env = {**os.environ, "TOM_ENVS_PROGRESS": "off", "PYTHONPATH": str(ROOT)}
        log = Path(tmp) / "command.log"
        t0 = time.monotonic()
        with log.open("wb") as fh:  # files, not pipes: a full pipe would stall the command
            proc = subprocess.Popen(command, env=env, stdout=fh, stderr=subprocess.STDOUT)
            peak_rss = peak_pss = 0
            while proc.poll() is None:
                rss, pss = _memory_kb(_tree(proc.pid))
                peak_rss, peak_pss = max(peak_rss, rss), max(peak_pss, pss)
                time.sleep(0.1)
        took = time.monotonic() - t0
        server.close()
        if proc.returncode != 0:
            print(log.read_text()[-3000:], file=sys.stderr)
            print(f"the command failed with exit code {proc.returncode}")
            return 1
        results = json.loads((Path(tmp) / "run" / "results.json").read_text())
    cell = next(iter(results["cells"].values()))
    valid = cell.get("valid_action_pct", {}).get("player_0", float("nan"))
    ideal = args.episodes / args.latency
    rate = server.requests / took
    steady = (
        server.requests / (server.last - server.first)
        if server.first is not None and server.last is not None and server.last > server.first
        else float("nan")
    )
    print(f"command: {' '.join(['tom-envs', *command[3:]])}".replace(server.base_url, "URL"))
    print(
        f"episodes {args.episodes} x {args.horizon} decisions of {args.game}, latency "
        f"{args.latency}s; {server.requests} calls, valid {valid:.0f}%"
    )
    print(f"peak requests in flight at the server: {server.peak}")
    print(
        f"whole command {took:.1f}s: {rate:.1f} calls/s ({100 * rate / ideal:.0f}% of the ideal "
        f"{ideal:.0f})"
    )
    print(f"steady part: {steady:.1f} calls/s ({100 * steady / ideal:.0f}% of the ideal)")
    print(
        f"peak memory of the process tree: RSS {peak_rss / 1024:.0f} MB, PSS {peak_pss / 1024:.0f} MB"
    )
    ok = steady >= 0.8 * ideal and peak_pss < 1024 * 1024
    print("targets met (>= 80% of the ideal rate, < 1 GB)" if ok else "targets NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
