"""Peak memory of ``tom-envs run`` for growing episode counts: it must not grow with them.

``tom-envs run`` writes each episode to disk as it finishes and keeps only running totals
(``tom_envs.runner.iter_run`` and ``RunningSummary``). This runs the command once per count, each
in a fresh process, and prints the process's peak resident memory (``ru_maxrss``)::

    .venv/bin/python benchmarks/run_memory.py --game Hanabi --agents convention --text \
        --episodes 200 2000

Run it twice and keep the second figures: the first run after a code change also compiles the
changed modules, which adds to the peak. docs/reliability.md ("Bounded memory") holds the figures.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time


def peak_rss_mb(argv: list[str]) -> tuple[int, float, float]:
    """``(exit code, peak RSS in MB, wall seconds)`` of ``tom-envs ARGV`` in a fresh process."""
    t0 = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    code = subprocess.run([sys.executable, "-m", "tom_envs.cli", *argv],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode  # fmt: skip
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if peak <= before:  # ru_maxrss of children is a maximum over all of them: run counts upward
        print("note: this run's peak is not above an earlier one's; run one count per call")
    return code, peak / 1024, time.perf_counter() - t0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default="Hanabi")
    p.add_argument("--agents", nargs="+", default=["convention"])
    p.add_argument("--episodes", nargs="+", type=int, default=[200, 2000])
    p.add_argument("--text", action="store_true", help="record text observations")
    args = p.parse_args()
    print("| episodes | peak RSS (MB) | wall (s) |\n|---|---|---|")
    for n in sorted(args.episodes):
        with tempfile.TemporaryDirectory() as out:
            argv = ["run", args.game, "--agents", *args.agents, "--episodes", str(n),
                    "--out", out] + (["--text"] if args.text else [])  # fmt: skip
            code, mb, wall = peak_rss_mb(argv)
        if code != 0:
            print(f"error: tom-envs {' '.join(argv)} exited {code}", file=sys.stderr)
            return code
        print(f"| {n:,} | {mb:.0f} | {wall:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
