"""Many episodes at once per worker (tom_envs/evaluation/pool.py): the same episodes as one at a
time, outcomes streamed, a crashing worker reported, the shape chosen for LLM jobs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tom_envs.evaluation import evaluate, parse_config
from tom_envs.evaluation.backends import Job
from tom_envs.evaluation.pool import DEFAULT_LLM_CONCURRENCY, plan, run_pooled


def config(tmp_path: Path, name: str) -> dict:
    return {
        "name": name,
        "episodes": 3,
        "out": str(tmp_path / name),
        "agents": {"tft": "tit_for_tat", "rnd": "random", "rmax": "rmax"},
        "games": [
            {"game": "PrisonersDilemma", "kwargs": {"horizon": 8}},
            {"game": "Hanabi"},
        ],
        "matchups": [
            {"game": "PrisonersDilemma", "seats": ["rmax", "rnd"]},
            {"game": "PrisonersDilemma", "seats": ["tft", "rnd"]},
            {"game": "Hanabi", "seats": ["rnd", "rnd"]},
        ],
    }


def steps(ep) -> list[tuple]:
    return [(s["agent"], s["action"], s.get("fallback", False)) for s in ep.steps]


@pytest.mark.parametrize(("workers", "concurrency"), [(1, 4), (2, 6)])
def test_threaded_episodes_are_the_episodes_played_one_at_a_time(
    tmp_path: Path, workers: int, concurrency: int
) -> None:
    serial = evaluate(parse_config(config(tmp_path, "serial")), workers=1)
    pooled = evaluate(
        parse_config(config(tmp_path, "pooled")), workers=workers, concurrency=concurrency
    )
    assert not serial.failures and not pooled.failures and not pooled.stopped
    assert serial.episodes.keys() == pooled.episodes.keys()
    for cell, eps in serial.episodes.items():
        other = pooled.episodes[cell]
        assert [e.seed for e in eps] == [e.seed for e in other]
        assert [steps(e) for e in eps] == [steps(e) for e in other]
        assert [e.returns for e in eps] == [e.returns for e in other]
        assert [e.config_hash for e in eps] == [e.config_hash for e in other]


def test_the_pool_shape() -> None:
    llm = Job("c", "PrisonersDilemma", {}, ("llm:model=m:base_url=http://h/v1", "random"),
              ("a", "b"), 0, "/tmp/x")  # fmt: skip
    bots = Job("c", "PrisonersDilemma", {}, ("random", "random"), ("a", "b"), 0, "/tmp/x")
    assert plan([bots] * 10, 2, None) is None  # bots: one episode per process, as before
    assert plan([llm] * 200, 2, None) == (2, DEFAULT_LLM_CONCURRENCY // 2)
    assert plan([llm] * 5, 2, None) == (2, 3)  # never more threads than episodes
    assert plan([bots] * 10, 4, 8) == (4, 2)
    assert plan([llm] * 10, 1, None) == (1, 10)
    local = Job("c", "PrisonersDilemma", {}, ("llm:local=true", "random"), ("a", "b"), 0, "/x")
    assert plan([local] * 10, 2, None) == (2, 1)  # the local model's one server: one per worker
    with pytest.raises(ValueError, match="concurrency"):
        plan([bots], 1, 0)


def test_a_dying_worker_fails_only_what_it_held(tmp_path: Path, monkeypatch) -> None:
    from tom_envs.evaluation import pool

    def run_or_die(job: Job):
        if job.seed == 1:
            import os

            os._exit(9)  # the process dies mid-job (a segfault, the OOM killer)
        return pool.run_job(job)

    monkeypatch.setattr(pool, "run_one", run_or_die)
    jobs = [Job("c", "PrisonersDilemma", {"horizon": 2}, ("random", "random"), ("a", "b"), s,
                str(tmp_path)) for s in range(6)]  # fmt: skip
    outcomes = list(run_pooled(jobs, 2, 1))
    assert sorted(o.job.seed for o in outcomes) == list(range(6))
    failed = [o for o in outcomes if not o.ok]
    assert [o.job.seed for o in failed] == [1]  # only the job the dead worker held
    assert "worker process died" in failed[0].error
