"""Run a validated config: build the jobs, skip the finished ones, run the rest, report."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tom_envs.evaluation.backends import Job, Outcome, pending, run_jobs
from tom_envs.evaluation.config import Cell, EvalConfig, validate
from tom_envs.progress import Progress
from tom_envs.records import Episode


@dataclass
class EvalResults:
    """Every cell's finished episodes and every failure of one run."""

    config: EvalConfig
    cells: list[Cell]
    episodes: dict[str, list[Episode]] = field(default_factory=dict)  # cell id -> episodes
    failures: list[Outcome] = field(default_factory=list)
    #: the episodes of each paper table's cells: table name -> cell key -> episodes
    tables: dict[str, dict[str, list[Episode]]] = field(default_factory=dict)
    resumed: int = 0
    played: int = 0
    wall_time_s: float = 0.0
    backend: str = "local"
    #: why the run stopped before every job ran (an episode could not be written), else None
    stopped: str | None = None
    #: episodes not played to the end because the run's budget was reached (a rerun plays them)
    budget_stopped: list[Outcome] = field(default_factory=list)
    #: the cost estimate printed before the first model call (set by the command), if any
    estimate: dict[str, Any] | None = None

    def cell(self, cell_id: str) -> Cell:
        """A cell by id."""
        return next(c for c in self.cells if c.id == cell_id)


def jobs_for(cfg: EvalConfig, cells: list[Cell]) -> list[Job]:
    """One job per cell and seed."""
    out = str(cfg.out_dir())
    jobs = []
    for cell in cells:
        specs = tuple(cfg.spec_of(label) for label in cell.labels)
        labels = tuple(label.lstrip("=") for label in cell.labels)
        trusted = tuple(cfg.trusted(label) for label in cell.labels)
        for s in range(cfg.seed, cfg.seed + cfg.episodes):
            jobs.append(
                Job(
                    cell.id,
                    cell.game.game,
                    dict(cell.game.kwargs),
                    specs,
                    labels,
                    s,
                    out,
                    cfg.record,
                    cfg.max_fallback_share,
                    trusted,
                )
            )
    return jobs


def table_jobs(cfg: EvalConfig) -> list[Job]:
    """One job per seed of every cell of every ``[[tables]] table = NAME`` entry; the cell id is
    ``tables/<table>/<cell key>``."""
    from tom_envs.evaluation.tables import get_table

    out = str(cfg.out_dir())
    jobs = []
    for t in cfg.tables:
        if "table" not in t:
            continue
        for c in get_table(t["table"]).cells(**t.get("kwargs", {})):
            for s in range(c.seed, c.seed + c.episodes):
                share = cfg.max_fallback_share if c.max_fallback_share is None else c.max_fallback_share
                jobs.append(Job(f"tables/{t['table']}/{c.key}", c.game, dict(c.kwargs), c.seats,
                                c.seats, s, out, cfg.record, share,
                                (c.trusted,) * len(c.seats)))  # fmt: skip
    return jobs


def experiment_hash(cfg: EvalConfig, cells: list[Cell]) -> str:
    """A hash of every cell's configuration (games, resolved arguments, agents' settings, what is
    recorded); not of the seeds or the number of episodes, so a longer run resumes a shorter one,
    nor of the fallback bound (checked again whenever an episode is loaded)."""
    from tom_envs.evaluation.backends import expected_config
    from tom_envs.identity import config_hash

    parts = []
    for job in jobs_for(cfg, cells):
        if job.seed == cfg.seed:
            conf = expected_config(job)
            conf.pop("seed")
            parts.append([job.cell_id, conf])
    if not cfg.tables:
        return config_hash({"cells": parts})
    # the tables' arguments too (their agents' specs, e.g. an LLM row's model and endpoint): a
    # table run with other agents gets its own default directory instead of a clash
    tables = [[t["table"], t.get("kwargs", {})] for t in cfg.tables]
    return config_hash({"cells": parts, "tables": tables})


def evaluate(
    cfg: EvalConfig,
    backend: str = "local",
    workers: int | None = None,
    progress: Callable[[Outcome], None] | Progress | None = None,
    check_endpoints: bool = True,
    *,
    on_plan: Callable[[EvalConfig, list[Job]], None] | None = None,
    concurrency: int | None = None,
) -> EvalResults:
    """Validate, then play every episode not already on disk; return all results.

    ``progress`` is called with each outcome, or is a :class:`~tom_envs.progress.Progress`
    (counting the episodes to play, failures and LLM calls). ``on_plan(cfg, jobs)`` is called
    with the jobs still to play, once the output directory is known and before the first episode
    (the command prints its cost estimate there). ``concurrency``: episodes in flight at once
    (:mod:`tom_envs.evaluation.pool`)."""
    t0 = time.perf_counter()
    cells = validate(cfg, check_endpoints=check_endpoints)
    if cfg.out is None:  # the default directory names the configuration's hash
        cfg.config_hash = experiment_hash(cfg, cells)
    jobs = jobs_for(cfg, cells) + table_jobs(cfg)
    done, todo = pending(jobs)
    if on_plan is not None:
        on_plan(cfg, todo)
    if isinstance(progress, Progress):
        progress = _counting(progress.start(len(todo), skipped=len(done)))
    played = run_jobs(todo, backend, workers, progress, concurrency)
    outcomes = done + played
    res = EvalResults(cfg, cells, backend=backend, resumed=len(done), played=len(played))
    res.stopped = next((o.error for o in played if o.stop), None)
    order = {(j.cell_id, j.seed): i for i, j in enumerate(jobs)}
    for o in sorted(outcomes, key=lambda o: order[(o.job.cell_id, o.job.seed)]):
        if o.budget_stopped:
            res.budget_stopped.append(o)
            continue
        if not o.ok:
            res.failures.append(o)
            continue
        if o.job.cell_id.startswith("tables/"):
            _, name, key = o.job.cell_id.split("/", 2)
            res.tables.setdefault(name, {}).setdefault(key, []).append(o.episode)  # type: ignore[arg-type]
        else:
            res.episodes.setdefault(o.job.cell_id, []).append(o.episode)  # type: ignore[arg-type]
    res.wall_time_s = time.perf_counter() - t0
    return res


def _counting(bar: Progress) -> Callable[[Outcome], None]:
    def update(o: Outcome) -> None:
        stopped = o.budget_stopped
        note = "" if o.ok or stopped else f"{o.job.cell_id} seed {o.job.seed}: FAILED ({o.error})"
        bar.update(failed=not o.ok and not stopped, note=note)

    return update


def write_outputs(res: EvalResults, command: str = "") -> Path:
    """Write ``report.md``, ``results.json`` and the PNG plots into the run's directory."""
    from tom_envs.evaluation.report import write_report

    return write_report(res, Path(res.config.out_dir()), command)
