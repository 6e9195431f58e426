"""A result belongs to its full configuration: never served from another one's files.

Fixed seeds throughout. The adversary of each test is named in its docstring: the shortcut that
would pass a weaker check (a label or a file name as the key, text-less files reused for --text,
failed episodes reused, ...).
"""

from __future__ import annotations

import json
import socket
import sys
import types
from pathlib import Path

import pytest
from test_cli_runner import Raising  # the shared failing test agent

import tom_envs.runner as runner_mod
from tom_envs.cli import main
from tom_envs.core.agents import AgentAction, BaseAgent, Turn
from tom_envs.evaluation import ConfigError, evaluate, parse_config
from tom_envs.evaluation import backends as be
from tom_envs.registration import GAMES
from tom_envs.runner import ConfigMismatchError, Episode, run


class FakeModel(BaseAgent):
    """A stand-in for a model agent: its settings change nothing it plays, but they are settings.

    It records one LLM call per decision with a growing chat history (system prompt, every
    earlier observation), as an LLM agent does.
    """

    name = "fake_model"

    def __init__(self, model: str = "a", decoding: str = "free", temperature: float = 0.7) -> None:
        super().__init__()
        self.history: list[dict[str, str]] = []

    def reset(self, info) -> None:
        super().reset(info)
        self.history = [{"role": "system", "content": "You play a repeated game. " * 20}]

    def act(self, turn: Turn) -> AgentAction:
        self.history.append({"role": "user", "content": f"Decision {turn.decision}: choose."})
        calls = [
            {
                "messages": list(self.history),
                "reply": "Option J",
                "usage": {"tokens_in": 10 * len(self.history), "tokens_out": 2},
                "latency_s": 0.0,
                "cache_hit": False,
                "decoding": "free",
            }
        ]
        self.history.append({"role": "assistant", "content": "Option J"})
        return AgentAction(action=0, info={"llm_calls": calls, "usage": {"calls": 1}})




@pytest.fixture(autouse=True)
def fake_module(monkeypatch: pytest.MonkeyPatch) -> None:
    mod = types.ModuleType("fake_identity.mod")
    mod.FakeModel, mod.Raising = FakeModel, Raising  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fake_identity.mod", mod)


FAKE = "fake_identity.mod:FakeModel"
PD = ["run", "PrisonersDilemma", "--episodes", "2"]


def lines_of(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


# ------------------------------------------------------------------------ never served stale
@pytest.mark.parametrize(
    ("first", "second", "change"),
    [
        (["--agents", "always_0", "tit_for_tat", "--kw", "horizon=5"],
         ["--agents", "always_0", "tit_for_tat", "--kw", "horizon=50"],
         "env_kwargs.horizon: 5 -> 50"),
        (["--agents", "always_0", "tit_for_tat", "--kw", "horizon=5"],
         ["--agents", "always_1", "tit_for_tat", "--kw", "horizon=5"],
         'agents.player_0.spec: "always_0" -> "always_1"'),
        (["--agents", f"{FAKE}:model=a", "tit_for_tat", "--kw", "horizon=5"],
         ["--agents", f"{FAKE}:model=b", "tit_for_tat", "--kw", "horizon=5"],
         'agents.player_0.settings.model: "a" -> "b"'),
        (["--agents", FAKE, "tit_for_tat", "--kw", "horizon=5"],
         ["--agents", f"{FAKE}:decoding=json", "tit_for_tat", "--kw", "horizon=5"],
         'agents.player_0.settings.decoding: "free" -> "json"'),
        (["--agents", "always_0", "tit_for_tat", "--kw", "horizon=5"],
         ["--agents", "always_0", "tit_for_tat", "--kw", "horizon=5", "--text"],
         "record.text: false -> true"),
        (["--agents", "always_0", "tit_for_tat", "--kw", "horizon=5", "max_cycles=3"],
         ["--agents", "always_0", "tit_for_tat", "--kw", "horizon=5", "max_cycles=4"],
         "env_kwargs.max_cycles: 3 -> 4"),
        (["--agents", "always_0", "tit_for_tat", "--kw", "horizon=5"],
         ["--agents", "always_0", "tit_for_tat", "--kw", "horizon=5", "max_cycles=4"],
         "env_kwargs.max_cycles: (absent) -> 4"),
    ],
    ids=["argument", "agent", "model", "decoding", "text", "max_cycles", "max_cycles_added"],
)  # fmt: skip
def test_changed_configuration_is_never_served_from_old_results(
    first: list[str], second: list[str], change: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    """Adversary: resuming by file name (seed) alone, which printed the old table."""
    out = tmp_path / "same"
    assert main([*PD, *first, "--out", str(out)]) == 0
    before = {p: p.read_bytes() for p in out.glob("*.jsonl")}
    played: list[int] = []
    real = runner_mod.play_episode
    monkeypatch.setattr(runner_mod, "play_episode", lambda *a, **k: played.append(a[2]) or real(*a, **k))
    capsys.readouterr()
    # the same directory: the command stops before playing, saying exactly what changed
    assert main([*PD, *second, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "another configuration" in err and change in err, err
    assert played == [] and {p: p.read_bytes() for p in out.glob("*.jsonl")} == before
    # the default directory: a new one (its name holds the configuration's hash), played anew
    monkeypatch.chdir(tmp_path)
    assert main([*PD, *first]) == 0
    assert main([*PD, *second]) == 0
    assert len(list((tmp_path / "runs" / "PrisonersDilemma").iterdir())) == 2
    assert played == [0, 1, 0, 1]


def test_identical_configuration_is_reused(tmp_path: Path, monkeypatch, capsys) -> None:
    args = [*PD, "--agents", f"{FAKE}:model=a", "tit_for_tat", "--kw", "horizon=5", "--out",
            str(tmp_path)]  # fmt: skip
    assert main(args) == 0
    first = capsys.readouterr().out
    played: list[int] = []
    real = runner_mod.play_episode
    monkeypatch.setattr(runner_mod, "play_episode", lambda *a, **k: played.append(a[2]) or real(*a, **k))
    assert main(args) == 0
    assert played == [] and capsys.readouterr().out == first


def test_schema_1_files_are_not_taken_as_results(tmp_path: Path, capsys) -> None:
    """Adversary: a file without a configuration read as any configuration's result."""
    args = [*PD, "--agents", "always_0", "tit_for_tat", "--kw", "horizon=3", "--out", str(tmp_path)]
    assert main(args) == 0
    path = tmp_path / "episode_000000.jsonl"
    lines = lines_of(path)
    for key in ("config", "config_hash"):
        lines[0].pop(key)
    lines[0]["version"] = 1
    lines[-1].pop("digest")  # schema 1 had no content digest either
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert main(args) == 2
    assert "has no configuration (schema 1)" in capsys.readouterr().err


@pytest.mark.parametrize(
    "edit",
    ["a returned score", "a recorded action", "the status", "the digest itself", "one space"],
)
def test_an_edited_finished_trajectory_is_refused_not_reused(tmp_path: Path, capsys,
                                                            edit: str) -> None:  # fmt: skip
    """Adversary: a valid-JSON edit of a finished trajectory (its configuration untouched)."""
    args = [*PD, "--agents", "always_0", "tit_for_tat", "--kw", "horizon=3", "--out", str(tmp_path)]
    assert main(args) == 0
    path = tmp_path / "episode_000001.jsonl"
    text = path.read_text()
    lines = [json.loads(x) for x in text.splitlines()]
    tail = lines[-1]
    if edit == "a returned score":
        tail["returns"]["player_0"] += 99
    elif edit == "a recorded action":
        next(x for x in lines if x["type"] == "step")["action"] = 1
    elif edit == "the status":
        tail["status"] = "ok" if tail["status"] != "ok" else "failed"
    elif edit == "the digest itself":
        tail["digest"] = "0" * 64
    compact = {"separators": (",", ":"), "ensure_ascii": False}
    edited = "".join(json.dumps(x, **compact) + "\n" for x in lines)
    if edit == "one space":
        edited = text.replace('"status":', '"status": ', 1)
    assert edited != text
    path.write_text(edited)
    capsys.readouterr()
    assert main(args) == 2  # refused, with a clear message, before anything is played
    err = capsys.readouterr().err
    assert "episode_000001.jsonl was edited after it was written" in err
    assert "not reused" in err and "Traceback" not in err
    assert path.read_text() == edited  # kept as evidence, never overwritten


def _strip(lines: list[dict]) -> list[dict]:
    drop = ("latency_s", "wall_time_s", "digest")  # the digest covers the timings too
    return [{k: v for k, v in x.items() if k not in drop} for x in lines]


def test_killed_and_resumed_equals_uninterrupted(tmp_path: Path) -> None:
    """Adversary: a resume that replays with agents whose state leaked across the kill."""
    from tom_envs.agents import make_agent
    from tom_envs.registration import game_spec

    spec = game_spec("RockPaperScissors")
    factories = [lambda: make_agent("rmax", spec), lambda: make_agent("population:all", spec)]
    whole = run(spec, factories, 5, seed=2, out_dir=tmp_path / "a", env_kwargs={"horizon": 12})

    class Killed(Exception):
        pass

    def kill_after_two(i: int, _: Episode) -> None:
        if i == 1:
            raise Killed

    with pytest.raises(Killed):
        run(spec, factories, 5, seed=2, out_dir=tmp_path / "b", env_kwargs={"horizon": 12},
            progress=kill_after_two)  # fmt: skip
    assert len(list((tmp_path / "b").glob("*.jsonl"))) == 2
    resumed = run(spec, factories, 5, seed=2, out_dir=tmp_path / "b", env_kwargs={"horizon": 12})
    assert [e.returns for e in resumed] == [e.returns for e in whole]
    for name in sorted(p.name for p in (tmp_path / "a").glob("*.jsonl")):
        assert _strip(lines_of(tmp_path / "a" / name)) == _strip(lines_of(tmp_path / "b" / name))


# ------------------------------------------------------------------------ failed episodes
def test_fallback_share_over_threshold_fails_and_is_never_reused(tmp_path: Path, monkeypatch,
                                                                capsys) -> None:  # fmt: skip
    """Adversary: a run that keeps a half-random episode as the agent's result next time."""
    args = [*PD, "--agents", "fake_identity.mod:Raising:fail_every=2", "tit_for_tat", "--kw",
            "horizon=6", "--out", str(tmp_path)]  # fmt: skip
    assert main(args) == 1  # 3 of 6 decisions (50%) fell back: over 20%
    captured = capsys.readouterr()
    assert "2 failed episode(s)" in captured.err and "fell back on 3 of 6" in captured.err
    assert not list(tmp_path.glob("episode_*.jsonl"))
    failed = sorted((tmp_path / "failed").glob("episode_*.jsonl"))
    assert len(failed) == 2
    ep = Episode.read(failed[0])
    assert ep.status == "failed" and ep.fallbacks == {"player_0": 3, "player_1": 0}
    fb = [s for s in ep.steps if s.get("fallback")]
    assert len(fb) == 3 and all(s["failure"]["kind"] == "exception" for s in fb)
    assert all(s["valid"] is False for s in fb)  # never the agent's own
    played: list[int] = []
    real = runner_mod.play_episode
    monkeypatch.setattr(runner_mod, "play_episode", lambda *a, **k: played.append(a[2]) or real(*a, **k))
    assert main(args) == 1
    assert played == [0, 1]  # played again, not reused
    # under a looser bound (50% is not over 50%) the same episodes are results, written as such
    assert main([*args, "--max-fallback-share", "0.5"]) == 0
    assert len(list(tmp_path.glob("episode_*.jsonl"))) == 2
    assert not list((tmp_path / "failed").glob("episode_*.jsonl"))
    # and under the default bound again they are not reused: the bound is checked on loading
    played.clear()
    assert main(args) == 1
    assert played == [0, 1]


def _eval_vs_tit_for_tat(name: str, label: str) -> dict:
    """An eval config: agent ``label`` (given on the command line) against tit-for-tat, two
    4-round Prisoner's Dilemma episodes."""
    return {
        "name": name,
        "episodes": 2,
        "agents": {"tft": "tit_for_tat"},
        "games": [{"game": "PrisonersDilemma", "kwargs": {"horizon": 4}}],
        "matchups": [{"game": "PrisonersDilemma", "seats": [label, "tft"]}],
    }


def test_eval_never_serves_a_swapped_agent(tmp_path: Path) -> None:
    """Adversary: eval cell ids are labels; the model behind a label changed (the class is given
    as the command line gives it: a config file cannot name code)."""
    data = _eval_vs_tit_for_tat("swap", "m")
    out = str(tmp_path / "run")
    a_m, b_m = {"m": f"{FAKE}:model=a"}, {"m": f"{FAKE}:model=b"}
    first = evaluate(parse_config(data, agents=a_m, out=out), workers=1)
    assert first.played == 2
    with pytest.raises(ConfigError, match=r'agents\.player_0\.settings\.model: "a" -> "b"'):
        evaluate(parse_config(data, agents=b_m, out=out), workers=1)
    again = evaluate(parse_config(data, agents=a_m, out=out), workers=1)
    assert again.played == 0 and again.resumed == 2
    # default directories differ by configuration
    a = parse_config(data, agents=a_m)
    b = parse_config(data, agents=b_m)
    from tom_envs.evaluation.run import experiment_hash

    assert experiment_hash(a, a.cells()) != experiment_hash(b, b.cells())


def test_eval_failed_episodes_are_retried_not_reused(tmp_path: Path, monkeypatch) -> None:
    data = _eval_vs_tit_for_tat("fail", "bad")
    cli = {"agents": {"bad": "fake_identity.mod:Raising:fail_every=2"}, "out": str(tmp_path / "r")}
    res = evaluate(parse_config(data, **cli), workers=1)
    assert len(res.failures) == 2 and not res.episodes
    assert all("fell back on 2 of 4" in f.error for f in res.failures)
    calls: list[int] = []
    real = be.play_episode
    monkeypatch.setattr(be, "play_episode", lambda *a, **k: calls.append(1) or real(*a, **k))
    again = evaluate(parse_config(data, **cli), workers=1)
    assert len(calls) == 2 and again.resumed == 0
    loose = evaluate(parse_config({**data, "max_fallback_share": 0.5}, **cli), workers=1)
    assert not loose.failures and len(loose.episodes) == 1


# ------------------------------------------------------------------------ complete, small files
def test_llm_calls_store_each_message_once(tmp_path: Path) -> None:
    """Adversary: writing every call's whole history (quadratic in the episode length)."""
    from tom_envs.agents import make_agent
    from tom_envs.registration import game_spec

    spec = game_spec("PrisonersDilemma")
    eps = run(spec, [lambda: make_agent(FAKE, spec, trusted=True), lambda: make_agent("tit_for_tat", spec)], 1,
              out_dir=tmp_path, env_kwargs={"horizon": 30})  # fmt: skip
    path = tmp_path / "episode_000000.jsonl"
    lines = lines_of(path)
    prompts = [x for x in lines if x["type"] == "prompt"]
    # one system prompt, 30 user turns, one distinct assistant reply: each stored once
    assert len(prompts) == 1 + 30 + 1
    assert path.read_text().count("You play a repeated game.") == 20  # the system prompt, once
    steps = [x for x in lines if x["type"] == "step" and x["agent"] == "player_0"]
    assert all(isinstance(h, str) and len(h) == 16 for h in steps[-1]["info"]["llm_calls"][0]["messages"])
    back = Episode.read(path)
    mine = [s for s in back.steps if s["agent"] == "player_0"]
    assert mine == [s for s in eps[0].steps if s["agent"] == "player_0"]
    last = mine[-1]["info"]["llm_calls"][0]["messages"]
    assert len(last) == 1 + 2 * 29 + 1 and last[0]["role"] == "system"
    head = lines[0]
    assert head["config"]["agents"]["player_0"]["settings"] == {
        "model": "a", "decoding": "free", "temperature": 0.7
    }  # fmt: skip


def test_text_trajectories_of_100_prisoners_dilemma_episodes_stay_small(tmp_path: Path) -> None:
    """The issue's case: 100 episodes with --text wrote 129 MB (the history at every step)."""
    assert main(["run", "PrisonersDilemma", "--agents", "always_0", "tit_for_tat", "--episodes",
                 "100", "--text", "--out", str(tmp_path)]) == 0  # fmt: skip
    size = sum(p.stat().st_size for p in tmp_path.glob("*.jsonl"))
    assert size < 7_000_000, size  # measured: 6.34 MB (3.16 MB without --text)
    ep = Episode.read(tmp_path / "episode_000099.jsonl")
    last = [s for s in ep.steps if s["agent"] == "player_0"][-1]["observation_text"]
    assert last.count("In round ") == 99 and "currently playing round 100" in last


# ------------------------------------------------------------------------ check before spending
def test_run_checks_the_endpoint_before_the_first_call(tmp_path: Path, capsys) -> None:
    pytest.importorskip("tom_llm_agents.agent")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = main(["run", "PrisonersDilemma", "--agents", f"llm:model=m:base_url=http://127.0.0.1:{port}/v1",
                 "tit_for_tat", "--episodes", "1", "--out", str(tmp_path / "x")])  # fmt: skip
    assert code == 2
    assert "unreachable" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_config_mismatch_error_is_a_value_error() -> None:
    assert issubclass(ConfigMismatchError, ValueError)


def test_qa_eval_checks_inputs_and_endpoint_before_answering(tmp_path: Path, capsys,
                                                             monkeypatch) -> None:  # fmt: skip
    """A missing --agentic file and a dead endpoint stop `qa eval` before any item is answered."""
    pytest.importorskip("tom_llm_agents.client")
    import tom_envs.qa.evaluate as qe

    answered: list[str] = []
    real = qe.run_answerer
    monkeypatch.setattr(qe, "run_answerer", lambda *a, **k: answered.append("x") or real(*a, **k))
    suite = sorted((Path(__file__).parents[1] / "tom_envs/qa/suites").glob("*.jsonl"))[0]
    code = main(["qa", "eval", str(suite), "--answerer", "random",
                 "--agentic", str(tmp_path / "missing.json")])  # fmt: skip
    assert code == 2 and "--agentic" in capsys.readouterr().err and not answered
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = main(["qa", "eval", str(suite), "--answerer", "llm", "--model", "m",
                 "--base-url", f"http://127.0.0.1:{port}/v1"])  # fmt: skip
    assert code == 2 and "unreachable" in capsys.readouterr().err and not answered


def test_qa_failures_are_counted_by_kind_and_all_failed_is_an_error() -> None:
    """QA answers fail by the drivers' kinds; an answerer that failed every item is flagged."""
    from tom_envs.qa.evaluate import run_answerer
    from tom_envs.qa.items import read_suite

    suite = sorted((Path(__file__).parents[1] / "tom_envs/qa/suites").glob("*.jsonl"))[0]
    items = read_suite(suite)[1][:4]

    def dead(item, trial):
        raise ConnectionError("connection refused")

    res = run_answerer(items, dead, "dead", trials=2)
    assert res.failures == {"endpoint": 8} and res.every_answer_failed()
    assert res.first_failure.startswith("endpoint: <error: ConnectionError")
    res = run_answerer(items, lambda item, trial: "I am not sure", "vague", trials=1)
    assert res.failures == {"unparseable": 4} and res.every_answer_failed()
    res = run_answerer(items, lambda item, trial: "Answer: A", "a", trials=1)
    assert not res.failures and not res.every_answer_failed()


def test_llm_prompt_tables_grow_with_new_lines_only(tmp_path: Path) -> None:
    """Adversary: an LLM agent's prompt repeats the whole history each round, so a table of whole
    messages grows with the square of the episode (750 kB for one 100-round episode). Stored as
    line diffs against the previous prompt, the file stays small and reads back exactly."""
    pytest.importorskip("tom_llm_agents")
    from tom_envs.agents import make_agent
    from tom_envs.registration import game_spec
    from tom_envs.runner import play_episode
    from tom_llm_agents import LLMAgent, ScriptedClient

    spec = game_spec("PrisonersDilemma")
    agent = LLMAgent(ScriptedClient(['{"action": "Option J"}'] * 200), decoding="json")
    ep = play_episode(spec, [agent, make_agent("tit_for_tat", spec)], 0, {"horizon": 100})
    calls = [c for s in ep.steps for c in s["info"].get("llm_calls", [])]
    assert len(calls) == 100
    whole = sum(len(m["content"]) for c in calls for m in c["messages"])
    path = ep.write(tmp_path / "ep.jsonl")
    size = path.stat().st_size
    assert size < 150_000 and size < whole / 5, (size, whole)  # measured: 114 kB of 741 kB
    back = Episode.read(path)
    assert [s["info"] for s in back.steps] == [s["info"] for s in ep.steps]


def test_qa_eval_fails_when_the_answerer_fails_on_too_many_items(tmp_path: Path, capsys,
                                                                  monkeypatch) -> None:  # fmt: skip
    """An endpoint that dies halfway: the report is written, but the command exits 1."""
    import tom_envs.qa.generate as qgen
    from tom_envs.qa.items import read_suite, write_suite

    calls = {"n": 0}

    def dying(seed: int = 0):
        def answer(item):
            calls["n"] += 1
            if calls["n"] > 10:
                raise ConnectionError("connection refused")
            return "Answer: A"

        return answer

    monkeypatch.setattr(qgen, "random_answerer", dying)
    shipped = sorted((Path(__file__).parents[1] / "tom_envs/qa/suites").glob("*.jsonl"))[0]
    meta, items = read_suite(shipped)
    suite = write_suite(items[:60], tmp_path / "s.jsonl", meta)  # 60 items: 10 answered, 50 fail
    out = tmp_path / "r.md"
    code = main(["qa", "eval", str(suite), "--answerer", "random", "--trials", "1",
                 "--out", str(out)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1 and "50 of 60 answers failed" in err and "endpoint 50" in err
    assert out.exists()
    calls["n"] = 0
    assert main(["qa", "eval", str(suite), "--answerer", "random", "--trials", "1",
                 "--max-failure-share", "0.9"]) == 0  # fmt: skip


# ------------------------------------------------------------------------ the code is part of the key
def test_the_code_that_plays_keys_every_result(tmp_path: Path, monkeypatch, capsys) -> None:
    """Adversary: a bot changed but the package version did not (a result of the old code
    reused). The key holds a digest of each package's sources; a resumed run naming another
    digest stops and names the package."""
    from tom_envs import identity

    code = identity.code_identity()
    assert set(code) == set(identity.CODE_PACKAGES)
    assert all(len(v) == 16 for v in code.values())  # every package is installed here
    args = [*PD, "--agents", "always_0", "tit_for_tat", "--kw", "horizon=3", "--out", str(tmp_path)]
    assert main(args) == 0
    head = lines_of(tmp_path / "episode_000000.jsonl")[0]
    assert head["config"]["code"] == code
    monkeypatch.setattr(identity, "_CODE", {**code, "tom_envs": "0" * 16})  # the code changed
    capsys.readouterr()
    assert main(args) == 2
    assert f'code.tom_envs: "{code["tom_envs"]}" -> "{"0" * 16}"' in capsys.readouterr().err


def test_the_source_digest_follows_every_source_file(tmp_path: Path, monkeypatch) -> None:
    """What the digest covers: every .py file and a game's data files, by path and content."""
    from tom_envs.identity import _package_digest

    pkg = tmp_path / "pkg_digest_probe"
    (pkg / "games" / "g").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "games" / "g" / "bots.py").write_text("X = 1\n")
    (pkg / "games" / "g" / "layout.txt").write_text("XX\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    base = _package_digest("pkg_digest_probe")
    seen = {base}
    for edit in (lambda: (pkg / "games" / "g" / "bots.py").write_text("X = 2\n"),
                 lambda: (pkg / "games" / "g" / "layout.txt").write_text("XY\n"),
                 lambda: (pkg / "new.py").write_text(""),
                 lambda: (pkg / "new.py").rename(pkg / "renamed.py")):  # fmt: skip
        edit()
        seen.add(_package_digest("pkg_digest_probe"))
    assert len(seen) == 5  # each edit gives a new digest
    after = _package_digest("pkg_digest_probe")
    (pkg / "README.md").write_text("docs are not code")
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "x.pyc").write_bytes(b"\x00")
    assert _package_digest("pkg_digest_probe") == after
    assert _package_digest("no_such_package_here") == "absent"


@pytest.mark.parametrize("name", [spec.name for spec in GAMES])
def test_resolving_a_resolved_configuration_gives_the_same_configuration(name: str) -> None:
    """An episode records its resolved game arguments; a result (a trained best response, a
    cached reference) is matched by resolving them again, so resolution must be idempotent.
    BombDefusal's explicit ``tools`` were sorted while the default keeps the paper's order
    (charlie holds blue+red), so a bomb best response never matched its own episodes."""
    from tom_envs.best_responses import _normal
    from tom_envs.identity import resolved_env_kwargs
    from tom_envs.registration import game_spec

    spec = game_spec(name)
    once = resolved_env_kwargs(spec)
    params = {p.name for p in getattr(spec.load(), "PARAMS", ())}
    twice = resolved_env_kwargs(spec, {k: v for k, v in once.items() if k in params})
    assert _normal(twice) == _normal(once)


def test_bomb_tools_keep_their_given_order() -> None:
    from tom_envs.games.bomb_defusal.state import BombConfig

    cfg = BombConfig(tools=(("blue", "red", "blue"), ("green",), ("red", "green")))
    assert cfg.tools == (("blue", "red"), ("green",), ("red", "green"))
    assert cfg.tool_colors == ((2, 0), (1,), (0, 1))
