"""The web app's gates, before any route runs: connections, host, origin, content type, tokens.

* :func:`guarded_protocol`: uvicorn's HTTP protocol with two limits uvicorn lacks. A connection
  must deliver a request's headers within ``header_timeout`` seconds of opening (or of starting a
  new request on a kept-alive connection), else it is closed: idle or slow ("slowloris")
  connections are dropped before anything is authenticated. And one client address holds at most
  ``per_client`` connections; more are closed at once. :func:`server_config` adds uvicorn's own
  limits (``limit_concurrency``, keep-alive timeout, websocket frame size and pings) and raises
  the process's open-file limit to its hard limit.
* :class:`Guard`, the ASGI middleware: ``Host`` (DNS rebinding), ``Origin`` (cross-site
  requests), ``Content-Type`` of state-changing requests, and the access token when one is set.
  Paths under ``open_prefixes`` (a study's participant pages, which carry their own per-participant
  key) need no access token.
* :class:`Throttle`: refused credentials per client address; past a bound, 429.
"""

from __future__ import annotations

import hmac
import json
import resource
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
ACCESS_COOKIE = "tom_envs_access"
#: Seconds a connection has to deliver a request's headers, and connections per client address.
HEADER_TIMEOUT = 10.0
PER_CLIENT = 64


def default_allowed_hosts(host: str) -> tuple[str, ...] | None:
    """The ``Host`` names accepted when bound to ``host``: loopback names on loopback (so a page
    on another site cannot reach the server by DNS rebinding), ``host`` itself for a named
    address, and any (``None``) on a wildcard address, where ``--token`` is the guard."""
    if host in LOOPBACK_HOSTS:
        return LOOPBACK_HOSTS
    if host in ("0.0.0.0", "::", ""):
        return None
    return (host, *LOOPBACK_HOSTS)


@dataclass(frozen=True)
class GuardConfig:
    """What :class:`Guard` checks: accepted ``Host`` names (``None``: any), the access token
    (``None``: none), the path prefixes that need no access token, and the reverse proxies whose
    ``X-Forwarded-For`` is believed."""

    allowed_hosts: tuple[str, ...] | None = LOOPBACK_HOSTS
    token: str | None = None
    open_prefixes: tuple[str, ...] = ()
    #: reverse proxies whose ``X-Forwarded-For`` names the client (throttles and per-client
    #: game caps then count clients, not the proxy)
    trusted_proxies: tuple[str, ...] = ()


def guarded_protocol(header_timeout: float = HEADER_TIMEOUT, per_client: int = PER_CLIENT) -> type:
    """uvicorn's httptools protocol with a header deadline and a per-client connection cap (see
    the module docstring); each call makes a class with its own connection counts."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    counts: dict[str, int] = {}

    class GuardedHttp(HttpToolsProtocol):
        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._deadline: Any = None
            self._address = self.client[0] if self.client else "?"
            counts[self._address] = counts.get(self._address, 0) + 1
            if counts[self._address] > per_client:
                transport.close()
                return
            self._arm()

        def _arm(self) -> None:
            if self._deadline is None:
                self._deadline = self.loop.call_later(header_timeout, self._expire)

        def _expire(self) -> None:
            self._deadline = None
            if not self.transport.is_closing():
                self.transport.close()

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def on_message_begin(self) -> None:
            self._arm()
            super().on_message_begin()

        def on_headers_complete(self) -> None:
            self._disarm()
            super().on_headers_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            n = counts.get(self._address, 1) - 1
            if n > 0:
                counts[self._address] = n
            else:
                counts.pop(self._address, None)
            super().connection_lost(exc)

    GuardedHttp.counts = counts  # type: ignore[attr-defined]
    return GuardedHttp


def raise_open_files() -> int:
    """Raise the soft limit of open files to the hard limit; returns the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = 65536 if hard == resource.RLIM_INFINITY else hard
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return soft


def server_config(asgi: Any, host: str, port: int, *, body_limit: int,
                  header_timeout: float = HEADER_TIMEOUT, per_client: int = PER_CLIENT,
                  max_connections: int | None = None) -> Any:  # fmt: skip
    """A uvicorn ``Config`` with every limit of the module docstring (``max_connections``:
    default half the open-file limit, so descriptors are never exhausted)."""
    import uvicorn

    files = raise_open_files()
    limit = max_connections if max_connections is not None else max(64, files // 2 - 64)
    return uvicorn.Config(asgi, host=host, port=port, log_level="warning", ws_max_size=body_limit,
                          http=guarded_protocol(header_timeout, per_client),
                          limit_concurrency=limit, timeout_keep_alive=5, ws_ping_interval=20,
                          ws_ping_timeout=20, backlog=256, access_log=False)  # fmt: skip


@dataclass
class Throttle:
    """Refused credentials per client address: more than ``limit`` in ``window`` seconds and the
    address gets 429 until the window passes."""

    limit: int = 30
    window: float = 60.0
    failures: dict[str, list[float]] = field(default_factory=dict)

    def blocked(self, address: str) -> bool:
        """Whether ``address`` is over the bound now."""
        now = time.monotonic()
        recent = [t for t in self.failures.get(address, []) if now - t < self.window]
        if recent:
            self.failures[address] = recent
        else:
            self.failures.pop(address, None)
        return len(recent) >= self.limit

    def fail(self, address: str) -> None:
        """Count a refused credential of ``address`` (the table is bounded: oldest go first)."""
        self.failures.setdefault(address, []).append(time.monotonic())
        while len(self.failures) > 10_000:
            del self.failures[next(iter(self.failures))]


class Guard:
    """ASGI middleware: host, origin, content type and access token, before any route runs."""

    SAFE_METHODS = ("GET", "HEAD", "OPTIONS")

    def __init__(self, inner: Any, config: GuardConfig) -> None:
        self.inner, self.config = inner, config

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.inner(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        problem, set_cookie = self.check(scope, headers, query)
        if problem is not None:
            await _refuse(scope, send, *problem)
            return

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                extra = [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"),
                         (b"x-frame-options", b"DENY"), (b"cache-control", b"no-store")]  # fmt: skip
                if set_cookie:
                    cookie = (f"{ACCESS_COOKIE}={self.config.token}; Path=/; HttpOnly; "
                              "SameSite=Strict")  # fmt: skip
                    extra.append((b"set-cookie", cookie.encode("latin-1")))
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.inner(scope, receive, send_with_headers)

    def check(self, scope: dict[str, Any], headers: dict[str, str],
              query: dict[str, list[str]]) -> tuple[tuple[int, str] | None, bool]:  # fmt: skip
        """``((status, message) or None, whether to set the access cookie)``."""
        host = headers.get("host", "")
        name = host.rsplit(":", 1)[0] if not host.startswith("[") else host[1:].split("]")[0]
        allowed = self.config.allowed_hosts
        if allowed is not None and name not in allowed:
            return (400, f"Host {host[:80]!r} is not served here"), False
        origin = headers.get("origin")
        unsafe = scope["type"] == "websocket" or scope.get("method") not in self.SAFE_METHODS
        if unsafe and origin is not None and origin not in (f"http://{host}", f"https://{host}"):
            return (403, f"cross-site request refused (Origin {origin[:80]!r})"), False
        if scope["type"] == "http" and scope.get("method") not in self.SAFE_METHODS:
            ctype = headers.get("content-type", "").split(";")[0].strip().lower()
            if ctype != "application/json":
                return (415, "Content-Type must be application/json"), False
        token = self.config.token
        path = scope.get("path", "")
        if token is None or any(path.startswith(p) for p in self.config.open_prefixes):
            return None, False
        given = [headers.get("x-access-token"), *query.get("access", [])]
        for part in headers.get("cookie", "").split(";"):
            key, _, value = part.strip().partition("=")
            if key == ACCESS_COOKIE:
                given.append(value)
        if not any(g is not None and hmac.compare_digest(g.encode(), token.encode()) for g in given):
            return (401, "an access token is required (the link you were given holds it)"), False
        return None, bool(query.get("access"))


async def _refuse(scope: dict[str, Any], send: Any, status: int, msg: str) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 4000 + status})
        return
    body = json.dumps({"error": msg, "field": "request"}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})  # fmt: skip
    await send({"type": "http.response.body", "body": body})


def client_address(scope: Mapping[str, Any], trusted_proxies: Sequence[str] = ()) -> str:
    """The client's address (the socket's peer; ``X-Forwarded-For`` only from a listed proxy)."""
    peer = (scope.get("client") or ("?", 0))[0]
    if peer in trusted_proxies:
        for k, v in scope.get("headers", []):
            if k == b"x-forwarded-for":
                return v.decode("latin-1").split(",")[-1].strip()
    return str(peer)
