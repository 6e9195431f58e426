"""Studies: the file checked in full, assignment designs, people matched, fallbacks, leaving,
surveys and screening, restarts, and the exported dataset replayed on the engine."""

from __future__ import annotations

import contextlib
import itertools
import json
from collections import Counter
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tom_envs.runner import Episode
from tom_envs.serve.guard import GuardConfig
from tom_envs.serve.routes import asgi_app
from tom_envs.serve.study.check import check_study
from tom_envs.serve.study.design import condition_order, plan, williams
from tom_envs.serve.study.export import export, verify
from tom_envs.serve.study.server import StudyServer
from tom_envs.serve.study.spec import StudyError, load_study, parse_study

from .studies import Person, pd_study

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "study" / "pd_partners.toml"


class Clock:
    """Monotonic and wall clocks the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def mono(self) -> float:
        return self.now

    def wall(self) -> float:
        return 1_700_000_000.0 + self.now


@contextlib.contextmanager
def running(path: Path, folder: Path, clock: Clock | None = None, **kw):
    """A started study server and a test client on it (ticks are called by the test)."""
    clock = clock or Clock()
    server = StudyServer(load_study(path), folder, clock=clock.mono, wall=clock.wall, **kw)
    server.notes = server.start()  # type: ignore[attr-defined]
    app = asgi_app(None, server, GuardConfig(allowed_hosts=None), tick=3600)
    with TestClient(app) as client:
        client.tick = lambda: client.portal.call(server.tick)  # type: ignore[attr-defined]
        yield server, client
    server.close()


def person(server: StudyServer, client, pid: str, **kw) -> Person:
    return Person(client, pid, server.key(pid), **kw)


# ------------------------------------------------------------------ the file
BAD = [
    ("[study]\nname='x'\n", "games"),
    ("[study]\nname='Bad Name'\n[[games]]\nname='g'\ngame='PrisonersDilemma'\n"
     "[[conditions]]\nname='c'\npartner='random'\n", "study.name"),
    ("{head}[assignment]\ndesign='mixed'\n", "assignment.design"),
    ("{head}[assignment]\nepisodes_per_condition=0\n", "episodes_per_condition"),
    ("{head}[bogus]\nx=1\n", "unknown keys ['bogus']"),
    ("{head}[[survey.end]]\nid='q'\nkind='likert'\ntext='?'\nscale=['only']\n", "scale"),
    ("{head}[[attention]]\nid='a'\nkind='choice'\ntext='?'\noptions=['x','y']\nanswer='z'\nat='end'\n",
     "answer"),
    ("{head}[completion]\ncode='<script>'\n", "completion.code"),
]  # fmt: skip
HEAD = ("[study]\nname='x'\n[[games]]\nname='g'\ngame='PrisonersDilemma'\n[[conditions]]\n"
        "name='c'\npartner='random'\n")  # fmt: skip


@pytest.mark.parametrize(("text", "named"), BAD, ids=range(len(BAD)))
def test_a_malformed_study_file_names_the_key(text: str, named: str) -> None:
    with pytest.raises(StudyError, match=named.replace("[", r"\[").replace("]", r"\]")):
        parse_study(text.format(head=HEAD))


def _conditions(partner: str, extra: str = "") -> str:
    return f'\n[[conditions]]\nname = "c"\npartner = {partner}\n{extra}'


REFUSED = [
    ('"preset:gpt"', "", "--partner gpt=SPEC"),
    ('{ llm = "paper003", endpoint = "gpt" }', "", "--partner gpt=SPEC"),
    ('"zoo:best"', "", "PrisonersDilemma zoo has no member 'best'"),
    ('"subprocess:Popen"', "", "names Python code"),
    ('"llm:model=m:base_url=http://127.0.0.1:9/v1"', "", "base_url"),
    ('"checkpoint:path=/etc/passwd"', "", "outside the current folder"),
    ('"no_such_bot"', "", "unknown agent"),
    ('"human"', 'people = 1', "others = AGENT"),
    ('"human"', 'fallback = "c"', "must be played with agents"),
]


@pytest.mark.parametrize(("partner", "extra", "why"), REFUSED, ids=[r[2] for r in REFUSED])
def test_a_study_file_names_no_code_host_or_outside_file(tmp_path: Path, partner: str, extra: str,
                                                          why: str) -> None:  # fmt: skip
    path = pd_study(tmp_path, conditions=_conditions(partner, extra))
    with pytest.raises(StudyError, match=why.replace("(", r"\(")):
        check_study(load_study(path), {})


def test_game_arguments_and_seats_are_checked_as_a_files(tmp_path: Path) -> None:
    text = pd_study(tmp_path).read_text()
    for old, new, why in (("horizon = 2", "horizon = 100000000", "horizon"),
                          ('seed = 100', 'seed = 100\nseat = 5', "seats 0 to 1"),
                          ("horizon = 2", 'game = "ipd"', "fixed")):  # fmt: skip
        with pytest.raises(StudyError, match=why):
            check_study(parse_study(text.replace(old, new, 1)), {})


def test_operator_presets_fill_preset_and_llm_conditions(tmp_path: Path) -> None:
    path = pd_study(tmp_path, conditions=_conditions('"preset:bot"')
                    + '\n[[conditions]]\nname = "m"\npartner = { llm = "paper004", endpoint = "ep" }\n')
    seatings = check_study(load_study(path), {"bot": "tit_for_tat",
                                              "ep": "llm:model=m:base_url=http://127.0.0.1:9/v1"})
    assert seatings[("pd", "c")].partners == ("tit_for_tat",)
    assert seatings[("pd", "m")].partners == ("llm:model=m:base_url=http://127.0.0.1:9/v1:preset=paper004",)
    assert seatings[("pd", "m")].trusted == (True,)
    with pytest.raises(StudyError, match="must be an LLM preset"):
        check_study(load_study(path), {"bot": "tit_for_tat", "ep": "random"})


# ------------------------------------------------------------------ assignment
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_williams_squares_balance_order(n: int) -> None:
    rows = williams(n)
    assert all(sorted(r) == list(range(n)) for r in rows)
    follows = Counter((r[i], r[i + 1]) for r in rows for i in range(n - 1))
    assert len(set(follows.values())) == 1 and len(follows) == n * (n - 1)  # every pair equally


def _study(tmp_path: Path, design: str, order: str, n: int = 3, episodes: int = 2):
    conds = "".join(f'\n[[conditions]]\nname = "c{i}"\npartner = "random"\n' for i in range(n))
    return load_study(pd_study(tmp_path, conditions=conds, design=design, order=order,
                               episodes=episodes, name=f"{design}-{order}"))  # fmt: skip


def test_between_designs_assign_one_condition_each(tmp_path: Path) -> None:
    rr = _study(tmp_path, "between", "counterbalanced")
    assert [condition_order(rr, k)[0][0] for k in range(6)] == [0, 1, 2, 0, 1, 2]
    blocked = _study(tmp_path, "between", "blocked")
    for block in range(5):  # permuted blocks: every condition once in each block of three
        got = [condition_order(blocked, 3 * block + j)[0][0] for j in range(3)]
        assert sorted(got) == [0, 1, 2]
    rnd = _study(tmp_path, "between", "random")
    draws = [condition_order(rnd, k)[0][0] for k in range(60)]
    assert set(draws) == {0, 1, 2} and draws == [condition_order(rnd, k)[0][0] for k in range(60)]
    assert all(len(condition_order(rnd, k)) == 2 for k in range(5))


def test_within_designs_play_every_condition(tmp_path: Path) -> None:
    blocked = _study(tmp_path, "within", "blocked")
    assert condition_order(blocked, 7) == [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]
    cb = _study(tmp_path, "within", "counterbalanced")
    firsts = Counter(condition_order(cb, k)[0][0] for k in range(6))
    assert firsts == {0: 2, 1: 2, 2: 2}  # 2n rows of a Williams square for n = 3
    rnd = _study(tmp_path, "within", "random")
    orders = {tuple(condition_order(rnd, k)) for k in range(10)}
    assert len(orders) > 1 and all(sorted(o) == sorted(itertools.product(range(3), range(2)))
                                   for o in orders)  # fmt: skip
    steps = plan(rnd, 0)
    assert [s.kind for s in steps[:3]] == ["consent", "instructions", "intro"]
    assert steps[-1].kind == "done" and steps[-2].id == "survey:end"
    episodes = [s for s in steps if s.kind == "episode"]
    assert [s.number for s in episodes] == list(range(1, 7))


def test_validate_prints_what_a_participant_does_and_how_long(capsys) -> None:
    from tom_envs.cli import main

    assert main(["study", "validate", str(EXAMPLE)]) == 0
    out = capsys.readouterr().out
    assert "participant 2: tft -> person" in out and "Estimated time: about" in out
    assert "practice round 1 of pd" in out and "waiting room up to 90 s" in out


# ------------------------------------------------------------------ running
def test_two_people_are_matched_and_their_data_is_a_dataset(tmp_path: Path) -> None:
    path = pd_study(tmp_path, practice=True)
    with running(path, tmp_path / "data") as (server, c):
        a, b = person(server, c, "aaaaaa1111"), person(server, c, "bbbbbb2222")
        assert a.run() == "waiting"  # blocked order: the person condition first
        assert b.run() == "play"  # b arrives: matched with a
        for _ in range(20):
            kinds = a.run(), b.run()
            if kinds == ("done", "done"):
                break
        assert (a.state()["kind"], b.state()["kind"]) == ("done", "done")
        code = a.state()["code"]
        assert code == server.code("aaaaaa1111") and code != server.code("bbbbbb2222")
    m = export(tmp_path / "data", tmp_path / "ds")
    assert m["counts"]["completed"] == 2 and m["counts"]["episodes_with_people"] == 1
    assert verify(tmp_path / "ds") == []
    rows = (tmp_path / "ds" / "episodes.csv").read_text().splitlines()
    assert len(rows) == 1 + 2 * 3  # header; practice, person (two rows), bot, per participant
    together = [ep for ep in map(Episode.read, (tmp_path / "ds").glob("trajectories/*.jsonl"))
                if list(ep.agents.values()) == ["human", "human"]]  # fmt: skip
    (ep,) = together
    assert ep.config["game_version"] == 0 and ep.config["suite_version"] and ep.config["code"]
    people = {s["participant"] for s in ep.steps}
    assert people == {"P0001", "P0002"}  # anonymous ids, never the links' ids
    assert all(s["human"] and s["latency_s"] >= 0 for s in ep.steps)
    text = "".join(p.read_text() for p in (tmp_path / "ds").rglob("*") if p.is_file())
    assert "aaaaaa1111" not in text and server.key("aaaaaa1111") not in text
    card = (tmp_path / "ds" / "README.md").read_text()
    assert "2 participants enrolled: 2 completed" in card and "rules version" in card


def test_nobody_comes_so_the_fallback_is_played_and_recorded(tmp_path: Path) -> None:
    clock = Clock()
    with running(pd_study(tmp_path, wait=60), tmp_path / "data", clock) as (server, c):
        a = person(server, c, "aaaaaa1111")
        assert a.run() == "waiting"
        clock.now += 30
        c.tick()
        assert a.state()["kind"] == "waiting"
        clock.now += 31
        a.state()  # present
        c.tick()
        s = a.state()
        assert s["kind"] == "play" and "computer partner" in s["notice"]
        assert a.run() == "done"
    m = export(tmp_path / "data", tmp_path / "ds")
    assert m["counts"]["fallbacks"] == 1
    rows = list(csv_rows(tmp_path / "ds" / "episodes.csv"))
    assert rows[0]["condition_intended"] == "person" and rows[0]["condition"] == "bot"


def csv_rows(path: Path):
    import csv

    with open(path) as fh:
        yield from csv.DictReader(fh)


def test_without_a_fallback_the_episode_is_skipped(tmp_path: Path) -> None:
    clock = Clock()
    conds = '\n[[conditions]]\nname = "person"\npartner = "human"\n'
    with running(pd_study(tmp_path, conditions=conds, wait=5), tmp_path / "d", clock) as (server, c):
        a = person(server, c, "aaaaaa1111")
        assert a.run() == "waiting"
        clock.now += 6
        a.state()
        c.tick()
        s = a.state()
        assert s["kind"] == "survey" and "skipped" in s["notice"]


@contextlib.contextmanager
def _b_leaves_after_round_1(tmp_path: Path, on_leave: str, horizon: int):
    """A Prisoner's Dilemma study of two people (grace 20 s, ``on_leave``) in which both move in
    round 1 (b is asked first or second: both are people), then b is gone (no request, no
    websocket) for 35 s and the server ticks: (study file, clock, client, a, b), running."""
    clock = Clock()
    conds = f'''
[[conditions]]
name = "person"
partner = "human"
on_leave = "{on_leave}"
'''
    path = pd_study(tmp_path, conditions=conds, horizon=horizon, grace=20)
    with running(path, tmp_path / "d", clock) as (server, c):
        a, b = person(server, c, "aaaaaa1111"), person(server, c, "bbbbbb2222")
        a.run()
        b.run()
        a.step()
        b.step()
        clock.now += 35
        a.state()
        c.tick()
        yield path, clock, c, a, b


@pytest.mark.parametrize("on_leave", ["end", "tit_for_tat"])
def test_a_person_who_leaves_mid_game(tmp_path: Path, on_leave: str) -> None:
    with _b_leaves_after_round_1(tmp_path, on_leave, 4) as (_, _, _, a, b):
        s = a.state()
        if on_leave == "end":
            assert s["kind"] == "survey" and "left" in s["notice"]
        else:
            assert s["kind"] == "play" and "computer program" in s["notice"]
            assert a.run() == "done"
        assert b.state()["kind"] == "survey"  # the leaver comes back: the game is over for them
    export(tmp_path / "d", tmp_path / "ds")
    rows = {r["participant"]: r for r in csv_rows(tmp_path / "ds" / "episodes.csv")}
    assert rows["P0002"]["person_status"] == "left"
    (ep,) = map(Episode.read, (tmp_path / "ds").glob("trajectories/*.jsonl"))
    if on_leave == "end":
        assert ep.status == "partner_left" and ep.metrics["abandoned"] == 1.0
    else:
        assert ep.config["agents"]["player_1"]["took_over_at_step"] == 2
        assert ep.status == "ok" and len(ep.steps) == 8
    assert verify(tmp_path / "ds") == []


def test_consent_surveys_and_screening(tmp_path: Path) -> None:
    conds = '\n[[conditions]]\nname = "bot"\npartner = "tit_for_tat"\n'
    path = pd_study(tmp_path, conditions=conds, on_fail="end")
    with running(path, tmp_path / "d") as (server, c):
        no = person(server, c, "nnnnnn0000")
        s = no.state()
        assert s["kind"] == "consent" and "record" in s["text"]
        assert no.post("/step", {"step": "consent", "agree": False})["kind"] == "declined"
        p = person(server, c, "pppppp0000", attentive=False)
        p.run(until=("survey",))
        s = p.state()
        assert s["items"][0]["options"] == ["no", "somewhat", "yes"]
        h = p.h
        r = c.post(f"/api/p/{p.pid}/step", json={"step": s["step"], "answers": {}}, headers=h)
        assert r.status_code == 400 and "please answer" in r.json()["error"]
        r = c.post(f"/api/p/{p.pid}/step", json={"step": s["step"], "answers": {"enjoy": "maybe"}},
                   headers=h)  # fmt: skip
        assert r.status_code == 400
        ok = p.post("/step", {"step": s["step"], "answers": {"enjoy": "yes"}})
        r = c.post(f"/api/p/{p.pid}/step", json={"step": s["step"], "answers": {"enjoy": "yes"}},
                   headers=h)  # fmt: skip
        assert r.status_code == 409 and ok["kind"] == "survey"  # recorded once
        assert p.run() == "screened"
    export(tmp_path / "d", tmp_path / "ds")
    rows = {r["participant"]: r for r in csv_rows(tmp_path / "ds" / "participants.csv")}
    assert rows["P0001"]["status"] == "declined" and rows["P0002"]["status"] == "screened_out"
    answers = list(csv_rows(tmp_path / "ds" / "surveys.csv"))
    assert [a["item"] for a in answers] == ["enjoy", "comments", "check"]
    assert answers[-1]["attention_passed"] == "False"


def _play_to_done(path: Path, folder: Path, restart_at: int | None) -> list[Episode]:
    """Two participants through a study; optionally a server restart when the first is about to
    make decision ``restart_at`` of the game they play together."""
    moves, notes = 0, []
    while True:
        with running(path, folder) as (server, c):
            notes += server.notes
            a, b = person(server, c, "aaaaaa1111"), person(server, c, "bbbbbb2222")
            for _ in range(400):
                kinds = (a.state()["kind"], b.state()["kind"])
                if kinds == ("done", "done"):
                    break
                sa = a.state()
                if (restart_at is not None and sa["kind"] == "play" and sa["board"]["step"] ==
                        restart_at and len(sa["board"]["people"]) == 2):  # fmt: skip
                    break
                a.step()
                b.step()
                moves += 1
            else:
                raise AssertionError("did not finish")
        if kinds == ("done", "done"):
            break
        restart_at = None
    assert any("resumed at decision" in n for n in notes) == (folder.name == "resumed"), notes
    export(folder, folder.parent / (folder.name + "-ds"))
    assert verify(folder.parent / (folder.name + "-ds")) == []
    return [Episode.read(p) for p in sorted((folder.parent / (folder.name + "-ds")).glob("trajectories/*"))]


def test_a_restart_resumes_every_game_where_it_was(tmp_path: Path) -> None:
    path = pd_study(tmp_path, horizon=6)
    straight = _play_to_done(path, tmp_path / "straight", None)
    resumed = _play_to_done(path, tmp_path / "resumed", 3)
    key = [[(s["agent"], s["action"], s.get("rewards")) for s in ep.steps] for ep in straight]
    assert key == [[(s["agent"], s["action"], s.get("rewards")) for s in ep.steps] for ep in resumed]
    events = [json.loads(x) for x in (tmp_path / "resumed" / "journal.jsonl").read_text().splitlines()]
    assert [e["seq"] for e in events] == list(range(len(events)))


# ------------------------------------------------------------------ the dataset
@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    """A small exported dataset: one participant, a practice round and a game with a bot."""
    tmp = tmp_path_factory.mktemp("dataset")
    conds = '\n[[conditions]]\nname = "bot"\npartner = "tit_for_tat"\n'
    with running(pd_study(tmp, conditions=conds, horizon=3, practice=True), tmp / "d") as (s, c):
        assert person(s, c, "aaaaaa1111").run() == "done"
    export(tmp / "d", tmp / "ds")
    return tmp / "ds"


def test_the_dataset_is_versioned_and_complete(dataset: Path) -> None:
    m = json.loads((dataset / "manifest.json").read_text())
    assert m["dataset_version"] == 1 and m["games"]["PrisonersDilemma"]["rules_version"] == 0
    assert m["recorded_with"]["suite_versions"] and m["recorded_with"]["code"]
    for name, digest in m["files"].items():
        import hashlib

        assert hashlib.sha256((dataset / name).read_bytes()).hexdigest() == digest, name
    for ep in map(Episode.read, dataset.glob("trajectories/*.jsonl")):
        assert ep.digest_ok and ep.config["game_version"] == 0 and ep.config["code"]
        assert ep.config["suite_version"] and ep.config["env_id"] == "tom_envs/PrisonersDilemma-v0"


def test_replaying_the_dataset_fails_loudly_where_the_rules_changed(dataset: Path, monkeypatch,
                                                                    capsys, tmp_path) -> None:  # fmt: skip
    import dataclasses as dc
    import shutil

    from tom_envs import registration
    from tom_envs.cli import main
    from tom_envs.games.matrix.rules import MatrixGame
    from tom_envs.serve.study import export as export_mod

    assert main(["study", "verify", str(dataset)]) == 0
    assert "replay identically" in capsys.readouterr().out
    real = MatrixGame.apply

    def richer(self, state, actions, rng, messages=None):  # the Prisoner's Dilemma pays more
        step = real(self, state, actions, rng, messages)
        return step._replace(rewards=tuple(r + 1 for r in step.rewards))

    monkeypatch.setattr(MatrixGame, "apply", richer)
    problems = export_mod.verify(dataset)
    files = {p.name for p in dataset.glob("trajectories/*.jsonl")}
    assert {p.split(":")[0] for p in problems} == files and all("rewards" in p for p in problems)
    assert main(["study", "verify", str(dataset)]) == 1
    assert "no longer plays these games as they were recorded" in capsys.readouterr().err
    monkeypatch.setattr(MatrixGame, "apply", real)
    spec = registration.game_spec("PrisonersDilemma")
    monkeypatch.setattr(registration, "game_spec",
                        lambda name: dc.replace(spec, version=1) if "Prisoner" in name else spec)
    assert all("rules version 0, the engine has version 1" in p for p in export_mod.verify(dataset))
    monkeypatch.undo()
    edited = tmp_path / "edited"
    shutil.copytree(dataset, edited)
    first = sorted(edited.glob("trajectories/*.jsonl"))[0]
    first.write_text(first.read_text().replace('"action":0', '"action":1', 1))
    assert any("edited after it was written" in p for p in export_mod.verify(edited))


def test_the_command_line_exports_and_reports_status(tmp_path: Path, capsys) -> None:
    from tom_envs.cli import main

    conds = '\n[[conditions]]\nname = "bot"\npartner = "tit_for_tat"\n'
    path = pd_study(tmp_path, conditions=conds)
    with running(path, tmp_path / "d") as (s, c):
        person(s, c, "aaaaaa1111").run()
        person(s, c, "bbbbbb2222").run(until=("survey",))
    assert main(["study", "status", str(path), "--data", str(tmp_path / "d")]) == 0
    out = capsys.readouterr().out
    assert "2 participants" in out and "completed 1" in out and "at survey 1" in out
    assert main(["study", "export", str(path), "--data", str(tmp_path / "d"), "--out",
                 str(tmp_path / "ds"), "--omit-free-text"]) == 0  # fmt: skip
    assert "[omitted]" in (tmp_path / "ds" / "surveys.csv").read_text()
    assert main(["study", "links", str(path), "--data", str(tmp_path / "d"), "-n", "3",
                 "--out", str(tmp_path / "links.csv")]) == 0  # fmt: skip
    rows = (tmp_path / "links.csv").read_text().splitlines()
    assert len(rows) == 4 and oct((tmp_path / "links.csv").stat().st_mode)[-3:] == "600"
    pid, link = rows[1].split(",")
    assert link.endswith(f"/p/{pid}#k={s.key(pid)}")


def test_concurrent_requests_never_put_a_person_in_two_games(tmp_path: Path) -> None:
    """The load test's race: two matchings (two pages asking at once, or a page and a tick)
    must start one game, not two."""
    import asyncio

    with running(pd_study(tmp_path), tmp_path / "d") as (server, c):
        a, b = person(server, c, "aaaaaa1111"), person(server, c, "bbbbbb2222")
        a.run(until=("waiting",))
        b.run(until=("intro",))
        # b reads the introduction without asking for the next page: b's episode is due
        c.portal.call(server.record, {"ev": "read", "pid": "bbbbbb2222", "step": "intro:pd"})

        async def at_once() -> None:
            pa, pb = (server.ledger.participants[x] for x in ("aaaaaa1111", "bbbbbb2222"))
            await asyncio.gather(server.begin(pb), server.begin(pb), server.tick(), server.tick(),
                                 server.match(pa.waiting["key"]))  # fmt: skip

        c.portal.call(at_once)
        started = [e for e in map(json.loads, (tmp_path / "d" / "journal.jsonl").read_text()
                                  .splitlines()) if e["ev"] == "started"]  # fmt: skip
        assert len(started) == 1 and len(started[0]["members"]) == 2
        assert len(server.live) == 1


def test_a_platform_sends_people_to_join_once_each(tmp_path: Path) -> None:
    """--open: /join?ext=ID enrols each platform id once (the same id gets the same link), behind
    the access token, up to --max-participants."""
    from tom_envs.serve.guard import GuardConfig

    server = StudyServer(load_study(pd_study(tmp_path)), tmp_path / "d", max_participants=2,
                         open_enrollment=True)
    server.start()
    app = asgi_app(None, server, GuardConfig(allowed_hosts=None, token="lab-token-123456"))
    with TestClient(app, follow_redirects=False) as c:
        assert c.get("/join?ext=PROLIFIC1").status_code == 401  # the access token guards it
        r = c.get("/join?ext=PROLIFIC1&access=lab-token-123456")
        assert r.status_code == 303
        pid, key = r.headers["location"].removeprefix("/p/").split("#k=")
        assert key == server.key(pid) and server.ledger.participants[pid].external == "PROLIFIC1"
        again = c.get("/join?ext=PROLIFIC1", headers={"X-Access-Token": "lab-token-123456"})
        assert again.headers["location"] == r.headers["location"]
        h = {"X-Access-Token": "lab-token-123456"}
        assert c.get("/join?ext=PROLIFIC2", headers=h).status_code == 303
        full = c.get("/join?ext=PROLIFIC3", headers=h)
        assert full.status_code == 403 and "full" in full.json()["error"]
        assert c.get("/join?ext=", headers=h).status_code == 400
        # the participant's own pages need their key, not the access token
        assert c.get(f"/api/p/{pid}", headers={"X-Participant-Key": key}).status_code == 200
    server.close()
    export(tmp_path / "d", tmp_path / "ds")
    assert "PROLIFIC" not in "".join(p.read_text() for p in (tmp_path / "ds").rglob("*.csv"))


def _fake_endpoint(content: str):
    """The LLM tests' OpenAI-shaped endpoint on loopback (tests/llm_agents/conftest.py)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("llm_conftest", ROOT / "tests/llm_agents/conftest.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.FakeEndpoint([], content)


def test_an_llm_protocol_on_the_operators_endpoint_and_its_restart(tmp_path: Path) -> None:
    """A condition names a protocol preset, the operator the endpoint; after a restart mid-game the
    LLM's moves are taken from the journal (no request is paid twice) and its memory restarting
    empty is recorded."""
    ep = _fake_endpoint('{"action": "Option F"}')
    conds = '\n[[conditions]]\nname = "llm"\npartner = { llm = "paper004", endpoint = "gpt" }\n'
    path = pd_study(tmp_path, conditions=conds, horizon=4)
    presets = {"gpt": f"llm:model=fake:base_url={ep.base_url}:api_key_env=HOME"}
    try:
        with running(path, tmp_path / "d", presets=presets) as (server, c):
            p = person(server, c, "aaaaaa1111")
            p.run(until=("play",))
            for _ in range(2):
                p.step()
        asked = len(ep.requests)
        assert asked >= 2
        with running(path, tmp_path / "d", presets=presets) as (server, c):
            assert any("resumed at decision 4" in n for n in server.notes)
            assert len(ep.requests) == asked  # the replay asked the endpoint nothing
            p = person(server, c, "aaaaaa1111")
            assert p.run() == "done"
    finally:
        ep.close()
    export(tmp_path / "d", tmp_path / "ds")
    (ep_file,) = (tmp_path / "ds").glob("trajectories/*.jsonl")
    e = Episode.read(ep_file)
    assert e.config["agents"]["player_1"]["spec"].endswith(":preset=paper004")
    assert e.metrics["partner_memory_reset"] == 1.0 and e.metrics["resumed"] == 1.0
    assert all(s["action"] == 1 for s in e.steps if s["agent"] == "player_1")  # Option F
    assert verify(tmp_path / "ds") == []


def test_a_restart_after_a_takeover_replays_the_person_then_the_agent(tmp_path: Path) -> None:
    with _b_leaves_after_round_1(tmp_path, "tit_for_tat", 5) as (path, clock, _, a, _):
        a.step()  # round 2 with the agent
    with running(path, tmp_path / "d", clock) as (server, c):
        assert any("resumed at decision 4" in n for n in server.notes), server.notes
        a = person(server, c, "aaaaaa1111")
        assert a.run() == "done"
    export(tmp_path / "d", tmp_path / "ds")
    (ep,) = map(Episode.read, (tmp_path / "ds").glob("trajectories/*.jsonl"))
    assert ep.config["agents"]["player_1"]["took_over_at_step"] == 2 and len(ep.steps) == 10
    assert verify(tmp_path / "ds") == []
