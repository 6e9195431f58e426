"""The ``tom-envs`` command and the episode runner: outputs, trajectories, resuming, robustness."""

from __future__ import annotations

import json
import os
import sys
import types
from pathlib import Path

import pytest

import tom_envs.runner as runner_mod
from tom_envs.agents import make_agent
from tom_envs.cli import main
from tom_envs.core.agents import AgentAction, BaseAgent, Turn
from tom_envs.registration import GAMES, game_spec, single_agent_specs
from tom_envs.runner import Episode, play_episode, run, summarize

ROOT = Path(__file__).parent.parent


# ------------------------------------------------------------------------- test agents
class Raising(BaseAgent):
    """Raises on every ``fail_every``-th decision (every decision by default)."""

    name = "raising"

    def __init__(self, fail_every: int = 1) -> None:
        super().__init__()
        self.fail_every = fail_every

    def act(self, turn: Turn) -> int:
        if turn.decision % self.fail_every == 0:
            raise RuntimeError(f"boom at decision {turn.decision}")
        return 0


class Illegal(BaseAgent):
    """Answers with an action that does not exist."""

    name = "illegal"

    def act(self, turn: Turn) -> int:
        return 7


class NoneAction(BaseAgent):
    """Gives up: no action, flagged invalid (what an LLM agent does after failed re-prompts)."""

    name = "none"

    def act(self, turn: Turn) -> AgentAction:
        return AgentAction(action=None, valid=False, info={"raw": "I don't know"})


class SelfReportedInvalid(BaseAgent):
    """Plays a legal fallback itself but reports that its own output was invalid."""

    name = "self_invalid"

    def act(self, turn: Turn) -> AgentAction:
        return AgentAction(action=1, valid=False)


@pytest.fixture
def fake_agents_module(monkeypatch: pytest.MonkeyPatch) -> str:
    """Make the test agents importable as ``fake_tom_agents.mod:Class`` agent specs."""
    mod = types.ModuleType("fake_tom_agents.mod")
    for cls in (Raising, Illegal, NoneAction, SelfReportedInvalid):
        setattr(mod, cls.__name__, cls)
    monkeypatch.setitem(sys.modules, "fake_tom_agents.mod", mod)
    return "fake_tom_agents.mod"


def read_lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


# ------------------------------------------------------------------------------- list
def test_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for spec in GAMES:
        assert spec.id in out
    assert "AEC + Parallel" in out
    for agent in ("rmax", "random", "tit_for_tat", "win_stay_lose_shift", "fictitious_play",
                  "population:single_action", "population:tit_for_tat", "always_2"):
        assert f"agent  {agent}" in out
    for sa in single_agent_specs():
        assert f"gym    {sa.id}" in out
    assert "gym    tom_envs/RockPaperScissorsVsTitForTat-v0" in out


# -------------------------------------------------------------------------------- run
def test_run_writes_jsonl_trajectories(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "traj"
    code = main([
        "run", "RockPaperScissors", "--agents", "rmax", "tit_for_tat", "--episodes", "3",
        "--seed", "4", "--out", str(out), "--kw", "horizon=10", "--text",
    ])
    assert code == 0
    printed = capsys.readouterr().out
    assert "tom_envs/RockPaperScissors-v0: rmax vs tit_for_tat, 3 episodes, seeds 4.." in printed
    for key in ("return/player_0", "invalid/player_0", "invalid/player_1", "length",
                "functional_regret", "tom_accuracy", "tom_regret"):
        assert f"| {key} |" in printed
    assert f"trajectories: {out}/" in printed
    files = sorted(out.glob("*.jsonl"))
    assert [f.name for f in files] == [f"episode_{s:06d}.jsonl" for s in (4, 5, 6)]
    for seed, path in zip((4, 5, 6), files, strict=True):
        lines = read_lines(path)
        # line types: one header, one line per decision, one summary
        assert lines[0]["type"] == "episode" and lines[-1]["type"] == "summary"
        assert {x["type"] for x in lines[1:-1]} == {"step"}
        assert len(lines) == 1 + 2 * 10 + 1
        head, tail = lines[0], lines[-1]
        assert head["env_id"] == "tom_envs/RockPaperScissors-v0"
        assert head["seed"] == seed
        assert head["agents"] == {"player_0": "rmax", "player_1": "tit_for_tat"}
        assert head["env_kwargs"] == {"horizon": 10}
        assert head["version"] == runner_mod.SCHEMA_VERSION
        assert tail["length"] == 10
        assert tail["invalid"] == {"player_0": 0, "player_1": 0}
        assert tail["returns"]["player_0"] == -tail["returns"]["player_1"]  # zero-sum
        assert tail["metrics"]["optimal_return"] == 10.0
        steps = lines[1:-1]
        assert [s["index"] for s in steps] == list(range(20))
        assert [s["agent"] for s in steps] == ["player_0", "player_1"] * 10
        assert [s["joint_step"] for s in steps] == [t // 2 for t in range(20)]
        assert all(s["valid"] for s in steps)
        assert all("observation_text_diff" in s for s in steps)  # each text stored once
        assert head["config"]["record"] == {"observations": False, "text": True}
        assert head["config"]["env_kwargs"]["horizon"] == 10
        assert head["config"]["env_kwargs"]["game"] == "rps"  # defaults resolved
        assert len(head["config_hash"]) == 16
        assert tail["status"] == "ok" and tail["failure"] is None
        assert tail["fallbacks"] == {"player_0": 0, "player_1": 0}
        assert tail["decisions"] == {"player_0": 10, "player_1": 10}
        assert all(s["prediction"]["partner_action"] in (0, 1, 2) for s in steps[0::2])
        assert sum(s["rewards"]["player_0"] for s in steps[1::2]) == tail["returns"]["player_0"]
        # Episode.read roundtrip: the file and the loaded episode say the same thing
        ep = Episode.read(path)
        assert ep.digest_ok is True and len(tail["digest"]) == 64  # the file's own SHA-256
        assert ep.records() == [*lines[:-1], {k: v for k, v in tail.items() if k != "digest"}]
        assert all("observation_text" in s for s in ep.steps)  # rebuilt from the diffs
        assert (ep.seed, ep.length, ep.env_kwargs) == (seed, 10, {"horizon": 10})


def test_written_episode_equals_the_played_one(tmp_path: Path) -> None:
    spec = game_spec("BattleOfSexes")
    ep = play_episode(spec, [make_agent("rmax", spec), make_agent("tit_for_tat", spec)], 3,
                      env_kwargs={"horizon": 6})
    path = ep.write(tmp_path / "a" / "ep.jsonl")
    back = Episode.read(path)
    assert json.loads(json.dumps(ep.records(), default=str)) == back.records()
    assert back.returns == ep.returns and back.metrics == ep.metrics
    assert not list((tmp_path / "a").glob(".tmp-*"))  # atomic write leaves no temp file


def test_episode_read_rejects_incomplete_files(tmp_path: Path) -> None:
    spec = game_spec("PrisonersDilemma")
    ep = play_episode(spec, [make_agent("random", spec)] * 2, 0, env_kwargs={"horizon": 3})
    path = ep.write(tmp_path / "ep.jsonl")
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(ValueError, match="not a complete"):
        Episode.read(path)


def test_one_agent_spec_fills_every_seat(tmp_path: Path, capsys) -> None:
    assert main(["run", "PrisonersDilemma", "--agents", "random", "--episodes", "1",
                 "--out", str(tmp_path), "--kw", "horizon=4"]) == 0
    head = read_lines(tmp_path / "episode_000000.jsonl")[0]
    assert head["agents"] == {"player_0": "random", "player_1": "random"}


def test_default_output_directory(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["run", "BattleOfSexes", "--agents", "rmax:gamma=0.9", "population:tit_for_tat",
            "--episodes", "1"]
    assert main([*args, "--kw", "horizon=3"]) == 0
    assert main([*args, "--kw", "horizon=4"]) == 0
    assert main([*args, "--kw", "horizon=4", "--text"]) == 0
    dirs = sorted((tmp_path / "runs" / "BattleOfSexes").iterdir())
    # one directory per configuration: a changed argument or --text never shares one
    assert len(dirs) == 3
    for d in dirs:
        stem, _, digest = d.name.rpartition("-")
        assert stem == "rmax_gamma=0.9-population_tit_for_tat-seed0"
        head = read_lines(d / "episode_000000.jsonl")[0]
        cfg = dict(head["config"])
        cfg.pop("seed")
        from tom_envs.identity import config_hash

        assert digest == config_hash(cfg)[:8]


def test_resume_does_not_replay_existing_episodes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    args = ["run", "PrisonersDilemma", "--agents", "rmax", "tit_for_tat", "--episodes", "3",
            "--out", str(tmp_path), "--kw", "horizon=5"]
    assert main(args) == 0
    first = capsys.readouterr().out
    files = sorted(tmp_path.glob("episode_*.jsonl"))
    assert len(files) == 3
    old = {f: f.stat().st_mtime_ns for f in files}
    for f in files:  # make any rewrite visible even on coarse clocks
        os.utime(f, ns=(1_000_000_000, 1_000_000_000))

    played: list[int] = []
    real = runner_mod.play_episode

    def counting(*a, **k):
        played.append(a[2])
        return real(*a, **k)

    monkeypatch.setattr(runner_mod, "play_episode", counting)
    # everything exists: nothing is played, the same summary comes back from the files
    assert main(args) == 0
    assert played == []
    assert capsys.readouterr().out == first
    assert all(f.stat().st_mtime_ns == 1_000_000_000 for f in files)
    assert set(old) == set(files)
    # one episode missing and one truncated (a crash mid-write elsewhere): only they are replayed
    files[1].unlink()
    files[2].write_text(files[2].read_text().splitlines()[0] + "\n")
    assert main([*args, "--episodes", "4"]) == 0
    assert played == [1, 2, 3]
    assert files[0].stat().st_mtime_ns == 1_000_000_000
    assert read_lines(files[2])[-1]["type"] == "summary"


def test_run_is_deterministic(tmp_path: Path, capsys) -> None:
    for d in ("a", "b"):
        assert main(["run", "RockPaperScissors", "--agents", "rmax", "population:single_action",
                     "--episodes", "2", "--out", str(tmp_path / d), "--kw", "horizon=8"]) == 0
    for name in ("episode_000000.jsonl", "episode_000001.jsonl"):
        a, b = read_lines(tmp_path / "a" / name), read_lines(tmp_path / "b" / name)
        strip = ("latency_s", "wall_time_s", "digest")  # the digest covers the timings too
        clean = [{k: v for k, v in x.items() if k not in strip} for x in a]
        assert clean == [{k: v for k, v in x.items() if k not in strip} for x in b]


# ------------------------------------------------------------------------------- demo
def test_demo_prints_a_table(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["demo", "--episodes", "1", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    header = next(x for x in lines if x.startswith("| game |"))
    assert "| agents |" in header and "ΔFunctional/T" in header and "ToM %" in header
    for spec in GAMES:
        assert any(x.startswith(f"| {spec.name} |") for x in lines), spec.name
        assert list((tmp_path / spec.name).glob("episode_*.jsonl"))
    rps = next(x for x in lines if x.startswith("| RockPaperScissors |"))
    assert "fictitious_play vs population:single_action" in rps


# ------------------------------------------------------------------------------- docs
def test_docs_check_passes_on_the_repo(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["docs", "--check", "--dir", str(ROOT / "docs")]) == 0
    assert "docs up to date" in capsys.readouterr().out


def test_docs_check_fails_on_an_empty_dir(tmp_path: Path, capsys) -> None:
    assert main(["docs", "--check", "--dir", str(tmp_path)]) == 1
    assert "stale" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())  # --check never writes


# ----------------------------------------------------------------------- bad arguments
@pytest.mark.parametrize(
    ("agents", "needle"),
    [
        (["no_such_agent"], "unknown agent 'no_such_agent'"),
        (["population:nobody"], "no population 'nobody'"),
        (["rmax:gamma=2"], "gamma"),
        (["rmax:gamma"], "key=value"),
        (["rmax:bogus=1"], "bogus"),
        (["tit_for_tat:x=1"], "takes no arguments"),
        (["nowhere.module:Agent"], "nowhere.module"),
        (["rmax", "random", "random"], "2 seats"),
    ],
)
def test_bad_agent_spec_exits_2_with_a_clear_message(
    agents: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", "RockPaperScissors", "--agents", *agents, "--out", str(tmp_path / "x")])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and needle in err, err
    assert "Traceback" not in err
    assert not (tmp_path / "x").exists()  # failed before playing anything


def test_unknown_agent_message_lists_the_choices(capsys, tmp_path: Path) -> None:
    assert main(["run", "BattleOfSexes", "--agents", "nope", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    for name in ("rmax", "random", "tit_for_tat", "always_1", "population:single_action"):
        assert name in err


def test_bad_game_and_bad_game_arguments(capsys, tmp_path: Path) -> None:
    assert main(["run", "Chess", "--out", str(tmp_path)]) == 2
    assert "unknown game 'Chess'" in capsys.readouterr().err
    assert main(["run", "RockPaperScissors", "--kw", "horizon=0", "--out", str(tmp_path)]) == 2
    assert "horizon" in capsys.readouterr().err


# -------------------------------------------------------------------- runner robustness
ROBUST = [
    (Raising, "RuntimeError: boom at decision"),
    (Illegal, "illegal action 7"),
    (NoneAction, "illegal action None"),
]


@pytest.mark.parametrize(("cls", "needle"), ROBUST, ids=[c.__name__ for c, _ in ROBUST])
@pytest.mark.parametrize("seat", [0, 1])
def test_failing_agent_does_not_crash_the_episode(cls, needle: str, seat: int) -> None:
    spec = game_spec("RockPaperScissors")
    agents = [cls(), make_agent("tit_for_tat", spec)]
    if seat == 1:
        agents.reverse()
    ep = play_episode(spec, agents, 0, env_kwargs={"horizon": 6})
    me = f"player_{seat}"
    mine = [s for s in ep.steps if s["agent"] == me]
    assert ep.length == 6 and len(mine) == 6
    for s in mine:
        assert s["valid"] is False
        assert needle in s["error"]
        assert s["action"] in (0, 1, 2)  # a legal fallback was played
        assert s["action_text"] in ("Option J", "Option F", "Option B")
    if cls is Raising:
        assert all("Traceback" in s["traceback"] for s in mine)
    assert ep.invalid == {me: 6, f"player_{1 - seat}": 0}
    other = [s for s in ep.steps if s["agent"] != me]
    assert all(s["valid"] and "error" not in s for s in other)
    # the metrics still see the whole episode (the fallbacks are what was played)
    assert ep.metrics["optimal_return"] == 6.0
    assert ep.metrics[f"valid_action_pct/{me}"] == 0.0


def test_fallbacks_are_seeded() -> None:
    spec = game_spec("RockPaperScissors")

    def fallbacks(seed: int) -> list[int]:
        ep = play_episode(spec, [Illegal(), make_agent("always_0", spec)], seed,
                          env_kwargs={"horizon": 30})
        return [s["action"] for s in ep.steps if s["agent"] == "player_0"]

    assert fallbacks(0) == fallbacks(0)
    assert fallbacks(0) != fallbacks(1)
    assert set(fallbacks(0)) == {0, 1, 2}


def test_partial_failures_and_self_reported_invalid() -> None:
    spec = game_spec("PrisonersDilemma")
    ep = play_episode(spec, [Raising(fail_every=3), SelfReportedInvalid()], 0,
                      env_kwargs={"horizon": 9})
    p0 = [s for s in ep.steps if s["agent"] == "player_0"]
    p1 = [s for s in ep.steps if s["agent"] == "player_1"]
    assert [s["valid"] for s in p0] == [False, True, True] * 3
    assert [("error" in s) for s in p0] == [True, False, False] * 3
    assert all(s["action"] == 0 for i, s in enumerate(p0) if i % 3)
    # self-reported invalid: counted, its (legal) action is played, no error invented
    assert all(s["valid"] is False and s["action"] == 1 and "error" not in s for s in p1)
    assert ep.invalid == {"player_0": 3, "player_1": 9}


def test_invalid_counts_in_the_summary() -> None:
    spec = game_spec("RockPaperScissors")
    # one failure in five decisions: 20%, not more than the default bound, so still a result
    eps = run(spec, [lambda: Raising(fail_every=5), lambda: make_agent("always_1", spec)], 3,
              seed=0, env_kwargs={"horizon": 5})
    assert all(e.ok for e in eps)
    s = summarize(eps)
    assert s["invalid/player_0"] == (1.0, 0.0)
    assert s["invalid/player_1"] == (0.0, 0.0)
    assert s["fallback_pct/player_0"] == (20.0, 0.0)
    assert s["valid_action_pct/player_0"] == (80.0, 0.0)
    assert s["length"] == (5.0, 0.0)
    # failing on every decision: every episode failed, none is a result
    eps = run(spec, [Raising, lambda: make_agent("always_1", spec)], 3, seed=0,
              env_kwargs={"horizon": 5})
    assert [e.status for e in eps] == ["failed"] * 3
    assert summarize(eps) == {}


def test_cli_agent_failing_every_decision_exits_nonzero_naming_the_cause(
    fake_agents_module: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", "BattleOfSexes", "--agents", f"{fake_agents_module}:Illegal", "tit_for_tat",
                 "--episodes", "2", "--out", str(tmp_path), "--kw", "horizon=7"])
    assert code == 1
    captured = capsys.readouterr()
    assert ("error: player_0 (fake_tom_agents.mod:Illegal) failed on every decision (14 of 14); "
            "cause: illegal: illegal action 7") in captured.err
    assert "0 episodes" in captured.out and "(2 failed)" in captured.out
    assert not list(tmp_path.glob("episode_*.jsonl"))  # never written as results
    tail = read_lines(tmp_path / "failed" / "episode_000001.jsonl")[-1]
    assert tail["status"] == "failed" and "fell back on 7 of 7" in tail["failure"]
    assert tail["invalid"] == {"player_0": 7, "player_1": 0}
    assert tail["failures"] == {"player_0": {"illegal": 7}}
    # an exception names its message (here the agent's; a shape mismatch or a refused
    # connection reads the same way)
    code = main(["run", "BattleOfSexes", "--agents", f"{fake_agents_module}:Raising", "random",
                 "--episodes", "1", "--out", str(tmp_path / "r"), "--kw", "horizon=3"])
    assert code == 1
    assert "cause: exception: RuntimeError: boom at decision 0" in capsys.readouterr().err
    # class specs take keyword arguments too; a partial failure under the bound is a result
    code = main(["run", "BattleOfSexes", "--agents", f"{fake_agents_module}:Raising:fail_every=5",
                 "random", "--episodes", "1", "--out", str(tmp_path / "b"), "--kw", "horizon=5"])
    assert code == 0
    out = capsys.readouterr().out
    assert "| invalid/player_0 | 1.000 |" in out
    assert "| fallback_pct/player_0 | 20.000 |" in out
    assert "| valid_action_pct/player_0 | 80.000 |" in out
    # the bound is settable: at 10% the same episode fails
    code = main(["run", "BattleOfSexes", "--agents", f"{fake_agents_module}:Raising:fail_every=5",
                 "random", "--episodes", "1", "--out", str(tmp_path / "c"), "--kw", "horizon=5",
                 "--max-fallback-share", "0.1"])
    assert code == 1
    assert (tmp_path / "c" / "failed" / "episode_000000.jsonl").exists()


def test_probes_none_from_the_command_line(tmp_path) -> None:
    """`--kw probes=none` reads as None; the games take it as no probes."""
    for game, agent in (("BombDefusal", "heuristic"), ("Hanabi", "simple")):
        out = tmp_path / game
        assert main(["run", game, "--agents", agent, "--episodes", "1", "--out", str(out),
                     "--kw", "probes=none"]) == 0  # fmt: skip
        ep = Episode.read(out / "episode_000000.jsonl")
        assert ep.env_kwargs == {"probes": None}
        bundle = game_spec(game).load().make_bundle(probes=None)
        assert bundle.game.config.probes == "none"
        if game == "BombDefusal":
            assert bundle.probes is None
