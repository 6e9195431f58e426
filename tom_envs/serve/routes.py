"""The routes of the web app (listed in :mod:`~tom_envs.serve.app`): Starlette handlers and the
websocket over an :class:`~tom_envs.serve.app.App`'s sessions, behind the
:class:`~tom_envs.serve.guard.Guard` middleware.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from tom_envs.serve.app import BODY_LIMIT, ID_LIMIT, MESSAGE_LIMIT, BadRequest, is_json_int
from tom_envs.serve.guard import Guard
from tom_envs.serve.session import Session, SessionError

if TYPE_CHECKING:
    from tom_envs.serve.app import App

STATIC = Path(__file__).parent / "static"
#: The player page's Content-Security-Policy: its own script and style only, images also from
#: ``data:`` (the board), no plugins, no framing. A second line of defence behind escaping.
PAGE_CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
            "form-action 'none'")  # fmt: skip


def asgi_app(app: App) -> Any:
    """The ASGI application serving ``app``: every route, wrapped in :class:`Guard`."""
    from contextlib import asynccontextmanager

    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import FileResponse, HTMLResponse, JSONResponse
    from starlette.routing import Mount, Route, WebSocketRoute
    from starlette.staticfiles import StaticFiles
    from starlette.websockets import WebSocket, WebSocketDisconnect

    def error(msg: str, status: int = 400, field: str = "") -> JSONResponse:
        return JSONResponse({"error": msg, "field": field}, status_code=status)

    def refused(exc: BadRequest) -> JSONResponse:
        return error(str(exc), exc.status, exc.field)

    async def body_of(request: Request) -> dict[str, Any]:
        """The JSON object body (``{}`` when empty); BadRequest otherwise."""
        size = request.headers.get("content-length")
        if size is not None and (not size.isdigit() or int(size) > BODY_LIMIT):
            raise BadRequest("body", f"larger than {BODY_LIMIT} bytes", 413)
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > BODY_LIMIT:
                raise BadRequest("body", f"larger than {BODY_LIMIT} bytes", 413)
        if not raw.strip():
            return {}
        try:
            body = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            raise BadRequest("body", "must be a JSON object") from None
        if not isinstance(body, dict):
            raise BadRequest("body", "must be a JSON object")
        return body

    def seat(sid: str, token: object) -> Session:
        """The session if ``token`` is its seat token; one answer for unknown and wrong."""
        s = app.sessions.get(sid)
        if s is None or not s.check_token(token):
            raise BadRequest("token", "no such session, or not your seat", 404)
        s.last_seen = time.monotonic()
        return s

    def seat_of(request: Request) -> Session:
        return seat(request.path_params["sid"], request.headers.get("x-seat-token"))

    def created(s: Session) -> JSONResponse:
        return JSONResponse({**s.payload(), "token": s.token})

    async def index(request: Request) -> FileResponse:
        return FileResponse(
            STATIC / "index.html", headers={"Content-Security-Policy": PAGE_CSP}
        )

    async def games(request: Request) -> JSONResponse:
        return JSONResponse(app.games())

    async def create(request: Request) -> JSONResponse:
        try:
            body = await body_of(request)
            s = await asyncio.to_thread(app.create, body)
        except BadRequest as exc:
            return refused(exc)
        return created(s)

    async def get(request: Request) -> JSONResponse:
        try:
            return JSONResponse(seat_of(request).payload())
        except BadRequest as exc:
            return refused(exc)

    async def act_on(s: Session, body: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
        step, action = body.get("step"), body.get("action")
        message = body.get("message")
        unknown = [k for k in body if k not in ("step", "action", "message")]
        problem = None
        if unknown:
            problem = f"unknown field {str(unknown[0])[:40]!r}; allowed: step, action, message"
        elif not is_json_int(step) or not is_json_int(action):
            problem = "step and action must be integers"
        elif message is not None and not isinstance(message, str):
            problem = "message must be text"
        elif isinstance(message, str) and len(message) > MESSAGE_LIMIT:
            problem = f"message must be at most {MESSAGE_LIMIT} characters"
        if problem:
            return {**s.payload(), "error": problem}, 400
        async with app.locks.get(s.id) or asyncio.Lock():  # dropped meanwhile: finished
            try:
                payload = await asyncio.to_thread(s.submit, step, action, message)
                return payload, 200
            except SessionError as exc:
                return {**s.payload(), "error": str(exc)}, 409

    async def act(request: Request) -> JSONResponse:
        app.sweep()
        try:
            s = seat_of(request)
            body = await body_of(request)
        except BadRequest as exc:
            return refused(exc)
        payload, status = await act_on(s, body)
        return JSONResponse(payload, status_code=status)

    async def abandon(request: Request) -> JSONResponse:
        try:
            s = seat_of(request)
            await body_of(request)
        except BadRequest as exc:
            return refused(exc)
        async with app.locks.get(s.id) or asyncio.Lock():  # dropped meanwhile: finished
            await asyncio.to_thread(s.abandon)
        return JSONResponse(s.payload())

    async def ws(websocket: WebSocket) -> None:
        await websocket.accept()
        try:
            s = seat(websocket.path_params["sid"], websocket.query_params.get("token"))
        except BadRequest as exc:
            await websocket.send_json({"error": str(exc)})
            await websocket.close(code=4404)
            return
        await websocket.send_json(s.payload())
        try:
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    raise WebSocketDisconnect(message.get("code", 1000))
                raw = message.get("text")
                text = raw if isinstance(raw, str) else ""  # binary frames are not JSON text
                s.last_seen = time.monotonic()
                try:
                    body = json.loads(text) if len(text) <= BODY_LIMIT else None
                except (json.JSONDecodeError, RecursionError):
                    body = None
                if not isinstance(body, dict):
                    await websocket.send_json({**s.payload(), "error": "send a JSON object"})
                    continue
                payload, _ = await act_on(s, body)
                await websocket.send_json(payload)
        except WebSocketDisconnect:
            s.last_seen = time.monotonic()  # the tab closed: the idle timer starts now

    def ids(request: Request, *names: str) -> list[str]:
        out = []
        for name in names:
            value = request.path_params[name]
            if not value or len(value) > ID_LIMIT:
                raise BadRequest(name, f"must have 1 to {ID_LIMIT} characters")
            out.append(value)
        return out

    async def study_page(request: Request) -> HTMLResponse:
        try:
            (pid,) = ids(request, "participant")
        except BadRequest as exc:
            return HTMLResponse(escape(str(exc)), status_code=exc.status)
        rows, done = [], 0
        for name, t in app.study.items():
            status = app.status_of(app.progress.get((pid, name)))
            done += status == "done"
            link = f"/?participant={quote(pid, safe='')}&task={quote(name, safe='')}"
            rows.append(f'<li data-task="{escape(name)}" data-status="{escape(status)}">'
                        f'<a href="{escape(link)}"><b>{escape(name)}</b></a> '
                        f"({escape(t.game)}, seat {int(t.seat)}): {escape(status)}</li>")  # fmt: skip
        html = (f"<!doctype html><meta charset='utf-8'><title>study</title>"
                f"<h1>Participant {escape(pid)}</h1>"
                f"<p id='progress'>{done} of {len(app.study)} tasks completed</p>"
                f"<ul>{''.join(rows)}</ul>")  # fmt: skip
        return HTMLResponse(html, headers={"Content-Security-Policy": "script-src 'none'"})

    study_lock = asyncio.Lock()  # one study start at a time: never two sessions for a task

    async def study_start(request: Request) -> JSONResponse:
        try:
            pid, name = ids(request, "participant", "task")
            body = await body_of(request)
            t = app.study.get(name)
            if t is None:
                raise BadRequest("task", f"no such study task; tasks: {sorted(app.study)}", 404)
            async with study_lock:
                sid = app.progress.get((pid, name))
                s = app.sessions.get(sid) if sid is not None else None
                if s is not None and s.status == "playing":
                    if not s.check_token(body.get("token")):  # never hand out another's seat
                        raise BadRequest("token", "this task is in progress in another tab; "
                                         "reopen it from that tab, or start it again after "
                                         f"{int(app.idle_timeout)} s without moves", 409)  # fmt: skip
                    s.last_seen = time.monotonic()
                    return JSONResponse({**s.payload(), "token": s.token})  # resume
                if app.status_of(sid) == "done":  # a completed task is never replayed over
                    raise BadRequest("task", "this task is already completed", 409)
                spec = {"game": t.game, "seat": t.seat, "partners": t.partners,
                        "seed": t.seed, "kwargs": t.kwargs}  # fmt: skip
                s = await asyncio.to_thread(app.create, spec, pid, name, True)
                app.progress[(pid, name)] = s.id
        except BadRequest as exc:
            return refused(exc)
        return created(s)

    async def study_tasks(request: Request) -> JSONResponse:
        try:
            (pid,) = ids(request, "participant")
        except BadRequest as exc:
            return refused(exc)
        return JSONResponse([
            {"task": n, "game": t.game, "status": app.status_of(app.progress.get((pid, n)))}
            for n, t in app.study.items()
        ])  # fmt: skip

    async def sweeper() -> None:
        while True:
            await asyncio.sleep(app.sweep_every)
            await asyncio.to_thread(app.sweep)

    @asynccontextmanager
    async def lifespan(_: Any) -> Any:
        task = asyncio.create_task(sweeper())
        try:
            yield
        finally:
            task.cancel()
            app.close()  # SIGINT/SIGTERM: uvicorn runs this before exiting

    routes = [
        Route("/", index),
        Route("/api/games", games),
        Route("/api/sessions", create, methods=["POST"]),
        Route("/api/sessions/{sid}", get),
        Route("/api/sessions/{sid}/act", act, methods=["POST"]),
        Route("/api/sessions/{sid}/abandon", abandon, methods=["POST"]),
        WebSocketRoute("/ws/{sid}", ws),
        Route("/study/{participant}", study_page),
        Route("/api/study/{participant}", study_tasks),
        Route("/api/study/{participant}/{task}", study_start, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    return Guard(Starlette(routes=routes, lifespan=lifespan), app)
