"""Cost on the command line: the estimate before the first model call, the budget, the cache.

Every command that may call a paid model endpoint (``run``, ``eval``, ``reproduce``,
``qa eval``) goes through one :class:`CostGuard`:

* **before the first call** it prints (on stderr) the calls, tokens and price it expects
  (:mod:`tom_envs.evaluation.cost`); ``eval --validate`` prints the same and plays nothing;
* ``--max-calls N`` / ``--max-cost USD`` open a budget (:mod:`tom_envs.budget`): when it is
  reached the run stops cleanly, keeps what it computed (finished episodes, every answered call
  in the response cache) and exits with code 3; the same command run again continues.
  ``--max-cost`` needs every model priced (``price_in=`` / ``price_out=`` in the agent spec,
  ``--price-in`` / ``--price-out`` for ``qa eval``);
* **nothing paid twice**: model answers are cached in the run directory (``<out>/llm_cache``;
  for ``qa eval``, ``runs/qa/llm_cache``), so a run that is killed and resumed repeats at most
  the requests that were in flight. ``--no-llm-cache`` turns it off; a cache directory named by
  ``$TOM_ENVS_LLM_CACHE`` or an agent's ``cache_dir=`` is used instead when given;
* after the run it prints what was spent.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tom_envs import budget as budget_mod

#: The exit code of a command stopped by its budget (what it computed is kept; rerun it).
EXIT_BUDGET = 3
#: The environment variable the model clients read their cache directory from.
ENV_CACHE = "TOM_ENVS_LLM_CACHE"


def _calls(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return value


def _dollars(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected dollars >= 0, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected dollars >= 0, got {text!r}")
    return value


def add_cost_args(p: argparse.ArgumentParser, *, concurrency: bool = False) -> None:
    """The budget and cache flags (and ``--concurrency`` for the commands with a worker pool)."""
    p.add_argument("--max-calls", type=_calls, metavar="N",
                   help="stop cleanly after N model calls (rerun the command to continue)")  # fmt: skip
    p.add_argument("--max-cost", type=_dollars, metavar="USD",
                   help="stop cleanly once the model calls cost this many dollars (needs priced "
                   "models: price_in=/price_out= in the agent spec)")  # fmt: skip
    p.add_argument("--no-llm-cache", action="store_true",
                   help="do not keep model answers in the run directory (OUT/llm_cache); a "
                   "resumed run then pays again for what it repeats")  # fmt: skip
    if concurrency:
        p.add_argument("--concurrency", type=_positive, metavar="N",
                       help="episodes played at once, all workers together (default: 64 when an "
                       "agent calls a model, else one per worker)")  # fmt: skip


def _positive(text: str) -> int:
    value = _calls(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


class CostGuard:
    """One command's estimate, budget and response cache (see the module docstring)."""

    def __init__(self, args: argparse.Namespace, stream: Any = None) -> None:
        self.max_calls = getattr(args, "max_calls", None)
        self.max_cost = getattr(args, "max_cost", None)
        self.cache = not getattr(args, "no_llm_cache", False)
        self.stream = stream
        self.budget = (
            budget_mod.Budget(self.max_calls, self.max_cost)
            if self.max_calls is not None or self.max_cost is not None
            else None
        )
        self.estimate: Any = None
        self._saved_env: list[tuple[str, str | None]] = []

    def _print(self, line: str) -> None:
        print(line, file=self.stream or sys.stderr, flush=True)

    # ------------------------------------------------------------------ before
    def announce(self, estimate: Any) -> None:
        """Print the estimate, check the budget can be kept (ValueError if not)."""
        self.estimate = estimate
        for line in estimate.lines():
            self._print(line)
        if self.max_cost is not None and estimate.unpriced:
            raise ValueError(
                f"--max-cost needs a price for every model; unpriced: "
                f"{', '.join(estimate.unpriced)} (give price_in= and price_out= in the agent "
                "spec, USD per million tokens, or use --max-calls)"
            )
        if self.budget is not None and estimate.agents:
            over = []
            if self.max_calls is not None and estimate.calls > self.max_calls:
                over.append(f"~{estimate.calls:,.0f} calls > --max-calls {self.max_calls}")
            cost = estimate.cost_max
            if self.max_cost is not None and cost is not None and cost > self.max_cost:
                over.append(f"cost <= ${cost:,.2f} > --max-cost ${self.max_cost:g}")
            if over:
                self._print(
                    f"  the budget may stop this run before it completes ({'; '.join(over)}); "
                    "what it computes is kept and the same command continues it"
                )

    def use_cache(self, directory: Path) -> None:
        """Keep model answers in ``directory`` for the rest of the command (unless turned off or
        the user named a cache already)."""
        if not self.cache:
            self._set_env(ENV_CACHE, None)
            return
        if os.environ.get(ENV_CACHE):
            return
        self._set_env(ENV_CACHE, str(directory))

    def _set_env(self, key: str, value: str | None) -> None:
        self._saved_env.append((key, os.environ.get(key)))
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value

    def plan_eval(self, cfg: Any, todo: list[Any]) -> None:
        """``evaluate``'s plan hook: the estimate of the jobs to play, and the run's cache."""
        from tom_envs.evaluation.cost import estimate_jobs

        estimate = estimate_jobs(todo)
        if estimate.agents:
            self.use_cache(Path(cfg.out_dir()) / "llm_cache")
        self.announce(estimate)

    # ------------------------------------------------------------------ during
    @contextmanager
    def running(self) -> Iterator[CostGuard]:
        """The budget in force (and the environment restored afterwards)."""
        try:
            with budget_mod.opened(self.budget):
                yield self
        finally:
            while self._saved_env:
                key, value = self._saved_env.pop()
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value

    # ------------------------------------------------------------------ after
    def stopped_message(self, kept: str) -> str:
        """What a command stopped by the budget says."""
        b = self.budget
        spent = b.describe() if b is not None else "budget reached"
        return (
            f"stopped: {spent}. {kept} Run the same command again to continue (answered calls "
            "are cached and not paid again)."
        )

    def spent(self, usage: dict[str, float]) -> None:
        """Print what the run's model calls used (and the estimate beside it)."""
        if not usage.get("calls"):
            return
        from tom_envs.evaluation.cost import spent_line

        line = spent_line(usage)
        if self.estimate is not None and self.estimate.agents:
            line += (
                f" (estimated ~{self.estimate.calls:,.0f} calls, "
                f"~{self.estimate.prompt_tokens:,.0f} prompt tokens)"
            )
        self._print(line)


def qa_estimate(items: Sequence[Any], trials: int, args: argparse.Namespace) -> Any:
    """The estimate of ``qa eval`` with the LLM answerer: one call per item and trial (its
    protocol), the prompts' tokens, a 512-token budget per answer."""
    from tom_envs.evaluation.cost import AgentEstimate, Estimate, estimate_tokens
    from tom_envs.qa.evaluate import SYSTEM

    tokens = sum(estimate_tokens(SYSTEM) + estimate_tokens(it.prompt()) for it in items)
    price = None
    if getattr(args, "price_in", None) is not None and getattr(args, "price_out", None) is not None:
        price = (float(args.price_in), float(args.price_out))
    calls = len(items) * trials
    est = Estimate(
        episodes=calls,
        unit="answers",
        header=(
            f"estimate before the first LLM call: {calls} answers ({len(items)} items x "
            f"{trials} trials), one call each:"
        ),
    )
    label = f"answerer {args.answerer}"
    model = getattr(args, "model", None) or ("local" if getattr(args, "local", False) else "")
    est.agents[label] = AgentEstimate(
        label,
        str(model or os.environ.get("TOM_ENVS_LLM_MODEL", "?")),
        str(getattr(args, "base_url", None) or os.environ.get("OPENAI_BASE_URL", "")),
        price,
        episodes=calls,
        calls=float(calls),
        prompt_tokens=float(tokens * trials),
        completion_tokens_max=float(calls * 512),
    )
    return est


def validate_estimate(cfg: Any, cells: Sequence[Any], args: argparse.Namespace) -> None:
    """``eval --validate``: the estimate of the episodes a run would play now (those already
    finished in the output directory left out), printed; nothing is played."""
    from tom_envs.evaluation.backends import pending
    from tom_envs.evaluation.cost import estimate_jobs
    from tom_envs.evaluation.run import experiment_hash, jobs_for, table_jobs

    if cfg.out is None:
        cfg.config_hash = experiment_hash(cfg, list(cells))
    done, todo = pending(jobs_for(cfg, list(cells)) + table_jobs(cfg))
    estimate = estimate_jobs(todo)
    if done:
        print(f"{len(done)} episode(s) already finished in {cfg.out_dir()}/ (not played again)")
    CostGuard(args, stream=sys.stdout).announce(estimate)


__all__ = ["EXIT_BUDGET", "CostGuard", "add_cost_args", "qa_estimate", "validate_estimate"]
