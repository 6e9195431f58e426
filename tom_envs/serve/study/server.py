"""The study server: participants go through their plans, people are matched, nothing is lost.

:class:`StudyServer` owns the study's folder (the journal, the secret key, the trajectories) and
everything a participant does goes through it: each change is journaled first
(:meth:`StudyServer.record`, durable before it is acknowledged) and applied by the
:class:`~tom_envs.serve.study.state.Ledger`. The routes (:mod:`tom_envs.serve.study.routes`) only
authenticate and call it.

**Participants** are known by an id and a key, ``HMAC(secret, id)``: a link carries both
(``/p/<id>#k=<key>``; the key is in the fragment, which browsers never send to a server or in a
``Referer``). Keys are never stored; an id alone opens nothing. Operators make links in advance
(``tom-envs study links``) or let a recruitment platform send people to ``/join?ext=<their id>``
(``--open``), which enrols each external id once.

**Episodes** with agents start at once. An episode with other people waits in a waiting room keyed
by (game, condition, episode index): the first people present with the same key are matched, in
arrival order into the condition's seats; after ``wait_seconds`` of waiting while present, the
participant plays the condition's ``fallback`` instead (recorded: ``intended`` and ``condition``
differ), or the episode is skipped when there is none. A person absent from a game with other
people for ``leave_grace_seconds`` (tab closed, connection lost, or no decision on their turn for
``idle_seconds``) has left: the episode ends for everyone (``on_leave = "end"``) or an agent takes
the seat (``on_leave = AGENT``), recorded from that decision on. Alone with agents, a person may
come back within ``idle_seconds``; after that the episode is recorded as abandoned.

**Restarts**: the journal is read again; episodes under way are rebuilt by replaying their
journaled decisions (:meth:`tom_envs.serve.session.Session.replay`) and continue; one that cannot
be rebuilt is recorded as abandoned with the reason. Nothing is dropped silently.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import hashlib
import hmac
import os
import re
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tom_envs.driver import FailurePolicy
from tom_envs.serve.session import PARTNER_LEFT, PLAYING, ReplayError, Session, SessionError
from tom_envs.serve.study.check import Seating, check_study, partner_spec
from tom_envs.serve.study.design import Step
from tom_envs.serve.study.journal import Journal
from tom_envs.serve.study.spec import Study, StudyError
from tom_envs.serve.study.state import Ledger, Participant

__all__ = ["PID", "Refused", "StudyServer", "participant_key", "study_secret"]

#: Participant ids: what links and ``/join`` make, and all a URL may hold.
PID = re.compile(r"[a-z0-9]{6,32}")
#: Seconds after its last request that a participant without a websocket still counts as present.
PRESENCE_SECONDS = 10.0


class Refused(ValueError):
    """A participant's request the server refuses: HTTP ``status`` and a message."""

    def __init__(self, message: str, status: int = 409) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Live:
    """An episode being played: its session, members (participant -> seat) and their steps."""

    session: Session
    members: dict[str, int]
    steps: dict[str, str]
    game: str
    condition: str
    on_leave: str
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    unsynced: list[Future[int]] = field(default_factory=list)
    cache: dict[int, tuple[int, dict[str, Any]]] = field(default_factory=dict)
    notice: dict[str, str] = field(default_factory=dict)


class StudyServer:
    """A study being run (see the module docstring).

    Args:
        study: the study.
        folder: the study's folder (journal, secret key, trajectories).
        presets: the operator's named partners ``{name: agent spec}``.
        max_sessions: episodes played at once; more wait (their page says the server is busy).
        max_participants: enrolments accepted (``None``: no limit).
        open_enrollment: whether ``/join`` enrols people sent by a platform (``--open``).
        policy: the partners' failure policy.
        clock, wall: the monotonic and wall clocks (tests drive them).
        fsync, write: passed to the :class:`~tom_envs.serve.study.journal.Journal`.
    """

    def __init__(self, study: Study, folder: str | Path, presets: Mapping[str, str] | None = None,
                 *, max_sessions: int = 100, max_participants: int | None = None,
                 open_enrollment: bool = False,
                 policy: FailurePolicy | None = None, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time, fsync: bool = True,
                 write: Callable[[int, bytes], int] = os.write) -> None:  # fmt: skip
        self.study = study
        self.folder = Path(folder)
        self.presets = dict(presets or {})
        self.seatings: dict[tuple[str, str], Seating] = check_study(study, self.presets)
        self.digest = hashlib.sha256(study.source.encode()).hexdigest()
        self.max_sessions, self.max_participants = max_sessions, max_participants
        self.open_enrollment = open_enrollment
        self.policy = policy or FailurePolicy()
        self.clock, self.wall = clock, wall
        self.folder.mkdir(parents=True, exist_ok=True)
        self.secret = study_secret(self.folder / "secret.key")
        self.journal = Journal(self.folder / "journal.jsonl", fsync=fsync, clock=wall, write=write)
        self.ledger = Ledger(study)
        self.live: dict[str, Live] = {}
        self.listeners: dict[str, set[asyncio.Queue[None]]] = {}
        self.sockets: dict[str, int] = {}
        self.seen: dict[str, float] = {}
        self.shown: dict[str, tuple[str, float]] = {}
        self.flash: dict[str, str] = {}
        self._enrol_lock = asyncio.Lock()
        self._starting: set[str] = set()  # participants whose episode is being set up

    # ------------------------------------------------------------------ start and stop
    def start(self) -> list[str]:
        """Read the journal, check that it belongs to this study file, rebuild the episodes under
        way; returns what was restored or recorded, in words."""
        events = self.journal.open()
        for ev in events:
            self.ledger.apply(ev)
        head = self.ledger.head
        if head is None:
            copy = self.folder / "study.toml"  # the file as run, beside its journal
            copy.write_text(self.study.source, encoding="utf-8")
            self._append({"ev": "study", "name": self.study.name, "version": self.study.version,
                          "digest": self.digest}).result()  # fmt: skip
        elif head["digest"] != self.digest:
            self.journal.close()
            raise StudyError(f"{self.folder}: the journal belongs to another version of the study "
                             f"file ({head['name']} v{head['version']}, digest "
                             f"{head['digest'][:12]}, this file {self.digest[:12]}); run a changed "
                             "study in a new folder (--data) so that no record mixes two "
                             "versions")  # fmt: skip
        return self._restore()

    def _restore(self) -> list[str]:
        notes = []
        now = self.clock()
        for e in self.ledger.live_episodes():
            try:
                live = self._rebuild(e.sid, e.started, e.moves)
            except (ReplayError, ValueError, KeyError, TypeError, ImportError, OSError) as exc:
                reason = f"could not resume after a restart: {exc}"
                ev = {"ev": "ended", "sid": e.sid, "status": "abandoned",
                      "summary": {"failure": reason}}  # fmt: skip
                self._append(ev).result()
                notes.append(f"episode {e.sid}: {reason}")
                continue
            for pid in live.members:
                self.seen[pid] = now
            self.live[e.sid] = live
            notes.append(f"episode {e.sid}: resumed at decision {len(e.moves)}")
        # people who were waiting wait again when they come back (a deadline passed while
        # the server was down starts their fallback then, not for an empty page)
        return notes

    def close(self, grace: float = 30.0) -> list[str]:
        """Stop: write everything waiting for the disk (episodes under way stay in the journal and
        resume at the next start); returns where unwritten events were rescued, if any."""
        return self.journal.close(grace)

    # ------------------------------------------------------------------ journal
    def _append(self, ev: dict[str, Any]) -> Future[int]:
        fut = self.journal.append(ev)
        if ev["ev"] != "move":
            self.ledger.apply({**ev, "seq": -1, "t": self.wall()})
        return fut

    async def record(self, ev: dict[str, Any]) -> None:
        """Journal ``ev``, apply it, and wait until it is on disk."""
        await asyncio.wrap_future(self._append(ev))

    def check_room(self) -> None:
        """:class:`Refused` (503) while the disk refuses the journal and much is waiting: nothing
        new starts that could not be kept."""
        if self.journal.full:
            raise Refused(f"saving is paused ({self.journal.error}); please try again in a minute",
                          503)  # fmt: skip

    # ------------------------------------------------------------------ participants
    def key(self, pid: str) -> str:
        """A participant's key (:func:`participant_key`)."""
        return participant_key(self.secret, pid)

    def link(self, pid: str, base: str = "") -> str:
        """A participant's link."""
        return f"{base}/p/{pid}#k={self.key(pid)}"

    def code(self, pid: str) -> str:
        """A participant's completion code (the study's, or their own with ``code = "unique"``)."""
        if self.study.completion_code != "unique":
            return self.study.completion_code
        mac = hmac.new(self.secret, b"code:" + pid.encode(), hashlib.sha256).hexdigest()
        return mac[:10].upper()

    async def visit(self, pid: str, key: object) -> Participant:
        """The participant whose link this is (enrolled at their first visit); :class:`Refused`
        (404) for a wrong key, the same answer as for an unknown id."""
        if not isinstance(key, str) or not PID.fullmatch(pid) or not hmac.compare_digest(
            key.encode(), self.key(pid).encode()
        ):
            raise Refused("no such participant, or the link is incomplete", 404)
        p = self.ledger.participants.get(pid)
        if p is None:
            self.check_room()
            p = await self._enrol(pid, "link")
        self.seen[pid] = self.clock()
        return p

    async def join(self, external: str) -> tuple[str, str]:
        """Enrol a participant sent by a recruitment platform under ``external`` (once: the same
        external id gets the same participant); ``(id, key)``."""
        if not external or len(external) > 200 or not external.isprintable():
            raise Refused("the link must carry your platform id (1 to 200 characters)", 400)
        async with self._enrol_lock:
            pid = self.ledger.externals.get(external)
            if pid is None:
                pid = secrets.token_hex(6)
                await self._enrol(pid, "join", external, locked=True)
        return pid, self.key(pid)

    async def _enrol(self, pid: str, via: str, external: str | None = None,
                     locked: bool = False) -> Participant:  # fmt: skip
        if not locked:
            async with self._enrol_lock:
                return await self._enrol(pid, via, external, locked=True)
        if pid in self.ledger.participants:
            return self.ledger.participants[pid]
        n = len(self.ledger.participants)
        if self.max_participants is not None and n >= self.max_participants:
            raise Refused("this study is full: thank you for your interest", 403)
        ev: dict[str, Any] = {"ev": "enrolled", "pid": pid, "index": n, "via": via}
        if external is not None:
            ev["external"] = external
        await self.record(ev)
        return self.ledger.participants[pid]

    def present(self, pid: str) -> bool:
        """Whether a participant is here: a websocket open, or a request in the last seconds."""
        if self.sockets.get(pid, 0) > 0:
            return True
        return self.clock() - self.seen.get(pid, -1e18) < PRESENCE_SECONDS

    def absent_for(self, pid: str) -> float:
        """Seconds since the participant was last present (0 when present)."""
        if self.present(pid):
            return 0.0
        return self.clock() - self.seen.get(pid, -1e18) - PRESENCE_SECONDS

    def connect(self, pid: str, delta: int) -> None:
        """A websocket of ``pid`` opened (+1) or closed (-1)."""
        self.sockets[pid] = max(0, self.sockets.get(pid, 0) + delta)
        self.seen[pid] = self.clock()

    def listen(self, pid: str, queue: asyncio.Queue[None], on: bool) -> None:
        """Register (or drop) a queue told about every change of ``pid``'s page."""
        qs = self.listeners.setdefault(pid, set())
        if on:
            qs.add(queue)
        else:
            qs.discard(queue)

    def notify(self, pids: Sequence[str]) -> None:
        """Tell the pages of ``pids`` that something changed."""
        for pid in pids:
            for q in self.listeners.get(pid, ()):
                if q.empty():
                    q.put_nowait(None)

    # ------------------------------------------------------------------ episodes
    def seating(self, step: Step, condition: str | None = None) -> Seating:
        """The seating of an episode step (in ``condition``, default the step's)."""
        return self.seatings[(step.game, condition or step.condition)]

    def seed(self, step: Step) -> int:
        """The episode seed of a step (``games.seed + i``, practice ``practice.seed + i``)."""
        entry = self.study.game(step.game)
        if step.practice and entry.practice is not None:
            return entry.practice.seed + step.index
        return entry.seed + step.index

    async def begin(self, p: Participant) -> None:
        """Start the participant's episode step: at once with agents, else the waiting room."""
        step = p.step
        if (p.session is not None or p.waiting is not None or step.kind != "episode"
                or p.pid in self._starting):  # fmt: skip
            return
        human = not step.practice and self.study.condition(step.condition).partner.kind == "human"
        if not human:
            await self._start([p.pid], step.condition, step.condition)
            return
        wait = self.study.condition(step.condition).wait_seconds
        key = f"{step.game}:{step.condition}:{step.index}"
        await self.record({"ev": "wait", "pid": p.pid, "step": step.id, "key": key,
                           "deadline": round(self.wall() + wait, 3)})  # fmt: skip
        await self.match(key)

    async def match(self, key: str) -> None:
        """Start an episode for the first people present who wait under ``key``, if enough."""
        waiting = sorted((p for p in self.ledger.participants.values()
                          if p.waiting is not None and p.waiting["key"] == key
                          and p.pid not in self._starting and self.present(p.pid)),
                         key=lambda p: p.waiting["since"])  # type: ignore[index]
        if not waiting:
            return
        step = waiting[0].step
        need = len(self.seating(step).people)
        if len(waiting) >= need:
            await self._start([p.pid for p in waiting[:need]], step.condition, step.condition)

    async def _start(self, pids: list[str], condition: str, intended: str) -> None:
        """Start an episode of the current step of ``pids`` (the same step id for each). The
        participants are marked as starting before the first ``await``, so no concurrent request
        or tick can put one of them in a second episode."""
        if any(pid in self._starting for pid in pids):
            return
        self._starting.update(pids)
        try:
            await self._start_marked(pids, condition, intended)
        finally:
            self._starting.difference_update(pids)

    async def _start_marked(self, pids: list[str], condition: str, intended: str) -> None:
        if len(self.live) >= self.max_sessions:
            for pid in pids:
                self.flash[pid] = "The server is busy: your game starts as soon as a place is free."
            return
        first = self.ledger.participants[pids[0]]
        step = first.step
        s = self.seating(step, condition)
        members = {pid: s.people[i] for i, pid in enumerate(pids)}
        steps = {pid: self.ledger.participants[pid].step.id for pid in pids}
        sid = secrets.token_hex(8)
        started = {"ev": "started", "sid": sid, "members": members, "steps": steps,
                   "game": step.game, "condition": condition, "intended": intended,
                   "practice": step.practice, "seed": self.seed(step),
                   "seating": dataclasses.asdict(s)}  # fmt: skip
        live = await asyncio.to_thread(self._rebuild, sid, started, [])
        await self.record(started)
        self.live[sid] = live
        await self.advance(live)

    def _rebuild(self, sid: str, started: Mapping[str, Any], moves: Sequence[Mapping[str, Any]]) -> Live:
        """A session from its ``started`` event, replaying ``moves`` (empty for a new one)."""
        s = started["seating"]
        members: dict[str, int] = dict(started["members"])
        by_seat = {seat: pid for pid, seat in members.items()}
        humans = sorted(by_seat)
        session = Session(s["game"], humans, list(s["partners"]), started["seed"], s["kwargs"],
                          self.folder / "trajectories", [by_seat[h] for h in humans],
                          next(iter(started["steps"].values())), self.policy,
                          list(s["trusted"]), clock=self.clock)  # fmt: skip
        session.id = sid
        takeovers = {int(t["at_step"]): (lambda t=t: self._takeover_seat(
            session, int(t["seat"]), str(t["agent"]))) for t in started.get("takeovers", [])}  # fmt: skip
        if moves or takeovers:
            session.replay(moves, takeovers)
        cond = started["condition"]
        on_leave = "end" if started["practice"] else self.study.condition(cond).on_leave
        live = Live(session, {p: members[p] for p in members}, dict(started["steps"]),
                    started["game"], cond, on_leave)  # fmt: skip
        session.on_record = lambda seat, rec: live.unsynced.append(
            self.journal.append({"ev": "move", "sid": sid, "rec": rec}, force=True))  # fmt: skip
        return live

    async def _sync(self, live: Live) -> None:
        pending, live.unsynced = live.unsynced, []
        if pending:
            await asyncio.gather(*(asyncio.wrap_future(f) for f in pending))

    async def advance(self, live: Live) -> None:
        """Partners act until a person must act; journal; end the episode if it is over."""
        async with live.lock:
            await asyncio.to_thread(live.session.advance)
        await self._after(live)

    async def _after(self, live: Live) -> None:
        """Wait until every decision made is on disk; end the episode if it is over; tell the
        members' pages."""
        await self._sync(live)
        if live.session.status != PLAYING:
            await self._ended(live)
        self.notify(list(live.members))

    async def _ended(self, live: Live) -> None:
        s = live.session
        sid = s.id
        if sid not in self.live:
            return
        del self.live[sid]
        ep = s.episode
        summary = {"status": ep.status, "failure": ep.failure, "returns": ep.returns,
                   "length": ep.length, "invalid": ep.invalid, "decisions": ep.decisions,
                   "fallbacks": ep.fallbacks, "failures": ep.failures, "metrics": ep.metrics,
                   "wall_time_s": round(ep.wall_time_s, 3), "members": ep.members,
                   "agents": ep.agents, "config": ep.config, "config_hash": ep.config_hash}  # fmt: skip
        pids = list(live.members)
        await self.record({"ev": "ended", "sid": sid, "status": s.status, "summary": summary})
        for pid, seat in live.members.items():  # the next page says how the game ended
            told = self.flash.get(pid, "")
            self.flash[pid] = " ".join(x for x in (told, outcome(s, seat)) if x)
        self.notify(pids)

    async def act(self, pid: str, decision: object, action: object, message: object,
                  client_seconds: object = None) -> None:  # fmt: skip
        """The participant's move in their episode (durable before this returns)."""
        self.check_room()
        p = self.ledger.participants[pid]
        live = self.live.get(p.session or "")
        if live is None or pid not in live.members:
            raise Refused("no game of yours is being played now")
        if isinstance(decision, bool) or not isinstance(decision, int) or isinstance(action, bool) \
                or not isinstance(action, int):  # fmt: skip
            raise Refused("step and action must be whole numbers", 400)
        if message is not None and (not isinstance(message, str) or len(message) > 2000):
            raise Refused("a message is text of at most 2000 characters", 400)
        rt = client_seconds if isinstance(client_seconds, (int, float)) and not isinstance(
            client_seconds, bool) and 0 <= client_seconds < 86400 else None  # fmt: skip
        seat = live.members[pid]
        async with live.lock:  # one trip to a worker: the move, then the partners' answers
            try:
                await asyncio.to_thread(_apply_and_advance, live.session, seat, decision, action,
                                        message or None, rt)  # fmt: skip
            except SessionError as exc:
                raise Refused(str(exc)) from None
        await self._after(live)

    # ------------------------------------------------------------------ leaving and waiting
    async def tick(self) -> None:
        """Waiting rooms' deadlines, people who left, idle episodes (every second or so)."""
        for p in list(self.ledger.participants.values()):
            w = p.waiting
            if w is not None and self.present(p.pid):
                if self.wall() >= w["deadline"]:
                    await self._timeout(p)
                else:
                    await self.match(w["key"])
        for live in list(self.live.values()):
            for pid, seat in list(live.members.items()):
                why = self._gone(live, pid, seat)
                if why is not None:
                    await self.leave(live, pid, why)

    def _gone(self, live: Live, pid: str, seat: int) -> str | None:
        """Why ``pid`` has left ``live`` (``None``: they have not)."""
        s = live.session
        alone = len(live.members) == 1 and len(s.humans) == 1
        limit = self.study.idle_seconds if alone else self.study.leave_grace_seconds
        if self.absent_for(pid) >= limit:
            return "absent"
        shown = s.shown_since(seat)
        if shown is not None and self.clock() - shown >= self.study.idle_seconds:
            return "idle"
        return None

    async def leave(self, live: Live, pid: str, why: str) -> None:
        """``pid`` left ``live``: record it; the episode ends or an agent takes the seat."""
        seat = live.members[pid]
        await self.record({"ev": "left", "sid": live.session.id, "pid": pid, "why": why})
        del live.members[pid]
        names = live.session.spec.name
        if not live.members:
            async with live.lock:
                await asyncio.to_thread(live.session.abandon)
            await self._ended(live)
            return
        if live.on_leave == "end":
            for other in live.members:
                self.flash[other] = "Your partner left, so this game has ended."
            async with live.lock:
                await asyncio.to_thread(live.session.abandon, PARTNER_LEFT)
            await self._ended(live)
            return
        spec = self._leave_spec(live)
        async with live.lock:
            await asyncio.to_thread(self._takeover_seat, live.session, seat, spec)
        await self.record({"ev": "takeover", "sid": live.session.id, "seat": seat, "agent": spec})
        for other in live.members:
            live.notice[other] = f"A player left {names}; a computer program now plays their seat."
        await self.advance(live)

    def _leave_spec(self, live: Live) -> str:
        from tom_envs.serve.study.check import _agent_partner

        partner = _agent_partner(live.on_leave, "on_leave")
        return partner_spec(partner, self.presets, live.session.spec.name, "on_leave")[0]

    def _takeover_seat(self, session: Session, seat: int, spec: str) -> None:
        from tom_envs.agents import make_agent

        trusted = spec in self.presets.values() or ":preset=" in spec
        session.takeover(seat, make_agent(spec, session.spec, session.bundle, trusted=trusted), spec)

    async def _timeout(self, p: Participant) -> None:
        step = p.step
        fallback = self.study.condition(step.condition).fallback
        await self.record({"ev": "timeout", "pid": p.pid, "step": step.id, "fallback": fallback})
        if fallback is None:
            self.flash[p.pid] = "Nobody else came in time, so this game is skipped."
            await self.record({"ev": "skipped", "pid": p.pid, "step": step.id, "why": "no partner"})
        else:
            self.flash[p.pid] = "Nobody else came in time: you play with a computer partner."
            await self._start([p.pid], fallback, step.condition)
        self.notify([p.pid])


def _apply_and_advance(session: Session, seat: int, decision: int, action: int,
                       message: str | None, rt: float | None) -> None:  # fmt: skip
    """A person's move, then the partners' (each decision journaled as it is made)."""
    session.apply(seat, decision, action, message, rt)
    session.advance()


def outcome(session: Session, seat: int) -> str:
    """How the game ended, in the game's words, for the person at ``seat``."""
    from tom_envs.serve.boards import Ctx, board_for

    module = board_for(session.spec)
    ctx = Ctx(session.bundle, session.view(seat), seat, list(module.seat_names(session.bundle)))
    return str(module.outcome(ctx))


def participant_key(secret: bytes, pid: str) -> str:
    """A participant's key: ``HMAC-SHA256(secret, "key:" + id)``, 32 URL-safe characters (192
    bits): unguessable without the study's secret, never stored."""
    mac = hmac.new(secret, b"key:" + pid.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).decode()[:32]


def study_secret(path: Path) -> bytes:
    """The study's secret key (32 random bytes, created once, readable by the owner only)."""
    if path.exists():
        data = path.read_bytes()
        if len(data) >= 32:
            return data
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        data = secrets.token_bytes(32)
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    return data
