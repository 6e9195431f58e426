"""The report's figures read right: regret against the exact optimum where the game has one (the
curve ends at the table's regret), heat maps with a labelled colour bar and the episode count,
sizes readable on a docs page, and the papers' units beside the papers' figures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from eval_configs import pd_config

from tom_envs.evaluation import evaluate, parse_config
from tom_envs.evaluation.plots import DPI, heatmap_figure
from tom_envs.evaluation.report import exact_regret_curve, functional_tom
from tom_envs.evaluation.run import write_outputs
from tom_envs.games.matrix.metrics import solver_for
from tom_envs.games.matrix.rules import MatrixConfig, payoff

PIL = pytest.importorskip("PIL.Image")
pytest.importorskip("matplotlib")

H = 6
IPD = MatrixConfig(game="ipd", horizon=H)


def _config(tmp_path: Path, **extra: object) -> dict:
    return pd_config(tmp_path, "fig", H, **extra)


def test_regret_curve_is_measured_against_the_exact_optimum(tmp_path: Path) -> None:
    # The old curves measured against the best *evaluated* agent: with only always-cooperate
    # evaluated, it would lie flat at 0 although the optimum against tit-for-tat earns more.
    data = _config(tmp_path, functional_tom={"agents": ["a0"], "population": "all"})
    res = evaluate(parse_config(data), workers=1)
    ft = functional_tom(res, "PrisonersDilemma", res.config.functional_tom[0])
    assert ft["curve_kind"] == "exact"
    cell = next(c for c in res.cells if c.partner == "tit_for_tat")
    ep = res.episodes[cell.id][0]
    # vs tit-for-tat the optimum cooperates until the last round and defects then:
    # 5 x R + T = 50; always-cooperate loses nothing until the last round, then T - R = 2
    best = solver_for(IPD, "tit_for_tat", 0).optimal_return()
    assert best == 5 * payoff(IPD, 0, 0, 0) + payoff(IPD, 0, 1, 0) == 50
    curve = exact_regret_curve(ep)
    assert curve is not None
    assert curve.tolist() == [0, 0, 0, 0, 0, payoff(IPD, 0, 1, 0) - payoff(IPD, 0, 0, 0)]
    # against always-defect, cooperating loses P - S every round
    cell = next(c for c in res.cells if c.partner == "always_1")
    step = payoff(IPD, 0, 1, 1) - payoff(IPD, 0, 0, 1)
    assert exact_regret_curve(res.episodes[cell.id][0]).tolist() == [step * t for t in range(1, 7)]


def test_every_curve_ends_at_the_tables_regret(tmp_path: Path) -> None:
    data = _config(tmp_path, functional_tom={"agents": ["rmax", "tft", "a1"], "population": "all"})
    res = evaluate(parse_config(data), workers=1)
    ft = functional_tom(res, "PrisonersDilemma", res.config.functional_tom[0])
    for agent in ("rmax", "tft", "a1"):
        rows = [r for r in ft["rows"] if r["agent"] == agent]
        assert len(rows) == len(ft["members"]) == 7 and all(r["best_kind"] == "exact" for r in rows)
        assert ft["curves"][agent][-1] == pytest.approx(np.mean([r["regret"] for r in rows]))
        assert len(ft["curves"][agent]) == H
    # RMax learns, so it loses value against the optimum: its curve is not flat at 0
    assert ft["curves"]["rmax"][-1] > 0.5
    report = write_outputs(res).read_text()
    assert "against the exact optimum (dynamic programming" in report and "mean regret over partners" in report
    summary = [ln for ln in report.splitlines() if ln.startswith("| rmax | ") and ln.count("|") == 5]
    assert len(summary) == 1 and f"| {ft['curves']['rmax'][-1]:.2f} |" in summary[0]


def test_without_a_reference_no_regret_and_no_curve_is_shown(tmp_path: Path) -> None:
    """A game with no optimum, no solver and no declared candidates has no reference: its rows
    print n/a, and no curve is drawn against the evaluated agents instead."""
    data = _config(tmp_path, episodes=2, functional_tom={"agents": ["a0", "a1"], "population": "all"})
    data["games"] = [{"game": "Example"}]
    data["agents"] = {"a0": "copycat", "a1": "random"}
    res = evaluate(parse_config(data), workers=1)
    ft = functional_tom(res, "Example", res.config.functional_tom[0])
    assert ft["curve_kind"] == "none" and ft["curves"] == {} and ft["best"] == {}
    assert all(r["regret"] is None for r in ft["rows"]) and ft["rows"]
    assert all(exact_regret_curve(e) is None for eps in res.episodes.values() for e in eps)
    report = write_outputs(res).read_text()
    assert "best known" not in report and "best evaluated" not in report
    assert "No reference (n/a)" in report


def test_declared_candidates_give_a_lower_bound_that_ignores_the_evaluated_agents(
    tmp_path: Path,
) -> None:
    """The lower-bound reference is the best declared candidate chosen on selection seeds: the
    same whichever agents are evaluated."""
    refs = []
    for agents in (["a0"], ["a0", "a1"]):
        data = _config(tmp_path / str(len(agents)), episodes=2, functional_tom={
            "agents": agents, "population": "all", "candidates": ["random", "copycat"],
            "selection_seeds": [100, 103]})  # fmt: skip
        data["games"] = [{"game": "Example"}]
        data["agents"] = {"a0": "copycat", "a1": "random"}
        res = evaluate(parse_config(data), workers=1)
        ft = functional_tom(res, "Example", res.config.functional_tom[0])
        assert ft["best"] and all(v[1] == "lower bound" for v in ft["best"].values())
        assert all("selection seeds 100..102" in v[2] for v in ft["best"].values())
        refs.append({m: dict(r.values) for m, r in ft["references"].items()})
        report = write_outputs(res).read_text()
        section = report.split("### Example")[1]
        assert "| lower bound |" in section and "| exact |" not in section
    assert refs[0] == refs[1]
    bad = _config(tmp_path / "bad", episodes=2, functional_tom={
        "agents": ["a0"], "population": "all", "candidates": ["random"],
        "selection_seeds": [0, 5]})  # fmt: skip
    bad["games"] = [{"game": "Example"}]
    bad["agents"] = {"a0": "copycat"}
    with pytest.raises(Exception, match="overlap the evaluation seeds"):
        parse_config(bad)


def test_heat_map_has_a_labelled_colour_bar_the_episode_count_and_a_readable_size(
    tmp_path: Path,
) -> None:
    data = _config(tmp_path, crossplay={"agents": ["a0", "a1", "tft"]})
    res = evaluate(parse_config(data), workers=1)
    report = write_outputs(res)
    text = report.read_text()
    assert "3 episodes per cell" in text
    png = report.parent / "crossplay_PrisonersDilemma.png"
    width, height = PIL.open(png).size
    assert width >= 800 and height >= 400
    fig = heatmap_figure(["a", "b"], {("a", "b"): (1.0, 0.1)}, "t, mean of 3 episodes per cell")
    bar = fig.axes[1]
    assert bar.get_ylabel() == "mean return of the focal seats"
    assert fig.axes[0].get_title().endswith("3 episodes per cell")
    assert fig.get_size_inches()[0] * DPI >= 800


def test_regret_plot_is_readable(tmp_path: Path) -> None:
    data = _config(tmp_path, functional_tom={"agents": ["a0", "a1"], "population": "single_action"})
    report = write_outputs(evaluate(parse_config(data), workers=1))
    width, _ = PIL.open(report.parent / "regret_PrisonersDilemma.png").size
    assert width >= 800


def test_matchups_show_the_games_rounds_beside_the_papers_rounds(tmp_path: Path) -> None:
    # paper 000 counts rounds (three moves each); the table shows rounds next to its figure
    data = {
        "name": "bomb", "episodes": 2, "out": str(tmp_path / "run"),
        "agents": {"cbs": "cbs"}, "games": [{"game": "BombDefusal"}],
        "matchups": [{"game": "BombDefusal", "seats": ["cbs", "cbs", "cbs"],
                      "paper": "CBS Planner: score 90 ± 0, rounds 6.0 ± 0.0"}],
    }  # fmt: skip
    res = evaluate(parse_config(data), workers=1)
    text = write_outputs(res).read_text()
    head = next(ln for ln in text.splitlines() if ln.startswith("| game | seats"))
    row = next(ln for ln in text.splitlines() if ln.startswith("| BombDefusal | cbs"))
    cols = [c.strip() for c in head.strip("|").split("|")]
    vals = [c.strip() for c in row.strip("|").split("|")]
    assert len(cols) == len(vals)
    eps = next(iter(res.episodes.values()))
    rounds = np.mean([e.metrics["rounds"] for e in eps])
    assert vals[cols.index("rounds")].startswith(f"{rounds:.1f}")
    steps = np.mean([e.length for e in eps])
    assert vals[cols.index("length (joint steps)")].startswith(f"{steps:.1f}")
    assert steps > rounds  # the units differ: three moves per round


def test_a_partner_without_a_known_policy_gets_no_exact_curve(tmp_path: Path) -> None:
    data = _config(tmp_path, episodes=1, functional_tom={"agents": ["a0"], "population": "single_action"})
    res = evaluate(parse_config(data), workers=1)
    ep = next(iter(res.episodes.values()))[0]
    assert exact_regret_curve(ep) is not None
    ep.agents["player_1"] = "p=population:single_action"  # an older file: no member recorded
    assert exact_regret_curve(ep) is None


def test_a_reports_paper_table_pictures_are_drawn_beside_it(tmp_path: Path) -> None:
    """A table with pictures (paper003's) gets them next to report.md, as reproduce --out does."""
    from tom_envs.agents import make_agent
    from tom_envs.evaluation.report import write_report
    from tom_envs.evaluation.run import EvalResults
    from tom_envs.registration import game_spec
    from tom_envs.runner import play_episode
    from tom_experiments.coblock import PICTURE_CELL

    cfg = parse_config({"name": "pics", "out": str(tmp_path / "run"), "games": [{"game": "CoBlock"}],
                        "tables": [{"table": "paper003", "kwargs": {"generated": 0}}]})  # fmt: skip
    spec = game_spec("CoBlock")
    episode = play_episode(spec, [make_agent(a, spec) for a in PICTURE_CELL.seats],
                           PICTURE_CELL.seed, env_kwargs=dict(PICTURE_CELL.kwargs))  # fmt: skip
    res = EvalResults(cfg, [], tables={"paper003": {PICTURE_CELL.key: [episode]}})
    report = write_report(res, tmp_path / "out")
    assert (report.parent / "coblock_fig1_target.png").exists()
    assert (report.parent / "coblock_arch_round5.png").exists()


def test_every_image_a_shipped_report_shows_exists() -> None:
    import re

    root = Path(__file__).resolve().parents[2] / "docs" / "results" / "eval"
    reports = sorted(root.glob("*/report.md"))
    # every shipped config with an eval report (functional_tom is a page: docs/results/functional_tom.md)
    shipped = {"crossplay", "paper000", "paper001", "paper002", "paper003", "paper004"}
    assert shipped <= {r.parent.name for r in reports}
    for report in reports:
        for name in re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", report.read_text()):
            assert (report.parent / name).exists(), f"{report.relative_to(root)} shows {name}"
