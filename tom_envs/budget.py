"""A spending limit for paid model calls: ``--max-calls`` and ``--max-cost`` of every command.

A command that may call a paid endpoint (``run``, ``eval``, ``reproduce``, ``qa eval``) opens one
:class:`Budget` for its whole run; every model client of the process (and of its worker
processes, which share the budget's counters) asks it before each request that is not answered
from the cache (:func:`reserve_call`) and tells it what the answer cost (:func:`charge`). When the
budget is used up, the next request raises :class:`BudgetExhausted` instead of being sent.

:class:`BudgetExhausted` derives from ``BaseException``, like ``KeyboardInterrupt``: no agent's
``except Exception`` turns it into a fallback move, so an episode that reaches the budget is
*stopped*, never finished with made-up moves. Its trajectory is not written; what was computed
before is kept (finished episodes on disk, every answered request in the response cache), so the
same command run again continues where it stopped and pays for nothing twice.

Accounting: ``max_calls`` bounds the requests *sent* (at most that many leave the process: a
call is counted before it is sent); ``max_cost`` is checked before each request against what the
answers so far cost, so the requests in flight when it is reached may go over it by their own
price. Answers from the response cache cost nothing and count toward neither.

The model client package reports here through two functions, as it reports progress through
:mod:`tom_envs.progress`; ``tom_envs`` never imports it.
"""

from __future__ import annotations

import math
import multiprocessing
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = [
    "Budget",
    "BudgetExhausted",
    "active",
    "charge",
    "install",
    "opened",
    "reserve_call",
]


class BudgetExhausted(BaseException):
    """The run's budget is used up: the request was not sent (see the module docstring)."""


def _shared(counter: str, kind: type, doc: str) -> Any:  # a property, read as ``kind``
    """A read-only property: the shared counter ``counter``'s value (every process) as ``kind``."""
    return property(lambda budget: kind(getattr(budget, counter).value), doc=doc)


class Budget:
    """At most ``max_calls`` paid requests and ``max_cost_usd`` dollars, shared by processes.

    The counters live in shared memory (``multiprocessing.Value``), so worker processes that
    receive the budget (:func:`install`, in a pool's initializer, or inherited through ``fork``)
    count against the same totals.

    Args:
        max_calls: requests that may be sent (``None``: no limit).
        max_cost_usd: dollars that may be spent (``None``: no limit).
    """

    def __init__(self, max_calls: int | None = None, max_cost_usd: float | None = None) -> None:
        if max_calls is not None and (isinstance(max_calls, bool) or int(max_calls) < 0):
            raise ValueError(f"--max-calls must be a whole number >= 0, got {max_calls!r}")
        if max_cost_usd is not None and (
            isinstance(max_cost_usd, bool)
            or not math.isfinite(float(max_cost_usd))
            or float(max_cost_usd) < 0
        ):
            raise ValueError(f"--max-cost must be a number of dollars >= 0, got {max_cost_usd!r}")
        self.max_calls = None if max_calls is None else int(max_calls)
        self.max_cost_usd = None if max_cost_usd is None else float(max_cost_usd)
        ctx = multiprocessing.get_context()
        self._calls = ctx.Value("q", 0)
        self._cost = ctx.Value("d", 0.0)
        self._unpriced = ctx.Value("q", 0)
        self._stopped = ctx.Value("b", 0)

    calls: int = _shared("_calls", int, "Requests sent so far (every process).")
    cost_usd: float = _shared("_cost", float, "Dollars the answers so far cost (every process).")
    unpriced_calls: int = _shared(
        "_unpriced", int, "Answered requests whose price is unknown (they count toward ``max_calls`` only)."
    )
    stopped: bool = _shared("_stopped", bool, "Whether a request was refused (the run stopped at the budget).")

    def reserve(self, n: int = 1) -> None:
        """Count ``n`` requests about to be sent; :class:`BudgetExhausted` when that would go over
        ``max_calls``, or when ``max_cost_usd`` has been reached (nothing is counted then)."""
        with self._calls.get_lock():
            over_calls = self.max_calls is not None and self._calls.value + n > self.max_calls
            over_cost = self.max_cost_usd is not None and self._cost.value >= self.max_cost_usd
            if over_calls or over_cost:
                self._stopped.value = 1
                raise BudgetExhausted(self.describe())
            self._calls.value += n

    def charge(self, cost_usd: float | None) -> None:
        """Add the price of one answered request (``None``: the model has no price)."""
        if cost_usd is None:
            with self._unpriced.get_lock():
                self._unpriced.value += 1
            return
        with self._cost.get_lock():
            self._cost.value += float(cost_usd)

    def describe(self) -> str:
        """What the budget allows and what has been spent."""
        limits = []
        if self.max_calls is not None:
            limits.append(f"{self.max_calls} calls")
        if self.max_cost_usd is not None:
            limits.append(f"${self.max_cost_usd:.4f}")
        spent = f"{self.calls} calls sent"
        if self.max_cost_usd is not None or self.cost_usd:
            spent += f", ${self.cost_usd:.4f} spent"
        return f"budget of {' and '.join(limits) or 'no limit'} reached: {spent}"


_ACTIVE: Budget | None = None
_LOCK = threading.Lock()


def install(budget: Budget | None) -> None:
    """Make ``budget`` the one every client of this process asks (a pool initializer calls it
    in each worker); ``None`` removes it."""
    global _ACTIVE
    with _LOCK:
        _ACTIVE = budget


def active() -> Budget | None:
    """The budget in force in this process, if any."""
    return _ACTIVE


@contextmanager
def opened(budget: Budget | None) -> Iterator[Budget | None]:
    """``with opened(Budget(...)):`` the budget is in force for the block (then removed)."""
    previous = _ACTIVE
    install(budget)
    try:
        yield budget
    finally:
        install(previous)


def reserve_call(n: int = 1) -> None:
    """Called by a model client before sending ``n`` requests (raises :class:`BudgetExhausted`)."""
    budget = _ACTIVE
    if budget is not None:
        budget.reserve(n)


def charge(cost_usd: float | None) -> None:
    """Called by a model client with the price of each answered request."""
    budget = _ACTIVE
    if budget is not None:
        budget.charge(cost_usd)
