"""`tom-envs serve`: sessions, the HTTP/websocket API, concurrency, bad input, hidden information."""

from __future__ import annotations

import asyncio
import dataclasses
import socket
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import pytest
from starlette.testclient import TestClient

from tom_envs.core.agents import BaseAgent, Turn
from tom_envs.registration import GAMES
from tom_envs.runner import Episode
from tom_envs.serve import Session, SessionError
from tom_envs.serve.app import App
from tom_envs.serve.guard import GuardConfig
from tom_envs.serve.routes import asgi_app
from tom_envs.serve.session import board_module

PD = {"game": "PrisonersDilemma", "seat": 0, "partners": ["tit_for_tat"], "kwargs": {"horizon": 4}}


def play_http(client: httpx.Client | TestClient, body: dict) -> dict:
    p = client.post("/api/sessions", json=body).json()
    seat = {"X-Seat-Token": p["token"]}
    while p["status"] == "playing":
        p = client.post(f"/api/sessions/{p['session']}/act", headers=seat,
                        json={"step": p["step"], "action": p["legal"][0]["id"]}).json()  # fmt: skip
    return p


def test_a_session_is_recorded_as_a_standard_trajectory(tmp_path: Path) -> None:
    s = Session(
        "PrisonersDilemma", 0, ["tit_for_tat"], seed=3, env_kwargs={"horizon": 4}, out_dir=tmp_path
    )
    p = s.payload()
    assert p["your_turn"] and [a["text"] for a in p["legal"]] == ["Option J", "Option F"]
    while s.status == "playing":
        p = s.submit(s.step, p["legal"][1]["id"])  # always defect
    ep = Episode.read(s.path)
    assert ep.agents == {"player_0": "human", "player_1": "tit_for_tat"}
    human = [st for st in ep.steps if st.get("human")]
    assert len(human) == 4 and all(st["agent"] == "player_0" for st in human)
    assert all("observation_text" in st for st in human)
    # tit-for-tat opens cooperating, then copies: 10 + 3 x 5 (defect/defect) for the human
    assert ep.returns["player_0"] == 10 + 3 * 5 and ep.metrics["abandoned"] == 0.0
    assert "functional_regret" in ep.metrics  # the game's metrics run on human episodes too


def test_stale_duplicate_and_illegal_submissions_change_nothing(tmp_path: Path) -> None:
    s = Session("Hanabi", 0, ["convention"], seed=1, out_dir=tmp_path)
    before = s.env.game_state
    legal = list(s.env.view("player_0").legal_actions)
    illegal = next(a for a in range(s.game.num_actions) if a not in legal)
    for step, action in ((5, legal[0]), (0, illegal), (0, True), (0, "1")):
        with pytest.raises(SessionError):
            s.submit(step, action)  # type: ignore[arg-type]
        assert s.env.game_state is before and s.step == 0 and not s.episode.steps
    with pytest.raises(SessionError, match="no chat"):
        s.submit(0, legal[0], "hello")
    s.submit(0, legal[0])
    with pytest.raises(SessionError, match="stale or duplicate"):
        s.submit(0, legal[0])
    assert s.step == 1


class Crashing(BaseAgent):
    name = "crashing"

    def act(self, turn: Turn) -> int:
        raise RuntimeError("partner crashed")


class Illegal(BaseAgent):
    name = "illegal"

    def act(self, turn: Turn) -> int:
        return 10_000


@pytest.mark.parametrize("partner", [Crashing(), Illegal()])
def test_a_failing_partner_is_recorded_and_replaced(tmp_path: Path, partner: BaseAgent) -> None:
    s = Session("CollabCapture", 0, [partner], seed=0, out_dir=tmp_path)
    while s.status == "playing":
        s.submit(s.step, s.payload()["legal"][0]["id"])
    ep = Episode.read(s.path)
    theirs = [st for st in ep.steps if st["agent"] == "player_1"]
    assert theirs and all(not st["valid"] and "error" in st for st in theirs)
    assert ep.invalid["player_1"] == len(theirs) and ep.invalid["player_0"] == 0


def test_idle_sessions_are_recorded_as_abandoned(tmp_path: Path) -> None:
    app = App(tmp_path, idle_timeout=0.05)
    s = app.create(PD)
    s.submit(0, 0)
    time.sleep(0.1)
    assert app.sweep() == 1 and s.status == "abandoned"
    ep = Episode.read(s.path)
    assert ep.metrics["abandoned"] == 1.0 and len([x for x in ep.steps if x.get("human")]) == 1
    with pytest.raises(SessionError, match="abandoned"):
        s.submit(1, 0)
    assert app.sweep() == 0  # recorded once


@pytest.mark.parametrize("spec", GAMES, ids=lambda g: g.name)
def test_the_payload_is_the_human_seats_view_only(spec) -> None:
    n = spec.load().make_bundle(**spec.kwargs).game.num_players
    seat = n - 1
    partners = ["random"] * (n - 1)
    s = Session(spec.name, seat, partners, seed=2)
    p = s.payload()
    view = s.env.view(f"player_{seat}")
    assert p["observation"] == s.bundle.text.text_observation(view).observation
    assert p["board"] == board_module(s.spec).board_svg(s.bundle, view)
    assert p["board"].startswith("<svg") and p["seat"] == seat


def _payload_for(s: Session, state) -> dict:
    s.env.game_state = state
    return s.payload()


def test_hidden_cards_never_reach_the_browser() -> None:
    s = Session("Hanabi", 0, ["convention"], seed=4)
    state = s.env.game_state
    mine = tuple(reversed(state.hands[0]))
    assert mine != state.hands[0]
    other = dataclasses.replace(state, hands=(mine, *state.hands[1:]))
    a, b = s.payload(), _payload_for(s, other)
    assert (a["observation"], a["board"], a["legal"]) == (b["observation"], b["board"], b["legal"])
    g = Session("Guandan", 0, ["random", "random", "random"], seed=4)
    st = g.env.game_state
    hands = list(st.hands)
    assert sum(hands[1]) == sum(hands[2])
    hands[1], hands[2] = hands[2], hands[1]  # two hidden hands of the same size
    x = g.payload()
    y = _payload_for(g, dataclasses.replace(st, hands=tuple(hands)))
    assert (x["observation"], x["board"]) == (y["observation"], y["board"])


def test_http_and_websocket(tmp_path: Path) -> None:
    app = App(tmp_path)
    with TestClient(asgi_app(app, None, GuardConfig(allowed_hosts=None))) as c:
        assert {g["name"] for g in c.get("/api/games").json()} == {g.name for g in GAMES}
        assert c.post("/api/sessions", json={"game": "Nope"}).status_code == 400
        bad = c.post(
            "/api/sessions", content=b"not json", headers={"content-type": "application/json"}
        )
        assert bad.status_code == 400 and bad.json()["field"] == "body"
        assert c.post("/api/sessions/none/act", json={"step": 0, "action": 0}).status_code == 404
        p = c.post("/api/sessions", json=PD).json()
        seat = {"X-Seat-Token": p["token"]}
        assert c.get(f"/api/sessions/{p['session']}").status_code == 404  # the id alone: nothing
        assert c.get(f"/api/sessions/{p['session']}", headers=seat).json()["step"] == 0
        with c.websocket_connect(f"/ws/{p['session']}?token={p['token']}") as ws:
            q = ws.receive_json()
            ws.send_json({"step": q["step"] + 3, "action": 0})
            assert "stale" in ws.receive_json()["error"]
            while q["status"] == "playing":
                ws.send_json({"step": q["step"], "action": q["legal"][0]["id"]})
                q = ws.receive_json()
        assert q["status"] == "done"
        # the console page also carries the participant's board of the seat
        assert q["participant"]["board"]["shapes"] and "seed" not in q["participant"]
    assert len(list(tmp_path.glob("*.jsonl"))) == 1


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """The app (the console, or a study, or both) under uvicorn on loopback, in a thread, with
    the limits ``tom-envs serve`` sets (:func:`tom_envs.serve.guard.server_config`)."""

    def __init__(self, app: App | None, study=None, config: GuardConfig | None = None,
                 **limits: float) -> None:  # fmt: skip
        import uvicorn

        from tom_envs.serve.app import BODY_LIMIT
        from tom_envs.serve.guard import default_allowed_hosts, server_config

        self.port = _free_port()
        cfg = config or GuardConfig(default_allowed_hosts("127.0.0.1"))
        self.asgi = asgi_app(app, study, cfg, tick=limits.pop("tick", 0.2))
        self.server = uvicorn.Server(server_config(self.asgi, "127.0.0.1", self.port,
                                                   body_limit=BODY_LIMIT, **limits))  # fmt: skip
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        for _ in range(200):
            if self.server.started:
                break
            time.sleep(0.05)
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def test_many_concurrent_sessions_on_loopback(tmp_path: Path) -> None:
    app = App(tmp_path, per_client=50)  # 50 players behind one loopback address
    n = 50

    async def one(client: httpx.AsyncClient, k: int) -> dict:
        body = {**PD, "partners": ["random"], "seed": k, "kwargs": {"horizon": 5}}
        p = (await client.post("/api/sessions", json=body)).json()
        seat = {"X-Seat-Token": p["token"]}
        url = f"/api/sessions/{p['session']}/act"
        dup = None
        while p["status"] == "playing":
            move = {"step": p["step"], "action": p["legal"][k % 2]["id"]}
            if p["step"] == 2:  # the same submission twice at once: exactly one is applied
                r1, r2 = await asyncio.gather(
                    client.post(url, json=move, headers=seat),
                    client.post(url, json=move, headers=seat),
                )
                dup = sorted((r1.status_code, r2.status_code))
                p = r1.json() if r1.status_code == 200 else r2.json()
            else:
                p = (await client.post(url, json=move, headers=seat)).json()
        return {"p": p, "dup": dup}

    async def run(url: str) -> list[dict]:
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            return await asyncio.gather(*(one(client, k) for k in range(n)))

    with Server(app, per_client=1000) as url:  # 50 players behind one loopback address
        results = asyncio.run(run(url))
    assert all(r["p"]["status"] == "done" for r in results)
    assert all(r["dup"] == [200, 409] for r in results)
    files = sorted(tmp_path.glob("*.jsonl"))
    assert len(files) == n
    for f in files:
        ep = Episode.read(f)
        human = [st for st in ep.steps if st.get("human")]
        assert len(human) == 5 and [st["index"] for st in ep.steps] == list(range(len(ep.steps)))
        mine = [st["action"] for st in human]
        assert len(set(mine)) == 1  # every session got only its own submissions
    seeds = {Episode.read(f).seed for f in files}
    assert seeds == set(range(n))
    assert np.isfinite([Episode.read(f).returns["player_0"] for f in files]).all()


class Broken:
    """A partner that fails at every decision (as a mismatched checkpoint does)."""

    name = "broken"

    def reset(self, info: object) -> None:
        pass

    def act(self, turn: object) -> int:
        raise RuntimeError("shape mismatch")


def test_a_session_whose_partner_fails_is_written_as_failed(tmp_path: Path) -> None:
    """The web app's partners follow the one failure policy: fallbacks recorded as such, and an
    episode over the bound goes under failed/ (never a result)."""

    s = Session("PrisonersDilemma", 0, [Broken()], seed=0, env_kwargs={"horizon": 2},
                out_dir=tmp_path)  # fmt: skip
    for step in range(2):
        s.submit(step, 0)
    assert s.status == "done" and s.episode.status == "failed"
    assert s.path.parent.name == "failed" and s.path.exists()
    partner = [st for st in s.episode.steps if st["agent"] == "player_1"]
    assert all(st["fallback"] and st["failure"]["kind"] == "exception" for st in partner)


def test_the_servers_fallback_bound_is_the_operators(tmp_path: Path) -> None:
    """`serve --max-fallback-share`: with a bound of 1.0 a partner that always fails is recorded
    (fallbacks marked) but the session is not a failed one."""

    app = App(tmp_path, max_fallback_share=1.0)
    s = Session("PrisonersDilemma", 0, [Broken()], 0, {"horizon": 2}, tmp_path, policy=app.policy)
    s.advance()
    app.adopt(s)
    for step in range(2):
        s.submit(step, 0)
    assert s.episode.status == "ok" and s.episode.fallbacks["player_1"] == 2
    assert s.path.parent == tmp_path
