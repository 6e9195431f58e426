"""The web app: Starlette routes and a websocket over :class:`~tom_envs.serve.session.Session`.

Routes::

    GET  /                               the player page (pick a game, seat and partners; play)
    GET  /api/games                      games, seats, agents (bots and generic specs)
    POST /api/sessions                   {game, seat, partners, seed, kwargs} -> payload
    GET  /api/sessions/{id}              the current payload (resume after a reload)
    POST /api/sessions/{id}/act          {step, action, message?} -> payload (409: stale/illegal)
    POST /api/sessions/{id}/abandon      record the episode as abandoned
    WS   /ws/{id}                        the same, pushed: send {step, action, message?}
    GET  /study/{participant}            study mode: the task list with completion
    POST /api/study/{participant}/{task} start (or resume) a study task -> payload

Every session has a lock, so concurrent submissions for one session are applied one at a time and
a duplicate is rejected by its decision index. A session nobody has touched for ``idle_timeout``
seconds (a closed tab) is recorded as abandoned by :meth:`App.sweep`, which runs on every request
and every ``sweep_every`` seconds in the background.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tom_envs.serve.session import Session, SessionError

STATIC = Path(__file__).parent / "static"


@dataclass
class StudyTask:
    """One task of a study: a game, the person's seat, partners, seed and game arguments."""

    name: str
    game: str
    seat: int
    partners: list[str]
    seed: int = 0
    kwargs: dict[str, Any] = field(default_factory=dict)


def load_study(path: str | Path) -> list[StudyTask]:
    """A study file (TOML): ``[[tasks]]`` tables with name, game, seat, partners, seed, kwargs."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    data = tomllib.loads(Path(path).read_text())
    tasks = [StudyTask(**t) for t in data.get("tasks", [])]
    if not tasks:
        raise ValueError(f"{path}: no [[tasks]]")
    return tasks


class App:
    """Sessions, study progress and the ASGI application (:attr:`asgi`)."""

    def __init__(
        self,
        out_dir: str | Path = "runs/human",
        study: list[StudyTask] | None = None,
        idle_timeout: float = 600.0,
        sweep_every: float = 30.0,
    ) -> None:
        self.out_dir = Path(out_dir)
        self.sessions: dict[str, Session] = {}
        self.locks: dict[str, asyncio.Lock] = {}
        self.study = {t.name: t for t in (study or [])}
        self.progress: dict[tuple[str, str], str] = {}  # (participant, task) -> session id
        self.idle_timeout = idle_timeout
        self.sweep_every = sweep_every
        self.asgi = self._build()

    # ------------------------------------------------------------------ sessions
    def create(self, body: Mapping[str, Any], participant: str | None = None,
               task: str | None = None) -> Session:  # fmt: skip
        """A new session from a request body (errors: ``ValueError``/``KeyError`` with a message)."""
        partners = body.get("partners") or []
        if not isinstance(partners, list) or not all(isinstance(p, str) for p in partners):
            raise ValueError("partners must be a list of agent specs")
        kwargs = body.get("kwargs") or {}
        if not isinstance(kwargs, dict):
            raise ValueError("kwargs must be an object")
        s = Session(str(body.get("game", "")), int(body.get("seat", 0)), partners,
                    int(body.get("seed", 0)), kwargs, self.out_dir, participant, task)  # fmt: skip
        self.sessions[s.id] = s
        self.locks[s.id] = asyncio.Lock()
        return s

    def sweep(self) -> int:
        """Record idle sessions as abandoned; returns how many."""
        now, n = time.monotonic(), 0
        for s in list(self.sessions.values()):
            if s.status == "playing" and now - s.last_seen > self.idle_timeout:
                s.abandon()
                n += 1
        return n

    def games(self) -> list[dict[str, Any]]:
        """Games with their seats and the agent names usable as partners."""
        from tom_envs.agents import agent_names
        from tom_envs.registration import GAMES

        out = []
        for spec in GAMES:
            bundle = spec.load().make_bundle(**spec.kwargs)
            names = agent_names(spec)
            out.append({"name": spec.name, "summary": spec.summary,
                        "seats": bundle.game.num_players,
                        "agents": [n for n in names if n not in ("llm", "checkpoint")],
                        "chat": bool(bundle.game.tags.communication)})  # fmt: skip
        return out

    # ------------------------------------------------------------------ ASGI
    def _build(self) -> Any:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import FileResponse, HTMLResponse, JSONResponse
        from starlette.routing import Mount, Route, WebSocketRoute
        from starlette.staticfiles import StaticFiles
        from starlette.websockets import WebSocket, WebSocketDisconnect

        app = self

        def error(msg: str, status: int = 400) -> JSONResponse:
            return JSONResponse({"error": msg}, status_code=status)

        async def body_of(request: Request) -> dict[str, Any] | None:
            try:
                body = await request.json()
            except (json.JSONDecodeError, ValueError):
                return None
            return body if isinstance(body, dict) else None

        async def index(request: Request) -> FileResponse:
            return FileResponse(STATIC / "index.html")

        async def games(request: Request) -> JSONResponse:
            return JSONResponse(app.games())

        async def create(request: Request) -> JSONResponse:
            app.sweep()
            body = await body_of(request)
            if body is None:
                return error("the body must be a JSON object")
            try:
                s = app.create(body)
            except (ValueError, KeyError, TypeError) as exc:
                return error(str(exc.args[0] if exc.args else exc))
            return JSONResponse(s.payload())

        def session_of(sid: str) -> Session | None:
            s = app.sessions.get(sid)
            if s is not None:
                s.last_seen = time.monotonic()
            return s

        async def get(request: Request) -> JSONResponse:
            s = session_of(request.path_params["sid"])
            return error("no such session", 404) if s is None else JSONResponse(s.payload())

        async def act_on(s: Session, body: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
            async with app.locks[s.id]:
                try:
                    step, action = body.get("step"), body.get("action")
                    if not isinstance(step, int) or not isinstance(action, int):
                        raise SessionError("step and action must be integers")
                    message = body.get("message")
                    if message is not None and not isinstance(message, str):
                        raise SessionError("message must be text")
                    payload = await asyncio.to_thread(s.submit, step, action, message)
                    return payload, 200
                except SessionError as exc:
                    return {**s.payload(), "error": str(exc)}, 409

        async def act(request: Request) -> JSONResponse:
            app.sweep()
            s = session_of(request.path_params["sid"])
            if s is None:
                return error("no such session", 404)
            body = await body_of(request)
            if body is None:
                return error("the body must be a JSON object")
            payload, status = await act_on(s, body)
            return JSONResponse(payload, status_code=status)

        async def abandon(request: Request) -> JSONResponse:
            s = session_of(request.path_params["sid"])
            if s is None:
                return error("no such session", 404)
            async with app.locks[s.id]:
                s.abandon()
            return JSONResponse(s.payload())

        async def ws(websocket: WebSocket) -> None:
            s = session_of(websocket.path_params["sid"])
            await websocket.accept()
            if s is None:
                await websocket.send_json({"error": "no such session"})
                await websocket.close()
                return
            await websocket.send_json(s.payload())
            try:
                while True:
                    try:
                        body = await websocket.receive_json()
                    except (json.JSONDecodeError, ValueError):
                        await websocket.send_json({**s.payload(), "error": "send a JSON object"})
                        continue
                    s.last_seen = time.monotonic()
                    payload, _ = await act_on(s, body if isinstance(body, dict) else {})
                    await websocket.send_json(payload)
            except WebSocketDisconnect:
                s.last_seen = time.monotonic()  # the tab closed: the idle timer starts now

        async def study_page(request: Request) -> HTMLResponse:
            pid = request.path_params["participant"]
            rows = []
            for name, t in app.study.items():
                sid = app.progress.get((pid, name))
                status = app.sessions[sid].status if sid in app.sessions else "not started"
                rows.append(f'<li data-task="{name}" data-status="{status}"><b>{name}</b> '
                            f"({t.game}, seat {t.seat}): {status}</li>")  # fmt: skip
            done = sum(1 for n in app.study if app.sessions.get(app.progress.get((pid, n), ""))
                       and app.sessions[app.progress[(pid, n)]].status == "done")  # fmt: skip
            html = (f"<!doctype html><title>study</title><h1>Participant {pid}</h1>"
                    f"<p id='progress'>{done} of {len(app.study)} tasks completed</p>"
                    f"<ul>{''.join(rows)}</ul><p><a href='/?participant={pid}'>play</a></p>")  # fmt: skip
            return HTMLResponse(html)

        async def study_start(request: Request) -> JSONResponse:
            pid, name = request.path_params["participant"], request.path_params["task"]
            t = app.study.get(name)
            if t is None:
                return error(f"no study task {name!r}", 404)
            sid = app.progress.get((pid, name))
            if sid in app.sessions and app.sessions[sid].status == "playing":
                return JSONResponse(app.sessions[sid].payload())  # resume
            body = {"game": t.game, "seat": t.seat, "partners": t.partners, "seed": t.seed,
                    "kwargs": t.kwargs}  # fmt: skip
            s = app.create(body, participant=pid, task=name)
            app.progress[(pid, name)] = s.id
            return JSONResponse(s.payload())

        async def study_tasks(request: Request) -> JSONResponse:
            pid = request.path_params["participant"]
            return JSONResponse([
                {"task": n, "game": t.game, "status": app.sessions[app.progress[(pid, n)]].status
                 if (pid, n) in app.progress else "not started"}
                for n, t in app.study.items()
            ])  # fmt: skip

        async def sweeper() -> None:
            while True:
                await asyncio.sleep(app.sweep_every)
                app.sweep()

        from contextlib import asynccontextmanager

        @asynccontextmanager
        async def lifespan(_: Any) -> Any:
            task = asyncio.create_task(sweeper())
            try:
                yield
            finally:
                task.cancel()

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
        return Starlette(routes=routes, lifespan=lifespan)


def serve(host: str = "127.0.0.1", port: int = 8000, out_dir: str = "runs/human",
          study: str | None = None, idle_timeout: float = 600.0) -> None:  # fmt: skip
    """Run the app with uvicorn (blocking)."""
    import uvicorn

    app = App(out_dir, load_study(study) if study else None, idle_timeout)
    uvicorn.run(app.asgi, host=host, port=port, log_level="warning")
