"""The researcher console: free play of any seat of any game, and the limits that keep it safe.

Routes (:mod:`~tom_envs.serve.routes`)::

    GET  /                               the console page (pick a game, a seat and partners; play)
    GET  /api/games                      games, seats, partner names, declared game arguments
    POST /api/sessions                   {game, seat, partners, seed, kwargs} -> payload + token
    GET  /api/sessions/{id}              the current payload (resume after a reload)
    POST /api/sessions/{id}/act          {step, action, message?} -> payload (409: stale/illegal)
    POST /api/sessions/{id}/abandon      record the episode as abandoned
    WS   /ws/{id}?token=T                the same, pushed: send {step, action, message?}

A study (``tom-envs study serve``) adds the participants' routes (:mod:`tom_envs.serve.study`);
the console is then off unless ``--console`` is given.

What a request may do is decided by the operator (see ``docs/serve.md``, "Threat model"):

* **Partners by name only.** A request names each partner from an allow-list: the game's bots,
  its populations (``population:NAME``), the generic built-ins that need no options (``random``,
  ``rmax``) and the operator's presets (``--partner gpt=llm:model=...``). No module path, no
  ``key=value`` option, no ``llm``/``checkpoint`` spec ever comes from a request, so a request
  cannot construct a class, reach a host or read a file.
* **Game arguments** are checked against the game's declared parameters
  (:mod:`tom_envs.core.params`, ``source="http"``): types, bounds, and Overcooked layouts by name.
* **Seats belong to their players.** Creating a session returns its seat token once; every other
  request about the session must carry it (``X-Seat-Token`` header, or ``?token=`` on the
  websocket). A session id alone can neither act nor read.
* **Bounded.** At most ``max_sessions`` live sessions, ``per_client`` of them per client address,
  and none created while the process holds more than ``max_memory_mb``; idle ones are recorded as
  abandoned by :meth:`App.sweep`; the sessions still open when the server stops are recorded as
  abandoned by :meth:`App.close`. Bodies over 64 KiB and chat messages over 2000 characters are
  refused. Pages are drawn in worker threads and cached per state, so no request's drawing
  (CoBlock's picture takes a quarter of a second) holds the event loop, and a refused move is
  answered without drawing anything.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tom_envs.driver import DEFAULT_MAX_FALLBACK_SHARE, FailurePolicy
from tom_envs.serve.session import PLAYING, Session

#: Largest request body accepted (bytes) and longest chat message (characters).
BODY_LIMIT = 64 * 1024
MESSAGE_LIMIT = 2000
#: Longest id accepted in a URL (characters).
ID_LIMIT = 1000
SEED_MAX = 2**32 - 1
#: Statuses of finished sessions remembered after the sessions are dropped.
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


def memory_mb() -> float:
    """The process's resident memory (MB; 0 where ``/proc`` is missing)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return 0.0
    import resource

    return pages * resource.getpagesize() / 2**20


class App:
    """The console's sessions and limits (see the module docstring).

    Args:
        out_dir: where trajectories are written.
        idle_timeout: seconds before an untouched session is recorded as abandoned.
        sweep_every: seconds between background sweeps.
        presets: the operator's named partners, ``{name: agent spec}`` or ``["name=spec", ...]``.
        max_sessions: the most live (playing) sessions at once; more get a 503.
        per_client: the most live sessions one client address may hold.
        max_memory_mb: no new session while the process holds more (``None``: no bound).
        max_fallback_share: a session where a partner fell back on more than this share of its
            decisions is written under ``failed/`` (the runner's failure policy).
    """

    def __init__(self, out_dir: str | Path = "runs/human", idle_timeout: float = 600.0,
                 sweep_every: float = 30.0, *,
                 presets: Sequence[str] | Mapping[str, str] | None = None,
                 max_sessions: int = 100, per_client: int = 8, max_memory_mb: float | None = None,
                 max_fallback_share: float = DEFAULT_MAX_FALLBACK_SHARE) -> None:  # fmt: skip
        if max_sessions < 1 or per_client < 1:
            raise ValueError(f"max_sessions and per_client must be >= 1, got {max_sessions}, "
                             f"{per_client}")  # fmt: skip
        self.out_dir = Path(out_dir)
        self.sessions: dict[str, Session] = {}
        self.locks: dict[str, asyncio.Lock] = {}
        self.owners: dict[str, str] = {}  # session -> client address
        self.finished: dict[str, str] = {}
        self.cache: dict[str, tuple[int, dict[str, Any]]] = {}
        self.idle_timeout, self.sweep_every = idle_timeout, sweep_every
        self.presets = parse_presets(presets)
        self.max_sessions, self.per_client, self.max_memory_mb = max_sessions, per_client, max_memory_mb
        self.policy = FailurePolicy(max_fallback_share=max_fallback_share)
        self._partners: dict[str, dict[str, str]] = {}
        self._mutex = threading.RLock()  # sessions are created and swept from worker threads
        self._pending = 0

    # ------------------------------------------------------------------ partners and arguments
    def partner_names(self, game: str) -> dict[str, str]:
        """``{name a request may give: agent spec}`` for ``game``: its bots, its populations,
        ``random``/``rmax`` and the operator's presets."""
        from tom_envs.agents import agent_names, generic_agent_names
        from tom_envs.registration import game_spec

        spec = game_spec(game)
        if spec.name not in self._partners:
            generic = set(generic_agent_names())
            names = {n: n for n in agent_names(spec) if n in HTTP_GENERIC or n not in generic}
            names.update(self.presets)
            self._partners[spec.name] = names
        return self._partners[spec.name]

    def request_to_session_args(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Check an HTTP body ``{game, seat, partners, seed, kwargs}``; the Session arguments."""
        from tom_envs.registration import GAMES, game_spec

        if not isinstance(body, Mapping):
            raise BadRequest("body", "must be a JSON object")
        unknown = [k for k in body if k not in _BODY_KEYS]
        if unknown:
            raise BadRequest(str(unknown[0])[:40], f"unknown field; allowed: {', '.join(_BODY_KEYS)}")
        game = body.get("game")
        names = [g.name for g in GAMES]
        if not isinstance(game, str) or len(game) > 100:
            raise BadRequest("game", f"must be one of {names}")
        try:
            spec = game_spec(game)
        except KeyError:
            raise BadRequest("game", f"must be one of {names}") from None
        kwargs, n = self._kwargs(spec, body.get("kwargs") or {})
        seat = body.get("seat", 0)
        if not is_json_int(seat) or not 0 <= seat < n:
            raise BadRequest("seat", f"must be an integer in [0, {n - 1}]")
        seed = body.get("seed", 0)
        if not is_json_int(seed) or not 0 <= seed <= SEED_MAX:
            raise BadRequest("seed", f"must be an integer in [0, {SEED_MAX}]")
        specs, trusted = self._partner_specs(spec.name, body.get("partners", []), n)
        return {"game": spec.name, "seat": seat, "partners": specs, "seed": seed,
                "env_kwargs": kwargs, "trusted": trusted}  # fmt: skip

    def _kwargs(self, spec: Any, kwargs: object) -> tuple[dict[str, Any], int]:
        from tom_envs.core.params import validate_kwargs
        from tom_envs.core.skin import SKIN

        if not isinstance(kwargs, dict):
            raise BadRequest("kwargs", "must be a JSON object of game arguments")
        fixed = sorted(k for k in kwargs if k in spec.fixed)  # e.g. a matrix id's `game`
        if fixed:
            raise BadRequest("kwargs", f"{fixed[0]!r} is fixed by the game {spec.name}")
        module = spec.load()
        try:
            checked = validate_kwargs((*module.PARAMS, SKIN), kwargs, source="http")
            # seats and partners follow the requested configuration (Hanabi players=3)
            return checked, module.make_bundle(**{**spec.kwargs, **checked}).game.num_players
        except ValueError as exc:
            raise BadRequest("kwargs", str(exc)) from None

    def _partner_specs(self, game: str, partners: object, n: int) -> tuple[list[str], list[bool]]:
        allowed = self.partner_names(game)
        if not isinstance(partners, list) or len(partners) != n - 1:
            raise BadRequest("partners", f"must be a list of {n - 1} partner names")
        specs, trusted = [], []
        for p in partners:
            if not isinstance(p, str) or p not in allowed:
                raise BadRequest("partners", f"{repr(p)[:60]} is not offered by this server; "
                                 f"choose from {sorted(allowed)}")  # fmt: skip
            specs.append(allowed[p])
            trusted.append(p in self.presets)  # the operator's preset, named by its name
        return specs, trusted

    # ------------------------------------------------------------------ sessions
    def live(self, owner: str | None = None) -> int:
        """Sessions being played (by ``owner``, a client address, if given)."""
        return sum(1 for sid, s in self.sessions.items() if s.status == PLAYING
                   and (owner is None or self.owners.get(sid) == owner))  # fmt: skip

    def create(self, body: Mapping[str, Any], owner: str = "") -> Session:
        """A new session from a request body (:class:`BadRequest` names the bad field)."""
        self.sweep()
        with self._mutex:
            if self.live() + self._pending >= self.max_sessions:
                raise BadRequest("", f"the server is at its cap of {self.max_sessions} live "
                                 "sessions; try again later", 503)  # fmt: skip
            if owner and self.live(owner) >= self.per_client:
                raise BadRequest("", f"at most {self.per_client} games at once per client", 429)
            if self.max_memory_mb is not None and memory_mb() > self.max_memory_mb:
                raise BadRequest("", "the server is at its memory bound; try again later", 503)
            self._pending += 1
        try:
            s = self._session(self.request_to_session_args(body))
            self.adopt(s, owner)
        finally:
            with self._mutex:
                self._pending -= 1
        return s

    def adopt(self, s: Session, owner: str = "") -> None:
        """Serve a session made elsewhere (Python callers: custom partner objects)."""
        with self._mutex:
            self.sessions[s.id] = s
            self.locks[s.id] = asyncio.Lock()
            self.owners[s.id] = owner

    def _session(self, args: Mapping[str, Any]) -> Session:
        try:
            s = Session(args["game"], args["seat"], args["partners"], args["seed"],
                        args["env_kwargs"], self.out_dir, policy=self.policy,
                        trusted=args["trusted"])  # fmt: skip
            s.advance()
        except (ValueError, KeyError, TypeError, ImportError, OSError) as exc:
            # e.g. Hanabi names fewer than players, or a preset whose extra is not installed
            raise BadRequest("session", str(exc.args[0] if exc.args else exc)) from None
        return s

    def payload(self, s: Session) -> dict[str, Any]:
        """The console payload of ``s`` (cached per state; call it from a worker thread)."""
        from tom_envs.serve.boards import participant_payload

        with s.lock:
            cached = self.cache.get(s.id)
            if cached is not None and cached[0] == s.version:
                return cached[1]
            data = {**s.payload(), "participant": participant_payload(s, s.seat)}
            self.cache[s.id] = (s.version, data)
            return data

    def sweep(self) -> int:
        """Record idle sessions as abandoned, drop finished ones from memory; returns how many
        were abandoned."""
        with self._mutex:
            now, n = time.monotonic(), 0
            for sid, s in list(self.sessions.items()):
                if now - s.last_seen <= self.idle_timeout:
                    continue
                if s.status == PLAYING:
                    s.abandon()
                    n += 1
                elif now - s.last_seen > 2 * self.idle_timeout:  # nobody will read it again
                    self._drop(sid)
            done = [s for s in self.sessions.values() if s.status != PLAYING]
            extra = max(0, len(done) - self.max_sessions)
            for s in sorted(done, key=lambda s: s.last_seen)[:extra]:
                self._drop(s.id)
            return n

    def _drop(self, sid: str) -> None:
        """Forget a finished session (its trajectory is on disk), keeping only its status."""
        s = self.sessions.pop(sid)
        self.locks.pop(sid, None)
        self.owners.pop(sid, None)
        self.cache.pop(sid, None)
        self.finished[sid] = s.status
        while len(self.finished) > FINISHED_LIMIT:  # statuses of the oldest are forgotten
            del self.finished[next(iter(self.finished))]

    def status_of(self, sid: str) -> str:
        """A session's status by id, also after it left memory (``"unknown"`` for none)."""
        if sid in self.sessions:
            return self.sessions[sid].status
        return self.finished.get(sid, "unknown")

    def close(self) -> int:
        """Record every session still being played as abandoned (server shutdown)."""
        n = 0
        with self._mutex:
            for s in list(self.sessions.values()):
                if s.status == PLAYING:
                    s.abandon()
                    n += 1
        return n

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
