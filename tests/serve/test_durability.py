"""Nothing is lost: the journal's order and repairs, a full disk retried (and rescued at shutdown),
``kill -9`` of a study server mid-game, and every acknowledged move found again."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tom_envs.serve.study import journal as journal_mod
from tom_envs.serve.study.export import export, verify
from tom_envs.serve.study.journal import Journal, JournalError, JournalFull
from tom_envs.serve.study.launch import serve_process

from .studies import Person, pd_study
from .test_study import person, running

ROOT = Path(__file__).resolve().parents[2]


class Faulty:
    """``os.write`` that fails with ENOSPC while ``failing`` (after writing a part, as a full
    disk does)."""

    def __init__(self) -> None:
        self.failing = 0
        self.calls = 0

    def __call__(self, fd: int, data: bytes) -> int:
        self.calls += 1
        if self.failing:
            self.failing -= 1
            os.write(fd, data[: len(data) // 2])
            raise OSError(errno.ENOSPC, "No space left on device")
        return os.write(fd, data)


def test_the_journal_is_ordered_and_repairs_only_a_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    j = Journal(path)
    assert j.open() == []
    futures = [j.append({"ev": "x", "i": i}) for i in range(50)]
    assert [f.result(10) for f in futures] == [0] * 50
    assert j.close() == []
    with open(path, "ab") as fh:
        fh.write(b'{"seq": 50, "ev": "x", "i"')  # a batch cut short by a crash
    events = Journal(path).open()
    assert [e["i"] for e in events] == list(range(50)) and path.read_bytes().endswith(b"}\n")
    lines = path.read_text().splitlines()
    lines[10] = lines[10][:-5]  # damage in the middle: never silently skipped
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(JournalError, match="line 11 is damaged"):
        Journal(path).open()


def test_a_full_disk_is_retried_and_what_is_left_is_rescued(tmp_path: Path, capsys) -> None:
    path = tmp_path / "journal.jsonl"
    disk = Faulty()
    j = Journal(path, write=disk)
    j.open()
    disk.failing = 3
    futures = [j.append({"ev": "x", "i": i}) for i in range(10)]
    assert [f.result(30) for f in futures] == [0] * 10 and disk.calls >= 4
    assert "No space left on device" in capsys.readouterr().err
    disk.failing = 10**9  # the disk stays full through the shutdown
    for i in range(10, 13):
        j.append({"ev": "x", "i": i})
    (rescue,) = j.close(grace=0.5)
    assert Path(rescue).parent == tmp_path and "they are saved in" in capsys.readouterr().err
    events = Journal(path).open()  # space is back: the rescued events are appended, in order
    assert [e["i"] for e in events] == list(range(13)) and not list(tmp_path.glob("*.rescue-*"))
    assert [e["seq"] for e in events] == list(range(13))


def test_past_a_bound_new_work_is_refused_not_queued(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(journal_mod, "MAX_PENDING", 5)
    disk = Faulty()
    disk.failing = 10**9
    j = Journal(tmp_path / "journal.jsonl", write=disk)
    j.open()
    for i in range(5):
        j.append({"ev": "x", "i": i})
    with pytest.raises(JournalFull, match="wait for the disk"):
        j.append({"ev": "x", "i": 5})
    j.close(grace=0.1)


#: One condition: the participant plays tit-for-tat.
BOT = '\n[[conditions]]\nname = "bot"\npartner = "tit_for_tat"\n'


@contextmanager
def _playing_on(disk: Faulty, tmp_path: Path) -> Iterator[tuple[Any, Any, Person]]:
    """A 3-round study against tit-for-tat served in process with journal writes through
    ``disk``, data in ``tmp_path/d``: (server, client, a participant at the game's first move)."""
    with running(pd_study(tmp_path, conditions=BOT, horizon=3), tmp_path / "d",
                 write=disk) as (server, c):  # fmt: skip
        p = person(server, c, "aaaaaa1111")
        p.run(until=("play",))
        yield server, c, p


def test_a_study_server_on_a_full_disk_delays_but_loses_nothing(tmp_path: Path) -> None:
    disk = Faulty()
    with _playing_on(disk, tmp_path) as (_, _, p):
        disk.failing = 4  # the next moves wait for the disk, then go through
        assert p.run() == "done"
    events = [json.loads(x) for x in (tmp_path / "d" / "journal.jsonl").read_text().splitlines()]
    mine = [e for e in events if e["ev"] == "move" and e["rec"].get("human")]
    assert len(mine) == 3 and [e["seq"] for e in events] == list(range(len(events)))
    export(tmp_path / "d", tmp_path / "ds")
    assert verify(tmp_path / "ds") == []


def _serve(study: Path, data: Path, port: int) -> subprocess.Popen:
    return serve_process(study, data, port, cwd=ROOT)


def test_kill_9_mid_game_loses_no_acknowledged_move(tmp_path: Path) -> None:
    from .test_serve import _free_port

    study = pd_study(tmp_path, conditions=BOT, horizon=12)
    data, port = tmp_path / "d", _free_port()
    proc = _serve(study, data, port)
    acknowledged = 0
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as c:
            from tom_envs.serve.study.server import participant_key, study_secret

            pid = "aaaaaa1111"
            p = Person(c, pid, participant_key(study_secret(data / "secret.key"), pid))
            p.run(until=("play",))
            for _ in range(7):  # seven decisions acknowledged, then the server dies mid-game
                s = p.state()["board"]
                p.post("/act", {"step": s["step"], "action": s["actions"][0]["id"]})
                acknowledged += 1
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        events = [json.loads(x) for x in (data / "journal.jsonl").read_text().splitlines() if x]
        mine = [e for e in events if e["ev"] == "move" and e["rec"].get("human")]
        assert len(mine) == acknowledged  # every acknowledged decision was on disk
        proc = _serve(study, data, port)  # the same game resumes where it was
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as c:
            p.c = c
            s = p.state()
            assert s["kind"] == "play" and s["board"]["step"] == acknowledged
            assert p.run() == "done"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    export(data, tmp_path / "ds")
    assert verify(tmp_path / "ds") == []
    from tom_envs.runner import Episode

    (ep,) = map(Episode.read, (tmp_path / "ds").glob("trajectories/*.jsonl"))
    assert sum(1 for s in ep.steps if s.get("human")) == 12 and ep.metrics["resumed"] == 1.0


def test_past_half_the_bound_new_work_waits_and_applied_moves_are_kept(tmp_path: Path,
                                                                       monkeypatch) -> None:  # fmt: skip
    """A disk that stays full: once half of the waiting room for events is used, new work is
    refused with a 503 (the page says why) and no move already applied is ever dropped."""
    monkeypatch.setattr(journal_mod, "MAX_PENDING", 8)
    disk = Faulty()
    with _playing_on(disk, tmp_path) as (server, c, p):
        disk.failing = 10**9
        board = p.state()["board"]
        fut = c.portal.start_task_soon(server.act, "aaaaaa1111", board["step"], board["actions"][0]["id"], None)
        for _ in range(100):  # the move and the bot's answer wait for the disk
            if server.journal.pending >= 2:
                break
            time.sleep(0.05)
        for _ in range(2):  # fill half the room (events the ledger reads back harmlessly)
            server.journal.append({"ev": "study", "name": "pd-test", "version": 1,
                                   "digest": server.digest})  # fmt: skip
        r = c.post("/api/p/aaaaaa1111/step", json={"step": "x"}, headers=p.h)
        assert r.status_code == 503 and "saving is paused" in r.json()["error"]
        disk.failing = 0  # space is back: everything waiting is written, in order
        fut.result(timeout=30)
    lines = (tmp_path / "d" / "journal.jsonl").read_text().splitlines()
    moves = [json.loads(x) for x in lines if '"ev":"move"' in x]
    assert len(moves) == 2
