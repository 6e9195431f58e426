"""LLM-call throughput of the harness against a fixed-latency fake endpoint (issue 21).

A fake OpenAI-compatible endpoint on loopback answers every ``/v1/chat/completions`` request after
exactly ``--latency`` seconds (default 1 s), with unlimited parallelism (an asyncio server: a
waiting request costs no thread). ``--episodes`` episodes (default 32) of an LLM agent against a
partner bot are played at once (:func:`tom_llm_agents.parallel.run_concurrent`, one thread per
episode, one shared client); every decision is one call. The harness keeps the endpoint busy when
calls per second approach ``episodes / latency``; the target is at least 0.8 x that (25.6 calls/s
for 32 episodes at 1 s).

Run (not a unit test; about 15 s)::

    .venv/bin/python benchmarks/llm_throughput.py --episodes 32 --horizon 10 --latency 1.0

The adversary of this figure is a harness that serialises calls behind one lock or a small
connection pool: with 32 episodes it would reach ``pool size / latency`` calls per second. The
run prints the peak number of requests the server held at once beside the rate, so a pool limit
shows as a peak below the episode count.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


class SlowEndpoint:
    """An asyncio HTTP/1.1 server answering chat completions after a fixed delay."""

    def __init__(self, latency_s: float, content: str = "Action: Option J") -> None:
        self.latency_s = latency_s
        self.content = content
        self.requests = 0
        self.in_flight = 0
        self.peak = 0
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

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.decode("latin-1").split("\r\n"):
                    if line.lower().startswith("content-length:"):
                        length = int(line.split(":", 1)[1])
                if length:
                    await reader.readexactly(length)
                self.requests += 1
                self.in_flight += 1
                self.peak = max(self.peak, self.in_flight)
                await asyncio.sleep(self.latency_s)
                self.in_flight -= 1
                body = json.dumps(
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


def main(argv: list[str] | None = None) -> int:
    """Play the episodes and print calls per second beside the target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--horizon", type=int, default=10, help="decisions per episode")
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per call")
    parser.add_argument("--game", default="PrisonersDilemma")
    args = parser.parse_args(argv)

    from tom_envs.agents import make_agent
    from tom_envs.registration import game_spec
    from tom_llm_agents.agent import LLMAgent
    from tom_llm_agents.openai_client import OpenAIClient
    from tom_llm_agents.parallel import run_concurrent

    server = SlowEndpoint(args.latency)
    spec = game_spec(args.game)
    client = OpenAIClient(
        "slow", server.base_url, api_key="none", max_concurrency=args.episodes, timeout=60
    )
    factories = [lambda: LLMAgent(client), lambda: make_agent("tit_for_tat", spec)]
    t0 = time.perf_counter()
    eps = run_concurrent(
        spec,
        factories,
        episodes=args.episodes,
        max_workers=args.episodes,
        env_kwargs={"horizon": args.horizon},
    )
    took = time.perf_counter() - t0
    server.close()
    calls = sum(ep.metrics.get("usage/calls/player_0", 0) for ep in eps)
    valid = sum(ep.metrics.get("valid_action_pct/player_0", 0) for ep in eps) / len(eps)
    rate = calls / took
    ideal = args.episodes / args.latency
    print(f"episodes {args.episodes}, decisions per episode {args.horizon}, latency {args.latency}s")
    print(f"calls {calls:.0f} (server saw {server.requests}), wall {took:.2f}s, valid {valid:.0f}%")
    print(f"peak requests in flight at the server: {server.peak}")
    print(f"throughput {rate:.1f} calls/s; ideal {ideal:.1f}; target 0.8 x ideal = {0.8 * ideal:.1f}")
    ok = rate >= 0.8 * ideal
    print("target met" if ok else "target NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
