"""The functional-ToM page (issue #35) on small fixed seeds: the known-groups order on a matrix
game, a reference that never depends on the evaluated agents, and the page rendered from a tiny
run."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tom_envs.agents import make_agent
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode

ft = pytest.importorskip("tom_experiments.functional_tom")


def _play(cells, keep=lambda key: True) -> dict:
    played: dict = {}
    for c in cells:
        if not keep(c.key):
            continue
        spec = game_spec(c.game)
        for seed in range(c.seed, c.seed + c.episodes):
            agents = [make_agent(s, spec, trusted=True) for s in c.seats]
            played.setdefault(c.key, []).append(play_episode(spec, agents, seed, c.kwargs))
    return played


GROUP_AGENTS = (".oracle.", ".rmax.", ".fixed=")


def test_known_groups_order_on_the_prisoners_dilemma() -> None:
    """oracle < rmax < the oracle of always-cooperate (one fixed convention), with paired
    intervals above 0; the oracle's regret is exactly 0 against every deterministic member."""
    cells = ft.table_cells(games=["PrisonersDilemma"], episodes=3)
    played = _play(cells, lambda k: any(a in k for a in GROUP_AGENTS))
    res = ft.game_result(ft.PLANS["PrisonersDilemma"], played, 3)
    assert res.groups is not None and res.groups["holds"], res.groups
    assert res.groups["oracle"][0] == pytest.approx(0.0, abs=0.02)
    assert res.groups["fixed"][0] > res.groups["adaptive"][0] > res.groups["oracle"][0]
    # the gaps are per step, as the groups' columns (the mean gap is the gap of the means)
    g = res.groups
    assert g["adaptive_minus_oracle"][0] == pytest.approx(g["adaptive"][0] - g["oracle"][0])
    assert g["fixed_minus_adaptive"][0] == pytest.approx(g["fixed"][0] - g["adaptive"][0])
    assert all(r.kind == "exact" for r in res.refs.values())
    oracle_rows = [r for r in res.rows if r["agent"] == "oracle" and r["partner"] != "random"]
    assert oracle_rows and all(r["df"][0] == pytest.approx(0.0) for r in oracle_rows)
    # adaptation: the clairvoyant oracle loses nothing, the fixed agent of A keeps losing after B
    oracle = next(a for a in res.adapt if a["agent"] == "oracle")
    assert all(v == pytest.approx(0.0) for v in oracle["w"].values()) and oracle["tau"] == 0


def _tiny(games, episodes=2, selection=2, keep=lambda key: True):
    cells = ft.table_cells(games=games, episodes=episodes, selection=selection)
    return _play(cells, keep)


def test_lower_bound_reference_ignores_the_evaluated_agents(monkeypatch) -> None:
    """An added agent that beats everything (score 100, above Hanabi's 25) changes no reference:
    the reference is the best zoo member as focal chosen on the selection seeds."""
    played = _tiny(["Hanabi"])
    plan = ft.PLANS["Hanabi"]
    before = ft.game_result(plan, played, 2)
    assert all(r.kind == "lower bound" for r in before.refs.values())
    assert all("selection seeds 10000..10001" in r.source for r in before.refs.values())
    agents = ft._agents
    monkeypatch.setattr(ft, "_agents", lambda p: [*agents(p), "super"])
    for m in before.members:
        base = played[ft._key("Hanabi", "convention", m)]
        played[ft._key("Hanabi", "super", m)] = [
            dataclasses.replace(e, metrics={**e.metrics, "score": 100.0})
            for e in base
        ]
    after = ft.game_result(plan, played, 2)
    assert {m: r.values for m, r in after.refs.items()} == {m: r.values for m, r in before.refs.items()}
    supers = [r for r in after.rows if r["agent"] == "super"]
    assert supers and all(r["df"][0] < 0 for r in supers)  # printed negative, never adopted


def test_page_renders_from_a_tiny_run(tmp_path: Path, monkeypatch) -> None:
    games = ["BattleOfSexes", "Hanabi"]
    plans = {**ft.PLANS, "Hanabi": dataclasses.replace(ft.PLANS["Hanabi"], sessions=2,
                                                       session_length=3, switch_sessions=2)}
    monkeypatch.setattr(ft, "PLANS", plans)
    played = _tiny(games, keep=lambda k: k.startswith("Hanabi") or any(
        a in k for a in (*GROUP_AGENTS, ".random.")))  # fmt: skip
    page = ft.render(played, games=games, episodes=2, selection=2)
    assert page.startswith("# Functional beside literal ToM")
    head = page.split("## References")[0]
    assert "| BattleOfSexes | 0.0000 [0.0000, 0.0000] |" in head
    hanabi = next(line for line in head.splitlines() if line.startswith("| Hanabi |"))
    assert "(`selector`)" in hanabi and "(oracle of `convention`)" in hanabi
    assert "2 sessions × 3 episodes" in hanabi and ("✓" in hanabi or "✗ (" in hanabi)
    assert "| Hanabi | 0.0000 [0.0000, 0.0000] \\* |" in head  # the oracle's 0 by construction
    assert "### Known groups in sessions" in page
    assert "### Adaptation across episodes: `switch:a=convention:b=zoo/ppo_s0:at_episode=3-6`" in page
    assert "| BattleOfSexes | tit_for_tat | exact |" in page
    assert "| Hanabi | convention | lower bound |" in page and "best known" not in page
    assert "### Adaptation: `switch:a=always_0:b=always_1:at=30-70:key=1`" in page
    svgs = ft.figures(played, tmp_path / "page.md", games=games, episodes=2, selection=2)
    assert [p.name for p in svgs] == ["functional_tom_BattleOfSexes.svg", "functional_tom_Hanabi.svg"]
    assert all(p.read_text().startswith("<svg") and "</svg>" in p.read_text() for p in svgs)
    with pytest.raises(ValueError, match="not on the page"):
        ft.table_cells(games=["Nope"])


def test_added_agents_get_rows_untrusted_cells_and_clear_errors() -> None:
    """A config's ``agents = {LABEL = SPEC}`` (e.g. an LLM preset with its endpoint) adds a focal
    agent against every member: its cells are untrusted (a file's specs), it gets a row on the
    page, and a label that could collide with the page's own or a zoo member's is refused."""
    agents = {"other": "win_stay_lose_shift"}
    cells = ft.table_cells(games=["PrisonersDilemma"], episodes=2, agents=agents)
    added = [c for c in cells if ".other." in c.key]
    members = ft._members("PrisonersDilemma")
    assert len([c for c in added if not c.key.endswith(".switch")]) == len(members)
    assert all(not c.trusted and c.seats[0] == "win_stay_lose_shift" for c in added)
    assert all(c.trusted for c in cells if c not in added)
    played = _play(cells)
    page = ft.render(played, games=["PrisonersDilemma"], episodes=2, agents=agents)
    assert "| other | tit_for_tat |" in page
    for bad in ({"oracle": "random"}, {"tit_for_tat": "random"}, {"a b": "random"}, {"x": " "}):
        with pytest.raises(ValueError, match="agents"):
            ft.table_cells(games=["PrisonersDilemma"], agents=bad)


def test_the_page_never_takes_a_trained_best_response_alone(monkeypatch) -> None:
    """The page asks the solvers only (a cached trained BR is weaker than the candidates in
    Hanabi and Overcooked and has no playable policy as a bare reference): without a solver the
    reference is the best member as focal on the selection seeds, with that member's policy."""
    asked = []

    def solver_only(*args, **kwargs):
        asked.append(kwargs.get("trained", True))
        raise ft.reference_for.__globals__["NoReference"]("no solver")

    monkeypatch.setattr(ft, "reference_for", solver_only)
    plan = ft.PLANS["Hanabi"]
    members = ft._members("Hanabi")
    played = _tiny(["Hanabi"], keep=lambda key: key.endswith(".convention"))
    ref = ft._reference(plan, "convention", [0, 1], played)
    assert asked == [False]
    assert ref is not None and ref.kind == "lower bound" and ref.policy in members


def test_the_known_groups_row_prints_both_gaps_and_names_what_fails() -> None:
    """The two paired gaps are on the page with their intervals (their size, not only their
    sign), and the order cell names the inequality whose interval does not lie above 0."""
    from types import SimpleNamespace

    g = {"oracle": (0.0, 0.0, 0.0), "adaptive": (0.1, 0.05, 0.15), "fixed": (0.2, 0.1, 0.3),
         "adaptive_minus_oracle": (0.1, 0.05, 0.15), "fixed_minus_adaptive": (0.1, -0.01, 0.2),
         "adaptive_name": "selector", "unit": "2 sessions × 3 episodes", "plumbing": True}  # fmt: skip
    row = ft._groups_row(SimpleNamespace(plan=ft.PLANS["Hanabi"], groups=g))
    assert row.count("|") == 9  # eight columns, as the header
    assert "| 0.1000 [0.0500, 0.1500] | 0.1000 [-0.0100, 0.2000] |" in row
    assert row.endswith("| ✗ (adaptive < fixed fails) |")
    g["fixed_minus_adaptive"] = (0.1, 0.01, 0.2)
    assert ft._groups_row(SimpleNamespace(plan=ft.PLANS["Hanabi"], groups=g)).endswith("| ✓ |")
    assert ft._groups_head()[-2].count("|") == 9


def test_an_agent_from_the_command_line_joins_the_page_trusted() -> None:
    """``--agent llm=SPEC`` with the table's ``optional_agents = ["llm"]``: the label joins the
    page's agents and its cells are trusted (the spec may name an endpoint); the same label from
    the file's ``[agents]`` joins untrusted; a table without added agents refuses the key."""
    from tom_envs.evaluation import ConfigError
    from tom_envs.evaluation.config import TRUSTED_AGENTS, parse_config

    data = {"name": "t",
            "tables": [{"table": "functional_tom", "kwargs": {"games": ["PrisonersDilemma"], "episodes": 1},
                        "optional_agents": ["llm", "undefined"]}]}  # fmt: skip
    cfg = parse_config(data, agents={"llm": "win_stay_lose_shift"})
    kwargs = cfg.tables[0]["kwargs"]
    assert kwargs["agents"] == {"llm": "win_stay_lose_shift"} and kwargs[TRUSTED_AGENTS] == ["llm"]
    cells = ft.table_cells(**kwargs)
    added = [c for c in cells if ".llm." in c.key]
    assert added and all(c.trusted and c.seats[0] == "win_stay_lose_shift" for c in added)
    cfg = parse_config({**data, "agents": {"llm": "win_stay_lose_shift"}})  # the file's own label
    kwargs = cfg.tables[0]["kwargs"]
    assert TRUSTED_AGENTS not in kwargs
    assert all(not c.trusted for c in ft.table_cells(**kwargs) if ".llm." in c.key)
    assert TRUSTED_AGENTS not in parse_config(data).tables[0]["kwargs"]  # joined only when defined
    with pytest.raises(ConfigError, match="takes no added agents"):
        parse_config({"name": "t", "tables": [{"table": "paper004", "optional_agents": ["llm"]}]},
                     agents={"llm": "random"})  # fmt: skip
    with pytest.raises(ValueError, match="not added agents"):
        ft.table_cells(games=["PrisonersDilemma"], agents={"a": "random"}, trusted_agents=["b"])


def test_reproduce_adds_an_agent_and_validates_without_playing(monkeypatch, capsys) -> None:
    """``reproduce NAME --agent LABEL=SPEC``: the label must join something; ``--validate`` prints
    the check and the estimate and plays nothing."""
    import tom_envs.cli as cli
    from tom_envs.cli import main
    from tom_envs.evaluation.config import TRUSTED_AGENTS

    assert main(["reproduce", "paper004", "--agent", "nobody=random", "--validate"]) == 2
    assert "--agent: ['nobody'] join nothing in paper004" in capsys.readouterr().err
    seen: dict = {}

    def validate_only(cfg, args):  # the shipped page's config, with the agent joined
        seen.update(cfg.tables[0]["kwargs"])
        return 0

    monkeypatch.setattr(cli, "_validate_only", validate_only)
    monkeypatch.setattr(cli, "_evaluate", lambda cfg, args: pytest.fail("played"))
    assert main(["reproduce", "functional_tom", "--agent", "llm=random", "--validate"]) == 0
    assert seen["agents"] == {"llm": "random"} and seen[TRUSTED_AGENTS] == ["llm"]
