"""The bench's skinned run and skin gap, and the ``forfeit`` illegal-answer protocol (#36).

Tiny suites written to a temporary folder (bots, the seeded random agent, and the LLM agent on
the scripted client: no network), fixed seeds.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import test_bench as tb  # tests/experiments/test_bench.py: its tiny suite and arguments
from test_bench import tiny  # noqa: F401  (the fixture)

from tom_envs.cli import main
from tom_experiments.bench import commands, leaderboard
from tom_experiments.bench import suite as suite_mod
from tom_experiments.bench.row import read_row, write_row
from tom_experiments.bench.run import Protocol, bench_spec, build_anchors
from tom_experiments.bench.skin import NOT_RUN, paired_gap, resolve
from tom_experiments.bench.suite import ANCHORS_MARK, SuiteError
from tom_llm_agents import LLMAgent, ScriptedClient

#: the other game of the forfeit test (Capture has a no-op: staying in the room)
CAPTURE = """game = "CollabCapture"
kwargs = { max_turns = 4 }
partners = ["greedy"]
seeds = [0, 1]
references = ["greedy"]"""
pytestmark = pytest.mark.usefixtures("tiny")
SCRIPTED = "llm:model=scripted:base_url=http://127.0.0.1:9/v1"


def _suite(skin: str = "", game2: str | None = None) -> Path:
    """test_bench's tiny suite (PD and Hanabi, installed by its fixture ``tiny`` in the test's
    folder, the current one), rewritten with a ``skin`` line or another second game (and its
    anchors built again)."""
    path = Path("suites/small-v99.toml")
    text = path.read_text().split(ANCHORS_MARK)[0]
    if not skin and game2 is None:
        return path
    text = text.replace("qa = { items_per_game = 1 }\n", "qa = { items_per_game = 1 }\n" + skin)
    if game2 is not None:
        text = text.split('game = "Hanabi"')[0] + game2 + "\n"
    path.write_text(text)
    s = suite_mod.parse_suite(path)
    suite_mod.write_anchors(path, build_anchors(s, Path("anchors2"), 1, "test"), "test")
    return path


def _args(**kw: object) -> Any:
    return tb._args(**{"skin": None, **kw})


def _bench(name: str, spec: str | None = "random", **kw: object) -> dict:
    out = Path("rows") / name
    assert commands.bench(_args(**{"agent": spec, "out": str(out), **kw})) == 0
    return read_row(out)


def _scripted(monkeypatch: pytest.MonkeyPatch, reply: Any) -> None:
    """Every ``llm:`` agent built from here on answers from ``reply`` (a script or a function);
    agents kept from earlier runs of this process are dropped (they hold their old script)."""
    from tom_envs.evaluation import backends

    monkeypatch.setattr(LLMAgent, "_build_client", lambda self, *a, **k: ScriptedClient(reply))
    monkeypatch.setattr(backends, "_AGENT_CACHE", {})


def _prompt(request: Any) -> str:
    return "\n".join(str(m.get("content", "")) for m in request.messages)


# --------------------------------------------------------------------------- paired bootstrap
def test_paired_gap_known_values() -> None:
    # a constant difference: the gap and a zero-width interval at it, however noisy the pairs
    a = [3.0, 10.0, -4.0, 7.0]
    assert paired_gap([(a, [x - 2.0 for x in a])], [1.0], 0, 500) == {
        "mean": 2.0, "lo": 2.0, "hi": 2.0, "n": 4}  # fmt: skip
    # one pair: the gap, no interval; no group: nothing
    assert paired_gap([([1.0], [0.5])], [2.0], 0, 500) == {"mean": 1.0, "lo": None, "hi": None, "n": 1}
    assert paired_gap([], [], 0, 500)["mean"] is None
    # the interval is the percentile bootstrap of resampled pairs (the same draws, written out)
    c, s = [1.0, 0.0, 1.0, 1.0, 0.0], [0.0, 0.0, 1.0, 0.0, 0.0]
    g2 = ([5.0, 6.0, 7.0], [5.0, 4.0, 7.0])
    got = paired_gap([(c, s), g2], [1.0, 0.5], 7, 1000)
    rng = np.random.default_rng(7)
    stats = np.zeros(1000)
    for (x, y), scale in (((c, s), 1.0), (g2, 0.5)):
        d = np.asarray(x) - np.asarray(y)
        idx = rng.integers(0, len(d), size=(1000, len(d)))
        stats += scale * d[idx].mean(axis=1)
    lo, hi = np.percentile(stats / 2, [2.5, 97.5])
    assert got["mean"] == pytest.approx((0.4 + 0.5 * 2 / 3) / 2)
    assert (got["lo"], got["hi"]) == (round(float(lo), 6), round(float(hi), 6))
    # paired, not two samples: a shared noise cancels (an unpaired interval would be wide)
    with pytest.raises(ValueError, match="groups of pairs"):
        paired_gap([([1.0, 2.0], [1.0])], [1.0], 0, 10)


# --------------------------------------------------------------------------- skinned run
def test_a_bot_s_skinned_run_has_gap_exactly_zero_in_every_cell(
        capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    row = _bench("random.json", skin="s1")
    skin = row["skin"]
    assert skin["key"] == "s1" and skin["source"] == "--skin"
    assert row["run"]["played"] == 12  # 6 canonical episodes and the same 6 in the skin
    canonical = {c["id"]: c for c in row["cells"]}
    assert sorted(c["id"] for c in skin["cells"]) == sorted(f"{i}@s1" for i in canonical)
    for cell in skin["cells"]:
        twin = canonical[cell["id"].removesuffix("@s1")]
        assert cell["seeds"] == twin["seeds"] and cell["return"] == twin["return"]
        assert cell["return_gap"]["mean"] == 0.0 and cell["return_gap"]["lo"] in (0.0, None)
        assert cell["return_gap"]["hi"] in (0.0, None)
        # a skinned episode is another configuration: never taken for a canonical one
        assert cell["env_kwargs"]["skin"] == "s1" and "skin" not in twin["env_kwargs"]
        assert not set(cell["config_hashes"]) & set(twin["config_hashes"])
    for game, g in skin["games"].items():
        n = 2 * len(suite_mod.load_suite("small").game(game).partners)  # (partner, seed) pairs
        assert g["gap"] == {"mean": 0.0, "lo": 0.0, "hi": 0.0, "n": n}, game
        assert g["normalised"] == row["games"][game]["normalised"]
    assert skin["aggregate"]["gap"] == {"mean": 0.0, "lo": 0.0, "hi": 0.0, "n": 6}
    assert skin["aggregate"]["score"]["mean"] == row["aggregate"]["mean"]
    assert skin["qa"]["note"].startswith("n/a")  # random answers no text questions
    # the same for rmax and for per-game rule bots: skinned play is canonical play, gap 0
    Path("bots.toml").write_text('[agents]\nPrisonersDilemma = "tit_for_tat"\nHanabi = "simple"\n')
    for other in (_bench("rmax.json", "rmax", skin="s1"),
                  _bench("bots.json", skin="s1", agent=None, agents_file="bots.toml")):  # fmt: skip
        assert all(c["return_gap"]["mean"] == 0.0 for c in other["skin"]["cells"])
        assert [g["gap"]["mean"] for g in other["skin"]["games"].values()] == [0.0, 0.0]
        assert other["skin"]["aggregate"]["gap"]["mean"] == 0.0
    # the leaderboard's column: the gap with its interval, or "not run"
    plain = _bench("plain.json")
    head, body = leaderboard.table([row, plain])
    col = head.index("skin gap")
    assert sorted(line[col][0] for line in body) == ["0.00 [0.00, 0.00] (s1)", NOT_RUN]
    assert plain["skin"]["key"] is None and plain["skin"]["note"].startswith(NOT_RUN)
    # --reproduce checks the skinned cells and the gaps like every other figure
    capsys.readouterr()
    path = Path("rows/random.json")
    assert main(["bench", "--reproduce", str(path), "--out", "rows/re.json"]) == 0
    out = capsys.readouterr().out
    assert "OUTSIDE" not in out and "inside  PrisonersDilemma/tit_for_tat@s1 return_gap" in out
    assert "inside  skin s1 aggregate.gap: old 0 [0, 0], new 0" in out
    # a tampered skinned cell is outside: exit 1
    row["skin"]["cells"][0]["return"] = {"mean": 99.0, "lo": 98.0, "hi": 100.0, "n": 2}
    write_row(row, "rows/tampered.json")
    assert main(["bench", "--reproduce", "rows/tampered.json", "--out", "rows/re2.json"]) == 1
    assert "OUTSIDE PrisonersDilemma/tit_for_tat@s1 return: old 99 [98, 100]" in capsys.readouterr().out


def test_the_suite_s_skin_key_and_the_command_line() -> None:
    path = _suite(skin='skin = "s3"\n')
    suite = suite_mod.parse_suite(path)
    assert suite.skin == "s3"
    assert resolve(suite, None) == ("s3", "suite")
    assert resolve(suite, "s5") == ("s5", "--skin")
    assert resolve(suite, "none")[0] is None and resolve(suite, "canonical")[0] is None
    with pytest.raises(SuiteError, match="--skin 'x1'"):
        resolve(suite, "x1")
    row = _bench("suite-skin.json")
    assert row["skin"]["key"] == "s3" and row["skin"]["source"] == "suite"
    assert _bench("off.json", skin="none")["skin"] == {"key": None, "note": f"{NOT_RUN}: --skin none"}
    # a suite without the key: no skinned run, and its bytes (v1 files) load as before
    bad = path.read_text().replace('skin = "s3"', 'skin = "blue"')
    path.write_text(bad)
    with pytest.raises(SuiteError, match="skin 'blue'"):
        suite_mod.parse_suite(path)
    for shipped in ("small", "full"):
        v1 = Path(suite_mod.__file__).parent / "suites" / f"{shipped}-v1.toml"
        assert suite_mod.parse_suite(v1).skin is None


def test_a_text_agent_that_answers_canonical_names_has_a_gap(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    _scripted(monkeypatch, ["Option J"])  # PD's first canonical option, whatever it is shown as
    row = _bench("canon.json", SCRIPTED, skin="s1", legal_actions="listed", on_invalid="fallback")
    assert "CoordinationQA calls" in capsys.readouterr().err  # announced before the first call
    skin = row["skin"]
    pd = "PrisonersDilemma"
    # canonical: it plays J every round; in the skin "Option J" names nothing (a fallback)
    assert row["games"][pd]["rules"]["fallback_pct"]["mean"] == 0.0
    assert skin["games"][pd]["rules"]["fallback_pct"]["mean"] == 100.0
    assert skin["games"][pd]["gap"]["mean"] != 0.0
    assert skin["aggregate"]["gap"]["mean"] != 0.0
    # what the skinned run spent is in the row too, beside the canonical run's cost
    assert skin["cost"]["calls"]["total"] == row["cost"]["calls"]["total"] > 0
    assert skin["rules"]["fallback_pct"]["mean"] > row["rules"]["fallback_pct"]["mean"]
    # the QA subset was asked twice: canonical and in the skin (same items)
    assert row["qa"]["items"] == skin["qa"]["items"] == 2 and "gap_pct" in skin["qa"]
    assert Path(row["run"]["dir"], "qa-s1.json").is_file()


def test_the_estimate_counts_the_skinned_run(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    _scripted(monkeypatch, ["1"])
    assert commands.bench(_args(agent=SCRIPTED, estimate=True)) == 0
    plain = capsys.readouterr()
    assert commands.bench(_args(agent=SCRIPTED, estimate=True, skin="s1")) == 0
    skinned = capsys.readouterr()
    assert "6 episodes in 3 cells" in plain.err and "12 episodes in 6 cells" in skinned.err
    assert "CoordinationQA: 2 calls" in plain.out and "CoordinationQA: 4 calls" in skinned.out
    calls = [int(re.search(r"total: ~([\d,]+) calls", o.out)[1]) for o in (plain, skinned)]
    assert calls[1] == 2 * calls[0] > 0  # the skinned episodes are in the estimate


# --------------------------------------------------------------------------- forfeit
def test_forfeit_maps_to_the_agent_s_settings() -> None:
    spec = bench_spec("llm:local=true", Protocol(on_invalid="forfeit"))
    assert ":invalid=forfeit:reprompts=0:fallback=forfeit" in spec


def test_forfeit_loses_the_turn_or_the_episode(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    _suite(game2=CAPTURE)
    calls = {"n": 0}

    def reply(request: Any) -> str:
        calls["n"] += 1
        text = _prompt(request)
        if "round 1." in text:  # PD's first round: garbage (PD has no no-op: the episode is lost)
            return "blorp"
        return "1" if calls["n"] % 2 or "Option" in text else "blorp"  # Capture: every other one

    _scripted(monkeypatch, reply)
    row = _bench("forfeit.json", SCRIPTED, on_invalid="forfeit")
    pd, cap = row["games"]["PrisonersDilemma"], row["games"]["CollabCapture"]
    # PD: every episode lost at its first answer, scored at the low anchor (normalised 0)
    assert pd["rules"]["forfeited_episodes"] == 4 and pd["rules"]["forfeit_turn_pct"]["mean"] == 0.0
    assert pd["normalised"]["mean"] == 0.0 and pd["return"]["mean"] == pd["anchors"]["low"]
    # Capture: garbage answers lose the turn (stay in the room), counted apart from fallbacks
    assert cap["rules"]["forfeited_episodes"] == 0 and cap["rules"]["forfeit_turn_pct"]["mean"] > 0
    assert cap["rules"]["fallback_pct"]["mean"] == 0.0 and cap["rules"]["invalid_pct"]["mean"] > 0
    rules = row["protocol"]["forfeit_rules"]
    assert rules["PrisonersDilemma"].startswith("episode") and rules["CollabCapture"].startswith("turn")
    assert row["protocol"]["on_invalid"] == "forfeit"
    # an agent that forfeits every decision has played nothing: the command fails loudly
    _scripted(monkeypatch, ["blorp"])
    capsys.readouterr()
    again = _args(agent=SCRIPTED, on_invalid="forfeit", out="rows/none.json", run_dir="runs/none")
    assert commands.bench(again) == 1  # (its own directory: the script is not in the spec)
    assert "forfeited on all" in capsys.readouterr().err


def test_forfeit_steps_in_the_trajectory() -> None:
    from tom_envs.agents import make_agent
    from tom_envs.driver import EpisodeDriver
    from tom_envs.registration import game_spec

    def garbage() -> LLMAgent:
        return LLMAgent(ScriptedClient(["blorp"]), invalid="forfeit", reprompts=0,
                        fallback="forfeit", probes=False)  # fmt: skip

    cap = game_spec("CollabCapture")
    ep = EpisodeDriver(cap, [garbage(), make_agent("greedy", cap)], 0, {"max_turns": 4}).run()
    mine = [s for s in ep.steps if s["agent"] == "player_0"]
    assert mine and all(s["forfeit"] == "turn" and s["action"] == 0 for s in mine)  # 0: stay
    assert not any(s.get("fallback") for s in mine) and ep.fallbacks["player_0"] == 0
    assert ep.metrics["forfeit_turns/player_0"] == len(mine) and ep.invalid["player_0"] == len(mine)
    pd = game_spec("PrisonersDilemma")
    ep = EpisodeDriver(pd, [garbage(), make_agent("tit_for_tat", pd)], 0, {"horizon": 3}).run()
    assert ep.length == 0 and ep.metrics["forfeit_episode/player_0"] == 1.0
    assert [(s["agent"], s["forfeit"], s["action"]) for s in ep.steps] == [("player_0", "episode", None)]
    assert json.loads(json.dumps(ep.records()[-1]))["status"] == "ok"
