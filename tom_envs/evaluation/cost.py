"""What a run will cost before its first model call, and what it spent after.

**Before** (:func:`estimate_jobs` for ``eval`` / ``reproduce``, :func:`estimate_run` for ``run``):
every cell with an agent that calls a model (an agent with a ``dry_run()`` method: the LLM agent
of :mod:`tom_llm_agents`) plays *one* episode offline, with its seat's first pending seed, the
game's real rules and the partners' real moves; the agent's client is replaced for it by one
that answers validly at once and counts what the endpoint would have been sent (the agent's own
prompts, calls per decision and probes: ``tom_llm_agents.cost``). The figures are multiplied by
the episodes still to play (finished ones on disk are not counted). Printed per agent: calls,
prompt tokens, an upper bound on completion tokens (the calls' ``max_tokens``), and the cost
where the agent's spec gives prices (``price_in=`` / ``price_out=`` USD per million tokens).

Not in the estimate, and said so: invalid answers (each can cost up to the agent's re-prompt cap
in further calls), and the real answers' length (bounded above, not estimated). Agents in
``tom_envs`` never import the model package: the dry run is reached through the agent's method.

**After** (:func:`usage_summary`, :func:`usage_section`): every LLM agent records its calls,
tokens (prompt, completion, reasoning), latency, cache hits and cost in each step's
``info["usage"]``; the runner sums them per episode (``usage/<key>/<seat>`` metrics). The eval
report gets a section with them per cell and in total, and ``results.json`` a ``"usage"`` entry.
Cost counts what was paid: an answer replayed from the response cache costs 0.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from tom_envs.registration import GameSpec, game_spec

#: The usage keys summed in reports, with their column names.
USAGE_COLUMNS = {
    "calls": "calls",
    "cache_hits": "from cache",
    "tokens_in": "prompt tokens",
    "tokens_out": "completion tokens",
    "reasoning_tokens": "reasoning tokens",
    "latency_s": "latency s",
    "cost_usd": "cost $",
}


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` as a BPE tokenizer of a current model would count them, roughly: one
    per CJK character, one per 4 other characters (English runs 3.5-4.5 characters a token)."""
    cjk = sum(1 for c in text if "\u3000" <= c <= "\u9fff" or "\uff00" <= c <= "\uffef")
    return cjk + math.ceil((len(text) - cjk) / 4)


@dataclass
class AgentEstimate:
    """The expected usage of one agent (by label or spec) over the episodes to play."""

    label: str
    model: str
    endpoint: str
    price: tuple[float, float] | None
    episodes: int = 0
    calls: float = 0.0
    prompt_tokens: float = 0.0
    completion_tokens_max: float = 0.0
    reprompts: int = 0

    @property
    def cost_max(self) -> float | None:
        """Dollars with every completion at its full budget (``None``: unpriced)."""
        if self.price is None:
            return None
        return (
            self.prompt_tokens * self.price[0] + self.completion_tokens_max * self.price[1]
        ) / 1e6

    @property
    def cost_prompts(self) -> float | None:
        """Dollars for the prompts alone (``None``: unpriced)."""
        return None if self.price is None else self.prompt_tokens * self.price[0] / 1e6


@dataclass
class Estimate:
    """Expected calls, tokens and cost of the episodes a command is about to play."""

    episodes: int = 0
    sampled: int = 0
    agents: dict[str, AgentEstimate] = field(default_factory=dict)
    #: what is played (``"episodes"``; ``"answers"`` for QA)
    unit: str = "episodes"
    #: the first printed line, when not the episodes' dry run
    header: str | None = None

    @property
    def calls(self) -> float:
        """Expected model calls in total."""
        return sum(a.calls for a in self.agents.values())

    @property
    def prompt_tokens(self) -> float:
        """Expected prompt tokens in total."""
        return sum(a.prompt_tokens for a in self.agents.values())

    @property
    def completion_tokens_max(self) -> float:
        """The completion tokens' upper bound in total."""
        return sum(a.completion_tokens_max for a in self.agents.values())

    @property
    def cost_max(self) -> float | None:
        """Upper bound on the cost of the priced agents (``None`` when none is priced)."""
        costs = [a.cost_max for a in self.agents.values() if a.cost_max is not None]
        return sum(costs) if costs else None

    @property
    def unpriced(self) -> list[str]:
        """Agents whose model has no price."""
        return [a.label for a in self.agents.values() if a.price is None]

    def lines(self) -> list[str]:
        """The printed estimate (empty when no agent calls a model)."""
        if not self.agents:
            return []
        out = [
            self.header
            or (
                f"estimate before the first LLM call: {self.episodes} episode(s) to play; a dry "
                f"run of {self.sampled} episode(s) (one per cell, offline, answers assumed valid):"
            )
        ]
        one = self.unit[:-1] if self.unit.endswith("s") else self.unit
        for a in self.agents.values():
            per = a.calls / a.episodes if a.episodes else 0.0
            text = (
                f"  {a.label} ({a.model} at {a.endpoint or 'default endpoint'}): {a.episodes} "
                f"{self.unit}, ~{_n(a.calls)} calls (~{per:.1f} per {one}), "
                f"~{_n(a.prompt_tokens)} prompt tokens, <= {_n(a.completion_tokens_max)} "
                "completion tokens"
            )
            if a.price is not None:
                text += (
                    f"; cost <= {money(a.cost_max or 0)} at ${a.price[0]:g}/${a.price[1]:g} per "
                    f"1M tokens (prompts alone {money(a.cost_prompts or 0)})"
                )
            else:
                text += "; unpriced (give price_in= and price_out= in the spec for a cost)"
            out.append(text)
        total = (
            f"  total: ~{_n(self.calls)} calls, ~{_n(self.prompt_tokens)} prompt tokens, "
            f"<= {_n(self.completion_tokens_max)} completion tokens"
        )
        if self.cost_max is not None:
            total += f", cost <= {money(self.cost_max)}" + (
                " (priced agents)" if self.unpriced else ""
            )
        out.append(total)
        caps = sorted({a.reprompts for a in self.agents.values() if a.reprompts})
        if caps:
            out.append(
                f"  not included: invalid answers (each can cost up to {caps[-1]} further calls) "
                "and the real answers' length (completions are bounded above by max_tokens)"
            )
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready record (kept beside the results)."""
        return {
            "episodes": self.episodes,
            "sampled": self.sampled,
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens_max": self.completion_tokens_max,
            "cost_max_usd": self.cost_max,
            "agents": {k: dataclasses.asdict(v) for k, v in self.agents.items()},
        }


def money(x: float) -> str:
    """Dollars, with cents, or four decimals under a cent."""
    return f"${x:,.2f}" if x >= 0.01 or x == 0 else f"${x:.4f}"


def _n(x: float) -> str:
    """``88000`` -> ``88,000``; ``45200000`` -> ``45.2M``."""
    if x >= 1e7:
        return f"{x / 1e6:.1f}M"
    return f"{math.ceil(x):,}"


def calls_models(agent: Any) -> bool:
    """Whether ``agent`` calls a model (it can be dry-run)."""
    return callable(getattr(agent, "dry_run", None))


def dry_episode(
    spec: GameSpec,
    agents: Sequence[Any],
    seed: int,
    env_kwargs: Mapping[str, Any] | None,
    predict: str = "off",
) -> dict[int, Any]:
    """Play one episode with every model-calling agent in dry run; ``{seat: usage}`` (with
    ``predict``, the next-action questions' calls counted too)."""
    from tom_envs.runner import play_episode

    usages: dict[int, Any] = {}
    with ExitStack() as stack:
        for i, agent in enumerate(agents):
            if calls_models(agent):
                usages[i] = stack.enter_context(agent.dry_run())
        if usages:
            play_episode(spec, agents, seed, env_kwargs, predict=predict)
    return usages


def _add(est: Estimate, label: str, usage: Any, episodes: int) -> None:
    a = est.agents.get(label)
    if a is None:
        a = est.agents[label] = AgentEstimate(
            label, str(usage.model), str(usage.endpoint), usage.price, reprompts=usage.reprompts
        )
    a.episodes += episodes
    a.calls += usage.calls * episodes
    a.prompt_tokens += usage.prompt_tokens * episodes
    a.completion_tokens_max += usage.completion_tokens_max * episodes
    a.reprompts = max(a.reprompts, int(usage.reprompts))


def estimate_run(
    spec: GameSpec,
    factories: Sequence[Callable[[], Any]],
    labels: Sequence[str],
    seeds: Sequence[int],
    env_kwargs: Mapping[str, Any] | None = None,
) -> Estimate:
    """The estimate of ``tom-envs run``: one dry episode (the first seed), times the seeds to
    play. ``factories`` build fresh agents (the run's own are not touched)."""
    est = Estimate(episodes=len(seeds))
    if not seeds:
        return est
    agents = [f() for f in factories]
    if not any(calls_models(a) for a in agents):
        return est
    usages = dry_episode(spec, agents, seeds[0], env_kwargs)
    est.sampled = 1
    for seat, usage in usages.items():
        _add(est, labels[seat], usage, len(seeds))
    return est


def estimate_jobs(jobs: Iterable[Any]) -> Estimate:
    """The estimate of ``eval`` / ``reproduce``: per cell of the jobs to play, one dry episode
    (the cell's first pending seed), times the cell's pending episodes. Jobs are
    :class:`~tom_envs.evaluation.backends.Job` objects."""
    from tom_envs.agents import make_agent

    by_cell: dict[str, list[Any]] = {}
    for job in jobs:
        by_cell.setdefault(job.cell_id, []).append(job)
    est = Estimate(episodes=sum(len(v) for v in by_cell.values()))
    for cell_jobs in by_cell.values():
        job = cell_jobs[0]
        base = game_spec(job.game)
        spec = dataclasses.replace(base, kwargs={**base.kwargs, **job.env_kwargs})
        bundle = spec.load().make_bundle(**spec.kwargs)
        agents = [
            make_agent(s, spec, bundle, trusted=job.seat_trusted(i))
            for i, s in enumerate(job.specs)
        ]
        if not any(calls_models(a) for a in agents):
            continue
        usages = dry_episode(game_spec(job.game), agents, job.seed, job.env_kwargs,
                             getattr(job, "predict", "off"))  # fmt: skip
        est.sampled += 1
        for seat, usage in usages.items():
            _add(est, job.labels[seat], usage, len(cell_jobs))
    return est


def model_calls(jobs: Iterable[Any]) -> str | None:
    """What the jobs' model-calling agents talk to, judged from their specs without building
    them: ``"remote"`` (an endpoint: I/O-bound, many episodes at once pay off), ``"local"``
    (only the bundled in-process model, ``local=true``: one server, calls queue at it) or
    ``None`` (no agent calls a model)."""
    from tom_envs import plugins
    from tom_envs.agents import parse_spec

    kinds: dict[str, bool] = {}
    found: str | None = None
    for job in jobs:
        for s in job.specs:
            try:  # only read (nothing is imported): the job's own build applies the trust rules
                head, kwargs = parse_spec(s, trusted=True)
            except ValueError:
                continue
            if head not in kinds:
                cls = None
                if head in plugins.names("tom_envs.agents"):
                    try:
                        cls = plugins.load("tom_envs.agents", head)
                    except plugins.PluginError:
                        cls = None
                kinds[head] = cls is not None and callable(getattr(cls, "dry_run", None))
            if not kinds[head]:
                continue
            if not kwargs.get("local"):
                return "remote"
            found = "local"
    return found


def jobs_call_models(jobs: Iterable[Any]) -> bool:
    """Whether any job seats an agent that calls a model (:func:`model_calls`)."""
    return model_calls(jobs) is not None


# --------------------------------------------------------------------------- after the run
def usage_of(episodes: Iterable[Any]) -> dict[str, float]:
    """Sums of the LLM usage metrics (:data:`USAGE_COLUMNS`) over episodes and seats."""
    out = dict.fromkeys(USAGE_COLUMNS, 0.0)
    for ep in episodes:
        for key, value in ep.metrics.items():
            if not key.startswith("usage/"):
                continue
            name = key.split("/")[1]
            if name in out and isinstance(value, (int, float)):
                out[name] += float(value)
    return out


def usage_summary(res: Any) -> dict[str, Any]:
    """``{"cells": {cell id: usage}, "total": usage}`` of an eval's finished episodes (cells
    without model calls left out)."""
    cells: dict[str, dict[str, float]] = {}
    groups = list(res.episodes.items()) + [
        (f"tables/{t}/{k}", eps) for t, keyed in res.tables.items() for k, eps in keyed.items()
    ]
    for cell_id, eps in groups:
        u = usage_of(eps)
        if u["calls"]:
            cells[cell_id] = u
    total = dict.fromkeys(USAGE_COLUMNS, 0.0)
    for u in cells.values():
        for k, v in u.items():
            total[k] += v
    return {"cells": cells, "total": total}


def format_usage(u: Mapping[str, float]) -> list[str]:
    """One row's cells: calls, cache hits, tokens, latency (total and per call), cost."""
    calls = u.get("calls", 0.0)
    paid = calls - u.get("cache_hits", 0.0)
    per = u.get("latency_s", 0.0) / paid if paid else float("nan")
    return [
        f"{calls:.0f}",
        f"{u.get('cache_hits', 0.0):.0f}",
        f"{u.get('tokens_in', 0.0):.0f}",
        f"{u.get('tokens_out', 0.0):.0f}",
        f"{u.get('reasoning_tokens', 0.0):.0f}",
        f"{u.get('latency_s', 0.0):.1f} ({per:.2f}/call)" if paid else "0",
        f"{u.get('cost_usd', 0.0):.4f}",
    ]


def usage_section(res: Any) -> list[str]:
    """The report's "LLM usage" section (empty when nothing called a model)."""
    summary = usage_summary(res)
    if not summary["cells"]:
        return []
    head = "| cell | " + " | ".join(USAGE_COLUMNS.values()) + " |"
    lines = [
        "## LLM usage",
        "",
        "Per cell, over the episodes reported (those loaded from an earlier run included): model "
        "calls, calls answered from the response cache, tokens (reasoning tokens are part of "
        "the completion tokens), latency of the paid calls and their cost (where the agent's "
        "spec gives prices; a cached answer costs 0).",
        "",
        head,
        "|---|" + "---|" * len(USAGE_COLUMNS),
    ]
    for cell_id, u in summary["cells"].items():
        lines.append(f"| {cell_id} | " + " | ".join(format_usage(u)) + " |")
    lines.append("| **total** | " + " | ".join(format_usage(summary["total"])) + " |")
    return lines


def spent_line(u: Mapping[str, float]) -> str:
    """``LLM usage: 120 calls (20 from cache), ...`` for the end of a command."""
    return (
        f"LLM usage: {u.get('calls', 0):.0f} calls ({u.get('cache_hits', 0):.0f} from cache), "
        f"{u.get('tokens_in', 0):.0f} prompt tokens, {u.get('tokens_out', 0):.0f} completion "
        f"tokens ({u.get('reasoning_tokens', 0):.0f} reasoning), "
        f"{u.get('latency_s', 0):.1f} s of paid-call latency, "
        + (f"${u['cost_usd']:.4f}" if u.get("cost_usd") else "no priced call")
    )
