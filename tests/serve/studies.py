"""Study files and a scripted participant for the study tests (not a test module)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

HEAD = '''[study]
name = "{name}"
version = 1
title = "Test study"
description = "A study the tests run."

[consent]
text = """We record your moves and answers."""

[instructions]
text = """Play well."""

[assignment]
design = "{design}"
order = "{order}"
seed = 3
episodes_per_condition = {episodes}

[matching]
wait_seconds = {wait}
leave_grace_seconds = {grace}
idle_seconds = {idle}
'''

PD_GAME = '''
[[games]]
name = "pd"
game = "PrisonersDilemma"
kwargs = {{ horizon = {horizon} }}
seed = 100
instructions = "Choose a row."
{practice}'''

SURVEYS = '''
[[survey.episode]]
id = "enjoy"
kind = "likert"
text = "I enjoyed it."
scale = ["no", "somewhat", "yes"]

[[survey.end]]
id = "comments"
kind = "text"
text = "Comments?"
required = false

[[attention]]
id = "check"
kind = "choice"
text = "Choose Green."
options = ["Red", "Green"]
answer = "Green"
at = "end"

[screening]
max_attention_failures = 0
on_fail = "{on_fail}"

[completion]
code = "{code}"
'''


def pd_study(folder: Path, *, conditions: str | None = None, name: str = "pd-test",
             design: str = "within", order: str = "blocked", episodes: int = 1, horizon: int = 2,
             wait: float = 30, grace: float = 30, idle: float = 600, practice: bool = False,
             on_fail: str = "continue", code: str = "unique", extra: str = "") -> Path:  # fmt: skip
    """A Prisoner's Dilemma study file (default conditions: a person, else tit-for-tat; and the
    bot alone)."""
    conditions = conditions or '''
[[conditions]]
name = "person"
partner = "human"
fallback = "bot"

[[conditions]]
name = "bot"
partner = "tit_for_tat"
'''
    prac = '[games.practice]\nepisodes = 1\npartner = "always_0"\nkwargs = { horizon = 1 }\n'
    text = (HEAD.format(name=name, design=design, order=order, episodes=episodes, wait=wait,
                        grace=grace, idle=idle)
            + PD_GAME.format(horizon=horizon, practice=prac if practice else "")
            + conditions + SURVEYS.format(on_fail=on_fail, code=code) + extra)  # fmt: skip
    path = folder / f"{name}.toml"
    path.write_text(text)
    return path


class Person:
    """A scripted participant over HTTP: answers every step, plays the first listed action (or
    ``choose(board)``), attention check right unless ``attentive=False``."""

    def __init__(self, client: httpx.Client | Any, pid: str, key: str, *, attentive: bool = True,
                 choose: Any = None) -> None:  # fmt: skip
        self.c, self.pid, self.key = client, pid, key
        self.h = {"X-Participant-Key": key}
        self.attentive, self.choose = attentive, choose
        self.kinds: list[str] = []

    def state(self) -> dict[str, Any]:
        r = self.c.get(f"/api/p/{self.pid}", headers=self.h)
        assert r.status_code == 200, r.text
        return r.json()

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        r = self.c.post(f"/api/p/{self.pid}{path}", json=body, headers=self.h)
        assert r.status_code == 200, (path, body, r.text)
        return r.json()

    def answers(self, items: list[dict[str, Any]]) -> dict[str, str]:
        out = {}
        for i in items:
            if i["kind"] == "text":
                out[i["id"]] = "fine"
            elif i["id"] == "check":
                out[i["id"]] = "Green" if self.attentive else "Red"
            else:
                out[i["id"]] = i["options"][-1]
        return out

    def step(self) -> str:
        """Do what the current page asks (one step); returns the page's kind before acting."""
        s = self.state()
        kind = s["kind"]
        self.kinds.append(kind)
        if kind == "consent":
            self.post("/step", {"step": s["step"], "agree": True})
        elif kind in ("instructions", "intro"):
            self.post("/step", {"step": s["step"]})
        elif kind == "survey":
            self.post("/step", {"step": s["step"], "answers": self.answers(s["items"])})
        elif kind == "play" and s["board"]["your_turn"]:
            b = s["board"]
            action = self.choose(b) if self.choose else b["actions"][0]["id"]
            self.post("/act", {"step": b["step"], "action": action, "seconds": 0.5})
        return kind

    def run(self, until: tuple[str, ...] = ("done", "declined", "screened"), limit: int = 200) -> str:
        """Step until a page of a kind in ``until`` (or a page that waits for others)."""
        for _ in range(limit):
            s = self.state()
            if s["kind"] in until:
                return s["kind"]
            if s["kind"] == "waiting" or (s["kind"] == "play" and not s["board"]["your_turn"]
                                          and s["board"]["status"] == "playing"):  # fmt: skip
                return s["kind"]
            self.step()
        raise AssertionError(f"{self.pid} did not finish: {self.kinds[-10:]}")
