"""Play any agents on any registered game and keep everything: the episode runner.

:func:`play_episode` drives the PettingZoo AEC environment, hands each agent a
:class:`~tom_envs.core.agents.Turn`, and records one JSON-ready dict per decision (action, its text,
validity, probe answers, rewards, latency, optional text observation). An agent that raises or
answers with an illegal action does not stop the episode: the error is recorded, the decision is
counted invalid and a seeded random legal action is played instead.

:func:`run` plays many seeded episodes, writes one JSONL trajectory per episode atomically, and
returns them; :func:`summarize` turns episodes into a table of means with 95% intervals.

Trajectory schema (one JSON object per line)::

    {"type": "episode", "env_id", "seed", "agents": {agent: spec}, "env_kwargs", "version"}
    {"type": "step", "index", "joint_step", "agent", "action", "action_text", "valid",
     "prediction", "message" (if any), "probes" (question, reply, truth, correct; if asked),
     "rewards" (after a joint action, else null), "latency_s", "info",
     "observation_text" (if requested), "observation" (if requested), "error" (if any)}
    {"type": "summary", "returns": {agent: float}, "length", "invalid": {agent: int},
     "metrics": {...} (including ``usage/<key>/<agent>`` sums of agents' ``info["usage"]``),
     "wall_time_s"}
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tom_envs.core.agents import Agent, AgentAction, EpisodeInfo, Turn, as_agent_action
from tom_envs.core.game import agent_index
from tom_envs.core.probes import ORDERS, score_answers
from tom_envs.registration import GameSpec, game_spec

SCHEMA_VERSION = 1


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

    def records(self) -> list[dict[str, Any]]:
        """The JSONL lines as dicts."""
        head = {
            "type": "episode",
            "version": SCHEMA_VERSION,
            "env_id": self.env_id,
            "seed": self.seed,
            "agents": self.agents,
            "env_kwargs": self.env_kwargs,
        }
        tail = {
            "type": "summary",
            "returns": self.returns,
            "length": self.length,
            "invalid": self.invalid,
            "metrics": self.metrics,
            "wall_time_s": self.wall_time_s,
        }
        return [head, *({"type": "step", **s} for s in self.steps), tail]

    def write(self, path: str | Path) -> Path:
        """Write the trajectory as JSONL, atomically (a crash never leaves half a file)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".jsonl")
        try:
            with os.fdopen(fd, "w") as fh:
                for rec in self.records():
                    fh.write(json.dumps(rec, default=_json_default) + "\n")
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path

    @classmethod
    def read(cls, path: str | Path) -> Episode:
        """Load a trajectory written by :meth:`write`."""
        lines = [json.loads(x) for x in Path(path).read_text().splitlines() if x.strip()]
        head, tail = lines[0], lines[-1]
        if head.get("type") != "episode" or tail.get("type") != "summary":
            raise ValueError(f"{path} is not a complete tom-envs trajectory")
        ep = cls(head["env_id"], head["seed"], head["agents"], head["env_kwargs"])
        ep.steps = [{k: v for k, v in s.items() if k != "type"} for s in lines[1:-1]]
        ep.returns, ep.length, ep.invalid = tail["returns"], tail["length"], tail["invalid"]
        ep.metrics, ep.wall_time_s = tail["metrics"], tail["wall_time_s"]
        return ep


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return str(obj)


def _spec_name(agent: Agent) -> str:
    return str(getattr(agent, "spec", None) or getattr(agent, "name", type(agent).__name__))


def play_episode(
    game: GameSpec | str,
    agents: Sequence[Agent],
    seed: int,
    env_kwargs: Mapping[str, Any] | None = None,
    record_text: bool = False,
    record_observations: bool = False,
    env: Any = None,
) -> Episode:
    """Play one seeded episode with one agent per seat, recording every decision.

    Args:
        game: a :class:`GameSpec` or a game name/id.
        agents: one agent per seat, in seat order.
        seed: the episode seed (the env's ``reset(seed)`` and every agent's generator).
        env_kwargs: overrides of the game's keyword arguments.
        record_text: also record the text observation each agent was shown.
        record_observations: also record the vector observation.
        env: an AEC env to reuse (made from ``game`` when omitted).
    """
    spec = game if isinstance(game, GameSpec) else game_spec(game)
    kwargs = {**spec.kwargs, **(env_kwargs or {})}
    env = env if env is not None else spec.load().raw_env(**kwargs)
    base = env.unwrapped
    if len(agents) != len(base.possible_agents):
        raise ValueError(
            f"{spec.name} has {len(base.possible_agents)} seats, got {len(agents)} agents"
        )
    names = {a: _spec_name(agents[i]) for i, a in enumerate(base.possible_agents)}
    episode = Episode(spec.id, seed, names, dict(env_kwargs or {}))
    t0 = time.perf_counter()
    env.reset(seed=seed)
    game_obj = base.game
    for i, agent_obj in enumerate(agents):
        agent_obj.reset(
            EpisodeInfo(
                env_id=spec.id,
                agent=base.possible_agents[i],
                player=i,
                num_players=game_obj.num_players,
                num_actions=game_obj.num_actions,
                seed=seed,
                reward_range=game_obj.reward_range,
                max_steps=game_obj.max_steps,
                tags=game_obj.tags,
            )
        )
    fallback_rng = np.random.default_rng([seed, 7919])
    decisions = dict.fromkeys(base.possible_agents, 0)
    returns = dict.fromkeys(base.possible_agents, 0.0)
    invalid = dict.fromkeys(base.possible_agents, 0)
    joint_steps = 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        player = agent_index(agent)
        agent_obj = agents[player]
        turn = Turn(
            agent=agent,
            player=player,
            view=base.view(agent),
            observation=obs["observation"],
            action_mask=obs["action_mask"],
            reward=float(reward),
            decision=decisions[agent],
            _text=lambda a=agent: base.text_observation(a),
            _parse=lambda text, a=agent: base.parse_action(a, text),
        )
        if term or trunc:
            end = getattr(agent_obj, "end_episode", None)
            if end is not None:
                end(turn)
            env.step(None)
            continue
        record: dict[str, Any] = {
            "index": len(episode.steps),
            "joint_step": joint_steps,
            "agent": agent,
        }
        if record_text:
            record["observation_text"] = base.text_observation(agent).observation
        if record_observations:
            record["observation"] = obs["observation"]
        start = time.perf_counter()
        error = None
        try:
            choice = as_agent_action(agent_obj.act(turn))
        except Exception as exc:  # an agent's failure is recorded, never fatal
            choice = AgentAction(action=None, valid=False)
            error = f"{type(exc).__name__}: {exc}"
            record["traceback"] = traceback.format_exc(limit=3)
        record["latency_s"] = time.perf_counter() - start
        legal = turn.legal_actions
        action = choice.action
        valid = choice.valid
        if action is None or int(action) not in legal:
            if error is None:
                error = f"illegal action {action!r}; legal: {list(legal)}"
            action = int(legal[int(fallback_rng.integers(len(legal)))])
            valid = False
        if not valid:
            invalid[agent] += 1
        view = turn.view
        record.update(
            action=int(action),
            action_text=base.bundle.text.action_text(view, int(action)),
            valid=valid,
            prediction=choice.prediction,
            info=choice.info,
        )
        if error is not None:
            record["error"] = error
        answer_probes = getattr(agent_obj, "answer_probes", None)
        probes = base.probes(agent) if answer_probes is not None else []
        if probes:
            try:
                answers = answer_probes(turn, probes)
            except Exception as exc:  # a failing probe answer is recorded, never fatal
                answers = {}
                record["probe_error"] = f"{type(exc).__name__}: {exc}"
            record["probes"] = score_answers(probes, answers or {})
        if choice.message is not None:
            record["message"] = choice.message
            try:
                base.send_message(agent, choice.message)
            except ValueError as exc:  # a bad message is recorded, the action still happens
                record["message_error"] = str(exc)
        before = base.game_state
        env.step(int(action))
        decisions[agent] += 1
        if base.game_state is not before:
            joint_steps += 1
            record["rewards"] = {a: float(base.rewards.get(a, 0.0)) for a in base.possible_agents}
            for a, r in record["rewards"].items():
                returns[a] += r
        else:
            record["rewards"] = None
        episode.steps.append(record)
    episode.returns = returns
    episode.invalid = invalid
    episode.length = joint_steps
    episode.metrics.update(probe_accuracy(episode.steps))
    hook = getattr(spec.load(), "episode_metrics_hook", None)
    if hook is not None:
        try:
            episode.metrics.update(hook()(base.bundle, episode, agents))
        except Exception as exc:  # metrics must not lose the episode
            episode.metrics = {"metrics_error": f"{type(exc).__name__}: {exc}"}  # type: ignore[dict-item]
    episode.metrics.update(usage_totals(episode.steps))
    episode.wall_time_s = time.perf_counter() - t0
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


def run(
    game: GameSpec | str,
    agent_factories: Sequence[Callable[[], Agent]],
    episodes: int,
    seed: int = 0,
    out_dir: str | Path | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    record_text: bool = False,
    progress: Callable[[int, Episode], None] | None = None,
) -> list[Episode]:
    """Play ``episodes`` episodes (seeds ``seed, seed+1, …``), writing each trajectory if asked.

    Episodes already written in ``out_dir`` (a complete file for that seed) are loaded, not
    replayed, so an interrupted run resumes where it stopped.
    """
    spec = game if isinstance(game, GameSpec) else game_spec(game)
    agents = [f() for f in agent_factories]
    env = spec.load().raw_env(**{**spec.kwargs, **(env_kwargs or {})})
    out: list[Episode] = []
    for i in range(episodes):
        s = seed + i
        path = Path(out_dir) / f"episode_{s:06d}.jsonl" if out_dir is not None else None
        ep = None
        if path is not None and path.exists():
            try:
                ep = Episode.read(path)
            except (ValueError, KeyError, json.JSONDecodeError):
                ep = None
        if ep is None:
            ep = play_episode(spec, agents, s, env_kwargs, record_text=record_text, env=env)
            if path is not None:
                ep.write(path)
        out.append(ep)
        if progress is not None:
            progress(i, ep)
    return out


def mean_ci95(values: Iterable[float]) -> tuple[float, float]:
    """Mean and half-width of the normal-approximation 95% interval (1.96 standard errors)."""
    arr = np.asarray([v for v in values if not (isinstance(v, float) and math.isnan(v))], float)
    if arr.size == 0:
        return float("nan"), float("nan")
    if arr.size == 1:
        return float(arr[0]), float("nan")
    return float(arr.mean()), float(1.96 * arr.std(ddof=1) / math.sqrt(arr.size))


def summarize(episodes: Sequence[Episode]) -> dict[str, tuple[float, float]]:
    """Mean and 95% half-width of every return, invalid count and metric over episodes."""
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
