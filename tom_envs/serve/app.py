"""The web app: Starlette routes and a websocket over :class:`~tom_envs.serve.session.Session`.

Routes::

    GET  /                               the player page (pick a game, seat and partners; play)
    GET  /api/games                      games, seats, partner names, declared game arguments
    POST /api/sessions                   {game, seat, partners, seed, kwargs} -> payload + token
    GET  /api/sessions/{id}              the current payload (resume after a reload)
    POST /api/sessions/{id}/act          {step, action, message?} -> payload (409: stale/illegal)
    POST /api/sessions/{id}/abandon      record the episode as abandoned
    WS   /ws/{id}?token=T                the same, pushed: send {step, action, message?}
    GET  /study/{participant}            study mode: the task list with completion
    GET  /api/study/{participant}        the same as JSON
    POST /api/study/{participant}/{task} start a study task -> payload + token ({token} resumes)

What a request may do is decided by the operator (see ``docs/serve.md``, "Threat model"):

* **Partners by name only.** A request names each partner from an allow-list: the game's bots,
  its populations (``population:NAME``), the generic built-ins that need no options (``random``,
  ``rmax``) and the operator's presets (``tom-envs serve --partner gpt=llm:model=...``). No
  module path, no ``key=value`` option, no ``llm``/``checkpoint`` spec ever comes from a request,
  so a request cannot construct a class, reach a host or read a file.
* **Game arguments** are checked against the game's declared parameters
  (:mod:`tom_envs.core.params`, ``source="http"``): types, bounds, and Overcooked layouts by name.
* **Seats belong to their players.** Creating a session returns its seat token once; every other
  request about the session must carry it (``X-Seat-Token`` header, or ``?token=`` on the
  websocket). A session id alone can neither act nor read.
* **No cross-site driving.** State-changing requests need ``Content-Type: application/json``; any
  request whose ``Origin`` names another site, and any ``Host`` outside ``allowed_hosts`` (DNS
  rebinding), is refused. With ``token`` set (``--token``), every request needs the access token
  (``?access=`` in the participant's link, then a same-site cookie, or ``X-Access-Token``).
* **Bounded.** At most ``max_sessions`` live sessions; idle ones are recorded as abandoned by
  :meth:`App.sweep` (every request and every ``sweep_every`` seconds); the sessions still open
  when the server stops (SIGINT/SIGTERM run the shutdown) are recorded as abandoned by
  :meth:`App.close`. Bodies over 64 KiB and chat messages over 2000 characters are refused.

Every session has a lock, so concurrent submissions for one session are applied one at a time and
a duplicate is rejected by its decision index. Bad input gets a 4xx whose message names the field.

The handlers are in :mod:`~tom_envs.serve.routes`, the checks that run before any of them (host,
origin, content type, access token) in :mod:`~tom_envs.serve.guard`.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tom_envs.driver import DEFAULT_MAX_FALLBACK_SHARE, FailurePolicy
from tom_envs.serve.guard import default_allowed_hosts
from tom_envs.serve.session import Session

#: Largest request body accepted (bytes) and longest chat message (characters).
BODY_LIMIT = 64 * 1024
MESSAGE_LIMIT = 2000
#: Longest participant id and task name accepted in a URL (characters).
ID_LIMIT = 1000
SEED_MAX = 2**32 - 1
#: Statuses of finished sessions remembered (study progress) after the sessions are dropped.
FINISHED_LIMIT = 100_000
#: Generic agents a request may name (the others need options, so only presets may use them).
HTTP_GENERIC = ("random", "rmax")
_PRESET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
_BODY_KEYS = ("game", "seat", "partners", "seed", "kwargs")


class BadRequest(ValueError):
    """A request the server refuses: ``status`` and a message naming ``field``."""

    def __init__(self, field: str, message: str, status: int = 400) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field, self.status = field, status


@dataclass
class StudyTask:
    """One task of a study: a game, the person's seat, partners, seed and game arguments.

    A study file is a file (:mod:`tom_envs.core.trust`): each partner is the name of one of the
    operator's presets (``tom-envs serve --partner NAME=SPEC``: an LLM endpoint, a checkpoint,
    your own class), or a spec from the allow-list (a bot, ``population:NAME``, a plugin with the
    options a file may set). Its game arguments are checked as a file's.
    """

    name: str
    game: str
    seat: int
    partners: list[str]
    seed: int = 0
    kwargs: dict[str, Any] = field(default_factory=dict)


_TASK_KEYS = {"name": str, "game": str, "seat": int, "partners": list, "seed": int, "kwargs": dict}


def load_study(path: str | Path) -> list[StudyTask]:
    """A study file (TOML): ``[[tasks]]`` tables with name, game, seat, partners, seed, kwargs.

    Structure and types are checked here (ValueError naming the task and field); what the
    partners and game arguments may name is checked by :func:`check_study` against the presets.
    """
    import tomllib

    try:
        data = tomllib.loads(Path(path).read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: malformed TOML: {exc}") from None
    unknown = sorted(set(data) - {"tasks"})
    if unknown:
        raise ValueError(f"{path}: unknown keys {unknown}; a study file holds [[tasks]] only")
    raw = data.get("tasks", [])
    if not isinstance(raw, list) or not raw:
        raise ValueError(f"{path}: no [[tasks]]")
    tasks = []
    for i, t in enumerate(raw):
        where = f"{path}: tasks[{i}]"
        if not isinstance(t, dict):
            raise ValueError(f"{where}: expected a table")
        bad = sorted(set(t) - set(_TASK_KEYS))
        missing = sorted({"name", "game", "seat", "partners"} - set(t))
        if bad or missing:
            raise ValueError(f"{where}: unknown keys {bad}, missing {missing}; "
                             f"allowed: {sorted(_TASK_KEYS)}")  # fmt: skip
        for key, kind in _TASK_KEYS.items():
            if key in t and (not isinstance(t[key], kind) or isinstance(t[key], bool)):
                raise ValueError(f"{where}.{key}: expected {kind.__name__}, got {t[key]!r}"[:300])
        if not all(isinstance(p, str) for p in t["partners"]):
            raise ValueError(f"{where}.partners: expected a list of names")
        if not 0 <= t.get("seed", 0) <= SEED_MAX:
            raise ValueError(f"{where}.seed: must be in [0, {SEED_MAX}]")
        tasks.append(StudyTask(**t))
    return tasks


def study_partners(task: StudyTask, presets: Mapping[str, str]) -> tuple[list[str], list[bool]]:
    """The task's partner specs and, per partner, whether it is trusted: a preset's name stands
    for the operator's spec (trusted); anything else is the file's own spec (untrusted)."""
    specs = [presets.get(p, p) for p in task.partners]
    return specs, [p in presets for p in task.partners]


def check_study(tasks: Sequence[StudyTask], presets: Mapping[str, str]) -> None:
    """Build every task's partners once and check its game arguments as a file's (ValueError
    naming the task): a study file can name no code, host or outside file."""
    import dataclasses

    from tom_envs.agents import make_agent
    from tom_envs.core.params import validate_kwargs
    from tom_envs.registration import game_spec

    for t in tasks:
        try:
            spec = game_spec(t.game)
            kwargs = validate_kwargs(spec.load().PARAMS, t.kwargs, source="file")
            full = dataclasses.replace(spec, kwargs={**spec.kwargs, **kwargs})
            bundle = spec.load().make_bundle(**full.kwargs)
            n = bundle.game.num_players
            if not 0 <= t.seat < n:
                raise ValueError(f"seat must be in [0, {n - 1}], got {t.seat}")
            if len(t.partners) != n - 1:
                raise ValueError(f"{spec.name} needs {n - 1} partners, got {len(t.partners)}")
            for p, trusted in zip(*study_partners(t, presets), strict=True):
                make_agent(p, full, bundle, trusted=trusted)
        except (KeyError, ValueError, TypeError, ImportError) as exc:
            msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
            raise ValueError(f"study task {t.name!r}: {msg}") from None


def parse_presets(items: Sequence[str] | Mapping[str, str] | None) -> dict[str, str]:
    """``["gpt=llm:model=m:base_url=http://h/v1", ...]`` -> ``{"gpt": "llm:model=..."}``.

    Preset names are short (letters, digits, ``_.-``); the spec is any agent spec, given by the
    operator when the server starts, and is checked to parse.
    """
    from tom_envs.agents import parse_spec

    pairs = list(items.items()) if isinstance(items, Mapping) else []
    for item in [] if isinstance(items, Mapping) else list(items or []):
        name, eq, spec = item.partition("=")
        if not eq or not spec:
            raise ValueError(f"--partner expects NAME=SPEC, got {item!r}")
        pairs.append((name, spec))
    out: dict[str, str] = {}
    for name, spec in pairs:
        if not _PRESET_NAME.fullmatch(name) or name.startswith("population"):
            raise ValueError(f"preset name {name!r}: use letters, digits, '_', '.', '-' (<= 40)")
        if name in out:
            raise ValueError(f"preset {name!r} given twice")
        parse_spec(spec, trusted=True)  # the operator's (may name code); raises if malformed
        out[name] = spec
    return out


class App:
    """Sessions, study progress and the ASGI application (:attr:`asgi`).

    Args:
        out_dir: where trajectories are written.
        study: study tasks (``--study``).
        idle_timeout: seconds before an untouched session is recorded as abandoned.
        sweep_every: seconds between background sweeps.
        presets: the operator's named partners, ``{name: agent spec}`` or ``["name=spec", ...]``.
        token: an access token every request must carry (``None``: none needed).
        max_sessions: the most live (playing) sessions at once; more get a 503.
        allowed_hosts: accepted ``Host`` header names (``None``: any); see
            :func:`~tom_envs.serve.guard.default_allowed_hosts`.
        max_fallback_share: a session where a partner fell back on more than this share of its
            decisions is written under ``failed/`` (the runner's failure policy).
    """

    def __init__(
        self,
        out_dir: str | Path = "runs/human",
        study: list[StudyTask] | None = None,
        idle_timeout: float = 600.0,
        sweep_every: float = 30.0,
        *,
        presets: Sequence[str] | Mapping[str, str] | None = None,
        token: str | None = None,
        max_sessions: int = 100,
        allowed_hosts: Sequence[str] | None = None,
        max_fallback_share: float = DEFAULT_MAX_FALLBACK_SHARE,
    ) -> None:
        if token is not None and len(token) < 8:
            raise ValueError("the access token must have at least 8 characters")
        if max_sessions < 1:
            raise ValueError(f"max_sessions must be >= 1, got {max_sessions}")
        self.out_dir = Path(out_dir)
        self.sessions: dict[str, Session] = {}
        self.locks: dict[str, asyncio.Lock] = {}
        self.study = {t.name: t for t in (study or [])}
        self.progress: dict[tuple[str, str], str] = {}  # (participant, task) -> session id
        self.finished: dict[str, str] = {}  # sessions dropped from memory -> final status
        self.idle_timeout = idle_timeout
        self.sweep_every = sweep_every
        self.presets = parse_presets(presets)
        check_study(list(self.study.values()), self.presets)  # before the first request
        self.token = token
        self.max_sessions = max_sessions
        self.policy = FailurePolicy(max_fallback_share=max_fallback_share)
        self.allowed_hosts = None if allowed_hosts is None else tuple(allowed_hosts)
        self._partners: dict[str, dict[str, str]] = {}
        self._mutex = threading.RLock()  # sessions are created and swept from worker threads
        self._pending = 0
        from tom_envs.serve.routes import asgi_app  # Starlette: the serve extra

        self.asgi = asgi_app(self)

    # ------------------------------------------------------------------ partners and arguments
    def partner_names(self, game: str) -> dict[str, str]:
        """``{name a request may give: agent spec}`` for ``game``: its bots, its populations,
        ``random``/``rmax`` and the operator's presets."""
        from tom_envs.agents import agent_names
        from tom_envs.registration import game_spec

        spec = game_spec(game)
        if spec.name not in self._partners:
            names = {n: n for n in agent_names(spec) if n in HTTP_GENERIC or n not in
                     _generic_names()}  # fmt: skip
            for name, preset in self.presets.items():
                names[name] = preset
            self._partners[spec.name] = names
        return self._partners[spec.name]

    def request_to_session_args(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Check an HTTP body ``{game, seat, partners, seed, kwargs}``; the Session arguments."""
        from tom_envs.core.params import validate_kwargs
        from tom_envs.registration import GAMES, game_spec

        if not isinstance(body, Mapping):
            raise BadRequest("body", "must be a JSON object")
        unknown = [k for k in body if k not in _BODY_KEYS]
        if unknown:
            raise BadRequest(
                str(unknown[0])[:40], f"unknown field; allowed: {', '.join(_BODY_KEYS)}"
            )
        game = body.get("game")
        if not isinstance(game, str) or len(game) > 100:
            raise BadRequest("game", f"must be one of {[g.name for g in GAMES]}")
        try:
            spec = game_spec(game)
        except KeyError:
            raise BadRequest("game", f"must be one of {[g.name for g in GAMES]}") from None
        module = spec.load()
        kwargs = body.get("kwargs") or {}
        if not isinstance(kwargs, dict):
            raise BadRequest("kwargs", "must be a JSON object of game arguments")
        fixed = sorted(k for k in kwargs if k in spec.fixed)  # e.g. a matrix id's `game`
        if fixed:
            raise BadRequest("kwargs", f"{fixed[0]!r} is fixed by the game {spec.name}")
        try:
            kwargs = validate_kwargs(module.PARAMS, kwargs, source="http")
            # seats and partners follow the requested configuration (Hanabi players=3)
            n = module.make_bundle(**{**spec.kwargs, **kwargs}).game.num_players
        except ValueError as exc:
            raise BadRequest("kwargs", str(exc)) from None
        seat = body.get("seat", 0)
        if not is_json_int(seat) or not 0 <= seat < n:
            raise BadRequest("seat", f"must be an integer in [0, {n - 1}]")
        seed = body.get("seed", 0)
        if not is_json_int(seed) or not 0 <= seed <= SEED_MAX:
            raise BadRequest("seed", f"must be an integer in [0, {SEED_MAX}]")
        partners = body.get("partners", [])
        allowed = self.partner_names(spec.name)
        if not isinstance(partners, list) or len(partners) != n - 1:
            raise BadRequest("partners", f"must be a list of {n - 1} partner names")
        specs, trusted = [], []
        for p in partners:
            if not isinstance(p, str) or p not in allowed:
                shown = repr(p)[:60]
                raise BadRequest("partners", f"{shown} is not offered by this server; choose from "
                                 f"{sorted(allowed)}")  # fmt: skip
            specs.append(allowed[p])
            trusted.append(p in self.presets)  # the operator's preset, named by its name
        return {"game": spec.name, "seat": seat, "partners": specs, "seed": seed,
                "env_kwargs": kwargs, "trusted": trusted}  # fmt: skip

    # ------------------------------------------------------------------ sessions
    def live(self) -> int:
        """Sessions being played."""
        return sum(1 for s in self.sessions.values() if s.status == "playing")

    def create(self, body: Mapping[str, Any], participant: str | None = None,
               task: str | None = None, study: bool = False) -> Session:  # fmt: skip
        """A new session from a request body (:class:`BadRequest` names the bad field).

        ``study=True``: the body is a study task's (the study file's partners, preset names or
        allow-listed specs, and its game arguments, checked as a file's); otherwise the body is a
        browser's and is checked by :meth:`request_to_session_args`.
        """
        self.sweep()
        with self._mutex:
            if self.live() + self._pending >= self.max_sessions:
                raise BadRequest("", f"the server is at its cap of {self.max_sessions} live "
                                 "sessions; try again later", 503)  # fmt: skip
            self._pending += 1
        try:
            s = self._new_session(body, participant, task, study)
            with self._mutex:
                self.sessions[s.id] = s
                self.locks[s.id] = asyncio.Lock()
        finally:
            with self._mutex:
                self._pending -= 1
        return s

    def _new_session(self, body: Mapping[str, Any], participant: str | None, task: str | None,
                     study: bool) -> Session:  # fmt: skip
        if study:
            t = StudyTask(task or "", body["game"], body["seat"], list(body["partners"]),
                          body.get("seed", 0), dict(body.get("kwargs") or {}))  # fmt: skip
            specs, trusted = study_partners(t, self.presets)
            args = {"game": t.game, "seat": t.seat, "partners": specs, "seed": t.seed,
                    "env_kwargs": t.kwargs, "trusted": trusted}  # fmt: skip
        else:
            args = self.request_to_session_args(body)
        try:
            s = Session(args["game"], args["seat"], args["partners"], args["seed"],
                        args["env_kwargs"], self.out_dir, participant, task,
                        policy=self.policy, trusted=args["trusted"])  # fmt: skip
        except (ValueError, KeyError, TypeError, ImportError, OSError) as exc:
            # e.g. Hanabi names fewer than players, or a preset whose extra is not installed
            msg = str(exc.args[0] if exc.args else exc)
            raise BadRequest("session", msg) from None
        return s

    def sweep(self) -> int:
        """Record idle sessions as abandoned, drop finished ones from memory; returns how many
        were abandoned."""
        with self._mutex:
            return self._sweep()

    def _sweep(self) -> int:
        now, n = time.monotonic(), 0
        for sid, s in list(self.sessions.items()):
            if now - s.last_seen <= self.idle_timeout:
                continue
            if s.status == "playing":
                s.abandon()
                n += 1
            elif now - s.last_seen > 2 * self.idle_timeout:  # nobody will read it again
                self._drop(sid)
        # finished sessions kept for a last look are bounded too: the oldest go first
        done = [s for s in self.sessions.values() if s.status != "playing"]
        for s in sorted(done, key=lambda s: s.last_seen)[: max(0, len(done) - self.max_sessions)]:
            self._drop(s.id)
        return n

    def _drop(self, sid: str) -> None:
        """Forget a finished session (its trajectory is on disk), keeping only its status."""
        s = self.sessions.pop(sid)
        self.locks.pop(sid, None)
        self.finished[sid] = s.status
        while len(self.finished) > FINISHED_LIMIT:  # statuses of the oldest are forgotten
            del self.finished[next(iter(self.finished))]

    def close(self) -> int:
        """Record every session still being played as abandoned (server shutdown)."""
        n = 0
        with self._mutex:
            for s in list(self.sessions.values()):
                if s.status == "playing":
                    s.abandon()
                    n += 1
        return n

    def status_of(self, sid: str | None) -> str:
        """A session's status by id (``"not started"`` for none)."""
        if sid is None:
            return "not started"
        if sid in self.sessions:
            return self.sessions[sid].status
        return self.finished.get(sid, "not started")

    def games(self) -> list[dict[str, Any]]:
        """Games with their seats, the partner names a request may use, and declared arguments."""
        from tom_envs.registration import GAMES

        out = []
        for spec in GAMES:
            module = spec.load()
            bundle = module.make_bundle(**spec.kwargs)
            params = [{"name": p.name, "type": p.type, "allowed": p.allowed(), "doc": p.doc}
                      for p in module.PARAMS if p.type != "object"]  # fmt: skip
            out.append({"name": spec.name, "summary": spec.summary,
                        "seats": bundle.game.num_players,
                        "agents": list(self.partner_names(spec.name)),
                        "chat": bool(bundle.game.tags.communication), "params": params})  # fmt: skip
        return out


def is_json_int(x: object) -> bool:
    """An integer from a JSON request (``True`` is not a seat or a seed)."""
    return isinstance(x, int) and not isinstance(x, bool)


def _generic_names() -> tuple[str, ...]:
    from tom_envs.agents import generic_agent_names

    return tuple(generic_agent_names())


def serve(host: str = "127.0.0.1", port: int = 8000, out_dir: str = "runs/human",
          study: str | None = None, idle_timeout: float = 600.0, *,
          presets: Sequence[str] | None = None, token: str | None = None,
          max_sessions: int = 100,
          max_fallback_share: float = DEFAULT_MAX_FALLBACK_SHARE) -> None:  # fmt: skip
    """Run the app with uvicorn (blocking); SIGINT/SIGTERM record open sessions as abandoned."""
    import uvicorn

    app = App(out_dir, load_study(study) if study else None, idle_timeout, presets=presets,
              token=token, max_sessions=max_sessions, allowed_hosts=default_allowed_hosts(host),
              max_fallback_share=max_fallback_share)  # fmt: skip
    uvicorn.run(app.asgi, host=host, port=port, log_level="warning", ws_max_size=BODY_LIMIT)
