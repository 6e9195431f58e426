"""Suite v2 and the bench's ToM columns (tom_experiments.bench.tom): the functional column against
the exact dynamic-programme value, the literal column beside its shortcuts on the same items,
"not answered" for agents that answer nothing, and v1 rows still rendering.

Known values (PrisonersDilemma, payoffs 8 for mutual cooperation, 10 for defecting on a
cooperator): against ``tit_for_tat`` over 5 rounds the best response cooperates 4 rounds and
defects in the last, 4 x 8 + 10 = 42; ``always_0`` (always cooperate) earns 40, so its regret is
exactly 2 per episode (0.4 per round) on every seed, and the oracle's is exactly 0.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import pytest

from tom_envs.agents import make_agent
from tom_envs.core.agents import BaseAgent
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode
from tom_experiments.bench import commands, leaderboard, run, tom
from tom_experiments.bench import suite as suite_mod
from tom_experiments.bench.row import read_row

TINY_V2 = """# a test suite, version 2
name = "small"
version = 98
description = "one matrix cell"
objective = "U"
predict = "all"
skin = "s1"
selection_seeds = [100, 101]
bootstrap = { resamples = 500, seed = 0 }
qa = { items_per_game = 0 }

[[games]]
game = "PrisonersDilemma"
kwargs = { horizon = 5 }
partners = ["tit_for_tat"]
seeds = [0, 1, 2]
references = ["always_0", "tit_for_tat"]
anchor_seeds = [0, 1, 2, 3]
"""
HANABI = """
[[games]]
game = "Hanabi"
kwargs = { colors = 2, ranks = 3 }
partners = ["convention"]
seeds = [0]
references = ["simple", "convention"]
anchor_seeds = [0, 1]
"""
ORACLE = "tom_envs.references:OracleAgent:partner=tit_for_tat"


def _freeze(path: Path, text: str) -> suite_mod.Suite:
    """Write a v2 suite file and freeze its anchors (``tom.build_anchors``)."""
    path.write_text(text)
    s = suite_mod.parse_suite(path)
    anchors = tom.build_anchors(s, path.parent / "anchors", run._play_plain, run._players)
    suite_mod.write_anchors(path, anchors, "test")
    return suite_mod.parse_suite(path)


@pytest.fixture
def tiny_v2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``small-v98`` (one PrisonersDilemma cell) with its anchors, installed as the shipped one."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(suite_mod, "suites_dir", lambda: tmp_path)
    _freeze(tmp_path / "small-v98.toml", TINY_V2)
    return tmp_path / "small-v98.toml"


def _row(tmp_path: Path, spec: str, name: str) -> dict:
    out = tmp_path / "rows" / name
    args = argparse.Namespace(
        agent=spec, agent_again=None, agents_file=None, suite="small", legal_actions="listed",
        on_invalid="reprompt", out=str(out), run_dir=None, workers=1, estimate=False,
        reproduce=None, build_anchors=None, list_suites=False, max_calls=None, max_cost=None,
        no_llm_cache=True,
    )  # fmt: skip
    assert commands.bench(args) == 0
    return read_row(out)


# --------------------------------------------------------------------------- suites
def test_shipped_v2_loads_records_its_sha_and_v1_is_unchanged() -> None:
    for name in suite_mod.SUITE_NAMES:
        v2 = suite_mod.load_suite(name, 2)
        assert v2.sha256 == hashlib.sha256(suite_mod.suite_path(name, 2).read_bytes()).hexdigest()
        assert (v2.skin, v2.objective) == ("s1", "U") and v2.predict in ("every:8", "all")
        for g in v2.games:  # every partner has a frozen reference on its cells' seeds
            a = v2.anchors[g.game]
            assert set(a.refs) == set(g.partners) and a.high_kind in (
                "exact",
                "lower bound",
                "mixed",
            )
            for r in a.refs.values():
                assert set(g.seeds) <= set(r["seeds"]) and r["kind"] in (
                    "exact",
                    "bracket",
                    "lower bound",
                )
    # the v1 files still load, byte-identical to the ones the shipped v1 rows were played on
    rows = Path(__file__).parents[2] / "docs" / "leaderboard" / "rows"
    for name in ("small", "full"):
        row = read_row(rows / f"{name}-v1-random.json")
        assert suite_mod.load_suite(name, 1).sha256 == row["suite"]["sha256"]


def test_v2_anchors_exact_from_the_solver_else_a_declared_candidate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    s = _freeze(tmp_path / "small-v96.toml", TINY_V2 + HANABI)
    a = s.anchors["PrisonersDilemma"]
    assert a.high_kind == "exact" and a.high == 42.0
    assert a.refs["tit_for_tat"]["values"] == [42.0] * 4
    # no solver for Hanabi: the best declared candidate, chosen on the selection seeds
    h = s.anchors["Hanabi"]
    assert h.high_kind == "lower bound" and h.refs["convention"]["kind"] == "lower bound"
    assert "selection seeds 100..101" in h.refs["convention"]["source"]


def test_v2_refuses_selection_seeds_that_are_cell_seeds(tmp_path: Path) -> None:
    path = tmp_path / "small-v97.toml"
    path.write_text(TINY_V2.replace("[100, 101]", "[1, 100]"))
    with pytest.raises(suite_mod.SuiteError, match="selection_seeds"):
        suite_mod.parse_suite(path)
    path.write_text(TINY_V2.replace('predict = "all"', 'predict = "every:0"'))
    with pytest.raises(suite_mod.SuiteError, match="every:K"):
        suite_mod.parse_suite(path)


# --------------------------------------------------------------------------- functional
def test_functional_column_against_the_exact_value(tiny_v2: Path, tmp_path: Path) -> None:
    oracle = _row(tmp_path, ORACLE, "oracle.json")
    fixed = _row(tmp_path, "always_0", "always_0.json")
    fo = oracle["tom"]["functional"]["games"]["PrisonersDilemma"]
    ff = fixed["tom"]["functional"]["games"]["PrisonersDilemma"]
    assert fo["reference"] == "exact" and ff["reference_by_partner"] == {"tit_for_tat": "exact"}
    # the oracle: regret 0, inside its interval
    assert fo["per_episode"]["lo"] <= 0.0 == fo["per_episode"]["mean"] <= fo["per_episode"]["hi"]
    # always cooperating against tit-for-tat: exactly 2 per episode, 0.4 per round
    assert ff["per_episode"] == {"mean": 2.0, "lo": 2.0, "hi": 2.0, "n": 3}
    assert ff["per_step"]["mean"] == 0.4 and not ff["beaten"]
    # scored on U, normalised between the random focal and the exact reference
    assert oracle["games"]["PrisonersDilemma"]["normalised"]["mean"] == 1.0
    assert oracle["tom"]["functional"]["aggregate"]["mean"] == 0.0
    # the oracle volunteers the partner's likeliest action: literal ToM beside the shortcuts
    lit = oracle["tom"]["literal"]["games"]["PrisonersDilemma"]
    assert lit["source"] == "volunteered" and lit["acc_pct"]["mean"] == 100.0
    assert fixed["tom"]["literal"]["games"]["PrisonersDilemma"] == tom.NOT_ANSWERED
    assert fixed["tom"]["literal"]["aggregate"]["status"] == tom.NOT_ANSWERED
    # both columns on the leaderboard, in markdown and in the one HTML page
    md = leaderboard.render_md(leaderboard.load_rows([tmp_path / "rows" / "oracle.json",
                                                      tmp_path / "rows" / "always_0.json"]))  # fmt: skip
    assert "0.00 [0.00, 0.00] (regret / span)" in md and "| always_0 |" in md
    assert "not answered" in md and "Functional ToM per game" in md and "(exact)" in md
    # --reproduce checks the ToM figures too (a deterministic agent: every one inside)
    from tom_experiments.bench import reproduce

    figures = list(reproduce.compare(oracle, oracle))
    assert all(ok for _, ok, _ in figures)
    names = [n for n, _, _ in figures]
    assert "functional aggregate" in names and "PrisonersDilemma literal acc_pct" in names
    assert tom.above_bound({"normalised": {"mean": 1.3}, "anchors": {"high_kind": "lower bound"}})
    assert not tom.above_bound({"normalised": {"mean": 1.3}, "anchors": {"high_kind": "exact"}})


# --------------------------------------------------------------------------- literal
class _RepeatLast(BaseAgent):
    """Plays ``always_0``; answers the next-action question with the partner's last action."""

    def act(self, turn):
        return 0

    def predict_partner(self, turn, question):
        last = turn.view.last_actions
        if last is None:
            return None
        return question.options.index(turn.text().legal_actions[last[1]])


def _true_policy(partner: str) -> BaseAgent:
    """Plays ``always_0``; answers with the argmax of the partner's true policy, tracked."""
    from tom_envs.games.matrix.bots import PartnerModel
    from tom_envs.partners.prediction import PredictorAgent

    return PredictorAgent(
        make_agent("always_0", game_spec("RockPaperScissors")), PartnerModel(partner)
    )


def _cell(agent: BaseAgent, partner: str, seeds: tuple[int, ...]) -> dict:
    spec = game_spec("RockPaperScissors")
    kwargs = {"horizon": 8}
    bundle = spec.load().make_bundle(**{**spec.kwargs, **kwargs})
    eps = [play_episode(spec, [agent, make_agent(partner, spec, bundle)], s, kwargs, predict="all")
           for s in seeds]  # fmt: skip
    g = suite_mod.SuiteGame(
        "RockPaperScissors", kwargs, (0,), (1,), None, (partner,), seeds, ("x",)
    )
    return tom.literal_game(g, {f"RockPaperScissors/{partner}": eps}, 0, 300)


def test_literal_true_policy_beats_the_shortcuts_and_repeat_last_equals_its_shortcut() -> None:
    # the alternating partner cycles 0, 1, 2, 0, ...: repeating its last action is always wrong
    truth = _cell(_true_policy("alternating"), "alternating", (0,))
    assert truth["source"] == "probe" and truth["items"] == 8
    assert truth["acc_pct"]["mean"] == 100.0
    assert all(v < 100.0 for v in truth["shortcuts_pct"].values())
    assert truth["acc_minus_best_pct"]["mean"] > 0 and truth["shortcuts_pct"]["repeat_last"] == 0.0
    # an agent that repeats the partner's last action scores exactly as the repeat_last shortcut
    for partner in ("alternating", "tit_for_tat", "win_stay_lose_shift"):
        rep = _cell(_RepeatLast(), partner, (0, 1))
        assert rep["acc_pct"]["mean"] == rep["shortcuts_pct"]["repeat_last"]


def test_agents_without_predict_partner_are_not_answered() -> None:
    assert _cell(make_agent("always_0", game_spec("RockPaperScissors")), "alternating", (0,)) == (
        tom.NOT_ANSWERED
    )


# --------------------------------------------------------------------------- leaderboard
def test_v1_rows_still_render_and_one_page_holds_every_suite(tiny_v2: Path, tmp_path: Path) -> None:
    rows = Path(__file__).parents[2] / "docs" / "leaderboard" / "rows"
    v1 = [read_row(rows / "small-v1-random.json"), read_row(rows / "full-v1-random.json")]
    md = leaderboard.render_md(v1[:1])
    assert "not measured (suite v1)" in md and "best declared reference" in md
    v2 = _row(tmp_path, ORACLE, "oracle.json")
    groups = leaderboard.group_by_suite([*v1, v2])
    assert [g[0]["suite"]["version"] for g in groups] == [98, 1, 1]
    page = leaderboard.render_page(groups)
    assert page.count("<style>") == 1 and page.count("<script>") == 1  # one copy of CSS and JS
    assert page.count("<h2>Suite ") == 3 and "small-v98" in page and "full-v1" in page
    with pytest.raises(leaderboard.MixedSuites):  # still never one table
        leaderboard.load_rows([rows / "small-v1-random.json", tmp_path / "rows" / "oracle.json"])


def test_predict_every_k_asks_at_fixed_decisions_only() -> None:
    spec = game_spec("RockPaperScissors")
    ep = play_episode(spec, [_RepeatLast(), make_agent("alternating", spec)], 3, {"horizon": 8},
                      predict="every:3")  # fmt: skip
    mine = [s for s in ep.steps if s["agent"] == "player_0"]
    assert [i for i, s in enumerate(mine) if s.get("predict")] == [0, 3, 6]
    assert ep.config["record"]["predict"] == "every:3"  # part of the configuration's key
    for bad in ("every:0", "some", "every:x"):
        with pytest.raises(ValueError, match="'off', 'all' or 'every:K'"):
            play_episode(spec, [_RepeatLast(), make_agent("alternating", spec)], 0, {}, predict=bad)


class _Mumbler:
    """Acts like always_0 and replies to every next-action question with text naming no option."""

    name = "mumbler"

    def __init__(self) -> None:
        self.inner = make_agent("always_0", game_spec("RockPaperScissors"))

    def reset(self, info):
        self.inner.reset(info)

    def act(self, turn):
        return self.inner.act(turn)

    def predict_partner(self, turn, question):
        return "You will play round 2 and the other player will choose something."


def test_an_agent_asked_whose_replies_never_parse_scores_zero_not_not_answered() -> None:
    """Asked and failing is a measured 0 with every item unanswered, never "not answered" (that
    status is for agents that are never asked and volunteer nothing)."""
    cell = _cell(_Mumbler(), "alternating", (0,))
    assert cell != tom.NOT_ANSWERED and cell["source"] == "probe"
    assert cell["acc_pct"]["mean"] == 0.0 and cell["unanswered"] == cell["items"] > 0
