"""Many episodes at once from Python: LLM calls wait on the network, not on the CPU.

:func:`run_concurrent` plays seeded episodes in threads of this process, each with its own
environment and its own agents (from the factories), so one client can serve many episodes and
agents at once: a notebook's helper. A client is thread-safe (its cache writes are atomic); with a
disk cache a re-run is free and gives the same trajectories.

The commands (``tom-envs eval``, ``reproduce``) play LLM episodes many at once in each of their
worker processes through :mod:`tom_envs.evaluation.pool`, with resume, the run's budget and the
response cache in the run directory; ``benchmarks/llm_throughput.py`` measures that path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tom_envs.core.agents import Agent
from tom_envs.registration import GameSpec, game_spec
from tom_envs.runner import Episode, play_episode


def run_concurrent(
    game: GameSpec | str,
    agent_factories: Sequence[Callable[[], Agent]],
    episodes: int,
    seed: int = 0,
    max_workers: int = 4,
    env_kwargs: Mapping[str, Any] | None = None,
    out_dir: str | Path | None = None,
    record_text: bool = False,
) -> list[Episode]:
    """Play ``episodes`` episodes (seeds ``seed, seed+1, …``) in up to ``max_workers`` threads.

    Returns the episodes in seed order; writes ``episode_<seed>.jsonl`` files when ``out_dir`` is
    given (the same names as :func:`tom_envs.runner.run`).
    """
    spec = game if isinstance(game, GameSpec) else game_spec(game)

    def one(s: int) -> Episode:
        agents = [f() for f in agent_factories]
        ep = play_episode(spec, agents, s, env_kwargs, record_text=record_text)
        if out_dir is not None:
            ep.write(Path(out_dir) / f"episode_{s:06d}.jsonl")
        return ep

    with ThreadPoolExecutor(max(1, max_workers)) as pool:
        return list(pool.map(one, range(seed, seed + episodes)))
