"""The web app's routes: the researcher console (:class:`Console`, listed in
:mod:`~tom_envs.serve.app`), a study's participant routes (:mod:`tom_envs.serve.study.routes`),
the static files, all behind the :class:`~tom_envs.serve.guard.Guard` middleware
(:func:`asgi_app`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tom_envs.serve.app import BODY_LIMIT, MESSAGE_LIMIT, BadRequest, is_json_int
from tom_envs.serve.guard import Guard, GuardConfig, Throttle, client_address
from tom_envs.serve.session import Session, SessionError

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.websockets import WebSocket

    from tom_envs.serve.app import App
    from tom_envs.serve.study.server import StudyServer

STATIC = Path(__file__).parent / "static"
#: The pages' Content-Security-Policy: their own script and style only, images also from
#: ``data:`` (the console's board), no plugins, no framing. A second line of defence behind
#: building every element with textContent.
PAGE_CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
            "form-action 'none'")  # fmt: skip
#: Seconds a request body may take to arrive, and refused websocket messages before it is closed.
BODY_SECONDS = 10.0
WS_ERRORS = 50


def json_response(data: Any, status: int = 200) -> JSONResponse:
    """A JSON response."""
    from starlette.responses import JSONResponse

    return JSONResponse(data, status_code=status)


def refused(exc: BadRequest) -> JSONResponse:
    """The JSON answer to a refused request."""
    return json_response({"error": str(exc), "field": exc.field}, exc.status)


def page(name: str) -> Response:
    """A static page with the pages' CSP."""
    from starlette.responses import FileResponse

    return FileResponse(STATIC / name, headers={"Content-Security-Policy": PAGE_CSP})


async def body_of(request: Request) -> dict[str, Any]:
    """The JSON object body (``{}`` when empty); :class:`BadRequest` otherwise (413 when larger
    than the limit, 408 when it does not arrive within :data:`BODY_SECONDS`)."""
    size = request.headers.get("content-length")
    if size is not None and (not size.isdigit() or int(size) > BODY_LIMIT):
        raise BadRequest("body", f"larger than {BODY_LIMIT} bytes", 413)
    raw = b""
    try:
        async with asyncio.timeout(BODY_SECONDS):
            async for chunk in request.stream():
                raw += chunk
                if len(raw) > BODY_LIMIT:
                    raise BadRequest("body", f"larger than {BODY_LIMIT} bytes", 413)
    except TimeoutError:
        raise BadRequest("body", f"not received within {BODY_SECONDS:g} s", 408) from None
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        raise BadRequest("body", "must be a JSON object") from None
    if not isinstance(body, dict):
        raise BadRequest("body", "must be a JSON object")
    return body


def check_move(body: Mapping[str, Any]) -> str | None:
    """What is wrong with a move ``{step, action, message?}`` (``None``: nothing)."""
    step, action, message = body.get("step"), body.get("action"), body.get("message")
    unknown = [k for k in body if k not in ("step", "action", "message", "seconds")]
    if unknown:
        return f"unknown field {str(unknown[0])[:40]!r}; allowed: step, action, message"
    if not is_json_int(step) or not is_json_int(action):
        return "step and action must be integers"
    if message is not None and not isinstance(message, str):
        return "message must be text"
    if isinstance(message, str) and len(message) > MESSAGE_LIMIT:
        return f"message must be at most {MESSAGE_LIMIT} characters"
    return None


class Console:
    """The researcher console's handlers over an :class:`~tom_envs.serve.app.App`."""

    def __init__(self, app: App, trusted_proxies: tuple[str, ...] = ()) -> None:
        self.app = app
        self.throttle = Throttle()
        self.proxies = trusted_proxies
        self._games: list[dict[str, Any]] | None = None

    def seat(self, sid: str, token: object, address: str) -> tuple[Session, int]:
        """The session and seat of ``token``; one answer for an unknown id and a wrong token."""
        if self.throttle.blocked(address):
            raise BadRequest("token", "too many refused tokens; wait a minute", 429)
        s = self.app.sessions.get(sid)
        seat = s.seat_of_token(token) if s is not None else None
        if s is None or seat is None:
            self.throttle.fail(address)
            raise BadRequest("token", "no such session, or not your seat", 404)
        s.last_seen = time.monotonic()
        return s, seat

    def _seat_of(self, request: Request) -> tuple[Session, int]:
        return self.seat(request.path_params["sid"], request.headers.get("x-seat-token"),
                         client_address(request.scope, self.proxies))  # fmt: skip

    async def index(self, request: Request) -> Response:
        return page("index.html")

    async def games(self, request: Request) -> JSONResponse:
        if self._games is None:  # every game's bundle is built once, off the event loop
            self._games = await asyncio.to_thread(self.app.games)
        return json_response(self._games)

    async def create(self, request: Request) -> JSONResponse:
        try:
            body = await body_of(request)
            s = await asyncio.to_thread(self.app.create, body, client_address(request.scope, self.proxies))
        except BadRequest as exc:
            return refused(exc)
        return json_response({**await asyncio.to_thread(self.app.payload, s), "token": s.token})

    async def get(self, request: Request) -> JSONResponse:
        try:
            s, _ = self._seat_of(request)
        except BadRequest as exc:
            return refused(exc)
        return json_response(await asyncio.to_thread(self.app.payload, s))

    async def act_on(self, s: Session, seat: int, body: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
        """Apply a move; ``(payload, status)``. A refused move is answered without drawing."""
        problem = check_move(body)
        if problem:
            return self.refusal(s, seat, problem), 400
        async with self.app.locks.get(s.id) or asyncio.Lock():  # dropped meanwhile: finished
            try:
                await asyncio.to_thread(s.submit, body["step"], body["action"], body.get("message"),
                                        seat)  # fmt: skip
            except SessionError as exc:
                return self.refusal(s, seat, str(exc)), 409
        return await asyncio.to_thread(self.app.payload, s), 200

    @staticmethod
    def refusal(s: Session, seat: int, problem: str) -> dict[str, Any]:
        return {"error": problem, "session": s.id, "step": s.steps.get(seat, 0), "status": s.status}

    async def act(self, request: Request) -> JSONResponse:
        await asyncio.to_thread(self.app.sweep)
        try:
            s, seat = self._seat_of(request)
            body = await body_of(request)
        except BadRequest as exc:
            return refused(exc)
        payload, status = await self.act_on(s, seat, body)
        return json_response(payload, status)

    async def abandon(self, request: Request) -> JSONResponse:
        try:
            s, _ = self._seat_of(request)
            await body_of(request)
        except BadRequest as exc:
            return refused(exc)
        async with self.app.locks.get(s.id) or asyncio.Lock():
            await asyncio.to_thread(s.abandon)
        return json_response(await asyncio.to_thread(self.app.payload, s))

    async def ws(self, websocket: WebSocket) -> None:
        await websocket.accept()
        try:
            s, seat = self.seat(websocket.path_params["sid"], websocket.query_params.get("token"),
                                client_address(websocket.scope, self.proxies))  # fmt: skip
        except BadRequest as exc:
            await websocket.send_json({"error": str(exc)})
            await websocket.close(code=4404)
            return
        await websocket.send_json(await asyncio.to_thread(self.app.payload, s))
        await self._ws_loop(websocket, s, seat)

    async def _ws_loop(self, websocket: WebSocket, s: Session, seat: int) -> None:
        errors = 0
        while errors < WS_ERRORS:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                break
            raw = message.get("text")
            text = raw if isinstance(raw, str) else ""  # binary frames are not JSON text
            s.last_seen = time.monotonic()
            try:
                body = json.loads(text) if len(text) <= BODY_LIMIT else None
            except (json.JSONDecodeError, RecursionError):
                body = None
            if not isinstance(body, dict):
                errors += 1
                await websocket.send_json(self.refusal(s, seat, "send a JSON object"))
                continue
            payload, status = await self.act_on(s, seat, body)
            errors += status != 200
            await websocket.send_json(payload)
        else:
            await websocket.close(code=1008)  # too many refused messages
        s.last_seen = time.monotonic()  # the tab closed: the idle timer starts now

    def routes(self) -> list[Any]:
        from starlette.routing import Route, WebSocketRoute

        return [
            Route("/", self.index),
            Route("/api/games", self.games),
            Route("/api/sessions", self.create, methods=["POST"]),
            Route("/api/sessions/{sid}", self.get),
            Route("/api/sessions/{sid}/act", self.act, methods=["POST"]),
            Route("/api/sessions/{sid}/abandon", self.abandon, methods=["POST"]),
            WebSocketRoute("/ws/{sid}", self.ws),
        ]


def asgi_app(app: App | None, study: StudyServer | None = None,
             config: GuardConfig | None = None, tick: float = 1.0) -> Any:  # fmt: skip
    """The ASGI application: the console (when ``app`` is given), the study's participant routes
    (when ``study`` is given) and the static files, wrapped in :class:`Guard`. Its lifespan runs
    the console's sweeps and the study's ticks, and shuts both down."""
    from starlette.applications import Starlette
    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles

    cfg = config or GuardConfig()
    routes: list[Any] = []
    if app is not None:
        routes += Console(app, cfg.trusted_proxies).routes()
    if study is not None:
        from tom_envs.serve.study.routes import Participants

        routes += Participants(study, cfg.trusted_proxies).routes()
    routes.append(Mount("/static", StaticFiles(directory=STATIC), name="static"))

    @asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        tasks = []
        if app is not None:
            console = app
            tasks.append(asyncio.create_task(_every(console.sweep_every,
                                                    lambda: asyncio.to_thread(console.sweep))))
        if study is not None:
            tasks.append(asyncio.create_task(_every(tick, study.tick)))
        try:
            yield
        finally:
            for t in tasks:
                t.cancel()
            if app is not None:
                app.close()  # SIGINT/SIGTERM: uvicorn runs this before exiting
            if study is not None:
                study.close()

    if study is not None and cfg.open_prefixes == ():
        cfg = dataclasses.replace(cfg, open_prefixes=("/p/", "/api/p/", "/ws/p/", "/static/"))
    return Guard(Starlette(routes=routes, lifespan=lifespan), cfg)


async def _every(seconds: float, job: Any) -> None:
    while True:
        await asyncio.sleep(seconds)
        try:
            await job()
        except Exception as exc:  # a failed sweep or tick is reported; the next one runs
            import sys

            print(f"tom-envs serve: background job failed: {type(exc).__name__}: {exc}", file=sys.stderr)
