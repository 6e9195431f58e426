"""Progress of long commands on stderr, without dependencies.

One :class:`Progress` per command (``run``, ``demo``, ``eval``, ``reproduce``, ``qa eval``,
``qa suites``) counts finished items (episodes, answers, suites) and, while it is open, every LLM
call made anywhere in the run: the LLM client reports each answered request with
:func:`llm_call`, and the evaluation's worker processes forward theirs to the parent
(:func:`worker_channel`, :func:`forward_calls`).

* **stderr is a terminal:** one bar redrawn in place, at most ``10`` times a second and at every
  item: ``eval paper004 [#####.....] 440/880 episodes, 1312 LLM calls, 2 failed, 0:41 < 0:41``.
* **otherwise** (logs, CI, pipes): a plain line every ``every`` items (by default about every
  10% of the total) and at the last one, plus a line when LLM calls keep arriving for ``quiet_s``
  seconds without a finished item (a long LLM episode is not silent in a log either).

``TOM_ENVS_PROGRESS=off`` silences both, ``=bar`` or ``=lines`` forces a mode.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

MODES = ("auto", "bar", "lines", "off")

#: Open progress displays of this process (LLM calls are reported to each).
_ACTIVE: list[Progress] = []
#: In an evaluation worker process: the queue LLM calls are forwarded to.
_CHANNEL: Any = None


def llm_call(n: int = 1) -> None:
    """Count ``n`` answered LLM requests (called by the LLM client; cheap when nothing listens)."""
    for p in list(_ACTIVE):
        p.add_calls(n)
    if _CHANNEL is not None:
        with contextlib.suppress(OSError, ValueError):  # the parent has gone: best effort
            _CHANNEL.put(n)


def listening() -> bool:
    """Whether a display of this process counts LLM calls (worth forwarding workers' calls)."""
    return bool(_ACTIVE)


def worker_channel(queue: Any) -> None:
    """Initializer of an evaluation worker process: forward its LLM calls into ``queue``."""
    global _CHANNEL
    _CHANNEL = queue
    _ACTIVE.clear()  # a forked worker inherits the parent's displays: they draw in the parent


def forward_calls(queue: Any) -> Callable[[], None]:
    """Start a thread that counts the calls the workers put on ``queue`` in this process's open
    displays; returns the function that stops it."""

    def pump() -> None:
        while True:
            n = queue.get()
            if n is None:
                return
            llm_call(n)

    thread = threading.Thread(target=pump, name="tom-envs-llm-calls", daemon=True)
    thread.start()

    def stop() -> None:
        queue.put(None)
        thread.join(timeout=5)

    return stop


def _mode(stream: TextIO, mode: str | None) -> str:
    mode = mode or os.environ.get("TOM_ENVS_PROGRESS", "auto").strip().lower() or "auto"
    if mode not in MODES:
        raise ValueError(f"TOM_ENVS_PROGRESS must be one of {MODES}, got {mode!r}")
    if mode == "auto":
        isatty = getattr(stream, "isatty", None)
        return "bar" if isatty is not None and isatty() else "lines"
    return mode


def _clock_text(seconds: float) -> str:
    s = round(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Progress:
    """Items done out of ``total`` (and LLM calls), as a bar on a terminal, else plain lines.

    Args:
        total: the number of items (``None`` or 0 while unknown: see :meth:`start`).
        label: what runs (``"eval paper004"``).
        unit: the items' name, plural (``"episodes"``).
        stream: where to write (default ``sys.stderr``).
        mode: ``"auto"`` (bar on a terminal, lines otherwise), ``"bar"``, ``"lines"`` or ``"off"``;
            default from ``TOM_ENVS_PROGRESS``.
        every: in lines mode, a line every this many items (default: ~10% of the total).
        quiet_s: in lines mode, a line when LLM calls arrived but no item finished for this long.
        clock: the time source (tests inject one).

    Usable as the ``progress(i, episode)`` callback of :func:`tom_envs.runner.run`, and as a
    context manager (open: LLM calls are counted; closed: the bar's line is ended).
    """

    def __init__(
        self,
        total: int | None = None,
        label: str = "",
        unit: str = "episodes",
        *,
        stream: TextIO | None = None,
        mode: str | None = None,
        every: int | None = None,
        quiet_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.mode = _mode(self.stream, mode)
        self.label, self.unit, self.clock = label, unit, clock
        self.every_given, self.quiet_s = every, quiet_s
        self.done = self.failed = self.calls = self.skipped = 0
        self.total = 0
        self.every = 1
        self.t0 = clock()
        self._last_draw = self._last_line = -1e18
        self._open = False
        self._shown: tuple[int, int, int] = (0, 0, 0)
        self._lock = threading.Lock()
        self.start(total or 0)

    # ------------------------------------------------------------------ counting
    def start(self, total: int, skipped: int = 0) -> Progress:
        """(Re)set the total (``skipped``: items already done earlier, e.g. resumed episodes) and
        start counting LLM calls."""
        self.total, self.skipped = int(total), int(skipped)
        self.every = self.every_given or max(1, self.total // 10)
        if not self._open and self.mode != "off":
            self._open = True
            _ACTIVE.append(self)
        if self.skipped and self.mode == "lines":
            self._line(f"{self.skipped} already done (resumed), {self.total} to play")
        return self

    def update(self, n: int = 1, failed: bool = False, note: str = "") -> None:
        """``n`` more items finished (``failed``: they did not give a result)."""
        with self._lock:
            self.done += n
            self.failed += n if failed else 0
            if self.mode == "bar":
                if note:
                    self.stream.write("\r\x1b[2K" + note + "\n")
                self._draw(force=True)
                if self.total and self.done >= self.total:  # the bar's line ends with the work
                    self._end()
            elif self.mode == "lines":
                if note:
                    self._line(note)
                if (self.done - n) // self.every != self.done // self.every or self.done >= self.total:
                    self._status_line()

    def __call__(self, i: int, episode: Any = None) -> None:
        """The runner's callback: episode ``i`` (0-based) is done."""
        self.update(1, failed=episode is not None and not getattr(episode, "ok", True))

    def counting(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` that marks an item done after each call (also when it raises)."""

        def counted(*args: Any, **kwargs: Any) -> Any:
            failed = True
            try:
                out = fn(*args, **kwargs)
                failed = False
                return out
            finally:
                self.update(failed=failed)

        return counted

    def add_calls(self, n: int = 1) -> None:
        """``n`` more LLM calls answered."""
        with self._lock:
            self.calls += n
            now = self.clock()
            if self.mode == "bar":
                self._draw()
            elif self.mode == "lines" and now - max(self._last_line, self.t0) >= self.quiet_s:
                self._status_line()

    def write(self, message: str) -> None:
        """A message above the bar (or as a line)."""
        with self._lock:
            if self.mode == "bar":
                self.stream.write("\r\x1b[2K" + message + "\n")
                self._draw(force=True)
            elif self.mode == "lines":
                self._line(message)

    def close(self) -> None:
        """Stop counting LLM calls; end the bar's line. Counts that changed after the last line
        (LLM calls forwarded by worker processes after their episodes) get one final line."""
        with self._lock:
            was_open = self._open
            self._end()
            if self.mode != "off" and self._shown != self._counts() and (
                self.mode == "lines" or not was_open
            ):
                self._status_line()

    def _counts(self) -> tuple[int, int, int]:
        return self.done, self.calls, self.failed

    def _end(self) -> None:
        if self in _ACTIVE:
            _ACTIVE.remove(self)
        if self._open and self.mode == "bar":
            self._draw(force=True)
            self.stream.write("\n")
            self.stream.flush()
        self._open = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ output
    def _status(self) -> str:
        elapsed = self.clock() - self.t0
        parts = [f"{self.done}/{self.total} {self.unit}" if self.total else f"{self.done} {self.unit}"]
        if self.calls:
            parts.append(f"{self.calls} LLM calls")
        if self.failed:
            parts.append(f"{self.failed} failed")
        timing = _clock_text(elapsed)
        if self.total and 0 < self.done < self.total:
            timing += f" < {_clock_text(elapsed / self.done * (self.total - self.done))}"
        return f"{self.label + ': ' if self.label else ''}{', '.join(parts)} [{timing}]"

    def _line(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()
        self._last_line = self.clock()

    def _status_line(self) -> None:
        self._line(self._status())
        self._shown = self._counts()

    def _draw(self, force: bool = False) -> None:
        now = self.clock()
        if not force and now - self._last_draw < 0.1:
            return
        self._last_draw = now
        self._shown = self._counts()
        width = 24
        fill = int(width * min(self.done, self.total) / self.total) if self.total else 0
        bar = f"[{'#' * fill}{'.' * (width - fill)}] " if self.total else ""
        label = f"{self.label} " if self.label else ""
        self.stream.write(f"\r\x1b[2K{label}{bar}{self._status().removeprefix(self.label + ': ')}")
        self.stream.flush()
