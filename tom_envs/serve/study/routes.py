"""A study's participant routes (behind :class:`~tom_envs.serve.guard.Guard`)::

    GET  /p/{id}                 the participant's page (its key is in the link's fragment)
    GET  /join?ext=ID            --open only: enrol a platform's participant, redirect to their page
    GET  /api/p/{id}             the page's state             (header X-Participant-Key)
    POST /api/p/{id}/step        {step, agree? | answers?}    consent, read, survey answers
    POST /api/p/{id}/act         {step, action, message?, seconds?}   a move in their game
    WS   /ws/p/{id}              first message {"key": KEY} within 10 s; then every change of the
                                 page is pushed as its state

Every answer to a wrong key is the same 404 as for an unknown id, and a client address with too
many refused keys gets 429 for a minute.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from tom_envs.serve.app import BadRequest
from tom_envs.serve.guard import Throttle, client_address
from tom_envs.serve.routes import body_of, check_move, json_response, page, refused
from tom_envs.serve.study import flow
from tom_envs.serve.study.server import PID, Refused

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.websockets import WebSocket

    from tom_envs.serve.study.server import StudyServer

#: Seconds a participant's websocket has to send its key.
AUTH_SECONDS = 10.0


class Participants:
    """The participant routes over a :class:`~tom_envs.serve.study.server.StudyServer`."""

    def __init__(self, server: StudyServer, trusted_proxies: tuple[str, ...] = ()) -> None:
        self.server = server
        self.throttle = Throttle()
        self.proxies = trusted_proxies

    async def who(self, pid: str, key: object, address: str) -> str:
        """The participant id if ``key`` is theirs (:class:`Refused` 404 / 429 otherwise)."""
        if self.throttle.blocked(address):
            raise Refused("too many refused links from your address; wait a minute", 429)
        try:
            await self.server.visit(pid, key)
        except Refused as exc:
            if exc.status == 404:
                self.throttle.fail(address)
            raise
        return pid

    async def _auth(self, request: Request) -> str:
        return await self.who(request.path_params["pid"], request.headers.get("x-participant-key"),
                              client_address(request.scope, self.proxies))  # fmt: skip

    @staticmethod
    def _refused(exc: Refused) -> Response:
        return json_response({"error": str(exc)}, exc.status)

    async def page(self, request: Request) -> Response:
        if not PID.fullmatch(request.path_params["pid"]):
            return json_response({"error": "no such participant"}, 404)
        return page("study.html")

    async def join(self, request: Request) -> Response:
        from starlette.responses import RedirectResponse

        if not self.server.open_enrollment:
            return json_response({"error": "this study enrols by personal links only"}, 404)
        try:
            pid, key = await self.server.join(request.query_params.get("ext", ""))
        except Refused as exc:
            return self._refused(exc)
        return RedirectResponse(f"/p/{pid}#k={key}", status_code=303)

    async def state(self, request: Request) -> Response:
        try:
            pid = await self._auth(request)
            return json_response(await flow.page(self.server, pid))
        except Refused as exc:
            return self._refused(exc)

    async def step(self, request: Request) -> Response:
        return await self._posted(request, self._submit)

    async def act(self, request: Request) -> Response:
        return await self._posted(request, self._act)

    async def _posted(
        self, request: Request, apply: Callable[[str, dict[str, Any]], Awaitable[None]]
    ) -> Response:
        """A participant's POST: ``apply(pid, body)``, then their page; a refusal or a bad body
        answered as a JSON error."""
        try:
            pid = await self._auth(request)
            await apply(pid, await body_of(request))
            return json_response(await flow.page(self.server, pid))
        except Refused as exc:
            return self._refused(exc)
        except BadRequest as exc:
            return refused(exc)

    async def _submit(self, pid: str, body: dict[str, Any]) -> None:
        await flow.submit(self.server, pid, body.get("step"), body)

    async def _act(self, pid: str, body: dict[str, Any]) -> None:
        problem = check_move(body)
        if problem:
            raise Refused(problem, 400)
        await self.server.act(pid, body["step"], body["action"], body.get("message"),
                              body.get("seconds"))  # fmt: skip

    async def ws(self, websocket: WebSocket) -> None:
        await websocket.accept()
        pid = await self._ws_auth(websocket)
        if pid is None:
            return
        queue: asyncio.Queue[None] = asyncio.Queue(maxsize=1)
        self.server.listen(pid, queue, True)
        self.server.connect(pid, +1)
        sender = asyncio.create_task(self._push(websocket, pid, queue))
        try:
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                self.server.connect(pid, 0)  # any message counts as presence
        finally:
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await sender
            self.server.listen(pid, queue, False)
            self.server.connect(pid, -1)

    async def _ws_auth(self, websocket: WebSocket) -> str | None:
        try:
            async with asyncio.timeout(AUTH_SECONDS):
                message = await websocket.receive_text()
            body = json.loads(message) if len(message) < 1000 else {}
            return await self.who(websocket.path_params["pid"], (body or {}).get("key"),
                                  client_address(websocket.scope, self.proxies))  # fmt: skip
        except (TimeoutError, json.JSONDecodeError, AttributeError, Refused, RuntimeError,
                KeyError):  # fmt: skip
            with contextlib.suppress(Exception):
                await websocket.close(code=4401)
            return None

    async def _push(self, websocket: WebSocket, pid: str, queue: asyncio.Queue[None]) -> None:
        while True:
            await websocket.send_json(await flow.page(self.server, pid))
            await queue.get()

    def routes(self) -> list[Any]:
        from starlette.routing import Route, WebSocketRoute

        return [
            Route("/p/{pid}", self.page),
            Route("/join", self.join),
            Route("/api/p/{pid}", self.state),
            Route("/api/p/{pid}/step", self.step, methods=["POST"]),
            Route("/api/p/{pid}/act", self.act, methods=["POST"]),
            WebSocketRoute("/ws/p/{pid}", self.ws),
        ]
