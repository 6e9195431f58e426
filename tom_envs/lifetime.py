"""Nothing outlives its command: the processes a command starts end with it, however it ends.

* **Process-pool workers** (``tom-envs eval`` and ``reproduce`` on the local backend) call
  :func:`die_with_parent` first: on Linux the kernel kills the worker when the process that
  started it dies (``prctl(PR_SET_PDEATHSIG, SIGKILL)``, so even ``kill -9`` of the main process
  takes them along), and a watcher thread ends it within half a second if its parent changes (other
  platforms, and a parent that died before the ``prctl``). A worker also checks
  :func:`parent_alive` right before it writes an episode: no episode file is written after the
  main process is gone. Ray's workers are not the command's children and could outlive it by a
  few scheduling delays: they only play and return the episode; the command's own process writes
  it (:func:`tom_envs.evaluation.backends.commit_job`), so nothing is written once it is gone.
* **Ray's local cluster** (``--backend ray`` without ``RAY_ADDRESS``) is started inside a
  :class:`Guardian`: a small watcher process (this file run as a script, so it imports nothing of
  the suite) that records every process the command starts meanwhile and kills those still
  alive when the command ends, however it ends (it reads end-of-file on a pipe only the main
  process holds). Ray's own fate sharing stops its head processes; its dashboard and runtime-env
  agents do not stop by themselves, and the guardian ends them.
* A local model server (``llm:local=true``) runs in the command's own process (threads).

Processes are recorded with their start time, so a reused process id is never killed. The
guardian looks every quarter second: a process that is started and orphaned faster than that is
not seen (Ray's processes live for the whole command).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

__all__ = ["Guardian", "die_with_parent", "parent_alive"]

_PARENT: int | None = None
PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int | None = None) -> None:
    """In a child process: end when ``parent`` (default: the current parent) ends."""
    global _PARENT
    _PARENT = parent if parent is not None else os.getppid()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - no prctl: the watcher remains
            pass
    if os.getppid() != _PARENT:  # the parent died before the prctl took hold
        os._exit(1)
    threading.Thread(target=_watch_parent, daemon=True, name="tom-envs-parent-watch").start()


def _watch_parent() -> None:
    while True:
        time.sleep(0.5)
        if not parent_alive():
            os._exit(1)


def parent_alive() -> bool:
    """In a worker started with :func:`die_with_parent`: whether its parent is still its parent
    (always True in a process that did not call it)."""
    return _PARENT is None or os.getppid() == _PARENT


# ------------------------------------------------------------------------------ the guardian
def _stat(pid: int) -> tuple[int, int, str] | None:
    """``(parent pid, start time, state)`` of a process, from ``/proc`` (None if gone)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    rest = text[text.rfind(")") + 2 :].split()
    return int(rest[1]), int(rest[19]), rest[0]


def _descendants(root: int) -> dict[int, int]:
    """``{pid: start time}`` of every live descendant of ``root``."""
    children: dict[int, list[tuple[int, int]]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _stat(int(entry))
            if st is not None and st[2] != "Z":
                children.setdefault(st[0], []).append((int(entry), st[1]))
    out: dict[int, int] = {}
    todo = [root]
    while todo:
        for pid, start in children.get(todo.pop(), []):
            if pid not in out:
                out[pid] = start
                todo.append(pid)
    return out


def _guard(root: int) -> None:
    """The guardian's loop: record the processes ``root`` starts; when the pipe on stdin closes
    (the command ended, however), kill those still alive (same pid and start time)."""
    import select

    me = os.getpid()
    before = set(_descendants(root))
    os.write(1, b"ready\n")  # the baseline is taken: the command may start what we must end
    known: dict[int, int] = {}
    while True:
        ready, _, _ = select.select([0], [], [], 0.25)
        for pid, start in _descendants(root).items():
            if pid != me and pid not in before:
                known[pid] = start
        if ready and not os.read(0, 4096):
            break
    for _ in range(3):  # a process may start one more child while it is being killed
        for pid, start in list(known.items()):
            st = _stat(pid)
            if st is not None and st[1] == start and st[2] != "Z":
                for child, cstart in _descendants(pid).items():  # before its children are orphans
                    known.setdefault(child, cstart)
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)


class Guardian:
    """While inside ``with Guardian():``, every process the command starts is recorded by a
    watcher process; when the block ends, or the command dies (even by ``kill -9``), those still
    alive are killed. Linux only (elsewhere it does nothing)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Guardian:
        if sys.platform.startswith("linux") and Path("/proc/self/stat").exists():
            # a session of its own: a Ctrl-C to the command's group must not stop the cleaner
            self.proc = subprocess.Popen(
                [sys.executable, "-I", str(Path(__file__).resolve()), "--guard", str(os.getpid())],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True,
            )  # fmt: skip
            assert self.proc.stdout is not None
            self.proc.stdout.readline()  # its baseline is taken before anything is started
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            self.proc.stdin.close()  # end of file: the guardian ends what is left
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover
                self.proc.kill()


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--guard":
    _guard(int(sys.argv[2]))
