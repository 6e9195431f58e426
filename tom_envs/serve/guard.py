"""The web app's gate: host, origin, content type and access token, before any route runs.

:class:`Guard` is the ASGI middleware in front of every route of :mod:`~tom_envs.serve.app` (see
its threat model); :func:`default_allowed_hosts` gives the ``Host`` names it accepts.
"""

from __future__ import annotations

import hmac
import json
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

if TYPE_CHECKING:
    from tom_envs.serve.app import App

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
ACCESS_COOKIE = "tom_envs_access"


def default_allowed_hosts(host: str) -> tuple[str, ...] | None:
    """The ``Host`` names accepted when bound to ``host``: loopback names on loopback (so a page
    on another site cannot reach the server by DNS rebinding), ``host`` itself for a named
    address, and any (``None``) on a wildcard address, where ``--token`` is the guard."""
    if host in LOOPBACK_HOSTS:
        return LOOPBACK_HOSTS
    if host in ("0.0.0.0", "::", ""):
        return None
    return (host, *LOOPBACK_HOSTS)


class Guard:
    """ASGI middleware: host, origin, content type and access token, before any route runs."""

    SAFE_METHODS = ("GET", "HEAD", "OPTIONS")

    def __init__(self, inner: Any, app: App) -> None:
        self.inner, self.app = inner, app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.inner(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        problem, set_cookie = self.check(scope, headers, query)
        if problem is not None:
            status, msg = problem
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 4000 + status})
                return
            body = json.dumps({"error": msg, "field": "request"}).encode()
            await send({"type": "http.response.start", "status": status,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(body)).encode())]})  # fmt: skip
            await send({"type": "http.response.body", "body": body})
            return

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                extra = [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"),
                         (b"x-frame-options", b"DENY")]  # fmt: skip
                if set_cookie:
                    cookie = (f"{ACCESS_COOKIE}={self.app.token}; Path=/; HttpOnly; "
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
        allowed = self.app.allowed_hosts
        if allowed is not None and name not in allowed:
            return (400, f"Host {host[:80]!r} is not served here"), False
        origin = headers.get("origin")
        unsafe = scope["type"] == "websocket" or scope.get("method") not in self.SAFE_METHODS
        if unsafe and origin is not None:
            ours = {f"http://{host}", f"https://{host}"}
            if origin not in ours:
                return (403, f"cross-site request refused (Origin {origin[:80]!r})"), False
        if scope["type"] == "http" and scope.get("method") not in self.SAFE_METHODS:
            ctype = headers.get("content-type", "").split(";")[0].strip().lower()
            if ctype != "application/json":
                return (415, "Content-Type must be application/json"), False
        token = self.app.token
        if token is None:
            return None, False
        given = [headers.get("x-access-token"), *query.get("access", [])]
        for part in headers.get("cookie", "").split(";"):
            key, _, value = part.strip().partition("=")
            if key == ACCESS_COOKIE:
                given.append(value)
        if not any(
            g is not None and hmac.compare_digest(g.encode(), token.encode()) for g in given
        ):
            return (401, "an access token is required (the link you were given holds it)"), False
        return None, bool(query.get("access"))
