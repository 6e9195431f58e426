"""Attacks on `tom-envs serve` and `tom-envs study serve` (issues #17, #37), against the real app
under uvicorn on loopback, with the limits the commands set.

Every attack must get a 4xx (never a 500) and have no side effect: no file created outside the
trajectory folder (a sentinel the payloads try to create), no trajectory written by a request
that was refused, no session changed by someone without its seat token, and no request received
by a loopback listener that a malicious ``base_url`` points at.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from tom_envs.runner import Episode
from tom_envs.serve.app import App, parse_presets
from tom_envs.serve.guard import GuardConfig, default_allowed_hosts

from .test_serve import PD, Server

ROOT = Path(__file__).resolve().parents[2]


class Listener:
    """A loopback HTTP server that records every request it gets (a malicious base_url)."""

    def __init__(self) -> None:
        hits: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def _record(self) -> None:
                hits.append(f"{self.command} {self.path}")
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"{}")

            do_GET = do_POST = _record

            def log_message(self, *args: object) -> None:
                pass

        self.hits = hits
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Listener:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def world(tmp_path: Path):
    """The app on loopback (as `tom-envs serve` builds it), a listener, a sentinel, a secret."""
    out = tmp_path / "runs"
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-LINE\n")
    app = App(out)
    with Listener() as listener, Server(app) as url, httpx.Client(base_url=url, timeout=60) as c:
        yield {"app": app, "client": c, "url": url, "out": out, "listener": listener,
               "sentinel": tmp_path / "pwned", "secret": secret, "tmp": tmp_path}  # fmt: skip
    assert not listener.hits, listener.hits


def no_side_effect(w: dict, sessions_before: int = 0) -> None:
    assert not w["sentinel"].exists()
    assert not w["listener"].hits
    assert len(w["app"].sessions) == sessions_before
    assert not list(w["out"].glob("*.jsonl")) if w["out"].exists() else True


def refused(r: httpx.Response, field: str | None = None, status: int | None = None) -> dict:
    assert 400 <= r.status_code < 500, (r.status_code, r.text)
    if status is not None:
        assert r.status_code == status, (r.status_code, r.text)
    body = r.json()
    if field is not None:
        assert body.get("field") == field, body
    return body


def partner_attacks(w: dict) -> list[str]:
    s, u = w["sentinel"], w["listener"].url
    return [
        f"subprocess:Popen:args=touch {s}",
        "subprocess:Popen",
        "tom_envs.core.agents:RandomAgent",
        f"builtins:open:file={s}:mode=w",
        f"llm:model=x:base_url={u}/v1",
        f"llm:model=x:base_url={u}/v1:api_key_env=HOME",
        "llm:local=true",
        "llm",
        f"checkpoint:path={s}.zip",
        "checkpoint",
        "random:seed=3",
        "rmax:known_threshold=1",
        "population:all:x=1",
        "population:../../etc",
        "tit_for_tat:x=1",
        "",
        "a" * 5000,
    ]


def test_partners_come_only_from_the_allow_list(world) -> None:
    c = world["client"]
    for attack in partner_attacks(world):
        body = refused(c.post("/api/sessions", json={**PD, "partners": [attack]}), "partners")
        assert "not offered" in body["error"] or "list" in body["error"]
    for attack in ([1], [{"spec": "llm"}], "tit_for_tat", ["tit_for_tat", "random"], None):
        refused(c.post("/api/sessions", json={**PD, "partners": attack}), "partners")
    no_side_effect(world)
    names = {g["name"]: g["agents"] for g in c.get("/api/games").json()}
    assert "llm" not in names["PrisonersDilemma"] and "checkpoint" not in names["Hanabi"]
    assert {"random", "rmax", "tit_for_tat", "population:all"} <= set(names["PrisonersDilemma"])


def test_game_arguments_are_checked_against_the_declarations(world) -> None:
    c, secret = world["client"], world["secret"]
    oc = {"game": "Overcooked", "seat": 0, "partners": ["greedy"]}
    attacks = [
        (oc, {"layout": str(secret)}),
        (oc, {"layout": "../../../../etc/passwd"}),
        (oc, {"layout": str(ROOT / "tom_envs/games/overcooked/layouts/cramped_room.txt")}),
        (oc, {"horizon": 10**9}),
        (oc, {"render_mode": "human"}),
        (oc, {"max_cycles": 10**9}),
        (PD, {"horizon": 10**9}),
        (PD, {"horizon": "1e9"}),
        (PD, {"horizon": 1.5}),
        (PD, {"horizon": True}),
        (PD, {"horizon": None}),
        (PD, {"window": -1}),
        (PD, {"__class__": "x"}),
        ({"game": "CoBlock", "seat": 0, "partners": ["cooperative"]}, {"grid": [400, 400, 400]}),
        ({"game": "CoBlock", "seat": 0, "partners": ["cooperative"]}, {"max_inventory": 0}),
        ({"game": "CoBlock", "seat": 0, "partners": ["cooperative"]}, {"task": {"name": "x"}}),
        ({"game": "Guandan", "seat": 0, "partners": ["random"] * 3}, {"match": "yes"}),
        ({"game": "Hanabi", "seat": 0, "partners": ["simple"]}, {"players": 6}),
        ({"game": "Hanabi", "seat": 0, "partners": ["simple"]}, {"names": ["A"] * 1000}),
        ({"game": "BombDefusal", "seat": 0, "partners": ["heuristic"] * 2}, {"num_rooms": 10**6}),
    ]
    for base, kwargs in attacks:
        r = c.post("/api/sessions", json={**base, "kwargs": kwargs})
        body = refused(r, "kwargs")
        key = next(iter(kwargs))
        assert f"'{key}'" in body["error"], body
        assert "TOP-SECRET" not in r.text and "root:" not in r.text
    refused(c.post("/api/sessions", json={**PD, "kwargs": ["horizon", 4]}), "kwargs")
    no_side_effect(world)
    r = c.post("/api/sessions", json={**oc, "kwargs": {"layout": "counter_circuit", "horizon": 3}})
    assert r.status_code == 200  # a shipped layout by name is fine


def test_bad_fields_get_a_4xx_naming_the_field(world) -> None:
    c = world["client"]
    cases = [
        ({"seed": -1}, "seed"), ({"seed": 2**40}, "seed"), ({"seed": "1"}, "seed"),
        ({"seed": 1.5}, "seed"), ({"seed": True}, "seed"), ({"seat": -1}, "seat"),
        ({"seat": 2}, "seat"), ({"seat": "0"}, "seat"), ({"seat": False}, "seat"),
        ({"game": "Nope"}, "game"), ({"game": 7}, "game"), ({"game": "x" * 10_000}, "game"),
        ({"evil": 1}, "evil"),
    ]  # fmt: skip
    for patch, field in cases:
        refused(c.post("/api/sessions", json={**PD, **patch}), field)
    for raw in (b"[1, 2]", b'"text"', b"{", b"\xff\xfe", b"[" * 30_000 + b"]" * 30_000):
        refused(c.post("/api/sessions", content=raw, headers={"content-type": "application/json"}),
                "body")  # fmt: skip
    big = json.dumps({**PD, "pad": "x" * 100_000})
    refused(c.post("/api/sessions", content=big, headers={"content-type": "application/json"}),
            "body", 413)  # fmt: skip
    no_side_effect(world)


def test_no_cross_site_driving(world) -> None:
    c, url = world["client"], world["url"]
    posts = ["/api/sessions", "/api/sessions/x/act", "/api/sessions/x/abandon",
             "/api/p/abcdef1234/step", "/api/p/abcdef1234/act"]
    for path in posts:
        for ctype in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data", ""):
            r = c.post(path, content=json.dumps(PD), headers={"content-type": ctype})
            assert r.status_code == 415, (path, ctype, r.status_code)
        for origin in ("http://evil.example", "null", url.replace("127.0.0.1", "localhost"),
                       url + ".evil.example", "https://127.0.0.1:1"):  # fmt: skip
            r = c.post(path, json=PD, headers={"origin": origin})
            assert r.status_code == 403, (path, origin, r.status_code)
    # DNS rebinding: a page on another name that resolves to 127.0.0.1
    for path in ("/", "/api/games", "/p/abcdef1234", "/api/p/abcdef1234"):
        r = c.get(path, headers={"host": "evil.example:8000"})
        assert r.status_code == 400
    no_side_effect(world)
    ok = c.post("/api/sessions", json=PD, headers={"origin": url})
    assert ok.status_code == 200  # the page's own origin is fine


def _ws(url: str, path: str, origin: str | None = None) -> tuple[str, object]:
    """Open a websocket; ``("refused", status)`` or ``("open", first message)``."""
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    headers = {"Origin": origin} if origin else None
    try:
        with connect(url.replace("http", "ws") + path, additional_headers=headers,
                     open_timeout=10) as ws:  # fmt: skip
            return "open", json.loads(ws.recv(timeout=10))
    except InvalidStatus as exc:
        return "refused", exc.response.status_code


def test_a_session_id_alone_can_neither_act_nor_read(world) -> None:
    c, url, app = world["client"], world["url"], world["app"]
    p = c.post("/api/sessions", json=PD).json()
    sid, token = p["session"], p["token"]
    assert len(token) >= 24 and token not in c.get("/api/games").text
    for headers in ({}, {"X-Seat-Token": ""}, {"X-Seat-Token": "x" * len(token)},
                    {"X-Seat-Token": token[:-1]}):  # fmt: skip
        refused(c.get(f"/api/sessions/{sid}", headers=headers), "token", 404)
        r = c.post(f"/api/sessions/{sid}/act", json={"step": 0, "action": 0}, headers=headers)
        refused(r, "token", 404)
        refused(c.post(f"/api/sessions/{sid}/abandon", json={}, headers=headers), "token", 404)
    for query in ("", "?token=", f"?token={token[:-1]}"):
        state, first = _ws(url, f"/ws/{sid}{query}")
        assert state == "open" and "not your seat" in first["error"] and "observation" not in first
    state, status = _ws(url, f"/ws/{sid}?token={token}", origin="http://evil.example")
    assert (state, status) == ("refused", 403)
    s = app.sessions[sid]
    assert s.step == 0 and s.status == "playing" and not s.episode.steps
    state, first = _ws(url, f"/ws/{sid}?token={token}")
    assert state == "open" and first["session"] == sid and "token" not in first
    from websockets.sync.client import connect

    with connect(url.replace("http", "ws") + f"/ws/{sid}?token={token}") as ws:
        ws.recv(timeout=10)
        for frame in (b"\x00\xff", "[" * 20_000 + "]" * 20_000, '{"step": 0}'):
            ws.send(frame)
            reply = json.loads(ws.recv(timeout=10))
            assert reply["error"] and reply["step"] == 0
    from websockets.exceptions import ConnectionClosedError

    with connect(url.replace("http", "ws") + f"/ws/{sid}?token={token}") as ws:
        ws.recv(timeout=10)
        ws.send("x" * 100_000)  # over the frame limit: the server closes the socket (1009)
        with pytest.raises(ConnectionClosedError, match="1009"):
            ws.recv(timeout=10)
    assert not list(world["out"].glob("*.jsonl"))
    r = c.post(f"/api/sessions/{sid}/act", json={"step": 0, "action": 0, "message": "x" * 5000},
               headers={"X-Seat-Token": token})  # fmt: skip
    assert r.status_code == 400 and "message" in r.json()["error"]
    for move in ({"step": 0, "action": True}, {"step": "0", "action": 0}, {"step": 0},
                 {"step": 0, "action": 0, "extra": 1}):  # fmt: skip
        r = c.post(f"/api/sessions/{sid}/act", json=move, headers={"X-Seat-Token": token})
        assert r.status_code == 400 and s.step == 0


WEIRD_IDS = ["p" * 300, "a\x00b", "..\\..\\escape", "ünïcødé 参加者", "<img src=x onerror=alert(1)>",
             "..x", "-rf"]  # fmt: skip


def test_live_sessions_are_capped_and_idle_ones_recorded(tmp_path: Path) -> None:
    app = App(tmp_path, idle_timeout=3600, max_sessions=3)
    with Server(app) as url, httpx.Client(base_url=url, timeout=60) as c:
        made = [c.post("/api/sessions", json=PD).json() for _ in range(3)]
        r = c.post("/api/sessions", json=PD)
        assert r.status_code == 503 and "cap of 3" in r.json()["error"]
        assert len(app.sessions) == 3 and not list(tmp_path.glob("*.jsonl"))
        app.idle_timeout = 0.0  # every session is now idle: the next request evicts them
        time.sleep(0.01)
        assert c.post("/api/sessions", json=PD).status_code == 200
    files = sorted(tmp_path.glob("*.jsonl"))
    assert len(files) == 4  # 3 evicted + the last one, recorded at shutdown
    by_id = {f.stem.rsplit("-", 1)[1]: Episode.read(f) for f in files}
    assert all(by_id[m["session"]].metrics["abandoned"] == 1.0 for m in made)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_sessions_open_at_shutdown_are_recorded(tmp_path: Path, sig: signal.Signals) -> None:
    port = _free_port()
    out = tmp_path / "runs"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tom_envs.cli", "serve", "--port", str(port), "--out", str(out)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                if httpx.get(url + "/api/games", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        p = httpx.post(url + "/api/sessions", json=PD, timeout=30).json()
        httpx.post(f"{url}/api/sessions/{p['session']}/act", json={"step": 0, "action": 1},
                   headers={"X-Seat-Token": p["token"]}, timeout=30)  # fmt: skip
        proc.send_signal(sig)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    (path,) = out.glob("*.jsonl")
    ep = Episode.read(path)
    assert ep.metrics["abandoned"] == 1.0 and sum(bool(s.get("human")) for s in ep.steps) == 1


def test_an_access_token_guards_every_route(tmp_path: Path) -> None:
    secret = "lab-token-123456"
    config = GuardConfig(default_allowed_hosts("127.0.0.1"), secret)
    with Server(App(tmp_path), config=config) as url:
        app = None
        with httpx.Client(base_url=url, timeout=60) as c:
            for path in ("/", "/static/app.js", "/api/games"):
                assert c.get(path).status_code == 401, path
                assert c.get(path + "?access=wrong").status_code == 401
            assert c.post("/api/sessions", json=PD).status_code == 401
            assert _ws(url, "/ws/x?token=y") == ("refused", 403)
            r = c.get(f"/?access={secret}")  # the researcher's link: sets a same-site cookie
            assert r.status_code == 200
            cookie = r.headers["set-cookie"]
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
            assert c.get("/api/games").status_code == 200  # the cookie now rides along
        with httpx.Client(base_url=url, timeout=60, headers={"X-Access-Token": secret}) as c:
            assert c.post("/api/sessions", json=PD).status_code == 200
    del app


def test_the_cli_refuses_malformed_presets(capsys) -> None:
    from tom_envs.cli import main

    assert main(["serve", "--partner", "no-equals-sign"]) == 2
    assert "NAME=SPEC" in capsys.readouterr().err


def test_the_cli_checks_preset_endpoints_and_the_study_file_before_serving(capsys,
                                                                           tmp_path) -> None:  # fmt: skip
    """A dead preset endpoint or an unreadable study file stops `serve` before it listens."""
    import socket

    from tom_envs.cli import main

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dead = f"gpt=llm:model=m:base_url=http://127.0.0.1:{port}/v1"
    assert main(["serve", "--partner", dead, "--out", str(tmp_path)]) == 2
    assert "unreachable" in capsys.readouterr().err
    assert main(["serve", "--study", str(tmp_path / "missing.toml"), "--out", str(tmp_path)]) == 2
    assert "missing.toml" in capsys.readouterr().err


def test_presets_are_the_operators_and_requests_cannot_extend_them(world, tmp_path: Path) -> None:
    listener = world["listener"]
    presets = parse_presets([f"gpt=llm:model=m:base_url={listener.url}/v1", "bot=tit_for_tat"])
    app = App(tmp_path, presets=presets)
    with Server(app) as url, httpx.Client(base_url=url, timeout=60) as c:
        agents = {g["name"]: g["agents"] for g in c.get("/api/games").json()}
        assert {"gpt", "bot"} <= set(agents["PrisonersDilemma"])
        assert listener.url not in c.get("/api/games").text  # presets are shown by name only
        for attack in ("gpt:base_url=http://127.0.0.1:1/v1", "gpt:api_key_env=HOME", "bot:x=1"):
            refused(c.post("/api/sessions", json={**PD, "partners": [attack]}), "partners")
        p = c.post("/api/sessions", json={**PD, "partners": ["bot"]}).json()
        assert p["status"] == "playing"
    for bad in (["no-equals"], ["a b=random"], ["x=random", "x=random"], ["population=random"]):
        with pytest.raises(ValueError):
            parse_presets(bad)


def test_requested_game_arguments_set_the_seats_but_cannot_swap_the_game(world) -> None:
    """Hanabi with 3 players takes 2 partners; one-letter names are names; a registered id's
    fixed arguments (RockPaperScissors is `game="rps"`) cannot be overridden from a request."""
    c = world["client"]
    body = {"game": "Hanabi", "seat": 2, "partners": ["random", "random"], "seed": 1,
            "kwargs": {"players": 3}}  # fmt: skip
    r = c.post("/api/sessions", json=body)
    assert r.status_code == 200, r.text
    assert r.json()["seat"] == 2
    refused(c.post("/api/sessions", json={**body, "partners": ["random"]}), "partners")
    named = {**body, "seat": 0, "kwargs": {"players": 2, "names": ["A", "B"]}, "partners": ["random"]}
    assert c.post("/api/sessions", json=named).status_code == 200
    swap = {"game": "RockPaperScissors", "seat": 0, "partners": ["always_0"],
            "kwargs": {"game": "ipd"}}  # fmt: skip
    assert "fixed" in refused(c.post("/api/sessions", json=swap), "kwargs")["error"]


def test_finished_sessions_are_bounded_in_memory(tmp_path: Path) -> None:
    """Create-and-abandon loops cannot grow memory: at most max_sessions finished ones stay,
    every one is on disk."""
    app = App(tmp_path, max_sessions=3)
    for _ in range(8):
        s = app.create({**PD, "partners": ["always_0"]})
        s.abandon()
        app.sweep()
    assert len(app.sessions) <= 3 and len(app.finished) == 5
    assert len(list(tmp_path.glob("*.jsonl"))) == 8
    assert all(app.status_of(sid) == "abandoned" for sid in app.finished)




# ------------------------------------------------------------------ issue #37
@pytest.fixture
def study_world(tmp_path: Path):
    """A study server on loopback with one participant who has started."""
    from tom_envs.serve.study.server import StudyServer
    from tom_envs.serve.study.spec import load_study

    from .studies import Person, pd_study

    server = StudyServer(load_study(pd_study(tmp_path)), tmp_path / "data")
    server.start()
    with Server(None, server, per_client=1000) as url, httpx.Client(base_url=url, timeout=60) as c:
        alice = Person(c, "alice00001", server.key("alice00001"))
        alice.step()  # consent
        yield {"server": server, "client": c, "url": url, "alice": alice, "tmp": tmp_path}
    server.close()


def _journal(tmp: Path) -> list[str]:
    return (tmp / "data" / "journal.jsonl").read_text().splitlines()


def test_a_participant_id_alone_opens_nothing(study_world) -> None:
    w = study_world
    c, server, alice = w["client"], w["server"], w["alice"]
    before = _journal(w["tmp"])
    other = server.key("bobbob0001")
    for key in (None, "", "x" * 32, alice.key[:-1], other, alice.key.upper()):
        h = {} if key is None else {"X-Participant-Key": key}
        for r in (c.get("/api/p/alice00001", headers=h),
                  c.post("/api/p/alice00001/step", json={"step": "instructions"}, headers=h),
                  c.post("/api/p/alice00001/act", json={"step": 0, "action": 0}, headers=h)):  # fmt: skip
            assert r.status_code == 404 and r.json() == {"error": "no such participant, or the "
                                                         "link is incomplete"}  # fmt: skip
    assert _journal(w["tmp"]) == before  # nothing recorded, nobody enrolled
    assert _ws_key(w["url"], "alice00001", other) == 4401
    for pid in WEIRD_IDS:
        from urllib.parse import quote

        r = c.get(f"/api/p/{quote(pid, safe='')}", headers={"X-Participant-Key": "k"})
        assert r.status_code == 404
    assert not (w["tmp"] / "escape").exists() and not list(w["tmp"].rglob("*escape*"))
    assert alice.state()["kind"] == "instructions"  # the real participant is untouched


def _ws_key(url: str, pid: str, key: str | None) -> int | None:
    """The close code a participant websocket gets for ``key`` (None: send nothing)."""
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    with connect(url.replace("http", "ws") + f"/ws/p/{pid}", open_timeout=10) as ws:
        if key is not None:
            ws.send(json.dumps({"key": key}))
        try:
            ws.recv(timeout=20)
        except ConnectionClosed as exc:
            return exc.rcvd.code if exc.rcvd else None
    return None


def test_unauthenticated_websockets_are_dropped(study_world, monkeypatch) -> None:
    from tom_envs.serve.study import routes

    monkeypatch.setattr(routes, "AUTH_SECONDS", 0.5)
    assert _ws_key(study_world["url"], "alice00001", None) == 4401  # silent: closed after 0.5 s
    from websockets.sync.client import connect

    with connect(study_world["url"].replace("http", "ws") + "/ws/p/alice00001") as ws:
        ws.send(json.dumps({"key": study_world["alice"].key}))
        assert json.loads(ws.recv(timeout=10))["kind"] == "instructions"


def test_guessing_keys_is_throttled(study_world) -> None:
    c = study_world["client"]
    codes = [c.get("/api/p/alice00001", headers={"X-Participant-Key": f"guess{i}"}).status_code
             for i in range(35)]  # fmt: skip
    assert codes[:30] == [404] * 30 and codes[30:] == [429] * 5


def _sockets(port: int, n: int, data: bytes = b"") -> list[socket.socket]:
    out = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        if data:
            s.sendall(data)
        out.append(s)
    return out


def _closed(s: socket.socket, within: float) -> bool:
    s.settimeout(within)
    try:
        return s.recv(1024) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


def test_idle_and_slow_connections_are_dropped_before_authentication(tmp_path: Path) -> None:
    """400 connections that send nothing and 50 that send half a request are closed after the
    header deadline; requests of others are served meanwhile."""
    app = App(tmp_path)
    with Server(app, header_timeout=1.0, per_client=2000) as url:
        port = int(url.rsplit(":", 1)[1])
        idle = _sockets(port, 400)
        slow = _sockets(port, 50, b"GET /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: ")
        with httpx.Client(base_url=url, timeout=30) as c:
            assert all(c.get("/api/games").status_code == 200 for _ in range(5))
        assert all(_closed(s, 15) for s in idle + slow)  # the server hung up on every one
        with httpx.Client(base_url=url, timeout=30) as c:
            assert c.get("/api/games").status_code == 200
        for s in idle + slow:
            s.close()


def test_one_client_cannot_hold_every_connection(tmp_path: Path) -> None:
    with Server(App(tmp_path), per_client=5) as url:
        port = int(url.rsplit(":", 1)[1])
        held = _sockets(port, 5)
        (extra,) = _sockets(port, 1)
        assert _closed(extra, 5)  # the sixth from the same address is closed at once
        for s in held:
            s.close()
        extra.close()
        time.sleep(0.2)
        with httpx.Client(base_url=url, timeout=30) as c:
            assert c.get("/api/games").status_code == 200


def test_one_client_cannot_hold_every_session_or_the_memory(tmp_path: Path) -> None:
    app = App(tmp_path, per_client=2)
    with Server(app) as url, httpx.Client(base_url=url, timeout=60) as c:
        assert [c.post("/api/sessions", json=PD).status_code for _ in range(3)] == [200, 200, 429]
    lean = App(tmp_path / "lean", max_memory_mb=1.0)
    with pytest.raises(Exception, match="memory bound"):
        lean.create(PD)
    assert not lean.sessions


def test_nothing_is_drawn_on_the_event_loop(tmp_path: Path, monkeypatch) -> None:
    """CoBlock's picture takes a quarter of a second: pages are drawn in worker threads, once
    per state, and a refused message is answered without drawing at all."""
    import asyncio

    from tom_envs.games.coblock import board as coblock_board

    calls: list[bool] = []
    real = coblock_board.board_svg

    def drawn(bundle, view):
        try:
            asyncio.get_running_loop()
            calls.append(True)  # on the event loop: forbidden
        except RuntimeError:
            calls.append(False)
        return real(bundle, view)

    monkeypatch.setattr(coblock_board, "board_svg", drawn)
    app = App(tmp_path)
    body = {"game": "CoBlock", "seat": 0, "partners": ["cooperative"], "kwargs": {"max_rounds": 3}}
    with Server(app) as url, httpx.Client(base_url=url, timeout=60) as c:
        p = c.post("/api/sessions", json=body).json()
        from websockets.sync.client import connect

        with connect(url.replace("http", "ws") + f"/ws/{p['session']}?token={p['token']}") as ws:
            ws.recv(timeout=30)
            n = len(calls)
            for _ in range(40):
                ws.send("x")
                assert "error" in json.loads(ws.recv(timeout=30))
            assert len(calls) == n  # 40 refused messages: not one drawing
        again = c.get(f"/api/sessions/{p['session']}", headers={"X-Seat-Token": p["token"]})
        assert again.status_code == 200 and len(calls) == n  # the same state: drawn once
    assert calls and not any(calls)


def test_behind_a_trusted_proxy_throttles_count_clients(tmp_path: Path) -> None:
    """Behind a reverse proxy (--trusted-proxy) one guessing client is throttled, not everyone
    the proxy serves; an untrusted peer's X-Forwarded-For is ignored."""
    from tom_envs.serve.study.server import StudyServer
    from tom_envs.serve.study.spec import load_study

    from .studies import pd_study

    server = StudyServer(load_study(pd_study(tmp_path)), tmp_path / "data")
    server.start()
    config = GuardConfig(default_allowed_hosts("127.0.0.1"), trusted_proxies=("127.0.0.1",))
    try:
        with Server(None, server, config=config) as url, httpx.Client(base_url=url) as c:
            def guess(who: str) -> int:
                return c.get("/api/p/alice00001", headers={"X-Participant-Key": "guess",
                                                          "X-Forwarded-For": who}).status_code

            assert [guess("10.0.0.1") for _ in range(31)][-1] == 429
            assert guess("10.0.0.2") == 404  # another client behind the same proxy
            ok = {"X-Participant-Key": server.key("alice00001"), "X-Forwarded-For": "10.0.0.3"}
            assert c.get("/api/p/alice00001", headers=ok).status_code == 200
    finally:
        server.close()
