"""Episodes as records: the one home of :class:`Episode`, its JSONL trajectory format (write,
read, content digest), the totals an episode carries (usage, probe accuracy) and the statistics
over episodes (:func:`mean_ci95`, the one 95% interval of a mean; :func:`bootstrap_ci`, a seeded
percentile bootstrap; :func:`wilson`, the interval of a proportion; :func:`summarize` and
:class:`RunningSummary`).

This module sits beneath the episode driver (:mod:`tom_envs.driver` builds an :class:`Episode`)
and the runner (:mod:`tom_envs.runner` plays, writes and resumes them); it imports neither. Tables,
reports, the web app and the agent packages read episodes through it.

Trajectory schema, version 3 (one JSON object per line)::

    {"type": "episode", "version": 3, "env_id", "seed", "agents": {agent: spec},
     "env_kwargs" (as given), "config": {...} (see above), "config_hash"}
    {"type": "prompt", "hash", "message"}          # each distinct LLM message of the file, once
    {"type": "step", "index", "joint_step", "agent", "action", "action_text", "valid",
     "fallback" (true when the action is not the agent's own), "failure" ({"kind", "message"}),
     "prediction", "message" (if any), "probes" (question, reply, truth, correct; if asked),
     "predict" (open next-action probes put to the agent: :mod:`tom_envs.partners.prediction`),
     "policy" (the acting partner's known action distribution, when prediction is on),
     "rewards" (after a joint action, else null), "latency_s", "info",
     "observation_text_diff" (if text is recorded), "observation" (if requested),
     "error" (if any)}
    {"type": "summary", "status": "ok" | "failed" | ..., "failure" (the reason, or null),
     "returns": {agent: float}, "length", "invalid": {agent: int}, "decisions": {agent: int},
     "fallbacks": {agent: int}, "failures": {agent: {kind: int}},
     "switch" (a switching partner's switch, if any: {seat: {"from", "to", "at_decision",
     "at_joint_step"}}), "session" (if any: {"id", "index", "length", "seed"}),
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
from typing import Any, TypeVar

import numpy as np

from tom_envs.core.probes import ORDERS, Z95
from tom_envs.identity import SCHEMA_VERSION

__all__ = [
    "SCHEMA_VERSION",
    "Z95",
    "Z_NORMAL",
    "Episode",
    "RunningSummary",
    "bootstrap_ci",
    "content_digest",
    "format_table",
    "half_width",
    "mean_ci95",
    "probe_accuracy",
    "summarize",
    "usage_totals",
    "wilson",
]

_T = TypeVar("_T")


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
    #: a switching partner's switch, for the scorer (:mod:`tom_envs.partners.switching`):
    #: ``{seat: {"from", "to", "at_decision", "at_joint_step", ...}}``
    switch: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: the session this episode belongs to (``{"id", "index", "length", "seed"}``), or None
    session: dict[str, Any] | None = None
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
        tail.update({key: value for key in ("members", "switch") if (value := getattr(self, key))})
        if self.session is not None:
            tail["session"] = self.session
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
        ep.switch = tail.get("switch") or {}
        ep.session = tail.get("session")
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



def _result_values(ep: Episode) -> Iterator[tuple[str, float]]:
    """``(key, value)`` of everything a finished episode is summarised by: each seat's return and
    invalid count, the length, every numeric metric."""
    for a, r in ep.returns.items():
        yield f"return/{a}", float(r)
    for a, n in ep.invalid.items():
        yield f"invalid/{a}", float(n)
    yield "length", float(ep.length)
    for k, v in ep.metrics.items():
        if isinstance(v, (int, float)):
            yield k, float(v)


class RunningSummary:
    """What :func:`summarize` says, and which seats and episodes failed, from episodes seen one at
    a time: running sums only (bounded memory for any number of episodes)."""

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
        if math.isnan(x):
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
        for key, value in _result_values(ep):
            self._add(key, value)

    def summary(self) -> dict[str, tuple[float, float]]:
        """Mean and 95% half-width per key over the finished episodes (as :func:`summarize`)."""
        out = {}
        for k, (n, mean, m2) in self._stats.items():
            if n == 0:
                out[k] = (float("nan"), float("nan"))
            else:
                out[k] = (mean, half_width(math.sqrt(max(m2, 0.0) / (n - 1)) if n > 1 else 0.0,
                                           int(n)))  # fmt: skip
        return out

    def failure_report(self) -> tuple[list[str], list[str]]:
        """``(every_decision_failed, failed_episodes)``: messages for the command line.

        The first lists each seat whose agent failed on every one of its decisions in every
        episode (the cause of its first failure named); the second, the first 20 failed episodes'
        reasons."""
        every = [
            f"{a} ({self._names[a]}) failed on every decision ({f} of {n}); cause: "
            f"{self._first.get(a, 'unknown')}"
            for a, (n, f) in self._decisions.items()
            if n and f == n
        ]
        return every, list(self.failed)


def _first_failure(ep: Episode, agent: str) -> str | None:
    """The cause of ``agent``'s first fallback in ``ep`` (``kind: message``)."""
    step = next((s for s in ep.steps if s["agent"] == agent and s.get("fallback")), None)
    if step is not None and step.get("failure"):
        return f"{step['failure']['kind']}: {step['failure']['message']}"
    if ep.failures.get(agent):
        return ", ".join(ep.failures[agent])
    return None


# ----------------------------------------------------------------------------- intervals
#: The normal quantile of every mean's 95% interval in the suite's tables and reports ("1.96
#: standard errors", as the results pages say).
Z_NORMAL = 1.96
# Z95 (tom_envs.core.probes): the exact two-sided 95% normal quantile, :func:`wilson`'s default.


def half_width(sd: float, n: int) -> float:
    """Half-width of the normal-approximation 95% interval of a mean of ``n`` values with sample
    standard deviation ``sd``: ``1.96 sd / sqrt(n)`` (``nan`` for fewer than two values, which
    give no interval). The one formula behind :func:`mean_ci95` and :class:`RunningSummary`."""
    if n < 2:
        return float("nan")
    return float(Z_NORMAL * sd / math.sqrt(n))


def mean_ci95(values: Iterable[float]) -> tuple[float, float]:
    """Mean and half-width of the normal-approximation 95% interval (1.96 standard errors),
    ``nan`` values left out: ``(nan, nan)`` without values, ``(x, nan)`` for one value."""
    arr = np.asarray([v for v in values if not (isinstance(v, float) and math.isnan(v))], float)
    if arr.size == 0:
        return float("nan"), float("nan")
    if arr.size == 1:
        return float(arr[0]), float("nan")
    return float(arr.mean()), half_width(float(arr.std(ddof=1)), int(arr.size))


def bootstrap_ci(
    items: Sequence[_T],
    seed: int,
    statistic: Callable[[list[_T]], float] | None = None,
    *,
    resamples: int = 10_000,
    level: float = 0.95,
) -> tuple[float, float, float]:
    """``(estimate, low, high)``: the statistic of ``items`` and its seeded percentile-bootstrap
    interval.

    ``items`` are the units resampled with replacement (episodes, or one number per episode);
    ``statistic`` maps a resample to a number (default: the mean of numbers). The same ``seed``
    gives the same interval (``numpy.random.default_rng(seed)``); no global generator is touched.
    With fewer than two items there is no interval (``nan`` bounds).
    """
    if not isinstance(resamples, int) or isinstance(resamples, bool) or resamples < 1:
        raise ValueError(f"resamples must be a whole number >= 1, got {resamples!r}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    n = len(items)
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(resamples, n))
    if statistic is None:
        values = np.asarray(items, dtype=float)
        estimate, stats = float(values.mean()), values[idx].mean(axis=1)
    else:
        estimate = float(statistic(list(items)))
        stats = np.asarray([statistic([items[i] for i in row]) for row in idx], dtype=float)
    if n < 2:
        return estimate, float("nan"), float("nan")
    tail = 100.0 * (1.0 - level) / 2.0
    low, high = np.percentile(stats, [tail, 100.0 - tail])
    return estimate, float(low), float(high)


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of the proportion ``successes / n``, as fractions (``(nan, nan)``
    when ``n == 0``): the interval of a share (deals won, correct answers), where the normal
    approximation of :func:`mean_ci95` fails near 0 and 1."""
    if n <= 0:
        return float("nan"), float("nan")
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def summarize(episodes: Sequence[Episode]) -> dict[str, tuple[float, float]]:
    """Mean and 95% half-width of every return, invalid count and metric over the finished
    episodes (failed ones are not results and are left out)."""
    keys: dict[str, list[float]] = {}
    for ep in episodes:
        if ep.ok:
            for key, value in _result_values(ep):
                keys.setdefault(key, []).append(value)
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
