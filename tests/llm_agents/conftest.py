"""Fixtures of the LLM-agent tests.

``local_server`` is one real llama.cpp server (SmolLM2-135M-Instruct, in-process, 127.0.0.1 on an
ephemeral port, one inference thread) for the whole session; tests that use it talk to it through
the ``openai`` client, exactly as to any OpenAI-compatible endpoint. They skip, saying why and how
to install, only when the model packages are not installed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tom_envs.core.game import GameBundle
from tom_envs.core.probes import Probe
from tom_envs.registration import game_spec
from tom_llm_agents.local import LocalServer, local_model_status
from tom_llm_agents.openai_client import OpenAIClient


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker of the real-model tests (deselect with ``-m "not local_llm"``)."""
    config.addinivalue_line("markers", "local_llm: runs against the real local model server")


@pytest.fixture(scope="session")
def local_server() -> Iterator[LocalServer]:
    """The bundled model behind a real OpenAI-compatible server, for the whole session."""
    ok, why = local_model_status()
    if not ok:
        pytest.skip(f"local LLM {why}")
    with LocalServer() as server:
        yield server


@pytest.fixture
def local_client(local_server: LocalServer) -> OpenAIClient:
    """A fresh client (no cache) of the session's server."""
    return local_server.client()


class FakeEndpoint:
    """A tiny OpenAI-shaped HTTP endpoint on 127.0.0.1 for the retry/redaction unit tests.

    It is not a model: it answers ``/v1/chat/completions`` with the next scripted status (429,
    500, ...) and then a fixed completion, and records the requests' headers and bodies.
    """

    def __init__(
        self,
        statuses: list[int],
        content: str = '{"action": "Option J"}',
        error_message: str | None = None,
        model: str = "fake",
        message_extra: dict | None = None,
    ) -> None:
        import json
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.statuses = list(statuses)
        self.content = content
        self.error_message = error_message
        self.model = model
        self.message_extra = dict(message_extra or {})
        self.requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                outer.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": body}
                )
                status = outer.statuses.pop(0) if outer.statuses else 200
                if status != 200:
                    text = outer.error_message or f"status {status}"
                    payload = json.dumps({"error": {"message": text}}).encode()
                    self.send_response(status)
                    self.send_header("retry-after", "0")
                else:
                    payload = json.dumps(
                        {
                            "id": "x",
                            "object": "chat.completion",
                            "created": 0,
                            "model": outer.model,
                            "choices": [
                                {
                                    "index": 0,
                                    "finish_reason": "stop",
                                    "message": {
                                        "role": "assistant",
                                        "content": outer.content,
                                        **outer.message_extra,
                                    },
                                }
                            ],
                            "usage": {
                                "prompt_tokens": 11,
                                "completion_tokens": 3,
                                "total_tokens": 14,
                            },
                        }
                    ).encode()
                    self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def fake_endpoint() -> Iterator[type[FakeEndpoint]]:
    """A factory of :class:`FakeEndpoint` objects, all closed after the test."""
    made: list[FakeEndpoint] = []

    def make(statuses: list[int] | None = None, content: str = '{"action": "Option J"}', **kw):
        ep = FakeEndpoint(statuses or [], content, **kw)
        made.append(ep)
        return ep

    yield make  # type: ignore[misc]
    for ep in made:
        ep.close()


def make_probe_bundle(**kw: object) -> GameBundle:
    """The Prisoner's Dilemma with two ToM probes per decision (for the probe tests): "did the
    other player choose Option J last round?" (first order) and "is this the first round?"."""
    spec = game_spec("PrisonersDilemma")
    base = spec.load().make_bundle(**{**spec.kwargs, **kw})

    def probes(state: Any, player: int) -> list[Probe]:
        last = state.history[-1][1 - player] if state.history else 0
        return [
            Probe(
                "partner_last_j",
                "last_action",
                1,
                "Did the other player choose Option J in the last round?",
                ("yes", "no"),
                "yes" if last == 0 else "no",
            ),
            Probe(
                "round",
                "introspection",
                0,
                "Is this the first round?",
                ("yes", "no"),
                "yes" if not state.history else "no",
            ),
        ]

    return GameBundle(base.game, base.encoder, base.text, probes)


@pytest.fixture
def probe_bundle() -> Callable[..., GameBundle]:
    """:func:`make_probe_bundle`."""
    return make_probe_bundle


def completion_body(content: str, model: str = "fake", usage: dict | None = None) -> bytes:
    """An OpenAI chat-completion response body answering ``content``."""
    import json

    return json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": content},
                }
            ],
            "usage": usage or {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14},
        }
    ).encode()


class FaultyEndpoint:
    """An OpenAI-shaped loopback endpoint whose answers follow a script of faults.

    Each request takes the next step of ``script`` (the last one repeats), a dict:

    * ``{"status": 429, "headers": {"Retry-After": "3600"}}``: an error answer;
    * ``{"content": "Action: Option J", "usage": {...}}``: a completion (``""``: an empty one;
      ``"delay": s`` answers after ``s`` seconds);
    * ``{"trickle": 0.2, "content": ...}``: the completion's body one byte every 0.2 s;
    * ``{"big": 10_000_000, "chunked": True}``: a 10 MB body (chunked: no Content-Length).

    ``requests`` holds every request body; ``sent`` the body bytes written per request (a client
    that stops reading makes the writes fail).
    """

    def __init__(self, script: list[dict]) -> None:
        import json
        import threading
        import time
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.script = list(script)
        self.requests: list[dict] = []
        self.sent: list[int] = []
        self.in_flight = 0
        self._i = 0
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # the endpoint check's /models
                self.send_response(200)
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length)
                if len(raw) < length:  # the client went away mid-request (killed): no request
                    self.close_connection = True
                    return
                body = json.loads(raw or b"{}")
                with lock:
                    step = outer.script[min(outer._i, len(outer.script) - 1)]
                    outer._i += 1
                    outer.requests.append(body)
                    outer.sent.append(0)
                    index = len(outer.sent) - 1
                try:
                    self._answer(step, index)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            def _answer(self, step: dict, index: int) -> None:
                if "status" in step:
                    payload = json.dumps({"error": {"message": f"status {step['status']}"}})
                    self.send_response(step["status"])
                    for k, v in step.get("headers", {}).items():
                        self.send_header(k, v)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload.encode())
                    return
                if "big" in step:
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    n = int(step["big"])
                    chunk = b"x" * 65536
                    if step.get("chunked"):
                        self.send_header("transfer-encoding", "chunked")
                        self.end_headers()
                        written = 0
                        while written < n:
                            part = chunk[: min(len(chunk), n - written)]
                            self.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
                            written += len(part)
                            outer.sent[index] = written
                        self.wfile.write(b"0\r\n\r\n")
                    else:
                        self.send_header("content-length", str(n))
                        self.end_headers()
                        written = 0
                        while written < n:
                            part = chunk[: min(len(chunk), n - written)]
                            self.wfile.write(part)
                            written += len(part)
                            outer.sent[index] = written
                    return
                payload = completion_body(step.get("content", ""), usage=step.get("usage"))
                if step.get("delay"):
                    with lock:
                        outer.in_flight += 1
                    time.sleep(float(step["delay"]))
                    with lock:
                        outer.in_flight -= 1
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                if "trickle" in step:
                    for i in range(len(payload)):
                        self.wfile.write(payload[i : i + 1])
                        outer.sent[index] = i + 1
                        time.sleep(float(step["trickle"]))
                else:
                    self.wfile.write(payload)
                    outer.sent[index] = len(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def faulty_endpoint() -> Iterator[Callable[[list[dict]], FaultyEndpoint]]:
    """A factory of :class:`FaultyEndpoint` objects, all closed after the test."""
    made: list[FaultyEndpoint] = []

    def make(script: list[dict]) -> FaultyEndpoint:
        ep = FaultyEndpoint(script)
        made.append(ep)
        return ep

    yield make
    for ep in made:
        ep.close()
