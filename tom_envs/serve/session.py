"""One person playing one seat of one game beside agents: the state machine behind the web app.

A :class:`Session` owns an AEC env (the same rules and validation as every other use of the
suite), the partner agents, and the record of the episode. It only ever renders the human seat's
**player view** (:meth:`payload`): the text an LLM would get, the legal actions, the game's board
drawn from that view, and the chat. Partners act through the suite's one episode driver
(:class:`~tom_envs.driver.EpisodeDriver`, the human's seat external) with the same failure
policy as ``tom-envs run`` (a partner that raises or answers illegally is recorded as a fallback
and replaced by a seeded random legal action), so a session is recorded as the suite's standard
trajectory, keyed by its full configuration, with the human's decisions marked ``"human": true``
and the human seat's agent spec ``"human"``.

Every submission carries the decision index it answers (``step``); a stale or duplicate one is
rejected with a message and changes nothing. A session whose player leaves is recorded as
abandoned (its trajectory kept, ``metrics["abandoned"] = 1``); one that ends is recorded complete.
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
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tom_envs.core.agents import Agent
from tom_envs.core.game import IllegalActionError
from tom_envs.driver import EpisodeDriver, FailurePolicy, is_int
from tom_envs.identity import config_hash, episode_config
from tom_envs.registration import GameSpec, game_spec
from tom_envs.runner import Episode

HUMAN = "human"

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


def board_module(spec: GameSpec) -> Any:
    """The game's ``board.py`` (``board_svg(bundle, view)``)."""
    return importlib.import_module(spec.module.rsplit(".", 1)[0] + ".board")


class Session:
    """A human seat in a game, partners in the others, played by the suite's one episode driver.

    Args:
        game: registered game name or id.
        seat: the human's seat.
        partners: one agent spec (or agent object) per *other* seat, in seat order.
        seed: the episode seed.
        env_kwargs: game keyword arguments.
        out_dir: where the trajectory is written when the session ends or is abandoned.
        participant: a participant id (study mode), recorded in the trajectory.
        task: the study task's name, if any.
        policy: the failure policy for the partners (default: the runner's).
        trusted: per partner, whether its spec is the operator's (a ``--partner`` preset), which
            may name code, hosts and files; every other spec is built under the rules for a
            file or a request (:mod:`tom_envs.core.trust`). Default: none is.
    """

    def __init__(
        self,
        game: str,
        seat: int,
        partners: Sequence[str | Agent],
        seed: int = 0,
        env_kwargs: Mapping[str, Any] | None = None,
        out_dir: str | Path | None = None,
        participant: str | None = None,
        task: str | None = None,
        policy: FailurePolicy | None = None,
        trusted: Sequence[bool] | None = None,
    ) -> None:
        from tom_envs.agents import make_agent

        base = game_spec(game)
        self.spec = dataclasses.replace(base, kwargs={**base.kwargs, **(env_kwargs or {})})
        self.env_kwargs = dict(env_kwargs or {})
        env = self.spec.load().raw_env(**self.spec.kwargs)
        self.bundle = env.bundle
        self.game = env.game
        n = self.game.num_players
        if not 0 <= seat < n:
            raise ValueError(f"{self.spec.name} has seats 0..{n - 1}, got {seat}")
        if len(partners) != n - 1:
            raise ValueError(f"{self.spec.name} needs {n - 1} partners, got {len(partners)}")
        self.seat = seat
        self.human_agent = f"player_{seat}"
        others = [s for s in range(n) if s != seat]
        self.agents: dict[int, Agent] = {}
        self.specs: dict[int, str] = {seat: HUMAN}
        trust = list(trusted) if trusted is not None else [False] * len(partners)
        if len(trust) != len(partners) or not all(t is True or t is False for t in trust):
            raise TypeError(f"trusted must hold one True/False per partner, got {trusted!r}")
        for s, p, t in zip(others, partners, trust, strict=True):
            self.agents[s] = (make_agent(p, self.spec, self.bundle, trusted=t)
                              if isinstance(p, str) else p)  # fmt: skip
            self.specs[s] = p if isinstance(p, str) else str(getattr(p, "name", type(p).__name__))
        self._lock = threading.RLock()  # submit, abandon and shutdown come from several threads
        self.id = secrets.token_hex(8)
        #: the seat's secret: every request about this session must carry it (see the app)
        self.token = secrets.token_urlsafe(24)
        self.seed = seed
        self.out_dir = Path(out_dir) if out_dir is not None else None
        self.participant, self.task = participant, task
        self.status = "playing"  # "playing", "done", "abandoned"
        self.last_seen = time.monotonic()
        self.error: str | None = None
        #: the one episode driver: partners act through it, the human's seat is external
        self.driver = EpisodeDriver(
            self.spec, [self.agents.get(s) for s in range(n)], seed, self.env_kwargs, env=env,
            policy=policy,
        )
        self.env = self.driver.env
        self._episode: Episode | None = None  # the record, once the session has ended
        self.step = 0  # the human's decision index the next submission must carry
        self.driver.start()
        self._advance()

    # ------------------------------------------------------------------ internals
    def _advance(self) -> None:
        """Let partners act (and dead seats pass) until the human must act or the episode ends."""
        if self.driver.advance() is None:
            self._finish("done")

    def _finish(self, status: str) -> None:
        if self.status != "playing":
            return
        self.status = status
        ep = self.driver.finish("abandoned" if status == "abandoned" else None)
        ep.agents = {f"player_{s}": spec for s, spec in sorted(self.specs.items())}
        seated = [None if s == self.seat else self.agents[s] for s in range(self.game.num_players)]
        config = episode_config(self.spec, self.env_kwargs, seated, self.seed, {"text": False},
                                self.driver.resolved_kwargs)  # fmt: skip
        config["agents"][self.human_agent] = {"spec": HUMAN}
        ep.config, ep.config_hash = config, config_hash(config)
        ep.metrics["human_seat"] = float(self.seat)
        if self.participant is not None:  # the raw ids (the file name holds a safe form)
            ep.metrics["participant"] = self.participant  # type: ignore[assignment]
        if self.task is not None:
            ep.metrics["task"] = self.task  # type: ignore[assignment]
        ep.metrics["abandoned"] = float(status == "abandoned")
        self._episode = ep
        if self.out_dir is not None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                ep.write(self.path)
            except OSError as exc:  # never lose the record: say so loudly, keep the session
                self.error = f"could not write {self.path}: {exc}"
                print(f"tom-envs serve: {self.error}", file=sys.stderr)

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

    def check_token(self, token: object) -> bool:
        """Whether ``token`` is this seat's secret (constant-time comparison)."""
        return isinstance(token, str) and hmac.compare_digest(token.encode(), self.token.encode())

    # ------------------------------------------------------------------ API
    def payload(self) -> dict[str, Any]:
        """What the human's browser gets: only the human seat's view, rendered."""
        view = self.env.view(self.human_agent)
        text = self.bundle.text
        acting = self.status == "playing" and self.env.agent_selection == self.human_agent
        legal = []
        if acting:
            legal = [{"id": int(a), "text": t} for a, t in text.legal_actions_text(view).items()]
        obs = text.text_observation(view)
        return {
            "session": self.id,
            "game": self.spec.name,
            "seat": self.seat,
            "step": self.step,
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

    def submit(self, step: int, action: int, message: str | None = None) -> dict[str, Any]:
        """Apply the human's action for decision ``step``; raises :class:`SessionError` if it
        cannot be applied (the state is then unchanged)."""
        with self._lock:
            return self._submit(step, action, message)

    def _submit(self, step: int, action: int, message: str | None) -> dict[str, Any]:
        self.last_seen = time.monotonic()
        if self.status != "playing":
            raise SessionError(f"the episode is {self.status}: no more actions")
        if step != self.step:
            raise SessionError(f"stale or duplicate submission for decision {step}; the current "
                               f"decision is {self.step}")  # fmt: skip
        if self.env.agent_selection != self.human_agent:
            raise SessionError("it is not your turn")
        view = self.env.view(self.human_agent)
        if not is_int(action) or action not in view.legal_actions:
            raise SessionError(f"action {action!r} is not legal now")
        if message and not self.game.tags.communication:
            raise SessionError(f"{self.spec.name} has no chat")
        record = {"human": True, "observation_text": self.bundle.text.observation_text(view)}
        try:
            self.driver.play(self.human_agent, int(action), message or None, record)
        except (IllegalActionError, ValueError) as exc:  # e.g. a malformed message: nothing applied
            raise SessionError(str(exc)) from None
        self.step += 1
        self._advance()
        return self.payload()

    def abandon(self) -> None:
        """Record the episode as abandoned (the person left)."""
        with self._lock:
            self._finish("abandoned")
