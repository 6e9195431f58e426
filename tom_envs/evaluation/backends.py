"""Where episodes run: inline, a local process pool (default), or a Ray cluster.

The unit of work is one seeded episode of one cell (:class:`Job`). A worker builds the cell's
agents from their specs (once per cell and process), plays the episode with
:func:`tom_envs.runner.play_episode` and writes its trajectory atomically to
``<out>/<cell id>/episode_<seed>.jsonl``. A finished episode is therefore never lost and never
replayed: :func:`pending` skips every job whose file is a finished result of *exactly* the job's
configuration (:func:`tom_envs.identity.episode_config`: game version, resolved game
arguments, every agent's spec and settings, seed, what is recorded); a file of another
configuration stops the run before anything is played, with a message listing what changed
(:class:`~tom_envs.evaluation.config.ConfigError`). An interrupted run resumes where it stopped.

The failure policy is the runner's (:class:`tom_envs.driver.FailurePolicy`): an episode in
which a seat fell back on more than ``max_fallback_share`` of its decisions (an endpoint that
failed after its retries, context overflows, unparseable replies, exceptions) is not a result: its
trajectory goes to ``<out>/failed/<cell id>/episode_<seed>.jsonl`` with the reason, it is listed in
the report, and a later run retries it. Any other exception in a worker (a crashing agent
constructor, a broken env) is recorded the same way; the rest of the run completes.

Every episode depends only on its cell and seed, so the backends give identical results.

Nothing outlives the command (:mod:`tom_envs.lifetime`): pool workers die with the main process
(even after ``kill -9``) and never write an episode once it is gone; a local Ray cluster runs
inside a guardian that ends every process Ray left when the command ends.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import multiprocessing
import os
import tempfile
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tom_envs import lifetime
from tom_envs.core.agents import EnvKwargsConflict, with_required_env_kwargs
from tom_envs.driver import DEFAULT_MAX_FALLBACK_SHARE, FailurePolicy
from tom_envs.identity import episode_config
from tom_envs.runner import ConfigMismatchError, Episode, play_episode, reusable

BACKENDS = ("local", "ray")


@dataclass(frozen=True)
class Job:
    """One seeded episode of one cell, with everything a worker needs (picklable)."""

    cell_id: str
    game: str
    env_kwargs: Mapping[str, Any]
    specs: tuple[str, ...]  # agent spec per seat
    labels: tuple[str, ...]  # config label per seat (for the report)
    seed: int
    out: str
    record: tuple[str, ...] = ()
    max_fallback_share: float = DEFAULT_MAX_FALLBACK_SHARE
    #: per seat: the spec came from the command line (it may name code); every other spec is a
    #: file's, built under :mod:`tom_envs.core.trust`'s rules (``()``: no seat is trusted)
    trusted: tuple[bool, ...] = ()
    #: next-action questions (:mod:`tom_envs.partners.prediction`): ``off``, ``all``, ``every:K``
    predict: str = "off"

    def seat_trusted(self, seat: int) -> bool:
        """Whether seat ``seat``'s spec may name code (the command line gave it)."""
        return seat < len(self.trusted) and self.trusted[seat] is True

    @property
    def policy(self) -> FailurePolicy:
        """The failure policy of the job."""
        return FailurePolicy(max_fallback_share=self.max_fallback_share)

    @property
    def path(self) -> Path:
        """The trajectory file of this episode."""
        return Path(self.out) / self.cell_id / f"episode_{self.seed:06d}.jsonl"

    @property
    def failed_path(self) -> Path:
        """Where the episode goes if it fails."""
        return Path(self.out) / "failed" / self.cell_id / f"episode_{self.seed:06d}.json"


@dataclass
class Outcome:
    """What a job produced: the episode (finished) or the failure reason."""

    job: Job
    episode: Episode | None
    error: str | None = None
    resumed: bool = False
    #: the run cannot go on (the episode could not be written: a full disk, a read-only folder)
    stop: bool = False
    #: not played to the end because the run's budget was reached (not a failure; a rerun plays it)
    budget_stopped: bool = False

    @property
    def ok(self) -> bool:
        """True for a finished episode."""
        return self.episode is not None


def expected_config(job: Job) -> dict[str, Any]:
    """The full configuration the job's episode belongs to (agents built once per cell)."""
    from tom_envs.registration import game_spec

    agents = _agents(job)
    record: dict[str, bool | str] = {"text": "text" in job.record,
                                     "observations": "observations" in job.record}  # fmt: skip
    if job.predict != "off":  # as the runner records it (earlier results keep their hash)
        record["predict"] = True if job.predict == "all" else job.predict
    spec = game_spec(job.game)
    kwargs = with_required_env_kwargs(spec, agents, job.env_kwargs)  # the agents' protocol
    return episode_config(spec, kwargs, agents, job.seed, record)


def read_finished(job: Job) -> Episode | None:
    """The job's episode if its file is a finished result of the job's configuration, else None.

    Raises :class:`~tom_envs.runner.ConfigMismatchError` for a file of another configuration.
    """
    return reusable(job.path, expected_config(job), job.policy)


def pending(jobs: Iterable[Job]) -> tuple[list[Outcome], list[Job]]:
    """Split jobs into finished ones (loaded from disk) and those still to run.

    Every file is checked first; files of another configuration raise
    :class:`~tom_envs.evaluation.config.ConfigError` listing them, before anything runs.
    """
    from tom_envs.evaluation.config import ConfigError

    done, todo, clashes = [], [], []
    for job in jobs:
        try:
            ep = read_finished(job)
        except (ConfigMismatchError, EnvKwargsConflict) as exc:
            clashes.append(str(exc))
            continue
        if ep is not None:
            done.append(Outcome(job, ep, resumed=True))
        else:
            todo.append(job)
    if clashes:
        more = f" (and {len(clashes) - 3} more)" if len(clashes) > 3 else ""
        raise ConfigError("; ".join(clashes[:3]) + more)
    return done, todo


# One set of agents per cell, process and thread: agents are reset at every episode, so reuse is
# safe; threads playing episodes at once (tom_envs.evaluation.pool) each have their own.
_AGENT_CACHE: dict[tuple[str, tuple[str, ...], str, tuple[bool, ...], int], list[Any]] = {}


def _agents(job: Job) -> list[Any]:
    import threading

    from tom_envs.agents import make_agent
    from tom_envs.registration import game_spec

    trust = tuple(job.seat_trusted(i) for i in range(len(job.specs)))
    kwargs = json.dumps(job.env_kwargs, sort_keys=True, default=str)
    key = (job.game, job.specs, kwargs, trust, threading.get_ident())
    if key not in _AGENT_CACHE:
        base = game_spec(job.game)
        spec = dataclasses.replace(base, kwargs={**base.kwargs, **job.env_kwargs})
        bundle = spec.load().make_bundle(**spec.kwargs)
        _AGENT_CACHE[key] = [make_agent(s, spec, bundle, trusted=t)
                             for s, t in zip(job.specs, trust, strict=True)]  # fmt: skip
    return _AGENT_CACHE[key]


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "w") as fh:
        json.dump(data, fh, default=str)
    os.replace(tmp, path)


@dataclass
class Played:
    """An episode played by a worker and not yet written (Ray's workers return it: the command's
    own process writes it, so nothing is written once the command is gone)."""

    episode: Episode | None
    error: str | None = None
    traceback: str | None = None


def play_job(job: Job) -> Played:
    """Play one episode of ``job`` without writing anything. Never raises."""
    from tom_envs.registration import game_spec

    try:
        agents = _agents(job)
        episode = play_episode(
            game_spec(job.game),
            agents,
            job.seed,
            job.env_kwargs,
            record_text="text" in job.record,
            record_observations="observations" in job.record,
            policy=job.policy,
            config=expected_config(job),
            predict=job.predict,
        )
        episode.agents = {
            a: f"{lab}={s}" for a, lab, s in zip(episode.agents, job.labels, job.specs, strict=True)
        }
    except Exception as exc:  # a worker never dies: the failure is recorded
        return Played(None, f"{type(exc).__name__}: {exc}", traceback.format_exc(limit=5))
    return Played(episode)


def commit_job(job: Job, played: Played) -> Outcome:
    """Write what :func:`play_job` returned (the episode, or its failure). Never raises."""
    if played.episode is None:
        with contextlib.suppress(OSError):  # a full disk must not turn a failure into a crash
            _write_json(job.failed_path, {"cell": job.cell_id, "seed": job.seed, "error": played.error,
                                          "traceback": played.traceback})  # fmt: skip
        return Outcome(job, None, played.error)
    try:
        return _record(job, played.episode)
    except OSError as exc:  # disk full, read-only folder: the run stops, what is done is kept
        return Outcome(job, None, _write_error(job, exc), stop=True)


def run_job(job: Job) -> Outcome:
    """Play one episode and write it (or its failure), in a pool worker or in the command's own
    process. Never raises."""
    played = play_job(job)
    if not lifetime.parent_alive():
        os._exit(1)  # the command is gone: nothing is written after it
    return commit_job(job, played)


def _record(job: Job, episode: Episode) -> Outcome:
    """Write a played episode where it belongs (``failed/`` if it failed the policy)."""
    if not episode.ok:
        failure = episode.failure or f"episode {episode.status}"
        episode.metrics["failed"] = 1.0
        path = job.failed_path.with_suffix(".jsonl")
        episode.write(path)
        _write_json(job.failed_path, {"cell": job.cell_id, "seed": job.seed, "error": failure,
                                      "trajectory": str(path)})  # fmt: skip
        return Outcome(job, None, failure)
    job.failed_path.unlink(missing_ok=True)
    job.failed_path.with_suffix(".jsonl").unlink(missing_ok=True)
    episode.write(job.path)
    return Outcome(job, episode)


def _write_error(job: Job, exc: OSError) -> str:
    import errno

    code = errno.errorcode.get(exc.errno or 0, "")
    where = getattr(exc, "filename", None) or job.path
    return f"cannot write {where}: {exc.strerror or exc}" + (f" ({code})" if code else "")


def run_jobs(
    jobs: list[Job],
    backend: str = "local",
    workers: int | None = None,
    progress: Callable[[Outcome], None] | None = None,
    concurrency: int | None = None,
) -> list[Outcome]:
    """Run jobs on a backend; outcomes come back in the jobs' order. On the local backend, jobs
    with agents that call a model (or any jobs, given ``concurrency``) play many episodes at once
    per worker (:mod:`tom_envs.evaluation.pool`)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose from {BACKENDS}")
    runner = _run_ray if backend == "ray" else _run_local
    outcomes: Iterator[Outcome] | None = None
    if backend == "local":
        from tom_envs.evaluation.pool import pooled_runner

        pooled = pooled_runner(jobs, workers, concurrency)
        outcomes = pooled() if pooled is not None else None
    if outcomes is None:
        outcomes = runner(jobs, workers)
    by_job: dict[tuple[str, int], Outcome] = {}
    try:
        for outcome in outcomes:
            by_job[(outcome.job.cell_id, outcome.job.seed)] = outcome
            if progress is not None:
                progress(outcome)
            if outcome.stop:  # nothing more can be written: stop scheduling, keep what is done
                break
    finally:
        close = getattr(outcomes, "close", None)
        if close is not None:
            close()  # cancels what has not started; running episodes finish and are kept
    return [by_job[(j.cell_id, j.seed)] for j in jobs if (j.cell_id, j.seed) in by_job]


def _run_local(jobs: list[Job], workers: int | None) -> Iterator[Outcome]:
    n = workers if workers is not None else (os.cpu_count() or 1)
    if n <= 1 or len(jobs) <= 1:
        for job in jobs:
            yield run_job(job)
        return
    from tom_envs import progress

    # while a display counts LLM calls, the workers forward theirs to it (tom_envs.progress)
    queue: Any = multiprocessing.get_context().Queue() if progress.listening() else None
    stop = progress.forward_calls(queue) if queue is not None else None
    try:
        with ProcessPoolExecutor(n, initializer=_worker_init,
                                 initargs=(os.getpid(), queue)) as pool:  # fmt: skip
            futures = [pool.submit(run_job, job) for job in jobs]
            try:
                for fut in as_completed(futures):
                    yield fut.result()
            finally:  # stopped early (GeneratorExit): drop what has not started
                for fut in futures:
                    fut.cancel()
    finally:
        if stop is not None:
            stop()


def _worker_init(parent: int, queue: Any) -> None:
    """Initializer of a pool worker: die with the main process; forward LLM calls if asked."""
    lifetime.die_with_parent(parent)
    if queue is not None:
        from tom_envs import progress

        progress.worker_channel(queue)


def _run_ray(jobs: list[Job], workers: int | None) -> Iterator[Outcome]:
    try:
        import ray
    except ImportError as exc:
        raise ValueError('--backend ray needs Ray; from the checkout: pip install -e ".[ray]"') from exc
    with contextlib.ExitStack() as stack:
        if not ray.is_initialized() and not os.environ.get("RAY_ADDRESS"):
            stack.enter_context(lifetime.Guardian())  # the local cluster ends with the command
        yield from _ray_outcomes(ray, jobs, workers)


def _ray_outcomes(ray: Any, jobs: list[Job], workers: int | None) -> Iterator[Outcome]:
    started = False
    if not ray.is_initialized():
        address = os.environ.get("RAY_ADDRESS")
        if address:
            ray.init(address=address, ignore_reinit_error=True)
        else:
            ray.init(num_cpus=workers or os.cpu_count() or 1, include_dashboard=False,
                     ignore_reinit_error=True, log_to_driver=False)  # fmt: skip
        started = True
    try:
        # the workers only play; this process writes, so nothing is written once it is gone
        remote = ray.remote(play_job)
        by_ref = {remote.remote(job): job for job in jobs}
        pending_refs = list(by_ref)
        while pending_refs:
            ready, pending_refs = ray.wait(pending_refs, num_returns=1)
            for ref in ready:
                yield commit_job(by_ref[ref], ray.get(ref))
    finally:
        if started:
            ray.shutdown()
