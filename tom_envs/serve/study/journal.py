"""The study's journal: every event appended as one JSON line, fsync'd before it is acknowledged.

:class:`Journal` is append-only. A writer thread takes every event waiting, writes them in order
(``seq`` 0, 1, 2, ...), calls ``fsync`` and only then resolves each event's future: a move, a survey
answer or a consent is acknowledged to the participant once it is on disk (group commit: one
``fsync`` for all events waiting, so throughput grows with load). Nothing is lost:

* **a failed write** (a full disk, an I/O error) is retried with growing pauses (up to 5 s) until
  it succeeds; the file is first cut back to its last complete line, so a half-written batch is
  never left behind. While it fails, :attr:`Journal.error` says why (the server reports it and
  refuses new work past :data:`MAX_PENDING` waiting events: memory stays bounded);
* **at shutdown** :meth:`Journal.close` keeps retrying for ``grace`` seconds; events that still
  cannot be written are rescued: to ``journal.rescue-<time>.jsonl`` beside the journal, else to the
  system's temporary folder, else to standard error, and the command says where. The next
  :meth:`Journal.open` appends any ``journal.rescue-*.jsonl`` it finds in the study folder;
* **a crash** (``kill -9``, power loss) can leave only the batch being written, which was never
  acknowledged: :meth:`Journal.open` drops a torn last line and refuses a file with a bad line
  anywhere else.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tom_envs.runner import _json_default  # numpy values as the trajectories write them

__all__ = ["MAX_PENDING", "Journal", "JournalError", "JournalFull", "read_journal"]

#: Events that may wait for the disk before new work is refused.
MAX_PENDING = 20_000
RETRY_DELAYS = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0)


class JournalError(RuntimeError):
    """A journal that cannot be read (a damaged line that is not the last)."""


class JournalFull(RuntimeError):
    """Too many events are waiting for a disk that refuses them: new work is refused."""


def read_journal(path: str | Path) -> list[dict[str, Any]]:
    """The events of a journal, read only (a torn last line is skipped, not repaired): for
    ``tom-envs study status`` and ``export`` while the server may be running."""
    path = Path(path)
    if not path.exists():
        raise JournalError(f"{path}: no journal here (is this the study's folder?)")
    events = []
    lines = path.read_bytes().split(b"\n")
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            if i == len(lines) - 1:
                break
            raise JournalError(f"{path}: line {i + 1} is damaged") from None
        events.append(event)
    return events


def dumps(event: dict[str, Any]) -> str:
    """One journal line (compact JSON, no newline)."""
    return json.dumps(event, default=_json_default, ensure_ascii=False, separators=(",", ":"))


class Journal:
    """An append-only JSONL journal (see the module docstring).

    Args:
        path: the journal file (created with its folder).
        fsync: call ``fsync`` after each batch (tests of throughput may turn it off).
        clock: the wall clock written in each event's ``t``.
        write: the function that writes bytes to the file descriptor (tests inject failures).
    """

    def __init__(self, path: str | Path, *, fsync: bool = True,
                 clock: Callable[[], float] = time.time,
                 write: Callable[[int, bytes], int] = os.write) -> None:  # fmt: skip
        self.path = Path(path)
        self.fsync, self.clock, self._write = fsync, clock, write
        self._cond = threading.Condition()
        self._queue: list[tuple[str, concurrent.futures.Future[int]]] = []
        self._seq = 0
        self._good = 0  # bytes of complete, synced lines
        self._fd: int | None = None
        self._thread: threading.Thread | None = None
        self._closing = False
        self._stop_at: float | None = None
        self.error: str | None = None
        self.failures = 0

    # ------------------------------------------------------------------ reading
    def open(self) -> list[dict[str, Any]]:
        """Read the journal (repairing a torn tail, appending rescued events) and start writing;
        returns the events in order."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        events = self._read()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._good = os.fstat(self._fd).st_size
        self._seq = events[-1]["seq"] + 1 if events else 0
        self._thread = threading.Thread(target=self._run, name="journal", daemon=True)
        self._thread.start()
        rescued = self._rescued()
        for event in rescued:
            if event.get("seq", self._seq) < self._seq:
                continue  # written before the disk filled up
            event = {k: v for k, v in event.items() if k != "seq"}
            events.append({"seq": self._seq, **event})
            self.append(event, keep_time=True).result()
        for f in sorted(self.path.parent.glob("journal.rescue-*.jsonl")):
            f.unlink()
        return events

    def _read(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        raw = self.path.read_bytes()
        lines = raw.split(b"\n")
        events: list[dict[str, Any]] = []
        end = 0
        for i, line in enumerate(lines):
            last = i == len(lines) - 1
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                event = None
            complete = not last  # a line without its newline was cut short
            if event is None or not isinstance(event, dict) or not complete:
                if last or all(not x.strip() for x in lines[i + 1 :]):
                    break  # the torn tail of a batch that was never acknowledged
                raise JournalError(f"{self.path}: line {i + 1} is damaged and is not the last; "
                                   "the journal cannot be read (restore it from a backup)")  # fmt: skip
            if event.get("seq") != len(events):
                raise JournalError(f"{self.path}: line {i + 1} has seq {event.get('seq')}, "
                                   f"expected {len(events)}")  # fmt: skip
            events.append(event)
            end += len(line) + 1
        if end < len(raw):
            with open(self.path, "r+b") as fh:  # drop the torn tail before appending
                fh.truncate(end)
        return events

    def _rescued(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for f in sorted(self.path.parent.glob("journal.rescue-*.jsonl")):
            for line in f.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    out.append(json.loads(line))
        return out

    # ------------------------------------------------------------------ writing
    @property
    def pending(self) -> int:
        """Events waiting for the disk."""
        return len(self._queue)

    @property
    def full(self) -> bool:
        """Whether new work should be refused: most of :data:`MAX_PENDING` is waiting (the rest is
        room for the decisions of games under way)."""
        return len(self._queue) >= MAX_PENDING // 2

    def append(self, event: dict[str, Any], keep_time: bool = False,
               force: bool = False) -> concurrent.futures.Future[int]:  # fmt: skip
        """Queue ``event`` (its ``seq`` and ``t`` are set here); the future resolves to its
        ``seq`` once it is on disk. Raises :class:`JournalFull` past :data:`MAX_PENDING`, unless
        ``force`` (a decision already applied in a game: it is always kept; callers check
        :attr:`full` before they let new work start)."""
        fut: concurrent.futures.Future[int] = concurrent.futures.Future()
        with self._cond:
            if self._closing and self._stop_at is not None and self._thread is None:
                raise JournalFull("the journal is closed")
            if len(self._queue) >= MAX_PENDING and not force:
                raise JournalFull(f"{len(self._queue)} events wait for the disk ({self.error})")
            t = event["t"] if keep_time and "t" in event else round(self.clock(), 3)
            line = dumps({"seq": self._seq, "t": t, **{k: v for k, v in event.items()
                                                       if k not in ("seq", "t")}})  # fmt: skip
            self._seq += 1
            self._queue.append((line, fut))
            self._cond.notify()
        return fut

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closing:
                    self._cond.wait()
                if not self._queue:
                    return
                batch = list(self._queue)
            try:
                self._flush(batch)
            except OSError as exc:
                if self._gave_up():
                    return
                self._failed(exc)
                continue
            with self._cond:
                del self._queue[: len(batch)]
                self.error = None
            for _, fut in batch:
                fut.set_result(0)

    def _flush(self, batch: list[tuple[str, concurrent.futures.Future[int]]]) -> None:
        assert self._fd is not None
        data = "".join(line + "\n" for line, _ in batch).encode("utf-8")
        if os.fstat(self._fd).st_size != self._good:  # a failed attempt left a part: cut it
            os.ftruncate(self._fd, self._good)
        view = memoryview(data)
        while view:
            n = self._write(self._fd, bytes(view))
            view = view[n:]
        if self.fsync:
            os.fsync(self._fd)
        self._good += len(data)

    def _failed(self, exc: OSError) -> None:
        self.failures += 1
        name = os.strerror(exc.errno) if exc.errno else str(exc)
        self.error = f"cannot write {self.path}: {name}"
        if self.failures == 1 or self.failures % 20 == 0:
            print(f"tom-envs study: {self.error}; retrying (nothing is lost)", file=sys.stderr)
        time.sleep(RETRY_DELAYS[min(self.failures - 1, len(RETRY_DELAYS) - 1)])

    def _gave_up(self) -> bool:
        return self._stop_at is not None and time.monotonic() >= self._stop_at

    def close(self, grace: float = 30.0) -> list[str]:
        """Write everything waiting (retrying for ``grace`` seconds), then stop; returns where
        events that still could not be written were rescued (empty when all are on disk)."""
        with self._cond:
            self._closing = True
            self._stop_at = time.monotonic() + grace
            self._cond.notify()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        left = [line for line, _ in self._queue]
        if self._fd is not None and left:  # drop the part a failed attempt left in the file
            with contextlib.suppress(OSError):  # else the reader drops the torn tail
                os.ftruncate(self._fd, self._good)
        places = self._rescue(left) if left else []
        for _, fut in self._queue:
            if not fut.done():
                fut.set_exception(JournalFull(f"not written: {self.error}; rescued to {places}"))
        self._queue.clear()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        return places

    def _rescue(self, lines: list[str]) -> list[str]:
        data = "".join(line + "\n" for line in lines)
        stamp = time.strftime("%Y%m%dT%H%M%S")
        for folder in (self.path.parent, Path(tempfile.gettempdir())):
            target = folder / f"journal.rescue-{stamp}-{os.getpid()}.jsonl"
            try:
                with open(target, "w", encoding="utf-8") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
            except OSError:
                continue
            print(f"tom-envs study: {len(lines)} journal event(s) could not be written to "
                  f"{self.path} ({self.error}); they are saved in {target}. Free space, copy that "
                  f"file into {self.path.parent} and start the server again: it appends them.",
                  file=sys.stderr)  # fmt: skip
            return [str(target)]
        print(f"tom-envs study: {len(lines)} journal event(s) could not be written anywhere; here "
              f"they are (append them to {self.path}):", file=sys.stderr)  # fmt: skip
        sys.stderr.write(data)
        sys.stderr.flush()
        return ["<stderr>"]
