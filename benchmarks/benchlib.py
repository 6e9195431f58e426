"""Helpers shared by every bench script, ours and the peers' (stdlib + numpy only).

The peer scripts run in the peers' own venv, so this module must import nothing from tom_envs,
pettingzoo, pyspiel or textarena.

Every bench script:

* takes ``--seconds S --seed N`` and a list of cases,
* runs each case with :func:`measure` (one untimed warm-up episode, then whole episodes in a
  ``time.perf_counter`` loop until at least ``S`` seconds have passed; reset/make costs included;
  the process's CPU time is recorded too, for rates per CPU second on a shared machine),
* prints exactly one JSON line: ``{"suite", "versions", "results": [...]}`` (see :func:`emit`).

Units in every result:

* ``moves``: agent moves, i.e. actions chosen by one agent (one AEC ``step()`` with a real action,
  one TextArena ``step()``; a Parallel or OpenSpiel joint step of 2 players counts 2).
* ``joint``: joint steps, i.e. applications of the rules (one Parallel ``step()``, one OpenSpiel
  ``apply_actions``; in a 2-player simultaneous game in AEC form one joint step is 2 AEC moves).
"""

from __future__ import annotations

import json
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

#: Seeds of the untimed warm-up episodes (timed episodes use seeds 0, 1, 2, ...).
WARMUP_SEED = 1_000_000

#: (moves, joint steps, observation characters) of one episode.
EpisodeStats = tuple[int, float, int]


class Sampler:
    """Uniform random indices from a seeded numpy ``Generator``, drawn in blocks.

    Drawing one number per call from ``Generator.integers`` costs about 1-2 µs, which is a large
    share of a 3 µs OpenSpiel step; a pre-drawn block of floats costs about 0.1 µs a pick and is
    the same in every bench script, so the harness adds the same small overhead to every env.
    """

    def __init__(self, seed: int, block: int = 1 << 16) -> None:
        self.rng = np.random.default_rng(seed)
        self._block = block
        self._buf: list[float] = []
        self._i = 0

    def index(self, n: int) -> int:
        """A uniform integer in ``[0, n)``."""
        i = self._i
        if i >= len(self._buf):
            self._buf = self.rng.random(self._block).tolist()
            i = 0
        self._i = i + 1
        return int(self._buf[i] * n)

    def choice(self, seq: Any) -> Any:
        """A uniform element of a non-empty sequence."""
        return seq[self.index(len(seq))]


def measure(
    label: str,
    run_episode: Callable[[int], EpisodeStats],
    seconds: float,
    warmup: int = 1,
    params: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run whole episodes for at least ``seconds`` of wall time and return the rates.

    ``run_episode(episode_index)`` plays one episode and returns ``(moves, joint, obs_chars)``.
    ``params`` (the case's settings) is copied into the result under ``"params"``.
    """
    for w in range(warmup):
        run_episode(WARMUP_SEED + w)
    moves = eps = chars = 0
    joint = 0.0
    c0 = time.process_time()
    t0 = time.perf_counter()
    while True:
        m, j, c = run_episode(eps)
        moves += m
        joint += j
        chars += c
        eps += 1
        if time.perf_counter() - t0 >= seconds:
            break
    dt = time.perf_counter() - t0
    cpu = time.process_time() - c0
    out = {
        "case": label,
        "seconds": dt,
        "episodes": eps,
        "moves": moves,
        "joint": joint,
        "moves_per_s": moves / dt,
        "joint_per_s": joint / dt,
        "eps_per_s": eps / dt,
        "moves_per_episode": moves / eps,
        "joint_per_episode": joint / eps,
        # CPU seconds of this process: on a shared machine the wall clock also counts the time
        # other processes held the CPU, this does not (both are reported)
        "cpu_seconds": cpu,
        "moves_per_cpu_s": moves / cpu if cpu > 0 else 0.0,
    }
    if chars:
        out["obs_chars_per_move"] = chars / max(moves, 1)
    out["params"] = {k: v for k, v in (params or {}).items() if k != "label"}
    return out


def emit(
    suite: str, versions: dict[str, str], results: list[dict[str, Any]], out: Any = None
) -> None:
    """Print the one JSON line the runner reads (to ``out``, default standard output)."""
    versions = {"python": platform.python_version(), "numpy": np.__version__, **versions}
    line = json.dumps({"suite": suite, "versions": versions, "results": results})
    print(line, file=out, flush=True)


def run_cases(
    suite: str,
    versions: Callable[[], dict[str, str]],
    build: Callable[[dict[str, Any], Sampler, int], tuple[str, Callable[[int], EpisodeStats]]],
    out: Any = None,
) -> None:
    """A peer script's ``main``: parse :func:`parse_common`'s arguments, build each case's label
    and episode function (``build(case, Sampler(seed), seed)``, a fresh sampler per case),
    :func:`measure` it and :func:`emit` the results with ``versions()``."""
    args = parse_common()
    results = []
    for case in args.cases:
        label, episode = build(case, Sampler(args.seed), args.seed)
        results.append(measure(label, episode, args.seconds, params=case))
    emit(suite, versions(), results, out)


def parse_common(argv: list[str] | None = None) -> Any:
    """``--seconds``, ``--seed`` and ``--cases`` (a JSON list of case dicts)."""
    import argparse

    p = argparse.ArgumentParser(description=sys.modules["__main__"].__doc__)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cases", type=str, default="[]", help="JSON list of case dicts")
    args = p.parse_args(argv)
    args.cases = json.loads(args.cases)
    return args
