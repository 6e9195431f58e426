"""People playing seats of one game beside agents: the state machine behind the web app.

A :class:`Session` owns an AEC env (the same rules and validation as every other use of the
suite), the partner agents, and the record of the episode. One or more seats are played by people
(``humans``); the others by agents, which act through the suite's one episode driver
(:class:`~tom_envs.driver.EpisodeDriver`, the people's seats external) with the same failure policy
as ``tom-envs run`` (a partner that raises or answers illegally is recorded as a fallback and
replaced by a seeded random legal action). A session is recorded as the suite's standard
trajectory, keyed by its full configuration: each person's decisions are marked ``"human": true``
with the observation text they were shown and their response time (``latency_s``: from the moment
the decision was shown to the moment it reached the server), and each person's seat has the agent
spec ``"human"``.

Every submission carries the decision index it answers (``step``, counted per seat); a stale or
duplicate one is rejected with a message and changes nothing. In simultaneous-move games a person
may choose before the seats asked earlier in the same joint step: the choice is held (it is checked
against the seat's legal actions, which cannot change within the joint step) and applied when the
seat's turn comes.

Two ways to drive a session: :meth:`Session.submit` applies a person's move and lets the partners
act (the researcher console), or :meth:`Session.apply` then :meth:`Session.advance` (the study
server: the move is written to the journal and acknowledged before the partners, which may be slow
LLMs, act). Every applied decision is passed to ``on_record`` as it happens; the episode's end to
``on_finish``. :meth:`Session.replay` rebuilds a session from such records after a restart.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import importlib
import re
import secrets
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tom_envs.core.agents import Agent, AgentAction, AgentFailure, agent_config
from tom_envs.core.game import IllegalActionError, agent_index
from tom_envs.driver import EpisodeDriver, FailurePolicy, episode_info, is_int
from tom_envs.identity import config_hash, episode_config
from tom_envs.registration import GameSpec, game_spec
from tom_envs.runner import Episode

HUMAN = "human"
#: Statuses of a session: being played, and the ways it ends.
PLAYING, DONE, ABANDONED, PARTNER_LEFT = "playing", "done", "abandoned", "partner_left"
#: Agent kinds whose decisions are not asked again when a session is rebuilt after a restart
#: (each would be a new paid call): their journaled moves are replayed, their memory starts empty.
NOT_REPLAYED = ("llm",)

_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}")


def safe_name(text: str) -> str:
    """A file-name-safe form of any text (participant ids, task names): ASCII letters, digits,
    ``_`` and ``-``, at most 51 characters. Names already safe (``p7``) stay as they are; any other
    (unicode, ``/``, ``%00``, 300 characters) becomes its safe characters plus a hash of the whole,
    so distinct ids never share a file."""
    if _SAFE.fullmatch(text):
        return text
    stem = re.sub(r"[^A-Za-z0-9_-]+", "_", text).strip("_-")[:30] or "id"
    return f"{stem}-{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"


class SessionError(ValueError):
    """A submission that cannot be applied (stale, duplicate, illegal, or the episode is over)."""


class ReplayError(RuntimeError):
    """Journaled moves that the current engine does not reproduce (the rules or code changed)."""


def board_module(spec: GameSpec) -> Any:
    """The game's ``board.py`` (``board_svg(bundle, view)``)."""
    return importlib.import_module(spec.module.rsplit(".", 1)[0] + ".board")


def replayed(spec: str) -> bool:
    """Whether an agent of this spec is asked again during :meth:`Session.replay` (bots: yes;
    LLM agents: no, see :data:`NOT_REPLAYED`)."""
    return spec.split(":", 1)[0] not in NOT_REPLAYED


@dataclasses.dataclass
class _Held:
    """A person's choice made before their seat's turn in a simultaneous joint step."""

    action: int
    message: str | None
    record: dict[str, Any]


class Session:
    """People in ``humans`` seats of a game, agents in the others, played by the episode driver.

    Args:
        game: registered game name or id.
        seat: the person's seat, or the seats played by people (human-human games).
        partners: one agent spec (or agent object) per *other* seat, in seat order.
        seed: the episode seed.
        env_kwargs: game keyword arguments.
        out_dir: where the trajectory is written when the session ends (``None``: not written).
        participant: a participant id, recorded in the trajectory (or one per human seat).
        task: a label recorded in the trajectory (the study's step).
        policy: the failure policy for the partners (default: the runner's).
        trusted: per partner, whether its spec is the operator's (a ``--partner`` preset), which
            may name code, hosts and files; every other spec is built under the rules for a
            file or a request (:mod:`tom_envs.core.trust`). Default: none is.
        on_record: called with ``(seat, record)`` for every decision as it is applied.
        on_finish: called with the finished :class:`~tom_envs.runner.Episode`.
        clock: the monotonic clock response times are measured with.
    """

    def __init__(
        self,
        game: str,
        seat: int | Sequence[int],
        partners: Sequence[str | Agent],
        seed: int = 0,
        env_kwargs: Mapping[str, Any] | None = None,
        out_dir: str | Path | None = None,
        participant: str | Sequence[str | None] | None = None,
        task: str | None = None,
        policy: FailurePolicy | None = None,
        trusted: Sequence[bool] | None = None,
        *,
        on_record: Callable[[int, dict[str, Any]], None] | None = None,
        on_finish: Callable[[Episode], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        base = game_spec(game)
        self.spec = dataclasses.replace(base, kwargs={**base.kwargs, **(env_kwargs or {})})
        self.env_kwargs = dict(env_kwargs or {})
        env = self.spec.load().raw_env(**self.spec.kwargs)
        self.bundle, self.game = env.bundle, env.game
        n = self.game.num_players
        self.humans: tuple[int, ...] = (seat,) if isinstance(seat, int) else tuple(seat)
        self._check_seats(n, partners)
        self.agents: dict[int, Agent] = {}
        self.specs: dict[int, str] = dict.fromkeys(self.humans, HUMAN)
        self._seat_partners(partners, trusted)
        self._lock = threading.RLock()  # apply, advance, abandon and shutdown come from threads
        self.id = secrets.token_hex(8)
        #: each person's seat secret (the console's requests carry it)
        self.tokens = {s: secrets.token_urlsafe(24) for s in self.humans}
        self.seed, self.task = seed, task
        self.participants = self._participants(participant)
        self.out_dir = Path(out_dir) if out_dir is not None else None
        self.status, self.error = PLAYING, None
        self.clock = clock
        self.last_seen = clock()
        self.on_record, self.on_finish = on_record, on_finish
        self.driver = EpisodeDriver(self.spec, [self.agents.get(s) for s in range(n)], seed,
                                    self.env_kwargs, env=env, policy=policy)  # fmt: skip
        self.env = self.driver.env
        self._episode: Episode | None = None
        self.steps: dict[int, int] = dict.fromkeys(self.humans, 0)  # next decision index per seat
        self.version = 0  # bumped by every change a page must show
        self._held: dict[int, _Held] = {}
        self._shown: dict[int, float] = {}  # when each person's current decision was shown
        self.takeovers: list[dict[str, Any]] = []
        self.resumes: list[dict[str, Any]] = []
        self.driver.start()

    # ------------------------------------------------------------------ construction
    def _check_seats(self, n: int, partners: Sequence[str | Agent]) -> None:
        name = self.spec.name
        if not self.humans or len(set(self.humans)) != len(self.humans):
            raise ValueError(f"the people's seats must be distinct, got {list(self.humans)}")
        for s in self.humans:
            if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < n:
                raise ValueError(f"{name} has seats 0..{n - 1}, got {s!r}")
        if len(partners) != n - len(self.humans):
            raise ValueError(f"{name} needs {n - len(self.humans)} partners, got {len(partners)}")

    def _seat_partners(self, partners: Sequence[str | Agent], trusted: Sequence[bool] | None) -> None:
        from tom_envs.agents import make_agent

        trust = list(trusted) if trusted is not None else [False] * len(partners)
        if len(trust) != len(partners) or not all(t is True or t is False for t in trust):
            raise TypeError(f"trusted must hold one True/False per partner, got {trusted!r}")
        others = [s for s in range(self.game.num_players) if s not in self.humans]
        for s, p, t in zip(others, partners, trust, strict=True):
            self.agents[s] = (make_agent(p, self.spec, self.bundle, trusted=t)
                              if isinstance(p, str) else p)  # fmt: skip
            self.specs[s] = p if isinstance(p, str) else str(getattr(p, "name", type(p).__name__))

    def _participants(self, participant: str | Sequence[str | None] | None) -> dict[int, str]:
        if participant is None:
            return {}
        ids = [participant] * len(self.humans) if isinstance(participant, str) else participant
        if len(ids) != len(self.humans):
            raise ValueError(f"one participant id per person's seat, got {list(ids)}")
        return {s: p for s, p in zip(self.humans, ids, strict=True) if p is not None}

    # ------------------------------------------------------------------ compatibility
    @property
    def seat(self) -> int:
        """The (first) person's seat."""
        return self.humans[0]

    @property
    def token(self) -> str:
        """The (first) person's seat secret."""
        return self.tokens[self.humans[0]]

    @property
    def step(self) -> int:
        """The (first) person's next decision index."""
        return self.steps[self.humans[0]]

    @property
    def participant(self) -> str | None:
        """The (first) person's participant id."""
        return self.participants.get(self.humans[0])

    @property
    def human_agent(self) -> str:
        """The (first) person's agent name (``player_k``)."""
        return f"player_{self.humans[0]}"

    @property
    def lock(self) -> threading.RLock:
        """The session's lock (hold it to read a consistent state from another thread)."""
        return self._lock

    def shown_since(self, seat: int) -> float | None:
        """When the person at ``seat`` was shown the decision they have not made yet."""
        return self._shown.get(seat)

    def seat_of_token(self, token: object) -> int | None:
        """The seat whose secret ``token`` is (constant-time comparison), or ``None``."""
        if not isinstance(token, str):
            return None
        found = None
        for s, t in self.tokens.items():
            if hmac.compare_digest(token.encode(), t.encode()):
                found = s
        return found

    def check_token(self, token: object) -> bool:
        """Whether ``token`` is a person's seat secret in this session."""
        return self.seat_of_token(token) is not None

    # ------------------------------------------------------------------ turns
    def must_act(self, seat: int) -> bool:
        """Whether the person at ``seat`` has a decision to make now (not yet submitted)."""
        if self.status != PLAYING or seat in self._held or seat not in self.steps:
            return False
        return bool(self.env.observe(f"player_{seat}")["action_mask"].any())

    def waiting_for(self) -> list[int]:
        """The seats whose decision the episode is waiting for now."""
        if self.status != PLAYING:
            return []
        agent = self.env.agent_selection
        seats = [s for s in self.humans if self.must_act(s)]
        current = agent_index(agent)
        return seats if seats else [current]

    def _mark_shown(self) -> None:
        now = self.clock()
        for s in self.humans:
            if self.must_act(s):
                self._shown.setdefault(s, now)
            else:
                self._shown.pop(s, None)

    # ------------------------------------------------------------------ moves
    def apply(self, seat: int, step: int, action: int, message: str | None = None,
              client_latency: float | None = None) -> None:  # fmt: skip
        """Apply (or hold) the person's action for decision ``step`` of ``seat``; raises
        :class:`SessionError` if it cannot be applied (the state is then unchanged). Partners do
        not act here: call :meth:`advance`."""
        with self._lock:
            self._apply(seat, step, action, message, client_latency)

    def _apply(self, seat: int, step: int, action: int, message: str | None,
               client_latency: float | None) -> None:  # fmt: skip
        self.last_seen = self.clock()
        if self.status != PLAYING:
            raise SessionError(f"the episode is {self.status.replace('_', ' ')}: no more actions")
        if seat not in self.steps:
            raise SessionError(f"seat {seat} is not played by a person here")
        if step != self.steps[seat]:
            raise SessionError(f"stale or duplicate submission for decision {step}; the current "
                               f"decision is {self.steps[seat]}")  # fmt: skip
        if not self.must_act(seat):
            raise SessionError("it is not your turn")
        view = self.env.view(f"player_{seat}")
        if not is_int(action) or action not in view.legal_actions:
            raise SessionError(f"action {action!r} is not legal now")
        if message and not self.game.tags.communication:
            raise SessionError(f"{self.spec.name} has no chat")
        record = self._human_record(seat, view, client_latency)
        held = _Held(int(action), message or None, record)
        if self.env.agent_selection == f"player_{seat}":
            self._play(seat, held)
        else:  # a simultaneous joint step: applied when this seat's turn comes
            self._held[seat] = held
        self.steps[seat] += 1
        self.version += 1
        self._drain_held()
        self._mark_shown()

    def _human_record(self, seat: int, view: Any, client_latency: float | None) -> dict[str, Any]:
        shown = self._shown.get(seat, self.last_seen)
        record: dict[str, Any] = {
            "human": True,
            "observation_text": self.bundle.text.observation_text(view),
            "latency_s": round(max(0.0, self.last_seen - shown), 3),
        }
        if client_latency is not None:
            record["client_latency_s"] = round(float(client_latency), 3)
        if seat in self.participants:
            record["participant"] = self.participants[seat]
        return record

    def _play(self, seat: int, held: _Held) -> None:
        agent = f"player_{seat}"
        try:
            rec = self.driver.play(agent, held.action, held.message, held.record)
        except (IllegalActionError, ValueError) as exc:  # e.g. a malformed message: nothing applied
            raise SessionError(str(exc)) from None
        self._emit(seat, rec)

    def _emit(self, seat: int, record: dict[str, Any]) -> None:
        if self.on_record is not None:
            self.on_record(seat, record)

    def _drain_held(self) -> None:
        """Apply held choices whose seat is now the one to act."""
        while self.status == PLAYING and not self.driver.over():
            seat = agent_index(self.env.agent_selection)
            held = self._held.pop(seat, None)
            if held is None:
                return
            self._play(seat, held)

    def advance(self) -> bool:
        """Let partners act (and dead seats pass) until a person must act or the episode ends;
        returns whether anything changed. Each partner move is reported (``on_record``) before
        the next one is asked."""
        with self._lock:
            if self.status != PLAYING:
                return False
            d, before = self.driver, len(self.driver.steps)
            while True:
                n = len(d.steps)
                agent = d.advance_until(_one_move())  # at most one partner move per call
                for rec in d.steps[n:]:
                    self._emit(agent_index(rec["agent"]), rec)
                if agent is None:
                    self._finish(DONE)
                    return True
                seat = agent_index(agent)
                if seat in self.humans:
                    if seat not in self._held:
                        break
                    self._play(seat, self._held.pop(seat))
            changed = len(d.steps) != before
            if changed:
                self.version += 1
            self._mark_shown()
            return changed

    def submit(self, step: int, action: int, message: str | None = None,
               seat: int | None = None) -> dict[str, Any]:  # fmt: skip
        """The console's move: :meth:`apply` then :meth:`advance`; the seat's console payload."""
        seat = self.humans[0] if seat is None else seat
        with self._lock:
            self._apply(seat, step, action, message, None)
            self.advance()
        return self.payload(seat)

    # ------------------------------------------------------------------ ending
    def abandon(self, status: str = ABANDONED) -> None:
        """Record the episode as ended before its end (the person left): ``status``."""
        with self._lock:
            self._finish(status)

    def takeover(self, seat: int, agent: Agent, spec: str) -> None:
        """An agent plays ``seat`` from now on (its person left a human-human game): recorded."""
        with self._lock:
            if self.status != PLAYING or seat not in self.humans:
                return
            shape = tuple(int(x) for x in self.env.bundle.encoder.observation_shape)
            agent.reset(episode_info(self.spec, self.game, seat, self.seed,
                                     self.driver.resolved_kwargs, shape))  # fmt: skip
            self.driver.seats[seat] = agent
            self.agents[seat] = agent
            self.humans = tuple(s for s in self.humans if s != seat)
            self.steps.pop(seat, None)
            self._held.pop(seat, None)
            self.takeovers.append({"seat": seat, "agent": spec,
                                   "at_step": len(self.driver.steps)})  # fmt: skip
            self.version += 1

    def _finish(self, status: str) -> None:
        if self.status != PLAYING:
            return
        self.status = status
        self.version += 1
        ended = None if status == DONE else status
        ep = self.driver.finish(ended)
        self._label(ep, status)
        self._episode = ep
        self._write(ep)
        if self.on_finish is not None:
            self.on_finish(ep)

    def _label(self, ep: Episode, status: str) -> None:
        n = self.game.num_players
        people = {s for s, spec in self.specs.items() if spec == HUMAN}
        ep.agents = {f"player_{s}": self.specs[s] for s in range(n)}
        seated = [None if s in people else self.agents[s] for s in range(n)]
        config = episode_config(self.spec, self.env_kwargs, seated, self.seed, {"text": False},
                                self.driver.resolved_kwargs)  # fmt: skip
        for s in people:
            config["agents"][f"player_{s}"] = {"spec": HUMAN}
        for t in self.takeovers:  # a person left: an agent played their seat from this step on
            config["agents"][f"player_{t['seat']}"].update(
                took_over_at_step=t["at_step"], took_over_by=agent_config(self.agents[t["seat"]]))
        ep.config, ep.config_hash = config, config_hash(config)
        ep.metrics["human_seat"] = float(min(people | {n}))
        ep.metrics["human_seats"] = float(len(people))
        ids = [self.participants[s] for s in sorted(self.participants)]
        if ids:  # the raw ids (the file name holds a safe form)
            ep.metrics["participant"] = ids[0] if len(ids) == 1 else ",".join(ids)  # type: ignore[assignment]
        if self.task is not None:
            ep.metrics["task"] = self.task  # type: ignore[assignment]
        ep.metrics["abandoned"] = float(status != DONE)
        if self.resumes:
            ep.metrics["resumed"] = float(len(self.resumes))
            reset = any(r["partners_reset"] for r in self.resumes)
            ep.metrics["partner_memory_reset"] = float(reset)

    def _write(self, ep: Episode) -> None:
        if self.out_dir is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            ep.write(self.path)
        except OSError as exc:  # never lose the record: say so loudly, keep the session
            self.error = f"could not write {self.path}: {exc}"
            print(f"tom-envs serve: {self.error}", file=sys.stderr)

    def retry_write(self) -> bool:
        """Write a finished session's trajectory again (after a failed write); whether it is on
        disk now."""
        if self._episode is None or self.error is None:
            return self._episode is not None
        self.error = None
        self._write(self._episode)
        return self.error is None

    @property
    def episode(self) -> Episode:
        """The record: final once the session has ended, the decisions so far before that."""
        if self._episode is not None:
            return self._episode
        d = self.driver
        names = {f"player_{s}": spec for s, spec in sorted(self.specs.items())}
        ep = Episode(self.spec.id, self.seed, names, dict(self.env_kwargs))
        ep.steps, ep.returns, ep.length = d.steps, dict(d.returns), d.joint_steps
        return ep

    @property
    def path(self) -> Path:
        """The trajectory file of this session (participant ids mapped by :func:`safe_name`);
        under ``failed/`` when a partner's fallback share failed the episode, as in the runner."""
        who = f"{safe_name(self.participant)}-" if self.participant else ""
        root = Path(self.out_dir or ".")
        if self._episode is not None and self._episode.status == "failed":
            root = root / "failed"  # a partner fell back too often: kept, never a result
        return root / f"{who}{self.spec.name}-{self.id}.jsonl"

    # ------------------------------------------------------------------ resume
    def replay(self, records: Sequence[Mapping[str, Any]],
               before: Mapping[int, Callable[[], None]] | None = None) -> None:  # fmt: skip
        """Rebuild the session from its journaled decision records (after a server restart);
        ``before[i]`` runs before record ``i`` is replayed (a takeover made at that step).

        Every move is applied again in order: people's as they were, partners' through their own
        ``act`` (so a bot's memory is rebuilt; an answer that differs from the record raises
        :class:`ReplayError`) except agents of :data:`NOT_REPLAYED` kinds, whose moves are taken
        from the record and whose memory restarts empty (recorded in :attr:`resumes`). Raises
        :class:`ReplayError` when the current engine does not reproduce the records.
        """
        with self._lock:
            reset = sorted({s for s in self.agents if not replayed(self.specs[s])})
            for i, rec in enumerate(records):
                if before and i in before:
                    before[i]()
                self._replay_one(i, rec)
            if before and len(records) in before:
                before[len(records)]()
            self.driver.steps[:] = [dict(r) for r in records]
            for s in self.humans:
                self.steps[s] = sum(1 for r in records if r["agent"] == f"player_{s}")
            self.resumes.append({"at_step": len(records), "partners_reset": reset})
            self.version += 1
            self._mark_shown()

    def _replay_one(self, i: int, rec: Mapping[str, Any]) -> None:
        d = self.driver
        agent = d.advance_until(lambda a: True)  # dead seats pass; nobody acts
        if agent is None or agent != rec.get("agent"):
            raise ReplayError(f"decision {i}: the engine asks {agent} to act, the journal has "
                              f"{rec.get('agent')}")  # fmt: skip
        seat = agent_index(agent)
        if seat in self.humans:
            try:
                d.play(agent, int(rec["action"]), rec.get("message"))
            except (IllegalActionError, ValueError) as exc:
                raise ReplayError(f"decision {i}: {exc}") from None
            return
        inner = self.agents[seat]
        forced = _Forced(inner, rec, replayed(self.specs[seat]))
        d.seats[seat] = forced
        try:
            d.advance_until(_one_move())
        finally:
            d.seats[seat] = inner
        if forced.mismatch is not None:
            raise ReplayError(f"decision {i}: {agent} ({self.specs[seat]}) {forced.mismatch}")
        if d.steps[-1]["action"] != rec["action"]:
            raise ReplayError(f"decision {i}: {agent} played {d.steps[-1]['action']} on replay, "
                              f"the journal has {rec['action']}")  # fmt: skip

    # ------------------------------------------------------------------ views
    def view(self, seat: int) -> Any:
        """The seat's player view now."""
        return self.env.view(f"player_{seat}")

    def payload(self, seat: int | None = None) -> dict[str, Any]:
        """The researcher console's page for a person's seat: the text an LLM would get, the
        legal actions, the game's own board (an SVG image) and the returns."""
        seat = self.humans[0] if seat is None else seat
        view = self.env.view(f"player_{seat}")
        text = self.bundle.text
        acting = self.must_act(seat)
        legal = []
        if acting:
            legal = [{"id": int(a), "text": t} for a, t in text.legal_actions_text(view).items()]
        obs = text.text_observation(view)
        return {
            "session": self.id,
            "game": self.spec.name,
            "seat": seat,
            "step": self.steps.get(seat, 0),
            "status": self.status,
            "your_turn": acting,
            "rules": obs.rules,
            "observation": obs.observation,
            "legal": legal,
            "chat": bool(self.game.tags.communication),
            "board": board_module(self.spec).board_svg(self.bundle, view),
            "returns": {a: round(v, 3) for a, v in self.driver.returns.items()},
            "error": self.error,
            "task": self.task,
        }


def _one_move() -> Callable[[str], bool]:
    """A driver stop rule that lets one seated agent move, then stops before the next."""
    calls = iter([False])
    return lambda agent: next(calls, True)


class _Forced:
    """A partner during :meth:`Session.replay`: asks the agent (when it is replayed) and plays
    the journaled move; a journaled fallback fails again, so the driver draws the same fallback."""

    def __init__(self, inner: Agent, record: Mapping[str, Any], ask: bool) -> None:
        self.inner, self.record, self.ask = inner, record, ask
        self.name = getattr(inner, "name", "partner")
        self.mismatch: str | None = None

    def reset(self, info: Any) -> None:  # the episode is under way: never reset
        pass

    def act(self, turn: Any) -> AgentAction:
        rec = self.record
        if self.ask:  # rebuilds the bot's memory, and checks that it still decides the same
            own = self.inner.act(turn)
            own = own.action if isinstance(own, AgentAction) else own
            if not rec.get("fallback") and own != rec["action"]:
                self.mismatch = f"it answers {own!r} now, the journal has {rec['action']!r}"
        failure = rec.get("failure") or {}
        kind = str(failure.get("kind", "exception"))
        if rec.get("fallback") and ("traceback" in rec or kind == "illegal"):
            # the agent raised or answered illegally: the driver drew a seeded fallback
            raise AgentFailure(kind, str(failure.get("message")))
        return AgentAction(action=int(rec["action"]), message=rec.get("message"),
                           prediction=rec.get("prediction"), info=dict(rec.get("info") or {}),
                           valid=not rec.get("fallback"),
                           failure=kind if rec.get("fallback") else None)  # fmt: skip
