"""How an LLM request fails, and what a client does about it.

* :class:`LLMError` ends a request for good; its :attr:`~LLMError.kind` is one of
  :data:`FAILURE_KINDS`. :class:`TransientLLMError` (and :class:`EndpointUnreachable`,
  :class:`RateLimited`) are worth retrying, :class:`CircuitOpen` says the breaker refuses calls,
  :class:`SchemaUnsupported` that the server refused constrained decoding, :class:`ReplyTooLarge`
  that a reply went over the client's size cap;
* :class:`RetryPolicy`: which failures are retried (:func:`is_connection_failure`,
  :func:`is_endpoint_failure`, :func:`is_context_overflow` tell them apart), how long to wait, and
  when a server's ``Retry-After`` is too long to wait for at all (:attr:`RetryPolicy.max_retry_after_s`);
* :class:`CircuitBreaker`: stop calling an endpoint after consecutive endpoint failures
  (connection failures, timeouts, rate limits and server errors alike);
* :func:`redact`: secrets out of every message (and every message bounded in length).

:class:`~tom_llm_agents.client.BaseLLMClient` applies them around every request (see
:mod:`tom_llm_agents.client`).
"""

from __future__ import annotations

import email.utils
import random
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

#: The failure kinds a request can end with (:attr:`LLMError.kind`).
FAILURE_KINDS = ("endpoint", "context_overflow", "request", "rate_limited", "oversized")

#: Longest error message kept (a hostile server's 10 MB error body never reaches a trajectory).
MAX_MESSAGE_CHARS = 600


class LLMError(RuntimeError):
    """A request failed for good (after any retries). The message never contains an API key.

    Attributes:
        kind: ``"endpoint"`` (unreachable, timed out or failing server after the retries; circuit
            breaker open), ``"context_overflow"`` (the prompt does not fit the model's context),
            ``"rate_limited"`` (429 after the retries, or a ``Retry-After`` longer than the
            policy waits), ``"oversized"`` (the reply went over the client's size cap) or
            ``"request"`` (any other refusal).
    """

    def __init__(self, message: str, kind: str = "request") -> None:
        if len(message) > MAX_MESSAGE_CHARS:
            message = message[: MAX_MESSAGE_CHARS - 20] + f"... [{len(message)} chars]"
        super().__init__(message)
        self.kind = kind if kind in FAILURE_KINDS else "request"


class TransientLLMError(LLMError):
    """A failure worth retrying (raised by clients whose transport is not ``openai``); it counts
    toward the circuit breaker like a connection failure or a 5xx answer."""

    def __init__(self, message: str, kind: str = "endpoint") -> None:
        super().__init__(message, kind)


class EndpointUnreachable(TransientLLMError):
    """The endpoint could not be reached (connection refused, connect timeout): counted by the
    circuit breaker. ``openai.APIConnectionError`` (and its ``APITimeoutError``) count the same."""


class RateLimited(TransientLLMError):
    """HTTP 429 from a client whose transport is not ``openai``; ``retry_after`` is the server's
    ``Retry-After`` in seconds, if it sent one."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message, "rate_limited")
        self.retry_after = retry_after


class CircuitOpen(LLMError):
    """The circuit breaker is open: the endpoint failed repeatedly and is not called now."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "endpoint")


class SchemaUnsupported(LLMError):
    """The server refused constrained decoding (``response_format`` / ``json_schema``)."""


class ReplyTooLarge(LLMError):
    """The reply (its HTTP body) went over the client's size cap: never retried, never kept."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "oversized")


class DeadlineExceeded(TimeoutError):
    """One attempt outlived its wall-clock deadline (a server trickling its reply byte by byte);
    a timeout like any other: retried, and counted by the circuit breaker."""


class CircuitBreaker:
    """Stops calling an endpoint after ``threshold`` consecutive endpoint failures (connection
    failures, timeouts, 429 and 5xx answers: :func:`is_endpoint_failure`).

    Thread-safe; shared by every episode that uses the client. While open, :meth:`allow` is
    False until ``cooldown_s`` has passed; then one trial attempt is allowed (half-open).

    Args:
        threshold: consecutive connection failures that open the breaker (0 disables it).
        cooldown_s: seconds before a trial attempt is let through.
        clock: the time source (tests pass a fake one).
    """

    def __init__(
        self, threshold: int = 3, cooldown_s: float = 30.0, clock: Any = time.monotonic
    ) -> None:
        if threshold < 0 or cooldown_s < 0:
            raise ValueError("breaker threshold and cooldown_s must be >= 0")
        self.threshold = int(threshold)
        self.cooldown_s = float(cooldown_s)
        self.clock = clock
        self.failures = 0
        self.opened_at: float | None = None
        self.trips = 0
        self._trial = False
        self._lock = threading.Lock()

    @property
    def is_open(self) -> bool:
        """Whether requests are being refused now (ignoring a pending trial)."""
        return self.opened_at is not None

    def allow(self) -> bool:
        """May an attempt be made now? (Half-open: one trial after the cooldown.)"""
        with self._lock:
            if self.opened_at is None:
                return True
            if not self._trial and self.clock() - self.opened_at >= self.cooldown_s:
                self._trial = True
                return True
            return False

    def success(self) -> None:
        """An attempt reached the server: close the breaker."""
        with self._lock:
            self.failures = 0
            self.opened_at = None
            self._trial = False

    def trip(self) -> None:
        """Open now (the server asked not to be called for longer than the policy waits)."""
        with self._lock:
            if self.threshold == 0:
                return
            self.trips += int(self.opened_at is None)
            self.failures = max(self.failures, self.threshold)
            self.opened_at = self.clock()
            self._trial = False

    def failure(self) -> bool:
        """An endpoint failure; returns True when the breaker is (now) open."""
        with self._lock:
            self.failures += 1
            if self._trial or (self.threshold and self.failures >= self.threshold):
                if self.opened_at is None or self._trial:
                    self.trips += int(self.opened_at is None)
                self.opened_at = self.clock()
                self._trial = False
                return True
            return False


def is_connection_failure(exc: BaseException) -> bool:
    """Connection refused / reset / connect or read timeout / a wall-clock deadline passed."""
    if isinstance(exc, (EndpointUnreachable, ConnectionError, TimeoutError)):
        return True
    try:
        import openai
    except ImportError:  # pragma: no cover - the openai package is the llm extra
        return False
    return isinstance(exc, openai.APIConnectionError) and not reply_too_large(exc)


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of a failed request, if the server answered."""
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def is_endpoint_failure(exc: BaseException) -> bool:
    """What the circuit breaker counts: connection failures and timeouts, rate limits (429) and
    server errors (5xx), and every :class:`TransientLLMError`. A refused request (400, 401...) or
    an oversized reply is the server working: it closes the breaker."""
    if isinstance(exc, TransientLLMError) or is_connection_failure(exc):
        return True
    status = status_of(exc)
    return status is not None and (status == 429 or status >= 500)


def reply_too_large(exc: BaseException) -> bool:
    """Whether ``exc`` is (or was caused by) :class:`ReplyTooLarge` (the ``openai`` package may
    wrap what its transport raised)."""
    seen = 0
    cur: BaseException | None = exc
    while cur is not None and seen < 10:
        if isinstance(cur, ReplyTooLarge):
            return True
        cur = cur.__cause__ or cur.__context__
        seen += 1
    return False


_OVERFLOW_WORDS = (
    "context length",
    "context_length",
    "context window",
    "context size",
    "maximum context",
    "too many tokens",
    "exceeds the available context",
    "prompt is too long",
    "input is too long",
)


def is_context_overflow(exc: BaseException) -> bool:
    """HTTP 400/413 whose message says the prompt does not fit the model's context."""
    if isinstance(exc, LLMError):
        return exc.kind == "context_overflow"
    status = getattr(exc, "status_code", None)
    text = str(exc).lower()
    return status in (400, 413) and any(w in text for w in _OVERFLOW_WORDS)


@dataclass
class RetryPolicy:
    """Which failures are retried and how long to wait: written once for every client.

    Attributes:
        max_retries: retries after the first attempt.
        base_delay_s: first backoff; attempt ``k`` waits ``base * 2**k`` (capped), plus jitter.
        max_delay_s: cap on one backoff of our own.
        max_retry_after_s: the longest ``Retry-After`` (or ``retry-after-ms``) a server may ask
            for: a shorter one is waited for, a longer one fails the call at once with kind
            ``"rate_limited"`` (and opens the circuit breaker) instead of sleeping for an hour.
        jitter: up to this fraction of the delay is added at random.
    """

    max_retries: int = 5
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0
    max_retry_after_s: float = 60.0
    jitter: float = 0.25
    _rng: random.Random = field(default_factory=random.Random, repr=False, compare=False)

    def retryable(self, exc: BaseException) -> bool:
        """Rate limits, timeouts, connection failures and 5xx errors are; nothing else is."""
        if isinstance(exc, TransientLLMError):
            return True
        if isinstance(exc, LLMError) or is_context_overflow(exc) or reply_too_large(exc):
            return False
        if isinstance(exc, TimeoutError):
            return True
        try:
            import openai
        except ImportError:  # pragma: no cover - the openai package is the llm extra
            return False
        if isinstance(
            exc,
            (
                openai.RateLimitError,
                openai.APITimeoutError,
                openai.APIConnectionError,
                openai.InternalServerError,
            ),
        ):
            return True
        status = getattr(exc, "status_code", None)
        return isinstance(status, int) and (status in (408, 409, 429) or status >= 500)

    def waits_too_long(self, exc: BaseException) -> bool:
        """The server asked for a pause longer than :attr:`max_retry_after_s`."""
        after = retry_after(exc)
        return after is not None and after > self.max_retry_after_s

    def delay(self, attempt: int, exc: BaseException) -> float | None:
        """Seconds to wait before retry ``attempt`` (0-based), or ``None`` to give up."""
        if attempt >= self.max_retries or not self.retryable(exc) or self.waits_too_long(exc):
            return None
        wait = min(self.max_delay_s, self.base_delay_s * 2**attempt)
        after = retry_after(exc)
        if after is not None:
            wait = max(wait, after)
        return wait + self._rng.uniform(0.0, self.jitter * wait)

    def kind(self, exc: BaseException) -> str:
        """The failure kind of a request that ended with ``exc``."""
        if reply_too_large(exc):
            return "oversized"
        if is_context_overflow(exc):
            return "context_overflow"
        if isinstance(exc, LLMError):
            return exc.kind
        if status_of(exc) == 429:
            return "rate_limited"
        if is_connection_failure(exc) or self.retryable(exc):
            return "endpoint"
        return "request"


def retry_after(exc: BaseException) -> float | None:
    """The pause a failed request's server asked for, in seconds (``retry-after-ms``, or
    ``Retry-After`` as seconds or an HTTP date), else ``None``."""
    direct = getattr(exc, "retry_after", None)
    if isinstance(direct, (int, float)) and not isinstance(direct, bool):
        return float(direct)
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000.0)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(str(value))
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


def redact(text: str, secrets: Sequence[str | None]) -> str:
    """``text`` with every secret (of 4+ characters) replaced by ``***``, cut to
    :data:`MAX_MESSAGE_CHARS` characters."""
    for s in secrets:
        if s and len(s) >= 4:
            text = text.replace(s, "***")
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[: MAX_MESSAGE_CHARS - 20] + f"... [{len(text)} chars]"
    return text
