"""Nothing outlives its command (issue #31): kill -9 of the main process mid-run.

`eval` on the process pool, `reproduce` (the same pool) and `eval --backend ray` are started as a
user would, killed with SIGKILL once a few episodes are on disk, and then: every process the
command had started is gone within a few seconds, and no episode file is written or rewritten
after the kill.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tom_envs.lifetime import _descendants, _stat

CONFIG = """name = "long"
episodes = 1000
[agents]
greedy = "greedy"
[[games]]
game = "Overcooked"
[[matchups]]
game = "Overcooked"
seats = ["greedy", "greedy"]
"""


def alive(pid: int, start: int) -> bool:
    st = _stat(pid)
    return st is not None and st[1] == start and st[2] != "Z"


def kill_mid_run(argv: list[str], cwd: Path, runs: Path, timeout: float = 180.0) -> None:
    """Start ``tom-envs ARGV``, SIGKILL it once two episodes are written, check the aftermath."""
    with open(cwd / "stderr.txt", "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "tom_envs.cli", *argv], cwd=cwd,
                                stdout=subprocess.DEVNULL, stderr=err)  # fmt: skip
    try:
        deadline = time.monotonic() + timeout
        while len(list(runs.rglob("episode_*.jsonl"))) < 2:
            assert proc.poll() is None, (cwd / "stderr.txt").read_text()
            assert time.monotonic() < deadline, "no episode written in time"
            time.sleep(0.1)
        started = _descendants(proc.pid)  # workers (and Ray's processes) of the command
        assert started, "the command runs no child process"
        killed_at = time.time()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    files = {p: p.stat().st_mtime_ns for p in runs.rglob("episode_*.jsonl")}
    left = dict(started)
    for _ in range(80):  # every child gone within eight seconds
        left = {pid: s for pid, s in left.items() if alive(pid, s)}
        if not left:
            break
        time.sleep(0.1)
    for pid, s in left.items():  # never leave them behind, even when the test fails
        if alive(pid, s):
            os.kill(pid, signal.SIGKILL)
    assert not left, f"still running after the kill: {sorted(left)}"
    time.sleep(1.0)
    after = {p: p.stat().st_mtime_ns for p in runs.rglob("episode_*.jsonl")}
    assert after == files, "an episode was written after the kill"
    assert all(m / 1e9 <= killed_at + 0.5 for m in after.values())


def test_eval_pool_workers_die_with_the_command(tmp_path: Path) -> None:
    (tmp_path / "long.toml").write_text(CONFIG)
    kill_mid_run(["eval", "long.toml", "--workers", "2", "--out", "run"], tmp_path, tmp_path / "run")


def test_reproduce_workers_die_with_the_command(tmp_path: Path) -> None:
    kill_mid_run(["reproduce", "hanabi", "--episodes", "500", "--workers", "2", "--run-dir", "run"],
                 tmp_path, tmp_path / "run")  # fmt: skip


def test_ray_processes_die_with_the_command(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    (tmp_path / "long.toml").write_text(CONFIG)
    env_before = os.environ.pop("RAY_ADDRESS", None)
    try:
        kill_mid_run(["eval", "long.toml", "--backend", "ray", "--workers", "2", "--out", "run"],
                     tmp_path, tmp_path / "run")  # fmt: skip
    finally:
        if env_before is not None:
            os.environ["RAY_ADDRESS"] = env_before
