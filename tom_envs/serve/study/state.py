"""The study's state, rebuilt from its journal: participants, their progress, the episodes.

Every change to a study is an event (:mod:`tom_envs.serve.study.journal`) and :class:`Ledger`
applies events and nothing else, in the running server and when the server starts again, so a
restart reaches exactly the state the journal describes. Events (besides ``seq`` and ``t``)::

    {"ev": "study", "name", "version", "digest"}                 the study file run (first event)
    {"ev": "enrolled", "pid", "index", "via", "external"?}       a participant's first visit
    {"ev": "consent", "pid", "agreed"}
    {"ev": "read", "pid", "step"}                                instructions, a game's introduction
    {"ev": "wait", "pid", "step", "key", "deadline"}             entered a waiting room
    {"ev": "timeout", "pid", "step", "fallback"}                 nobody came: fallback (or skipped)
    {"ev": "started", "sid", "members": {pid: seat}, "steps": {pid: step}, "game", "condition",
     "intended", "practice", "seed", "seating": {...}}           an episode began
    {"ev": "move", "sid", "rec"}                                 one decision (the trajectory's step)
    {"ev": "left", "sid", "pid", "why"}                          a person left an episode
    {"ev": "takeover", "sid", "seat", "agent"}                   an agent took a person's seat
    {"ev": "ended", "sid", "status", "summary"}                  an episode ended
    {"ev": "answers", "pid", "step", "answers", "seconds", "attention"}
    {"ev": "skipped", "pid", "step", "why"}
    {"ev": "screened", "pid"} / {"ev": "completed", "pid", "code"}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tom_envs.serve.study.design import Step, plan
from tom_envs.serve.study.spec import Study

__all__ = ["Episode", "Ledger", "Participant"]


@dataclass
class Participant:
    """One participant's progress."""

    pid: str
    index: int
    steps: tuple[Step, ...]
    cursor: int = 0
    status: str = "active"  # active, declined, screened_out, completed
    external: str | None = None
    session: str | None = None
    waiting: dict[str, Any] | None = None
    failures: int = 0
    code: str | None = None
    outcomes: dict[str, str] = field(default_factory=dict)  # step id -> episode status

    @property
    def step(self) -> Step:
        """The current step."""
        return self.steps[min(self.cursor, len(self.steps) - 1)]


@dataclass
class Episode:
    """An episode as the journal records it (moves kept until it ends, to rebuild it)."""

    sid: str
    started: dict[str, Any]
    moves: list[dict[str, Any]] = field(default_factory=list)
    ended: dict[str, Any] | None = None
    members: dict[str, int] = field(default_factory=dict)  # participants still in it -> seat


class Ledger:
    """Participants and episodes from the journal's events (see the module docstring)."""

    def __init__(self, study: Study) -> None:
        self.study = study
        self.participants: dict[str, Participant] = {}
        self.externals: dict[str, str] = {}
        self.episodes: dict[str, Episode] = {}
        self.head: dict[str, Any] | None = None

    def apply(self, ev: Mapping[str, Any]) -> None:
        """Apply one event."""
        getattr(self, f"_on_{ev['ev']}")(ev)

    # ------------------------------------------------------------------ events
    def _on_study(self, ev: Mapping[str, Any]) -> None:
        self.head = dict(ev)

    def _on_enrolled(self, ev: Mapping[str, Any]) -> None:
        p = Participant(ev["pid"], ev["index"], plan(self.study, ev["index"]),
                        external=ev.get("external"))  # fmt: skip
        self.participants[p.pid] = p
        if p.external is not None:
            self.externals[p.external] = p.pid

    def _next(self, pid: str, step: str | None = None) -> Participant:
        p = self.participants[pid]
        if step is None or p.step.id == step:
            p.cursor += 1
        return p

    def _on_consent(self, ev: Mapping[str, Any]) -> None:
        p = self._next(ev["pid"], "consent")
        if not ev["agreed"]:
            p.status = "declined"

    def _on_read(self, ev: Mapping[str, Any]) -> None:
        self._next(ev["pid"], ev["step"])

    def _on_wait(self, ev: Mapping[str, Any]) -> None:
        p = self.participants[ev["pid"]]
        p.waiting = {"step": ev["step"], "key": ev["key"], "deadline": ev["deadline"],
                     "since": ev["t"]}  # fmt: skip

    def _on_timeout(self, ev: Mapping[str, Any]) -> None:
        self.participants[ev["pid"]].waiting = None

    def _on_started(self, ev: Mapping[str, Any]) -> None:
        self.episodes[ev["sid"]] = Episode(ev["sid"], dict(ev), members=dict(ev["members"]))
        for pid in ev["members"]:
            p = self.participants[pid]
            p.session, p.waiting = ev["sid"], None

    def _on_move(self, ev: Mapping[str, Any]) -> None:
        self.episodes[ev["sid"]].moves.append(ev["rec"])

    def _on_left(self, ev: Mapping[str, Any]) -> None:
        e = self.episodes[ev["sid"]]
        self._finish_for(e, ev["pid"], "left")

    def _on_takeover(self, ev: Mapping[str, Any]) -> None:
        e = self.episodes[ev["sid"]]
        e.started.setdefault("takeovers", []).append({"seat": ev["seat"], "agent": ev["agent"],
                                                      "at_step": len(e.moves)})  # fmt: skip

    def _on_ended(self, ev: Mapping[str, Any]) -> None:
        e = self.episodes[ev["sid"]]
        e.ended = dict(ev)
        for pid in list(e.members):
            self._finish_for(e, pid, ev["status"])

    def _finish_for(self, e: Episode, pid: str, status: str) -> None:
        e.members.pop(pid, None)
        p = self.participants[pid]
        step = e.started["steps"][pid]
        p.outcomes[step] = status
        if p.session == e.sid:
            p.session = None
        self._next(pid, step)

    def _on_answers(self, ev: Mapping[str, Any]) -> None:
        p = self._next(ev["pid"], ev["step"])
        p.failures += sum(1 for ok in (ev.get("attention") or {}).values() if not ok)

    def _on_skipped(self, ev: Mapping[str, Any]) -> None:
        p = self._next(ev["pid"], ev["step"])
        p.waiting = None
        p.outcomes[ev["step"]] = "skipped"

    def _on_screened(self, ev: Mapping[str, Any]) -> None:
        self.participants[ev["pid"]].status = "screened_out"

    def _on_completed(self, ev: Mapping[str, Any]) -> None:
        p = self.participants[ev["pid"]]
        p.status, p.code = "completed", ev["code"]

    # ------------------------------------------------------------------ queries
    def live_episodes(self) -> list[Episode]:
        """Episodes started and not ended."""
        return [e for e in self.episodes.values() if e.ended is None]
