"""``tom-envs study serve`` in a child process, handed back once it answers (for load benchmarks
and tests that kill and restart the server)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path


def serve_process(
    study: Path, data: Path, port: int, *args: str, cwd: Path | None = None, tries: int = 300
) -> subprocess.Popen[bytes]:
    """``python -m tom_envs.cli study serve STUDY --data DATA --port PORT *args`` in a new process
    (stdout discarded, stderr piped), returned as soon as its ``/static/study.js`` answers.

    Args:
        study, data, port: the study file, its data folder and the port on 127.0.0.1.
        *args: further ``study serve`` options (``"--per-client", "10000"``).
        cwd: the folder the process runs in, also its ``PYTHONPATH`` (default: this one).
        tries: polls, 0.1 s apart, before giving up.

    Raises:
        RuntimeError: the server did not answer in time (the process is killed; the message is
            its stderr).
    """
    env = {**os.environ, "PYTHONPATH": str(cwd)} if cwd is not None else None
    proc = subprocess.Popen([sys.executable, "-m", "tom_envs.cli", "study", "serve", str(study),
                             "--data", str(data), "--port", str(port), *args], cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)  # fmt: skip
    for _ in range(tries):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/static/study.js", timeout=2):
                return proc
        except urllib.error.HTTPError:  # it answered
            return proc
        except (urllib.error.URLError, OSError):
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(proc.stderr.read().decode() if proc.stderr else "the server did not start")
