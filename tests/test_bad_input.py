"""Bad input gets a clear error and nothing computed is lost (issue #31).

A full disk (ENOSPC, simulated by a write that fails for the later seeds) in `run` and `eval`
(inline and on the process pool): one clear line, exit 1, every finished episode kept and
reused by the next run. Impossible episode counts and seeds are refused at validation with the
allowed range, before anything is built.
"""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from tom_envs.cli import main
from tom_envs.evaluation import ConfigError, evaluate, parse_config
from tom_envs.runner import Episode

PD = ["run", "PrisonersDilemma", "--agents", "always_0", "tit_for_tat", "--kw", "horizon=3"]


@pytest.fixture
def disk_full_from_seed_3(monkeypatch):
    """Every trajectory of seed >= 3 meets a full disk (in forked workers too)."""
    real = Episode.write

    def write(self, path):
        if self.seed >= 3:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(self, path)

    monkeypatch.setattr(Episode, "write", write)
    return lambda: monkeypatch.setattr(Episode, "write", real)  # "free space"


def one_clear_line(err: str) -> str:
    lines = [x for x in err.strip().splitlines() if x.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_run_on_a_full_disk(tmp_path: Path, capsys, disk_full_from_seed_3) -> None:
    argv = [*PD, "--episodes", "6", "--out", str(tmp_path)]
    assert main(argv) == 1
    line = one_clear_line(capsys.readouterr().err)
    assert "cannot write" in line and "episode_000003.jsonl" in line and "ENOSPC" in line
    assert "The 3 episode(s) finished before it are kept" in line and "resume" in line
    kept = sorted(tmp_path.glob("episode_*.jsonl"))
    assert [p.name for p in kept] == [f"episode_{s:06d}.jsonl" for s in range(3)]
    assert all(Episode.read(p).digest_ok for p in kept)
    assert not list(tmp_path.glob(".tmp-*"))  # no half-written file left
    stamps = [p.stat().st_mtime_ns for p in kept]
    disk_full_from_seed_3()  # space freed: the same command resumes
    assert main(argv) == 0
    assert [p.stat().st_mtime_ns for p in kept] == stamps  # the finished ones are reused
    assert len(list(tmp_path.glob("episode_*.jsonl"))) == 6


@pytest.mark.parametrize("workers", [1, 2])
def test_eval_on_a_full_disk(tmp_path: Path, monkeypatch, capsys, disk_full_from_seed_3,
                             workers: int) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    cfg = tmp_path / "full.toml"
    cfg.write_text('name = "full"\nepisodes = 6\nout = "run"\n[agents]\na0 = "always_0"\n'
                   'tft = "tit_for_tat"\n[[games]]\ngame = "PrisonersDilemma"\n'
                   'kwargs = { horizon = 3 }\n[crossplay]\nagents = ["a0", "tft"]\n')  # fmt: skip
    assert main(["eval", str(cfg), "--workers", str(workers)]) == 1
    line = one_clear_line(capsys.readouterr().err)
    assert "No space left on device (ENOSPC)" in line and "the run stopped" in line
    kept = sorted((tmp_path / "run").rglob("episode_*.jsonl"))
    assert kept and all(Episode.read(p).digest_ok and Episode.read(p).seed < 3 for p in kept)
    assert not (tmp_path / "run" / "report.md").exists()
    disk_full_from_seed_3()
    res = evaluate(parse_config({"name": "full", "episodes": 6, "out": "run",
                                 "agents": {"a0": "always_0", "tft": "tit_for_tat"},
                                 "games": [{"game": "PrisonersDilemma", "kwargs": {"horizon": 3}}],
                                 "crossplay": {"agents": ["a0", "tft"]}}), workers=workers)  # fmt: skip
    assert res.resumed == len(kept) and not res.failures and not res.stopped
    assert res.resumed + res.played == 4 * 6


BASE = {"name": "x", "agents": {"a": "always_0"}, "games": [{"game": "PrisonersDilemma"}],
        "matchups": [{"game": "PrisonersDilemma", "seats": ["a", "a"]}]}  # fmt: skip


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"episodes": 1e9}, r"episodes must be a whole number in \[1, 1,000,000\], got 1000000000.0"),
        ({"episodes": 10**9}, r"episodes must be a whole number in \[1, 1,000,000\]"),
        ({"episodes": 2.5}, r"episodes must be a whole number in \[1, 1,000,000\], got 2.5"),
        ({"episodes": 0}, r"episodes must be a whole number in \[1"),
        ({"episodes": -3}, r"episodes must be a whole number in \[1"),
        ({"episodes": True}, r"episodes must be a whole number"),
        ({"episodes": "10"}, r"episodes must be a whole number"),
        ({"seed": -1}, r"seed must be a whole number in \[0, 4,294,967,295\], got -1"),
        ({"seed": 0.5}, r"seed must be a whole number in \[0, 4,294,967,295\]"),
        ({"seed": 2**40}, r"seed must be a whole number in \[0, 4,294,967,295\]"),
        ({"seed": 2**32 - 2, "episodes": 5}, r"the last seed must be at most 4,294,967,295"),
    ],
)
def test_impossible_episode_counts_and_seeds_are_refused(change: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config({**BASE, **change})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"episodes": 10**9}, r"1,000,000"),
        ({"episodes": 2.5}, r"episodes must be a whole number"),
        ({"episodes": 0}, r"episodes must be >= 1|whole number"),
        ({"seed": -5}, r"seed must be a whole number in \[0"),
    ],
)
def test_impossible_table_budgets_are_refused(kwargs: dict, message: str) -> None:
    from tom_envs.evaluation import validate

    cfg = parse_config({"name": "t", "tables": [{"table": "paper004", "kwargs": kwargs}]})
    with pytest.raises(ConfigError, match=message):
        validate(cfg, check_endpoints=False)


def test_a_run_too_large_in_all_is_refused_before_anything_is_built() -> None:
    from tom_envs.evaluation import validate

    cfg = parse_config({**BASE, "episodes": 1_000_000,
                        "crossplay": {"agents": ["a", "a2"]}, "agents": {"a": "always_0", "a2": "always_1"}})  # fmt: skip
    with pytest.raises(ConfigError, match=r"5 cells x 1000000 episodes = 5,000,000 episodes"):
        validate(cfg, check_endpoints=False)


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--episodes", "0"), ("--episodes", "-1"), ("--episodes", "1e9"), ("--episodes", "2.5"),
     ("--episodes", "1000001"), ("--seed", "-1"), ("--seed", "1.5"), ("--seed", "4294967296")],
)  # fmt: skip
def test_the_command_line_refuses_impossible_counts_and_seeds(capsys, flag: str,
                                                              value: str) -> None:  # fmt: skip
    with pytest.raises(SystemExit) as exc:
        main([*PD, flag, value])
    assert exc.value.code == 2
    assert "expected a whole number in [" in capsys.readouterr().err


def test_run_refuses_seeds_past_the_last_one(capsys) -> None:
    assert main([*PD, "--seed", str(2**32 - 1), "--episodes", "2"]) == 2
    assert "the last seed must be at most 4,294,967,295" in capsys.readouterr().err
