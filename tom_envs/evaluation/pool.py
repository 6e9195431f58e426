"""Many episodes at once in each worker: where an LLM evaluation's time goes.

An episode of an LLM agent spends its time waiting for the endpoint, not on the CPU. The local
backend's default, one process per episode at a time, keeps ``workers`` calls in flight (2 on
two cores: two calls a second against an endpoint that answers in one); a process per episode
costs its memory per episode. Here each of ``workers`` processes plays up to ``threads`` episodes
at once in threads (the model clients are thread-safe and share one event loop per process for
their requests, :mod:`tom_llm_agents.openai_client`), all pulling from one queue of jobs, so the
endpoint sees ``workers x threads`` requests in flight and the CPU work still spreads over the
processes.

Used by :func:`tom_envs.evaluation.backends.run_jobs` on the local backend when a job seats an
agent that calls a model (:func:`~tom_envs.evaluation.cost.model_calls`; default: 64 episodes in
flight in total for an endpoint, one per worker for the bundled local model, whose one server
would only queue more; ``--concurrency`` to change it) or when ``--concurrency`` is given. A
rate-limited endpoint may need a lower ``--concurrency``: 429 answers count toward each client's
circuit breaker.
The episodes are the same as on every backend: each depends only on its cell and seed, and each
thread builds its own agents (:func:`~tom_envs.evaluation.backends.run_job` keys its agent cache
by thread).

Outcomes stream back as episodes finish (progress, resume: each finished episode is written by
its worker before it is reported). Each worker talks to the parent through its own pipe (the
parent hands it a job whenever one of its threads is free), so no lock is shared between
processes: a worker that dies fails exactly the jobs it held, and the others go on. The run's
budget (:mod:`tom_envs.budget`) is shared with the workers: an episode stopped by it comes back
as *stopped* (not a failure, not written; a rerun plays it). A worker dies with the command
(:func:`tom_envs.lifetime.die_with_parent`: even after ``kill -9``), so nothing is left behind;
when the command stops early (an episode could not be written), the workers are ended with
the episodes they were playing.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import queue
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

from tom_envs import budget as budget_mod
from tom_envs import lifetime
from tom_envs import progress as progress_mod
from tom_envs.evaluation.backends import Job, Outcome, run_job

#: Episodes in flight by default when a job seats an agent that calls a model.
DEFAULT_LLM_CONCURRENCY = 64


def run_one(job: Job) -> Outcome:
    """:func:`run_job`, with the budget's stop reported as a stopped outcome."""
    active = budget_mod.active()
    if active is not None and active.stopped:
        return Outcome(job, None, "not played: the budget was reached", budget_stopped=True)
    try:
        return run_job(job)
    except budget_mod.BudgetExhausted as exc:
        return Outcome(job, None, f"stopped: {exc}", budget_stopped=True)


def plan(jobs: list[Job], workers: int | None, concurrency: int | None) -> tuple[int, int] | None:
    """``(processes, threads per process)`` for the jobs, or ``None`` for the one-episode-per-
    process pool (no job calls a model and no ``concurrency`` was asked for)."""
    from tom_envs.evaluation.cost import model_calls

    n = workers if workers is not None else (os.cpu_count() or 1)
    if concurrency is None:
        kind = model_calls(jobs)
        if kind is None:
            return None
        # an endpoint: many calls in flight; the bundled local model: one server whose calls
        # queue (many in flight would only wait there, against their deadlines): one per worker
        concurrency = DEFAULT_LLM_CONCURRENCY if kind == "remote" else n
    if concurrency < 1:
        raise ValueError(f"--concurrency must be >= 1, got {concurrency}")
    total = max(1, min(concurrency, len(jobs)))
    processes = max(1, min(n, total))
    return processes, math.ceil(total / processes)


def run_pooled(jobs: list[Job], processes: int, threads: int) -> Iterator[Outcome]:
    """Play ``jobs`` in ``processes`` processes of ``threads`` threads; outcomes as they finish.

    Each worker has its own pipe: the parent sends it a job whenever one of its threads is free
    and reads its outcomes, so no lock is shared between processes, and a worker that dies
    fails exactly the jobs it held (the others go on in the remaining workers)."""
    if not jobs:
        return
    if processes <= 1:
        yield from _run_threads(jobs, threads)
        return
    from multiprocessing.connection import Connection, wait

    ctx = multiprocessing.get_context()
    calls_q: Any = ctx.Queue() if progress_mod.listening() else None
    procs: dict[Connection, Any] = {}
    for i in range(processes):
        mine, theirs = ctx.Pipe(duplex=True)
        proc = ctx.Process(
            target=_worker,
            args=(theirs, calls_q, budget_mod.active(), threads, os.getpid()),
            daemon=True,
            name=f"tom-envs-eval-{i}",
        )
        proc.start()  # before this process starts threads of its own (fork safety)
        theirs.close()  # the worker's end lives in the worker only: its death reads as EOF
        procs[mine] = proc
    stop_calls = progress_mod.forward_calls(calls_q) if calls_q is not None else None
    todo = list(reversed(jobs))
    held: dict[Connection, dict[tuple[str, int], Job]] = {conn: {} for conn in procs}

    def feed(conn: Connection) -> None:
        if todo:
            job = todo.pop()
            held[conn][(job.cell_id, job.seed)] = job
            conn.send(job)
        elif not held[conn]:
            conn.send(None)  # nothing left for it: the worker ends

    try:
        for conn in procs:  # a job for each thread, then one more per outcome
            for _ in range(threads):
                if todo:
                    feed(conn)
            if not held[conn]:
                conn.send(None)
        live = [c for c in procs if held[c]]
        while live:
            for ready in wait(live, timeout=1.0):
                conn = cast(Connection, ready)
                try:
                    outcome: Outcome = conn.recv()
                except (EOFError, OSError):  # the worker died: what it held failed
                    live.remove(conn)
                    code = procs[conn].exitcode
                    for job in held.pop(conn).values():
                        yield Outcome(job, None, f"worker process died (exit code {code})")
                    continue
                held[conn].pop((outcome.job.cell_id, outcome.job.seed), None)
                yield outcome
                feed(conn)
                if not held[conn]:
                    live.remove(conn)
        for job in reversed(todo):  # every worker died before these could start
            yield Outcome(job, None, "worker process died before the job started")
    finally:
        for conn, proc in procs.items():
            proc.join(timeout=5 if not held.get(conn) else 0)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=5)
            conn.close()
        if stop_calls is not None:
            stop_calls()


def _run_threads(jobs: list[Job], threads: int) -> Iterator[Outcome]:
    """In this process: ``threads`` episodes at once."""
    if threads <= 1:
        for job in jobs:
            yield run_one(job)
        return
    pending: queue.Queue[Outcome] = queue.Queue()

    def play(job: Job) -> None:
        pending.put(run_one(job))

    with ThreadPoolExecutor(threads, thread_name_prefix="tom-envs-episode") as pool:
        for job in jobs:
            pool.submit(play, job)
        for _ in jobs:
            yield pending.get()


def _worker(conn: Any, calls_q: Any, budget: Any, threads: int, parent: int) -> None:
    """A worker process: a reader thread takes jobs from the pipe, ``threads`` threads play
    them and send the outcomes back."""
    lifetime.die_with_parent(parent)  # even kill -9 of the command ends this worker
    if calls_q is not None:
        progress_mod.worker_channel(calls_q)
    else:
        progress_mod._ACTIVE.clear()  # a forked worker's displays draw in the parent
    budget_mod.install(budget)
    inbox: queue.Queue[Job | None] = queue.Queue()
    send = threading.Lock()

    def read() -> None:
        while True:
            try:
                job = conn.recv()
            except (EOFError, OSError):
                job = None
            if job is None:
                for _ in range(threads):
                    inbox.put(None)
                return
            inbox.put(job)

    def serve() -> None:
        while (job := inbox.get()) is not None:
            outcome = run_one(job)
            with send:
                conn.send(outcome)

    threading.Thread(target=read, name="tom-envs-jobs", daemon=True).start()
    workers = [threading.Thread(target=serve, name=f"tom-envs-episode-{i}") for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()


def pooled_runner(
    jobs: list[Job], workers: int | None, concurrency: int | None
) -> Callable[[], Iterator[Outcome]] | None:
    """The pooled way to run ``jobs`` (see :func:`plan`), or ``None``."""
    shape = plan(jobs, workers, concurrency)
    if shape is None:
        return None
    processes, threads = shape
    return lambda: run_pooled(jobs, processes, threads)
