"""How an LLM request fails, and what a client does about it.

* :class:`LLMError` ends a request for good; its :attr:`~LLMError.kind` is one of
  :data:`FAILURE_KINDS`. :class:`TransientLLMError` (and :class:`EndpointUnreachable`) are worth
  retrying, :class:`CircuitOpen` says the breaker refuses calls, :class:`SchemaUnsupported` that
  the server refused constrained decoding;
* :class:`RetryPolicy`: which failures are retried (:func:`is_connection_failure`,
  :func:`is_context_overflow` tell them apart) and how long to wait;
* :class:`CircuitBreaker`: stop calling an endpoint after consecutive connection failures;
* :func:`redact`: secrets out of every message.

:class:`~tom_llm_agents.client.BaseLLMClient` applies them around every request (see
:mod:`tom_llm_agents.client`).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

#: The failure kinds a request can end with (:attr:`LLMError.kind`).
FAILURE_KINDS = ("endpoint", "context_overflow", "request")


class LLMError(RuntimeError):
    """A request failed for good (after any retries). The message never contains an API key.

    Attributes:
        kind: ``"endpoint"`` (unreachable, timed out or failing server after the retries; circuit
            breaker open), ``"context_overflow"`` (the prompt does not fit the model's context)
            or ``"request"`` (any other refusal).
    """

    def __init__(self, message: str, kind: str = "request") -> None:
        super().__init__(message)
        self.kind = kind if kind in FAILURE_KINDS else "request"


class TransientLLMError(LLMError):
    """A failure worth retrying (raised by clients whose transport is not ``openai``)."""

    def __init__(self, message: str, kind: str = "endpoint") -> None:
        super().__init__(message, kind)


class EndpointUnreachable(TransientLLMError):
    """The endpoint could not be reached (connection refused, connect timeout): counted by the
    circuit breaker. ``openai.APIConnectionError`` (and its ``APITimeoutError``) count the same."""


class CircuitOpen(LLMError):
    """The circuit breaker is open: the endpoint failed repeatedly and is not called now."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "endpoint")


class SchemaUnsupported(LLMError):
    """The server refused constrained decoding (``response_format`` / ``json_schema``)."""


class CircuitBreaker:
    """Stops calling an endpoint after ``threshold`` consecutive connection failures.

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

    def failure(self) -> bool:
        """A connection failure; returns True when the breaker is (now) open."""
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
    """Connection refused / reset / connect or read timeout (the breaker counts these)."""
    if isinstance(exc, (EndpointUnreachable, ConnectionError, TimeoutError)):
        return True
    try:
        import openai
    except ImportError:  # pragma: no cover - the openai package is the llm extra
        return False
    return isinstance(exc, openai.APIConnectionError)


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
        max_delay_s: cap on one wait (also on a server's ``Retry-After``).
        jitter: up to this fraction of the delay is added at random.
    """

    max_retries: int = 5
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0
    jitter: float = 0.25
    _rng: random.Random = field(default_factory=random.Random, repr=False, compare=False)

    def retryable(self, exc: BaseException) -> bool:
        """Rate limits, timeouts, connection failures and 5xx errors are; nothing else is."""
        if isinstance(exc, TransientLLMError):
            return True
        if isinstance(exc, LLMError) or is_context_overflow(exc):
            return False
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

    def delay(self, attempt: int, exc: BaseException) -> float | None:
        """Seconds to wait before retry ``attempt`` (0-based), or ``None`` to give up."""
        if attempt >= self.max_retries or not self.retryable(exc):
            return None
        wait = min(self.max_delay_s, self.base_delay_s * 2**attempt)
        after = _retry_after(exc)
        if after is not None:
            wait = min(self.max_delay_s, max(wait, after))
        return wait + self._rng.uniform(0.0, self.jitter * wait)


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        value = headers.get("retry-after")
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def redact(text: str, secrets: Sequence[str | None]) -> str:
    """``text`` with every secret (of 4+ characters) replaced by ``***``."""
    for s in secrets:
        if s and len(s) >= 4:
            text = text.replace(s, "***")
    return text
