"""``tom-envs bench`` and ``tom-envs leaderboard`` (tom_experiments.bench): rows, intervals,
reproduction, resume, suites, protocol axes and the static page.

The suite here is a tiny one written to a temporary folder (two games, one or two partners, two
seeds): every episode is a rule bot or the seeded random agent, so runs are deterministic and take
well under a second each.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
import pytest

from tom_envs.cli import main
from tom_envs.records import bootstrap_ci
from tom_experiments.bench import commands, leaderboard
from tom_experiments.bench import suite as suite_mod
from tom_experiments.bench.row import (
    RowError,
    check_row,
    ci_mean,
    ci_ratio,
    read_row,
    stratified_mean,
    write_row,
)
from tom_experiments.bench.run import (
    LLM_BENCH_DEFAULTS,
    Protocol,
    ProtocolError,
    bench_spec,
    build_anchors,
    git_commit,
)

TINY = """# a test suite
name = "small"
version = 99
description = "two games, tiny"
bootstrap = { resamples = 500, seed = 0 }
qa = { items_per_game = 1 }

[[games]]
game = "PrisonersDilemma"
kwargs = { horizon = 3 }
partners = ["tit_for_tat", "always_1"]
seeds = [0, 1]
references = ["always_0", "tit_for_tat"]
anchor_seeds = [0, 1, 2, 3]

[[games]]
game = "Hanabi"
kwargs = { colors = 2, ranks = 3 }
partners = ["convention"]
seeds = [0, 1]
references = ["convention"]
"""


@pytest.fixture
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A suite folder holding ``small-v99.toml`` with its anchors, installed as the shipped one."""
    folder = tmp_path / "suites"
    folder.mkdir()
    path = folder / "small-v99.toml"
    path.write_text(TINY)
    monkeypatch.setattr(suite_mod, "suites_dir", lambda: folder)
    monkeypatch.chdir(tmp_path)
    s = suite_mod.parse_suite(path)
    suite_mod.write_anchors(path, build_anchors(s, tmp_path / "anchors", 1, "test"), "test")
    return path


def _args(**kw: object) -> argparse.Namespace:
    base = dict(agent=None, agent_again=None, agents_file=None, suite="small", legal_actions="listed", on_invalid="reprompt", out=None,
                run_dir=None, workers=1, estimate=False, reproduce=None, build_anchors=None,
                list_suites=False, max_calls=None, max_cost=None, no_llm_cache=True)  # fmt: skip
    base.update(kw)
    return argparse.Namespace(**base)


def _bench(tmp_path: Path, name: str = "random.json", spec: str = "random") -> dict:
    out = tmp_path / "rows" / name
    assert commands.bench(_args(agent=spec, out=str(out))) == 0
    return read_row(out)


# --------------------------------------------------------------------------- intervals
def test_bootstrap_known_values() -> None:
    # constant data: a zero-width interval at the value; one item: no interval
    assert ci_mean([2.0, 2.0, 2.0], 0, 200) == {"mean": 2.0, "lo": 2.0, "hi": 2.0, "n": 3}
    assert ci_mean([5.0], 0, 200) == {"mean": 5.0, "lo": None, "hi": None, "n": 1}
    # a ratio of sums: 3 invalid in 6 decisions is 50%, whatever the resample when all agree
    assert ci_ratio([(1, 2), (2, 4)], 0, 200)["mean"] == 50.0
    assert ci_ratio([(0, 0)], 0, 200)["mean"] is None
    # the mean's interval is bootstrap_ci's, to the digit (same seed, same resamples)
    values = [0.0, 1.0, 3.0, 4.0, 10.0]
    est, lo, hi = bootstrap_ci(values, 7, resamples=500)
    assert ci_mean(values, 7, 500) == {"mean": round(est, 6), "lo": round(lo, 6),
                                       "hi": round(hi, 6), "n": 5}  # fmt: skip
    # the ratio's interval is bootstrap_ci's with the ratio as its statistic
    pairs = [(1.0, 4.0), (0.0, 3.0), (2.0, 2.0), (3.0, 5.0), (0.0, 1.0)]

    def ratio(items: list[tuple[float, float]]) -> float:
        return 100.0 * sum(n for n, _ in items) / sum(d for _, d in items)

    est, lo, hi = bootstrap_ci(pairs, 5, ratio, resamples=300)
    got = ci_ratio(pairs, 5, 300)
    assert got["mean"] == round(est, 6) and got["lo"] == round(lo, 6) and got["hi"] == round(hi, 6)
    # the interval of {0, 1}: the mean of two draws is 0, 0.5 or 1 -> [0, 1] at 95%
    assert ci_mean([0.0, 1.0], 0, 2000)[("lo")] == 0.0 and ci_mean([0.0, 1.0], 0, 2000)["hi"] == 1.0
    # stratified: each group's mean is transformed then averaged; constant groups are exact
    agg = stratified_mean([[1.0, 1.0], [3.0, 3.0]], [lambda x: x / 2, lambda x: x - 3], 0, 300)
    assert agg["mean"] == 0.25 and agg["lo"] == 0.25 and agg["hi"] == 0.25
    # one group, identity transform: the same draws as a plain percentile bootstrap
    rng = np.random.default_rng(3)
    g = list(rng.normal(size=20))
    one = stratified_mean([g], [lambda x: x], 3, 400)
    est, lo, hi = bootstrap_ci(g, 3, resamples=400)
    assert math.isclose(one["lo"], lo, abs_tol=1e-6) and math.isclose(one["hi"], hi, abs_tol=1e-6)


def test_invalid_answers_are_the_illegal_fallbacks_and_reasks() -> None:
    from tom_envs.records import Episode
    from tom_experiments.bench.row import episode_numbers

    def step(agent: str, fallback: bool = False, kind: str = "", reprompts: int = 0) -> dict:
        info = {"usage": {"calls": 1 + reprompts, "reprompts": reprompts}}
        return {"agent": agent, "fallback": fallback, "info": info,
                "failure": {"kind": kind, "message": ""} if fallback else None}  # fmt: skip

    steps = [step("player_0"), step("player_0", reprompts=1),  # re-asked, then valid
             step("player_0", True, "unparseable"), step("player_0", True, "invalid"),
             step("player_0", True, "illegal"), step("player_0", True, "endpoint"),
             step("player_1", True, "unparseable")]  # fmt: skip
    ep = Episode("x", 0, {}, {}, steps=steps, returns={"player_0": 2.0, "player_1": 0.0},
                 decisions={"player_0": 6, "player_1": 1}, fallbacks={"player_0": 4, "player_1": 1})  # fmt: skip
    n = episode_numbers(ep, [0])
    # an endpoint failure is a fallback but not an illegal answer; the partner's never count
    assert (n["invalid"], n["fallbacks"], n["decisions"], n["reprompts"]) == (4, 4, 6, 1)
    assert n["return"] == 2.0


# --------------------------------------------------------------------------- the row
def test_row_schema_round_trip_and_manifest(tiny: Path, tmp_path: Path) -> None:
    row = _bench(tmp_path)
    again = tmp_path / "copy.json"
    write_row(row, again)
    assert read_row(again) == row  # round trip, unchanged
    s = suite_mod.parse_suite(tiny)
    assert row["suite"]["sha256"] == s.sha256 and row["suite"]["version"] == 99
    assert set(row["suite"]["zoo"]) == {"PrisonersDilemma", "Hanabi"}
    assert row["suite"]["partners"]["Hanabi"]["convention"]["kind"] == "bot"
    assert [c["id"] for c in row["cells"]] == ["PrisonersDilemma/tit_for_tat",
                                               "PrisonersDilemma/always_1", "Hanabi/convention"]  # fmt: skip
    assert all(c["seeds"] == [0, 1] and c["episodes"] == 2 for c in row["cells"])
    assert row["cells"][0]["env_kwargs"]["horizon"] == 3  # resolved game arguments
    assert row["code"]["packages"]["tom_experiments"] != "absent"
    assert row["protocol"]["legal_actions"].startswith("n/a")  # random acts on indices
    assert row["tom"]["functional"].startswith("not measured")
    assert "accuracy_pct" not in row["qa"]  # the random agent answers no questions
    for g in row["games"].values():  # normalised between the frozen anchors
        a = g["anchors"]
        assert g["normalised"]["mean"] == round(
            (g["return"]["mean"] - a["low"]) / (a["high"] - a["low"]), 6
        )
    assert row["aggregate"]["games"] == 2 and row["aggregate"]["lo"] <= row["aggregate"]["mean"]
    bad = dict(row, surprise=1)
    with pytest.raises(RowError, match="unknown fields"):
        check_row(bad)
    with pytest.raises(RowError, match="schema"):
        check_row(dict(row, schema="tom-bench-row/0"))
    big = tmp_path / "big.json"
    big.write_text(" " * 2_000_001)
    with pytest.raises(RowError, match="over the row limit"):
        read_row(big)


def test_resume_does_not_replay_finished_cells(tiny: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    first = _bench(tmp_path, "a.json")
    assert first["run"]["played"] == 6 and first["run"]["resumed"] == 0
    capsys.readouterr()
    second = _bench(tmp_path, "b.json")
    assert second["run"]["played"] == 0 and second["run"]["resumed"] == 6
    assert "resumed 6 episode(s), played 0" in capsys.readouterr().err
    assert second["cells"] == first["cells"] or all(  # same numbers (wall time read from disk)
        a["return"] == b["return"] for a, b in zip(first["cells"], second["cells"], strict=True)
    )
    # a new seed list in a changed suite is another suite (another SHA-256, another directory)
    tiny.write_text(tiny.read_text().replace("seeds = [0, 1]\nreferences = [\"convention\"]",
                                             "seeds = [0, 1, 2]\nreferences = [\"convention\"]"))  # fmt: skip
    third = _bench(tmp_path, "c.json")
    assert third["run"]["resumed"] == 0 and third["suite"]["sha256"] != first["suite"]["sha256"]


def test_a_result_is_never_reused_across_configurations(tiny: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    run = tmp_path / "shared-run"
    assert (
        commands.bench(_args(agent="random", run_dir=str(run), out=str(tmp_path / "r.json"))) == 0
    )
    # another agent forced into the same directory: refused, naming what changed, nothing written
    code = commands.bench(_args(agent="rmax", run_dir=str(run), out=str(tmp_path / "x.json")))
    assert code == 2 and not (tmp_path / "x.json").exists()
    err = capsys.readouterr().err
    assert "holds a result of another configuration" in err and '"random" -> "rmax"' in err
    # by default each (suite, agent, protocol, code) has its own directory
    assert _bench(tmp_path, "rmax.json", "rmax")["run"]["resumed"] == 0


# --------------------------------------------------------------------------- reproduce
def test_reproduce_a_deterministic_row_and_a_tampered_one(tiny: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    row = _bench(tmp_path)
    path = tmp_path / "rows" / "random.json"
    capsys.readouterr()
    assert main(["bench", "--reproduce", str(path), "--out", str(tmp_path / "re.json")]) == 0
    out = capsys.readouterr().out
    assert "OUTSIDE" not in out and "inside  PrisonersDilemma/tit_for_tat return" in out
    n = sum(1 for ln in out.splitlines() if ln.startswith("inside "))
    assert f"{n} of {n} figures inside" in out and n >= 3 * 8 + 2 * 2 + 1
    # tamper: one cell's return moved outside its interval
    row["cells"][0]["return"] = {"mean": 99.0, "lo": 98.0, "hi": 100.0, "n": 2}
    bad = tmp_path / "tampered.json"
    write_row(row, bad)
    assert main(["bench", "--reproduce", str(bad), "--out", str(tmp_path / "re2.json")]) == 1
    out = capsys.readouterr().out
    assert "OUTSIDE PrisonersDilemma/tit_for_tat return: old 99 [98, 100]" in out


def test_reproduce_refuses_another_suite_and_untrusted_code(tiny: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    row = _bench(tmp_path)
    other = dict(row, suite=dict(row["suite"], sha256="0" * 64))
    write_row(other, tmp_path / "other.json")
    assert main(["bench", "--reproduce", str(tmp_path / "other.json")]) == 2
    assert "is not the installed one" in capsys.readouterr().err
    # a row naming code is rebuilt only if the same spec is typed again: never imported from it
    spec = "tom_envs.core.agents:RandomAgent"
    code = dict(row, agent=dict(row["agent"], spec=spec))
    write_row(code, tmp_path / "code.json")
    capsys.readouterr()
    assert (
        main(
            [
                "bench",
                "--reproduce",
                str(tmp_path / "code.json"),
                "--out",
                str(tmp_path / "c1.json"),
            ]
        )
        == 2
    )
    assert "names Python code" in capsys.readouterr().err  # refused before any import
    assert not (tmp_path / "c1.json").exists()
    assert main(["bench", "--reproduce", str(tmp_path / "code.json"), "--agent", "random"]) == 2
    assert "is not the row's agent" in capsys.readouterr().err
    # typed again by the person running it: trusted, played (and its numbers compared)
    assert main(["bench", "--reproduce", str(tmp_path / "code.json"), "--agent", spec,
                 "--out", str(tmp_path / "c2.json")]) in (0, 1)  # fmt: skip
    assert read_row(tmp_path / "c2.json")["agent"]["spec"] == spec


def test_per_game_agents_file_row_and_its_reproduction(tiny: Path, tmp_path: Path) -> None:
    f = tmp_path / "bots.toml"
    f.write_text('[agents]\nPrisonersDilemma = "tit_for_tat"\nHanabi = "convention"\n')
    out = tmp_path / "bots.json"
    assert commands.bench(_args(agents_file=str(f), out=str(out))) == 0
    row = read_row(out)
    assert row["agent"]["spec"] == "per-game:bots.toml"
    assert row["agent"]["per_game"] == {"PrisonersDilemma": "tit_for_tat", "Hanabi": "convention"}
    assert main(["bench", "--reproduce", str(out), "--out", str(tmp_path / "re.json")]) == 0
    # a map that misses a game, or seats an LLM, is refused with what is wrong
    f.write_text('[agents]\nPrisonersDilemma = "tit_for_tat"\n')
    with pytest.raises(suite_mod.SuiteError, match="missing \\['Hanabi'\\]"):
        commands.read_agents_file(f, suite_mod.parse_suite(tiny))
    f.write_text('[agents]\nPrisonersDilemma = "llm:local=true"\nHanabi = "convention"\n')
    assert commands.bench(_args(agents_file=str(f))) == 2


# --------------------------------------------------------------------------- leaderboard
def test_leaderboard_escapes_every_value_and_loads_nothing(tiny: Path, tmp_path: Path) -> None:
    row = _bench(tmp_path)
    evil = "<script>alert(1)</script>"
    row["agent"]["spec"] = evil + "|x"
    row["agent"]["model"] = {"reported": ['<img src="http://evil.example/x.png">']}
    path = tmp_path / "evil.json"
    write_row(row, path)
    md, page = tmp_path / "board.md", tmp_path / "board.html"
    assert main(["leaderboard", str(path), str(tmp_path / "rows" / "random.json"), "--md", str(md),
                 "--html", str(page)]) == 0  # fmt: skip
    html_text, md_text = page.read_text(), md.read_text()
    for text in (html_text, md_text):
        assert evil not in text and "<img" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html_text
    assert "\\|x" in md_text  # a pipe in a value cannot open a new markdown cell
    # no external load of any kind: no URL, no src/href attribute, scripts all inline
    assert "http://" not in html_text.replace("http://evil", "") or "src=" not in html_text
    assert "https://" not in html_text and ' src="' not in html_text and "href=" not in html_text
    assert "<script>" in html_text and "<script src" not in html_text
    assert html_text.count("<svg") == 1 and "Content-Security-Policy" in html_text
    # the embedded JSON cannot close its script element
    blob = html_text.split('id="rows">')[1].split("</script>")[0]
    assert "<" not in blob and json.loads(blob)[0]["agent"]["spec"] in (evil + "|x", "random")


def test_leaderboard_refuses_to_mix_suite_versions(tiny: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    row = _bench(tmp_path)
    other = dict(row, suite=dict(row["suite"], version=100, sha256="f" * 64))
    write_row(other, tmp_path / "v100.json")
    with pytest.raises(leaderboard.MixedSuites, match="different suites"):
        leaderboard.load_rows([tmp_path / "rows" / "random.json", tmp_path / "v100.json"])
    assert (
        main(["leaderboard", str(tmp_path / "rows" / "random.json"), str(tmp_path / "v100.json")])
        == 2
    )
    assert "small-v99" in capsys.readouterr().err
    # rows of one suite but two protocols: two tables, never one
    proto = dict(row, protocol={"legal_actions": "hidden", "on_invalid": "fallback"})
    md = leaderboard.render_md([row, proto])
    assert md.count("### ") == 2


# --------------------------------------------------------------------------- protocol axes
def test_protocol_axes_become_settings_or_are_refused() -> None:
    spec = bench_spec("llm:local=true", Protocol("hidden", "fallback"))
    assert ":menu=none:invalid=forfeit:reprompts=0:fallback=random" in spec
    assert all(f":{k}={v}" in spec for k, v in LLM_BENCH_DEFAULTS.items())
    listed = bench_spec("llm:local=true:preset=paper004", Protocol())
    assert ":menu=auto:invalid=reprompt:reprompts=2" in listed and "max_tokens" not in listed
    assert ":menu=tool:" in bench_spec("llm:local=true", Protocol("tool"))
    assert Protocol("tool").record(True)["note"].startswith("tool: the agent adds no list")
    assert ":invalid=forfeit:reprompts=0:fallback=forfeit" in bench_spec(
        "llm:local=true", Protocol(on_invalid="forfeit")
    )  # the game's no-op, or the episode lost (tests/experiments/test_bench_skin.py)
    with pytest.raises(ProtocolError, match="sets \\['menu'\\] itself"):
        bench_spec("llm:local=true:menu=none", Protocol())
    with pytest.raises(ProtocolError, match="action indices"):
        bench_spec("random", Protocol("hidden"))
    assert bench_spec("random", Protocol()) == "random"


def test_shipped_suites_parse_and_cover_every_game_but_example() -> None:
    from tom_envs.registration import GAMES

    games = {s.name for s in GAMES} - {"Example"}
    for name in suite_mod.SUITE_NAMES:
        assert suite_mod.load_suite(name).version == 2  # the default is the newest version
        for version in (1, 2):
            s = suite_mod.load_suite(name, version)
            assert {g.game for g in s.games} == games and s.version == version
            assert set(s.anchors) == games, f"{name}: anchors missing"
            s.check_zoo()  # frozen with the installed zoo or one in the history, same partners
            assert "--build-anchors" in s.anchors_command
            assert (s.skin, s.objective) == ((None, "return") if version == 1 else ("s1", "U"))


def test_a_grown_zoo_keeps_a_frozen_suite_and_a_changed_partner_is_refused(monkeypatch) -> None:
    """Members added to a zoo leave a frozen suite as it was ("zoo" is the zoo the anchors were
    built with); a partner the suite plays that changed (another file, another spec) refuses it."""
    from tom_envs import zoo

    real = zoo.identity_rows
    full = suite_mod.load_suite("full", 2)
    frozen = [g.partners for g in full.games]
    grown = lambda game: [*real(game), ["newcomer", "bot", "newcomer", ""]]  # noqa: E731
    monkeypatch.setattr(zoo, "identity_rows", grown)
    monkeypatch.setattr(zoo, "members", lambda game, _m=zoo.members: [
        *_m(game), zoo.Member("newcomer", game, "bot", "a new member", spec="newcomer")])
    again = suite_mod.load_suite("full", 2)
    again.check_zoo()
    assert [g.partners for g in again.games] == frozen  # the newcomer is not in the frozen suite
    hanabi = again.game("Hanabi").partners[0]

    def retrained(game: str) -> list[list[str]]:
        return [[n, k, s, "0" * 64] if (game, n) == ("Hanabi", hanabi) else [n, k, s, h]
                for n, k, s, h in real(game)]  # fmt: skip

    monkeypatch.setattr(zoo, "identity_rows", retrained)
    with pytest.raises(suite_mod.SuiteError, match=rf"Hanabi: partners \['{hanabi}'\] differ"):
        again.check_zoo()


def test_every_frozen_zoo_is_known_and_a_forged_history_entry_is_not(monkeypatch,
                                                                      tmp_path: Path) -> None:
    """Each zoo version frozen in a shipped suite is the installed one or a history entry whose
    rows hash to it; an entry whose rows do not is ignored (the suite is then refused)."""
    import json

    for name in suite_mod.SUITE_NAMES:
        for version in (1, 2):
            s = suite_mod.load_suite(name, version)
            for game, a in s.anchors.items():
                assert suite_mod.frozen_rows(game, a.zoo) is not None, (name, version, game)
    history = json.loads((suite_mod.suites_dir() / suite_mod.ZOO_HISTORY).read_text())
    version, rows = next(iter(history.items()))
    game = version.split("/")[0]
    forged = {version: [[*rows[0][:3], "f" * 64], *rows[1:]]}
    (tmp_path / suite_mod.ZOO_HISTORY).write_text(json.dumps(forged))
    monkeypatch.setattr(suite_mod, "suites_dir", lambda: tmp_path)
    from tom_envs import zoo

    monkeypatch.setattr(zoo, "identity_rows", lambda g: [["other", "bot", "other", ""]])
    assert suite_mod.frozen_rows(game, version) is None


def test_commit_is_read_without_running_git(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    (repo / ".git" / "refs" / "heads").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / ".git" / "refs" / "heads" / "main").write_text("abc123\n")
    (repo / "pkg").mkdir()
    assert git_commit(repo / "pkg" / "x.py") == "abc123"
    assert git_commit(tmp_path / "nowhere" / "x.py") in (None, git_commit(tmp_path))


def test_the_row_names_the_commit_the_run_started_with(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tom_experiments.bench import run

    commits = iter(["commit-at-start", "a-later-commit", "a-later-commit"])
    monkeypatch.setattr(commands, "git_commit", lambda: next(commits))
    monkeypatch.setattr(run, "git_commit", lambda: next(commits))
    row = _bench(tmp_path)
    assert row["code"]["commit"] == "commit-at-start"
