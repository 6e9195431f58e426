"""Play any agents on any registered game and keep everything: the episode runner.

:func:`play_episode` plays one seeded episode through the one episode driver
(:class:`tom_envs.driver.EpisodeDriver`): each agent gets a :class:`~tom_envs.core.agents.Turn`,
every decision is recorded (action, its text, validity, probe answers, rewards, latency, optional
text observation). An agent that raises or answers with an illegal action does not stop the
episode: the decision is a counted *fallback* (a seeded random legal action, recorded
``"fallback": true`` with the failure's kind and message, never as the agent's own). An episode in
which a seat's fallback share exceeds ``max_fallback_share`` (default 20%) has status ``"failed"``.

:func:`run` plays many seeded episodes, writes one JSONL trajectory per episode atomically, and
returns them; :func:`summarize` turns the finished (status ``"ok"``) episodes into a table of
means with 95% intervals.

**Identity and resume.** Every episode carries its full configuration
(:func:`tom_envs.identity.episode_config`: game id and version, every game argument with its
default resolved, every agent's spec, class and settings, the seed, what is recorded, the suite
version and this schema) and its hash. :func:`run` reuses a trajectory on disk only when its
configuration hash equals the one it would play; a trajectory of a *different* configuration in
the output directory stops the run before anything is played, with a message listing exactly what
changed (:class:`ConfigMismatchError`): results are never mixed or overwritten. Default output
directories include a short hash of the configuration, so a changed configuration goes to a new
directory. A failed episode is written to ``<out>/failed/`` and never reused: the next run plays
it again. Every file ends with the SHA-256 of its own content (``digest``); a finished file whose
content no longer matches it (edited after it was written) stops the run the same way
(:class:`TrajectoryDigestError`) and is never reused.

Trajectory schema, version 3 (one JSON object per line)::

    {"type": "episode", "version": 3, "env_id", "seed", "agents": {agent: spec},
     "env_kwargs" (as given), "config": {...} (see above), "config_hash"}
    {"type": "prompt", "hash", "message"}          # each distinct LLM message of the file, once
    {"type": "step", "index", "joint_step", "agent", "action", "action_text", "valid",
     "fallback" (true when the action is not the agent's own), "failure" ({"kind", "message"}),
     "prediction", "message" (if any), "probes" (question, reply, truth, correct; if asked),
     "rewards" (after a joint action, else null), "latency_s", "info",
     "observation_text_diff" (if text is recorded), "observation" (if requested),
     "error" (if any)}
    {"type": "summary", "status": "ok" | "failed" | ..., "failure" (the reason, or null),
     "returns": {agent: float}, "length", "invalid": {agent: int}, "decisions": {agent: int},
     "fallbacks": {agent: int}, "failures": {agent: {kind: int}},
     "metrics": {...} (``valid_action_pct/<agent>``, ``fallback_pct/<agent>``, the game's
     metrics, ``usage/<key>/<agent>`` sums of agents' ``info["usage"]``), "wall_time_s",
     "digest" (SHA-256 of the file's lines, this one without it: :func:`content_digest`)}

Stored once: ``observation_text_diff`` is the seat's text observation as a diff against that
seat's previous one in the file: a list whose items are ``[start, stop]`` (copy those lines of
the seat's previous observation), a string (a line new to the file: it gets the next line number,
counting from 0 in order of appearance) or an int (a line the file holds already, by number);
:meth:`Episode.read` rebuilds ``observation_text``. Lines are compact JSON; a step's
``prediction``, ``info`` and ``rewards`` are left out when null/empty (read back as such). In each step's ``info["llm_calls"]`` (what LLM agents record: ``messages``,
``reply``, ``usage``, ``latency_s``, ``cache_hit``, ``decoding``), ``messages`` is a list of
hashes into the file's ``prompt`` lines; :meth:`Episode.read` puts the messages back.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tom_envs.core.agents import Agent, with_required_env_kwargs
from tom_envs.core.probes import ORDERS
from tom_envs.driver import EpisodeDriver, FailurePolicy
from tom_envs.identity import (
    SCHEMA_VERSION,
    config_diff,
    config_hash,
    episode_config,
    resolved_env_kwargs,
)
from tom_envs.registration import GameSpec, game_spec

__all__ = [
    "SCHEMA_VERSION",
    "ConfigMismatchError",
    "Episode",
    "OutputWriteError",
    "RunningSummary",
    "TrajectoryDigestError",
    "check_seeds",
    "content_digest",
    "format_table",
    "iter_run",
    "mean_ci95",
    "play_episode",
    "probe_accuracy",
    "run",
    "summarize",
    "usage_totals",
]


#: Episode seeds are whole numbers in [0, SEED_MAX] (what ``reset(seed)`` and the browser take).
SEED_MAX = 2**32 - 1
#: The most episodes one command plays per cell (and, in ``eval``, in all).
EPISODES_MAX = 1_000_000


def check_seeds(seed: object, episodes: object, what: str = "") -> None:
    """ValueError naming the allowed ranges unless ``episodes`` seeds from ``seed`` are possible:
    ``episodes`` a whole number in [1, EPISODES_MAX], every seed in [0, SEED_MAX]."""
    lead = f"{what}: " if what else ""
    for name, value, lo, hi in (("episodes", episodes, 1, EPISODES_MAX),
                                ("seed", seed, 0, SEED_MAX)):  # fmt: skip
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not (
            lo <= int(value) <= hi
        ):
            raise ValueError(f"{lead}{name} must be a whole number in [{lo:,}, {hi:,}], got "
                             f"{value!r}")  # fmt: skip
    last = int(seed) + int(episodes) - 1  # type: ignore[call-overload]
    if last > SEED_MAX:
        raise ValueError(f"{lead}seeds {seed}..{last} pass {SEED_MAX:,}: the last seed must be "
                         f"at most {SEED_MAX:,}")  # fmt: skip


class ConfigMismatchError(ValueError):
    """A trajectory on disk belongs to a different configuration than the one asked for."""


class TrajectoryDigestError(ConfigMismatchError):
    """A finished trajectory on disk whose content no longer matches the digest written with it
    (edited after it was written): it is never reused."""


@dataclass
class Episode:
    """One played episode: header, decisions and summary (the JSONL trajectory in memory)."""

    env_id: str
    seed: int
    agents: dict[str, str]
    env_kwargs: dict[str, Any]
    steps: list[dict[str, Any]] = field(default_factory=list)
    returns: dict[str, float] = field(default_factory=dict)
    invalid: dict[str, int] = field(default_factory=dict)
    length: int = 0
    metrics: dict[str, float] = field(default_factory=dict)
    wall_time_s: float = 0.0
    decisions: dict[str, int] = field(default_factory=dict)
    fallbacks: dict[str, int] = field(default_factory=dict)
    failures: dict[str, dict[str, int]] = field(default_factory=dict)
    status: str = "ok"
    failure: str | None = None
    config: dict[str, Any] | None = None
    config_hash: str | None = None
    #: the member a population seat drew this episode (``population:all`` -> ``tit_for_tat``)
    members: dict[str, str] = field(default_factory=dict)
    #: read from a file: whether its content matches the digest written with it (None: none)
    digest_ok: bool | None = field(default=None, compare=False, repr=False)

    @property
    def ok(self) -> bool:
        """True for a finished episode that passed the failure policy (a result)."""
        return self.status == "ok"

    def fallback_share(self) -> dict[str, float]:
        """Each seat's share of fallback decisions."""
        return {a: self.fallbacks.get(a, 0) / n for a, n in self.decisions.items() if n}

    def records(self) -> list[dict[str, Any]]:
        """The JSONL lines as dicts (text observations as diffs, LLM messages by hash)."""
        head = {
            "type": "episode",
            "version": SCHEMA_VERSION,
            "env_id": self.env_id,
            "seed": self.seed,
            "agents": self.agents,
            "env_kwargs": self.env_kwargs,
            "config": self.config,
            "config_hash": self.config_hash,
        }
        prompts: dict[str, Any] = {}
        texts = _TextTable()
        steps = [_pack_step(s, texts, prompts) for s in self.steps]
        tail = {
            "type": "summary",
            "status": self.status,
            "failure": self.failure,
            "returns": self.returns,
            "length": self.length,
            "invalid": self.invalid,
            "decisions": self.decisions,
            "fallbacks": self.fallbacks,
            "failures": self.failures,
            "metrics": self.metrics,
            "wall_time_s": self.wall_time_s,
        }
        if self.members:
            tail["members"] = self.members
        return [head, *_pack_prompts(prompts), *steps, tail]

    def write(self, path: str | Path) -> Path:
        """Write the trajectory as JSONL, atomically (a crash never leaves half a file); the
        summary line carries the file's ``digest`` (:func:`content_digest`)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        records = self.records()
        lines = [_dumps(rec) for rec in records]
        tail = {**records[-1], "digest": content_digest(lines)}
        lines[-1] = _dumps(tail)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".jsonl")
        try:
            with os.fdopen(fd, "w") as fh:
                for line in lines:
                    fh.write(line + "\n")
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path

    @classmethod
    def read(cls, path: str | Path) -> Episode:
        """Load a trajectory written by :meth:`write` (schema 1 files too, without identity).

        :attr:`digest_ok` says whether the file's content still matches the digest written with
        it (``None``: the file has none)."""
        raw = Path(path).read_text()
        lines = [json.loads(x) for x in raw.splitlines() if x.strip()]
        if not lines:
            raise ValueError(f"{path} is not a complete tom-envs trajectory")
        head, tail = lines[0], lines[-1]
        if head.get("type") != "episode" or tail.get("type") != "summary":
            raise ValueError(f"{path} is not a complete tom-envs trajectory")
        digest_ok: bool | None = None
        if "digest" in tail:  # byte for byte: the file as written, without its digest field
            found = _DIGEST_FIELD.search(raw)
            digest_ok = found is not None and found.group(2) == hashlib.sha256(
                (raw[: found.start(1)] + "}\n").encode("utf-8")
            ).hexdigest()
        ep = cls(head["env_id"], head["seed"], head["agents"], head["env_kwargs"])
        ep.config, ep.config_hash = head.get("config"), head.get("config_hash")
        prompts = _unpack_prompts(x for x in lines[1:-1] if x.get("type") == "prompt")
        texts = _TextTable()
        ep.steps = [_unpack_step(s, texts, prompts) for s in lines[1:-1] if s.get("type") == "step"]
        ep.returns, ep.length, ep.invalid = tail["returns"], tail["length"], tail["invalid"]
        ep.metrics, ep.wall_time_s = tail["metrics"], tail["wall_time_s"]
        ep.status, ep.failure = tail.get("status", "ok"), tail.get("failure")
        ep.decisions = tail.get("decisions") or {}
        ep.fallbacks = tail.get("fallbacks") or {}
        ep.failures = tail.get("failures") or {}
        ep.members = tail.get("members") or {}
        ep.digest_ok = digest_ok
        return ep


#: The digest field the writer appends to the last line (:meth:`Episode.write`).
_DIGEST_FIELD = re.compile(r'(,"digest":"([0-9a-f]{64})"\}\n)\Z')


def content_digest(lines: Sequence[str]) -> str:
    """SHA-256 of a trajectory's lines (the summary line without its ``digest``), as written."""
    h = hashlib.sha256()
    for line in lines:
        h.update(line.encode("utf-8") + b"\n")
    return h.hexdigest()


def _message_hash(message: Any) -> str:
    blob = json.dumps(message, sort_keys=True, default=_json_default, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _dumps(record: Mapping[str, Any]) -> str:
    return json.dumps(record, default=_json_default, ensure_ascii=False, separators=(",", ":"))


#: Step fields left out of the file when they hold their default (restored on reading).
_DEFAULTS: dict[str, Any] = {"prediction": None, "info": {}, "rewards": None}


class _TextTable:
    """Per file: every distinct line of text observations once, and each seat's previous one."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.ids: dict[str, int] = {}
        self.previous: dict[str, list[str]] = {}

    def pack(self, agent: str, text: str) -> list[Any]:
        """The observation as ops: ``[a, b]`` copies lines ``a:b`` of the seat's previous one,
        an int is a line seen before in the file, a string is a new line (it gets the next id)."""
        new = text.split("\n")
        old = self.previous.get(agent, [])
        ops: list[Any] = []
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                ops.append([i1, i2])
            elif tag in ("replace", "insert"):
                for line in new[j1:j2]:
                    k = self.ids.get(line)
                    if k is None:
                        self.ids[line] = len(self.lines)
                        self.lines.append(line)
                        ops.append(line)
                    else:
                        ops.append(k)
        self.previous[agent] = new
        return ops

    def unpack(self, agent: str, ops: Sequence[Any]) -> str:
        """The text :meth:`pack` encoded."""
        old = self.previous.get(agent, [])
        out: list[str] = []
        for op in ops:
            if isinstance(op, list):
                out.extend(old[op[0] : op[1]])
            elif isinstance(op, int):
                out.append(self.lines[op])
            else:
                self.lines.append(op)
                out.append(op)
        self.previous[agent] = out
        return "\n".join(out)


def _pack_prompts(prompts: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The file's prompt table: each distinct message once, its text as a line diff against the
    previous message of the same role (an LLM's prompt repeats the last one's history, so the
    table grows with the new lines only, not with the square of the episode's length)."""
    texts = _TextTable()
    table = []
    for h, m in prompts.items():
        if isinstance(m, Mapping) and isinstance(m.get("content"), str):
            rest = {k: v for k, v in m.items() if k != "content"}
            ops = texts.pack(f"role:{m.get('role')}", m["content"])
            table.append({"type": "prompt", "hash": h, "message": rest, "content_diff": ops})
        else:
            table.append({"type": "prompt", "hash": h, "message": m})
    return table


def _unpack_prompts(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """``{hash: message}`` from the prompt lines, in file order (see :func:`_pack_prompts`)."""
    texts = _TextTable()
    out: dict[str, Any] = {}
    for r in records:
        m = r["message"]
        if "content_diff" in r:
            m = {**m, "content": texts.unpack(f"role:{m.get('role')}", r["content_diff"])}
        out[r["hash"]] = m
    return out


def _pack_step(
    step: Mapping[str, Any], texts: _TextTable, prompts: dict[str, Any]
) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "step"}
    for key, value in step.items():
        if key in _DEFAULTS and value == _DEFAULTS[key]:
            continue
        if key == "observation_text" and isinstance(value, str):
            out["observation_text_diff"] = texts.pack(step["agent"], value)
        elif key == "info" and isinstance(value, Mapping) and value.get("llm_calls"):
            info = dict(value)
            calls = []
            for call in info["llm_calls"]:
                if isinstance(call, Mapping) and isinstance(call.get("messages"), list):
                    hashes = []
                    for m in call["messages"]:
                        h = _message_hash(m)
                        prompts.setdefault(h, m)
                        hashes.append(h)
                    call = {**call, "messages": hashes}
                calls.append(call)
            info["llm_calls"] = calls
            out["info"] = info
        else:
            out[key] = value
    return out


def _unpack_step(
    record: Mapping[str, Any], texts: _TextTable, prompts: Mapping[str, Any]
) -> dict[str, Any]:
    step: dict[str, Any] = {}
    for key, value in record.items():
        if key == "type":
            continue
        if key == "observation_text_diff":
            step["observation_text"] = texts.unpack(record["agent"], value)
        elif key == "info" and isinstance(value, Mapping) and value.get("llm_calls"):
            info = dict(value)
            info["llm_calls"] = [
                {**c, "messages": [prompts.get(h, h) for h in c["messages"]]}
                if isinstance(c, Mapping) and isinstance(c.get("messages"), list)
                else c
                for c in info["llm_calls"]
            ]
            step["info"] = info
        else:
            step[key] = value
    for key, default in _DEFAULTS.items():
        if key not in step:
            step[key] = {} if isinstance(default, dict) else default
    return step


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return str(obj)


def play_episode(
    game: GameSpec | str,
    agents: Sequence[Agent],
    seed: int,
    env_kwargs: Mapping[str, Any] | None = None,
    record_text: bool = False,
    record_observations: bool = False,
    env: Any = None,
    policy: FailurePolicy | None = None,
    config: Mapping[str, Any] | None = None,
) -> Episode:
    """Play one seeded episode with one agent per seat, recording every decision.

    Args:
        game: a :class:`GameSpec` or a game name/id.
        agents: one agent per seat, in seat order.
        seed: the episode seed (the env's ``reset(seed)`` and every agent's generator).
        env_kwargs: overrides of the game's keyword arguments (with the arguments the agents
            require added: :func:`~tom_envs.core.agents.with_required_env_kwargs`).
        record_text: also record the text observation each agent was shown.
        record_observations: also record the vector observation.
        env: an AEC env to reuse (made from ``game`` when omitted).
        policy: the failure policy (default: fall back, fail the episode above 20% fallbacks).
        config: the episode's configuration (computed with :func:`episode_config` when omitted).
    """
    spec = game if isinstance(game, GameSpec) else game_spec(game)
    env_kwargs = with_required_env_kwargs(spec, agents, env_kwargs)  # the agents' protocol
    driver = EpisodeDriver(
        spec,
        agents,
        seed,
        env_kwargs,
        env=env,
        policy=policy,
        record_text=record_text,
        record_observations=record_observations,
    )
    episode = driver.run()
    if config is None:
        record = {"text": record_text, "observations": record_observations}
        config = episode_config(spec, env_kwargs, agents, seed, record, driver.resolved_kwargs)
    episode.config = dict(config)
    episode.config_hash = config_hash(config)
    return episode


def usage_totals(steps: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Per-agent sums of the numbers agents report in ``info["usage"]`` (LLM calls, tokens, ...).

    An agent that puts ``{"tokens_in": 312, "calls": 1}`` in a step's ``info["usage"]`` gets
    ``usage/tokens_in/<agent>`` and ``usage/calls/<agent>`` in the episode's metrics.
    """
    out: dict[str, float] = {}
    for step in steps:
        usage = (step.get("info") or {}).get("usage")
        if not isinstance(usage, Mapping):
            continue
        for key, value in usage.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                name = f"usage/{key}/{step['agent']}"
                out[name] = out.get(name, 0.0) + float(value)
    return out


def probe_accuracy(steps: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Probe accuracy (percent) per order and per kind, and the valid-action share, per agent."""
    hits: dict[str, list[bool]] = {}
    for step in steps:
        for p in step.get("probes") or ():
            order = ORDERS.get(p["order"], f"order{p['order']}")
            for key in (f"probe_acc/{order}", f"probe_acc/{p['kind']}", "probe_acc/all"):
                hits.setdefault(key, []).append(bool(p["correct"]))
    out = {k: 100.0 * sum(v) / len(v) for k, v in hits.items()}
    per_agent: dict[str, list[bool]] = {}
    for step in steps:
        per_agent.setdefault(step["agent"], []).append(bool(step["valid"]))
    for agent, valid in per_agent.items():
        out[f"valid_action_pct/{agent}"] = 100.0 * sum(valid) / len(valid)
    return out


def run_config(
    spec: GameSpec,
    agents: Sequence[Agent],
    env_kwargs: Mapping[str, Any] | None = None,
    record: Mapping[str, bool] | None = None,
) -> dict[str, Any]:
    """The configuration of a run without its seed (what default output directories hash)."""
    cfg = episode_config(spec, env_kwargs, agents, None, record)
    cfg.pop("seed")
    return cfg


def reusable(path: Path, expected: Mapping[str, Any], policy: FailurePolicy) -> Episode | None:
    """The episode at ``path`` if it is a finished result of exactly ``expected``, else ``None``.

    Raises :class:`ConfigMismatchError` naming every difference when the file is a complete
    trajectory of another configuration.
    """
    if not path.exists():
        return None
    try:
        ep = Episode.read(path)
    except (ValueError, KeyError, IndexError, TypeError, json.JSONDecodeError):
        return None  # half-written or damaged: played again
    if ep.digest_ok is False:
        raise _digest_error(path, "was edited after it was written (its content no longer "
                            "matches the digest written with it)")  # fmt: skip
    want = config_hash(expected)
    if ep.config_hash != want:
        if ep.config is None:
            changes = [f"the file has no configuration (schema {_schema_of(path)})"]
        else:
            changes = config_diff(ep.config, expected) or ["configuration hash differs"]
        raise ConfigMismatchError(
            f"{path} holds a result of another configuration; changed: "
            + "; ".join(changes)
            + ". Use another output directory (the default one includes the configuration's hash)"
            " or remove the old results"
        )
    if ep.digest_ok is None:
        raise _digest_error(path, f"has no content digest (schema {_schema_of(path)})")
    if not ep.ok or any(v > policy.max_fallback_share for v in ep.fallback_share().values()):
        return None  # not a result under this policy: played again
    return ep


def _digest_error(path: Path, why: str) -> TrajectoryDigestError:
    return TrajectoryDigestError(
        f"{path} {why}: it is not reused as a result. Remove it (it is played again) or use "
        "another output directory"
    )


def _schema_of(path: Path) -> Any:
    try:
        return json.loads(path.read_text().splitlines()[0]).get("version", 1)
    except (ValueError, IndexError, OSError):
        return "unknown"


def failed_path(path: Path) -> Path:
    """Where a failed episode of ``path`` goes (``<dir>/failed/<name>``)."""
    return path.parent / "failed" / path.name


class OutputWriteError(RuntimeError):
    """A trajectory could not be written (disk full, read-only folder, ...). Every episode
    finished before it is on disk; the same command resumes once the cause is fixed."""

    def __init__(self, path: Path, error: OSError, kept: int) -> None:
        import errno

        code = errno.errorcode.get(error.errno or 0, "")
        why = f"{error.strerror or error}" + (f" ({code})" if code else "")
        super().__init__(
            f"cannot write {path}: {why}. The {kept} episode(s) finished before it are kept in "
            f"{path.parent}/; free space (or fix the folder) and run the same command again to "
            "resume"
        )
        self.path, self.error, self.kept = path, error, kept


def run(
    game: GameSpec | str,
    agent_factories: Sequence[Callable[[], Agent]],
    episodes: int,
    seed: int = 0,
    out_dir: str | Path | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    record_text: bool = False,
    progress: Callable[[int, Episode], None] | None = None,
    policy: FailurePolicy | None = None,
) -> list[Episode]:
    """Play ``episodes`` episodes (seeds ``seed, seed+1, …``), writing each trajectory if asked.

    A trajectory already in ``out_dir`` is reused only when it is a finished result of exactly
    this configuration (see the module docstring); every file is checked before the first episode
    is played, and one of another configuration raises :class:`ConfigMismatchError`. Failed
    episodes are returned too (``status == "failed"``) and written under ``out_dir/failed/``.
    Every episode is kept in the returned list: :func:`iter_run` keeps none (bounded memory).
    """
    return list(iter_run(game, agent_factories, episodes, seed, out_dir, env_kwargs,
                         record_text, progress, policy))  # fmt: skip


def iter_run(
    game: GameSpec | str,
    agent_factories: Sequence[Callable[[], Agent]],
    episodes: int,
    seed: int = 0,
    out_dir: str | Path | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    record_text: bool = False,
    progress: Callable[[int, Episode], None] | None = None,
    policy: FailurePolicy | None = None,
) -> Iterator[Episode]:
    """:func:`run` one episode at a time: each is written to disk as it finishes, then yielded,
    and nothing is kept, so memory stays bounded for any number of episodes (the command line
    sums them with :class:`RunningSummary`). Every file in ``out_dir`` is checked (and let go)
    before the first episode is played. A trajectory that cannot be written raises
    :class:`OutputWriteError`; the episodes before it stay on disk."""
    spec = game if isinstance(game, GameSpec) else game_spec(game)
    policy = policy or FailurePolicy()
    agents = [f() for f in agent_factories]
    env_kwargs = with_required_env_kwargs(spec, agents, env_kwargs)  # the agents' protocol
    env = spec.load().raw_env(**{**spec.kwargs, **(env_kwargs or {})})
    resolved = resolved_env_kwargs(spec, env_kwargs)
    record = {"text": record_text, "observations": False}
    base = episode_config(spec, env_kwargs, agents, None, record, resolved)

    def config(i: int) -> dict[str, Any]:
        return {**base, "seed": seed + i}

    def path_of(i: int) -> Path | None:
        return Path(out_dir) / f"episode_{seed + i:06d}.jsonl" if out_dir is not None else None

    reuse = set()
    if out_dir is not None and Path(out_dir).is_dir():  # every file checked before anything plays
        for i in range(episodes):
            path = path_of(i)
            if path is not None and path.exists() and reusable(path, config(i), policy):
                reuse.add(i)
    for i in range(episodes):
        path = path_of(i)
        ep = reusable(path, config(i), policy) if i in reuse and path is not None else None
        if ep is None:
            ep = play_episode(spec, agents, seed + i, env_kwargs, record_text=record_text,
                              env=env, policy=policy, config=config(i))  # fmt: skip
            if path is not None:
                target = path if ep.ok else failed_path(path)
                try:
                    ep.write(target)
                    (failed_path(path) if ep.ok else path).unlink(missing_ok=True)
                except OSError as exc:
                    raise OutputWriteError(target, exc, i) from None
        if progress is not None:
            progress(i, ep)
        yield ep


class RunningSummary:
    """What :func:`summarize` and :func:`failure_report` say, from episodes seen one at a time:
    running sums only (bounded memory for any number of episodes)."""

    def __init__(self) -> None:
        self.episodes = 0
        self.ok = 0
        self._stats: dict[str, list[float]] = {}  # key -> [n, mean, M2] (Welford)
        self._decisions: dict[str, list[int]] = {}  # seat -> [decisions, fallbacks]
        self._names: dict[str, str] = {}
        self._first: dict[str, str] = {}
        self.failed: list[str] = []  # the first 20 failed episodes' reasons
        self.failed_count = 0

    def _add(self, key: str, x: float) -> None:
        s = self._stats.setdefault(key, [0.0, 0.0, 0.0])
        if isinstance(x, float) and math.isnan(x):
            return
        s[0] += 1
        d = x - s[1]
        s[1] += d / s[0]
        s[2] += d * (x - s[1])

    def add(self, ep: Episode) -> None:
        """Count one episode (its steps are read for the first failure's cause, then let go)."""
        self.episodes += 1
        for a, n in ep.decisions.items():
            t = self._decisions.setdefault(a, [0, 0])
            t[0] += n
            t[1] += ep.fallbacks.get(a, 0)
            self._names.setdefault(a, ep.agents.get(a, a))
            if a not in self._first and ep.fallbacks.get(a):
                cause = _first_failure(ep, a)
                if cause is not None:
                    self._first[a] = cause
        if not ep.ok:
            self.failed_count += 1
            if len(self.failed) < 20:
                self.failed.append(f"seed {ep.seed}: {ep.failure or ep.status}")
            return
        self.ok += 1
        for a, r in ep.returns.items():
            self._add(f"return/{a}", float(r))
        for a, n in ep.invalid.items():
            self._add(f"invalid/{a}", float(n))
        self._add("length", float(ep.length))
        for k, v in ep.metrics.items():
            if isinstance(v, (int, float)):
                self._add(k, float(v))

    def summary(self) -> dict[str, tuple[float, float]]:
        """Mean and 95% half-width per key over the finished episodes (as :func:`summarize`)."""
        out = {}
        for k, (n, mean, m2) in self._stats.items():
            if n == 0:
                out[k] = (float("nan"), float("nan"))
            elif n == 1:
                out[k] = (mean, float("nan"))
            else:
                out[k] = (mean, 1.96 * math.sqrt(max(m2, 0.0) / (n - 1)) / math.sqrt(n))
        return out

    def failure_report(self) -> tuple[list[str], list[str]]:
        """``(every_decision_failed, failed_episodes)`` as :func:`failure_report` says them (the
        failed list holds the first 20)."""
        every = [
            f"{a} ({self._names[a]}) failed on every decision ({f} of {n}); cause: "
            f"{self._first.get(a, 'unknown')}"
            for a, (n, f) in self._decisions.items()
            if n and f == n
        ]
        return every, list(self.failed)


def failure_report(episodes: Sequence[Episode]) -> tuple[list[str], list[str]]:
    """``(every_decision_failed, failed_episodes)``: messages for the command line.

    The first lists each seat whose agent failed on every one of its decisions in every episode
    (the cause of its first failure named); the second, each failed episode's reason.
    """
    total: dict[str, list[int]] = {}
    first: dict[str, str] = {}
    names: dict[str, str] = {}
    for ep in episodes:
        for a, n in ep.decisions.items():
            t = total.setdefault(a, [0, 0])
            t[0] += n
            t[1] += ep.fallbacks.get(a, 0)
            names.setdefault(a, ep.agents.get(a, a))
            if a not in first and ep.fallbacks.get(a):
                cause = _first_failure(ep, a)
                if cause is not None:
                    first[a] = cause
    every = [
        f"{a} ({names[a]}) failed on every decision ({f} of {n}); cause: {first.get(a, 'unknown')}"
        for a, (n, f) in total.items()
        if n and f == n
    ]
    failed = [f"seed {ep.seed}: {ep.failure or ep.status}" for ep in episodes if not ep.ok]
    return every, failed


def _first_failure(ep: Episode, agent: str) -> str | None:
    """The cause of ``agent``'s first fallback in ``ep`` (``kind: message``)."""
    step = next((s for s in ep.steps if s["agent"] == agent and s.get("fallback")), None)
    if step is not None and step.get("failure"):
        return f"{step['failure']['kind']}: {step['failure']['message']}"
    if ep.failures.get(agent):
        return ", ".join(ep.failures[agent])
    return None


def mean_ci95(values: Iterable[float]) -> tuple[float, float]:
    """Mean and half-width of the normal-approximation 95% interval (1.96 standard errors)."""
    arr = np.asarray([v for v in values if not (isinstance(v, float) and math.isnan(v))], float)
    if arr.size == 0:
        return float("nan"), float("nan")
    if arr.size == 1:
        return float(arr[0]), float("nan")
    return float(arr.mean()), float(1.96 * arr.std(ddof=1) / math.sqrt(arr.size))


def summarize(episodes: Sequence[Episode]) -> dict[str, tuple[float, float]]:
    """Mean and 95% half-width of every return, invalid count and metric over the finished
    episodes (failed ones are not results and are left out)."""
    episodes = [ep for ep in episodes if ep.ok]
    if not episodes:
        return {}
    keys: dict[str, list[float]] = {}
    for ep in episodes:
        for a, r in ep.returns.items():
            keys.setdefault(f"return/{a}", []).append(r)
        for a, n in ep.invalid.items():
            keys.setdefault(f"invalid/{a}", []).append(float(n))
        keys.setdefault("length", []).append(float(ep.length))
        for k, v in ep.metrics.items():
            if isinstance(v, (int, float)):
                keys.setdefault(k, []).append(float(v))
    return {k: mean_ci95(v) for k, v in keys.items()}


def format_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """A markdown table."""

    def cell(v: Any) -> str:
        if isinstance(v, tuple) and len(v) == 2:
            m, h = v
            return f"{m:.3f}" if math.isnan(h) else f"{m:.3f} ± {h:.3f}"
        if isinstance(v, float):
            return f"{v:.3f}"
        return str(v)

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        lines.append("| " + " | ".join(cell(row.get(c, "")) for c in columns) + " |")
    return "\n".join(lines)
