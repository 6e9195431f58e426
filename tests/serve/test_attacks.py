"""Attacks on `tom-envs serve` (issue #17), against the real app under uvicorn on loopback.

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
from tom_envs.serve.app import App, StudyTask, parse_presets
from tom_envs.serve.guard import default_allowed_hosts

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
    tasks = [StudyTask("t1", "PrisonersDilemma", 0, ["always_0"], 0, {"horizon": 3})]
    app = App(out, tasks, allowed_hosts=default_allowed_hosts("127.0.0.1"))
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
    posts = ["/api/sessions", "/api/sessions/x/act", "/api/sessions/x/abandon", "/api/study/p/t1"]
    for path in posts:
        for ctype in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data", ""):
            r = c.post(path, content=json.dumps(PD), headers={"content-type": ctype})
            assert r.status_code == 415, (path, ctype, r.status_code)
        for origin in ("http://evil.example", "null", url.replace("127.0.0.1", "localhost"),
                       url + ".evil.example", "https://127.0.0.1:1"):  # fmt: skip
            r = c.post(path, json=PD, headers={"origin": origin})
            assert r.status_code == 403, (path, origin, r.status_code)
    # DNS rebinding: a page on another name that resolves to 127.0.0.1
    for path in ("/", "/api/games", "/study/p"):
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
        for frame in (b"\x00\xff", "[" * 20_000 + "]" * 20_000, "x" * 100_000, '{"step": 0}'):
            ws.send(frame)
            reply = json.loads(ws.recv(timeout=10))
            assert reply["error"] and reply["step"] == 0
    assert not list(world["out"].glob("*.jsonl"))
    r = c.post(f"/api/sessions/{sid}/act", json={"step": 0, "action": 0, "message": "x" * 5000},
               headers={"X-Seat-Token": token})  # fmt: skip
    assert r.status_code == 400 and "message" in r.json()["error"]
    for move in ({"step": 0, "action": True}, {"step": "0", "action": 0}, {"step": 0},
                 {"step": 0, "action": 0, "extra": 1}):  # fmt: skip
        r = c.post(f"/api/sessions/{sid}/act", json=move, headers={"X-Seat-Token": token})
        assert r.status_code == 400 and s.step == 0


def test_study_endpoints_never_reveal_another_participants_session(world) -> None:
    c = world["client"]
    mine = c.post("/api/study/alice/t1", json={}).json()
    sid, token = mine["session"], mine["token"]
    r = c.post("/api/study/alice/t1", json={})  # someone else, or another tab without the token
    body = refused(r, "token", 409)
    assert sid not in r.text and token not in r.text and "in progress" in body["error"]
    r = c.post("/api/study/alice/t1", json={"token": "guess"})
    assert r.status_code == 409 and sid not in r.text
    for path in ("/study/alice", "/api/study/alice"):
        text = c.get(path).text
        assert sid not in text and token not in text
    assert c.post("/api/study/alice/t1", json={"token": token}).json()["session"] == sid
    refused(c.post("/api/study/alice/nope", json={}), "task", 404)
    refused(c.post("/api/study/alice/t1", content=b"[]",
                   headers={"content-type": "application/json"}), "body")  # fmt: skip


WEIRD_IDS = ["p" * 300, "a\x00b", "..\\..\\escape", "ünïcødé 参加者", "<img src=x onerror=alert(1)>",
             "..x", "-rf"]  # fmt: skip


def test_any_participant_id_gets_a_safe_file_and_is_recorded(world) -> None:
    from urllib.parse import quote

    c, out = world["client"], world["out"]
    for pid in WEIRD_IDS:
        t = c.post(f"/api/study/{quote(pid, safe='')}/t1", json={}).json()
        assert "token" in t, (pid, t)
        seat = {"X-Seat-Token": t["token"]}
        while t["status"] == "playing":
            t = c.post(f"/api/sessions/{t['session']}/act", headers=seat,
                       json={"step": t["step"], "action": t["legal"][0]["id"]}).json()  # fmt: skip
        page = c.get(f"/study/{quote(pid, safe='')}").text
        assert "1 of 1 tasks completed" in page and "<img src=x" not in page
    files = sorted(out.glob("*.jsonl"))
    assert len(files) == len(WEIRD_IDS)
    assert all(f.parent == out and len(f.name) < 120 for f in files)
    recorded = {Episode.read(f).metrics["participant"] for f in files}
    assert recorded == set(WEIRD_IDS)
    assert not (world["tmp"] / "escape").exists() and not list(world["tmp"].glob("*escape*"))
    refused(c.get(f"/api/study/{'x' * 1001}"), "participant")


def test_live_sessions_are_capped_and_idle_ones_recorded(tmp_path: Path) -> None:
    app = App(tmp_path, idle_timeout=3600, max_sessions=3,
              allowed_hosts=default_allowed_hosts("127.0.0.1"))  # fmt: skip
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
    app = App(tmp_path, [StudyTask("t1", "PrisonersDilemma", 0, ["always_0"], 0, {"horizon": 2})],
              token=secret, allowed_hosts=default_allowed_hosts("127.0.0.1"))  # fmt: skip
    with Server(app) as url:
        with httpx.Client(base_url=url, timeout=60) as c:
            for path in ("/", "/static/app.js", "/api/games", "/study/p", "/api/study/p"):
                assert c.get(path).status_code == 401, path
                assert c.get(path + "?access=wrong").status_code == 401
            assert c.post("/api/sessions", json=PD).status_code == 401
            assert c.post("/api/study/p/t1", json={}).status_code == 401
            assert _ws(url, "/ws/x?token=y") == ("refused", 403)
            assert not app.sessions
            r = c.get(f"/?access={secret}")  # the participant's link: sets a same-site cookie
            assert r.status_code == 200
            cookie = r.headers["set-cookie"]
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
            assert c.get("/api/games").status_code == 200  # the cookie now rides along
        with httpx.Client(base_url=url, timeout=60, headers={"X-Access-Token": secret}) as c:
            assert c.post("/api/sessions", json=PD).status_code == 200


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
    app = App(tmp_path, presets=presets, allowed_hosts=default_allowed_hosts("127.0.0.1"))
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


def test_a_completed_study_task_is_not_replayed_over(world) -> None:
    c, app = world["client"], world["app"]
    p = c.post("/api/study/p1/t1", json={}).json()
    sid, token = p["session"], p["token"]
    for step in range(3):  # horizon 3: play it to the end
        p = c.post(f"/api/sessions/{sid}/act", json={"step": step, "action": 0},
                   headers={"X-Seat-Token": token}).json()  # fmt: skip
    assert p["status"] == "done"
    refused(c.post("/api/study/p1/t1", json={}), "task", 409)
    assert [t["status"] for t in c.get("/api/study/p1").json()] == ["done"]
    assert len([s for s in app.sessions.values() if s.participant == "p1"]) == 1
