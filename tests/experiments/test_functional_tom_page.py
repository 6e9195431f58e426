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
    """The page asks the solvers only (``trained=False``): a cached trained BR is never a bare
    reference, only one more candidate beside the members on the selection seeds (here it loses
    to ``convention`` playing with itself): the reference is that member, with its policy."""
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
    assert ref.trained.startswith("lost on selection seeds: br_convention_seat0")


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
    from tom_envs.evaluation.run import experiment_hash

    def run_dir(spec: str) -> str:  # the default directory's hash of the run with this agent
        c = parse_config(data, agents={"llm": spec})
        return experiment_hash(c, c.cells())

    assert run_dir("tit_for_tat") == run_dir("tit_for_tat") != run_dir("win_stay_lose_shift")
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

# ------------------------------------------------------------------ cached trained best responses
def _stub_br(monkeypatch, value):
    """Replace the BR's play by ``value(seeds)`` per seed, recording the seeds it was asked."""
    asked: list[list[int]] = []

    def play(plan, partner, br, seeds):
        asked.append([int(s) for s in seeds])
        return {int(s): float(value(seeds)) for s in seeds}

    monkeypatch.setattr(ft, "_br_values", play)
    return asked


def _hanabi_played(partner: str) -> dict:
    return _tiny(["Hanabi"], keep=lambda key: key.endswith("." + ft._key(partner)))


def _best_on_selection(played: dict, partner: str) -> float:
    plan = ft.PLANS["Hanabi"]
    return max(float(sum(ft._u(plan, eps).values()) / len(eps)) for k, eps in played.items()
               if ".sel." in k and k.endswith("." + ft._key(partner)))  # fmt: skip


def test_a_matching_trained_br_is_weighed_on_the_members_selection_seeds(monkeypatch) -> None:
    """Hanabi ``convention`` has a cached BR for the page's configuration: it is played on the
    very selection seeds the members were (10000..10001 here), wins only by a higher mean there,
    and then gives the reference on the evaluation seeds, labelled "trained lower bound", its
    source naming the BR (name, budget, seed) and its oracle playing ``br/convention``."""
    from tom_envs.best_responses import find

    plan = ft.PLANS["Hanabi"]
    br = find("Hanabi", "convention", 0, dict(plan.kwargs))
    assert br is not None
    played = _hanabi_played("convention")
    best = _best_on_selection(played, "convention")
    asked = _stub_br(monkeypatch, lambda seeds: best + 1.0 if seeds[0] >= 10_000 else 99.0)
    ref = ft._reference(plan, "convention", [0, 1], played)
    assert asked == [[10_000, 10_001], [0, 1]]
    assert ref.kind == "trained lower bound" and ref.values == {0: 99.0, 1: 99.0}
    assert ref.policy == "br/convention" and ref.trained.startswith("used: on selection seeds")
    assert br.name in ref.source and f"{br.origin['steps']:,} steps" in ref.source
    assert f"seed {br.origin['seed']}" in ref.source
    # a tie or a loss on the selection seeds keeps the best member (its eval values, its policy)
    for delta, words in ((0.0, "a tie goes to the declared candidate"), (-1.0, "against")):
        asked = _stub_br(monkeypatch, lambda seeds, d=delta: best + d)
        lost = ft._reference(plan, "convention", [0, 1], played)
        assert asked == [[10_000, 10_001]]  # never played on the evaluation seeds
        assert lost.kind == "lower bound" and lost.policy in ft._members("Hanabi")
        assert lost.trained.startswith(f"lost on selection seeds: {br.name}") and words in lost.trained


def test_a_trained_br_raises_a_bracket_lower_end_only_by_winning_its_selection_seeds(monkeypatch) -> None:
    """BombDefusal's bracket: the BR competes with the bracket's candidate on the bracket's own
    selection seeds; a win gives the lower end (the upper end stays the solver's), a loss keeps
    the candidate."""
    from types import SimpleNamespace

    plan = ft.PLANS["BombDefusal"]
    sel = tuple(range(10_000, 10_010))
    ref = SimpleNamespace(details={"candidate": "heuristic", "selection_seeds": sel,
                                   "selection_means": {"heuristic": 80.0}})  # fmt: skip

    def row():
        return ft.RefRow("split_odd", "bracket", {0: 70.0}, 88.0, "lower: candidate", 0.0, "heuristic")

    asked = _stub_br(monkeypatch, lambda seeds: 81.0 if seeds[0] >= 10_000 else 75.0)
    won = ft._weigh_bracket(plan, "split_odd", [0], ref, row())
    assert asked == [list(sel), [0]]
    assert won.kind == ft.TRAINED_BRACKET and won.values == {0: 75.0} and won.upper == 88.0
    assert won.policy == "br/split_odd" and "br_split_odd_seat0" in won.source
    _stub_br(monkeypatch, lambda seeds: 80.0)
    kept = ft._weigh_bracket(plan, "split_odd", [0], ref, row())
    assert kept.kind == "bracket" and kept.values == {0: 70.0} and kept.policy == "heuristic"
    assert kept.trained.startswith("lost on selection seeds")


def test_a_mismatching_trained_br_is_never_used(monkeypatch) -> None:
    """Other game arguments, another focal seat, a retrained partner: no cached BR is the page's,
    so none is played even if it would win; the row says "config mismatch" and what differs."""
    import tom_envs.best_responses as brs

    plan = ft.PLANS["Hanabi"]
    asked = _stub_br(monkeypatch, lambda seeds: 1_000.0)
    cases = {"max_life_tokens=3 (here 2)": (dataclasses.replace(plan, kwargs=(("max_life_tokens", 2),)),
                                            "convention"),
             "seat 0, not 1": (dataclasses.replace(plan, focal_seats=(1,)), "convention")}  # fmt: skip
    for words, (other, partner) in cases.items():
        ref = ft._lower_bound(other, partner, [0, 1], _hanabi_played(partner))
        assert ref.kind == "lower bound" and ref.trained.startswith("config mismatch: br_convention")
        assert words in ref.trained
    real = brs.partner_id
    monkeypatch.setattr(brs, "partner_id", lambda game, p: "sha256:" + "0" * 64
                        if p == "zoo/ppo_s1" else real(game, p))  # fmt: skip
    ref = ft._lower_bound(plan, "zoo/ppo_s1", [0, 1], _hanabi_played("zoo/ppo_s1"))
    assert ref.kind == "lower bound" and "trained against another zoo/ppo_s1" in ref.trained
    assert asked == []
    assert ft._cached_br(plan, "random") == (None, "none cached")


def test_a_trained_br_whose_file_changed_is_refused_and_the_member_kept(monkeypatch) -> None:
    """A cached BR whose file no longer has the manifest's SHA-256 is refused when it would play:
    the row keeps the best member and says so; the page goes on."""
    from tom_envs.best_responses import TrainedBRError

    def changed(plan, partner, br, seeds):
        raise TrainedBRError(f"trained BR {br.name}: its file has another SHA-256: refused")

    monkeypatch.setattr(ft, "_br_values", changed)
    ref = ft._reference(ft.PLANS["Hanabi"], "convention", [0, 1], _hanabi_played("convention"))
    assert ref.kind == "lower bound" and ref.policy in ft._members("Hanabi")
    assert ref.trained.startswith("refused: trained BR br_convention_seat0")


def test_the_room_games_learned_members_get_a_reference() -> None:
    """CollabEscape's learned members have no exact reference (their actors read the last actions'
    flags): the members as focal on the selection seeds (cells the page now plays) and the cached
    trained BR on the same seeds give a lower bound with a policy the known groups' oracle plays."""
    from tom_envs.best_responses import find

    cells = ft.table_cells(games=["CollabEscape"], episodes=1, selection=2)
    sel = [c for c in cells if ".sel." in c.key]
    members = ft._members("CollabEscape")
    learned = [m for m in members if m.startswith("zoo/")]
    assert learned and {c.key.rsplit(".", 1)[-1] for c in sel} == {ft._key(m) for m in learned}
    partner = learned[0]
    played = _play(cells, lambda key: key.endswith("." + ft._key(partner)))
    ref = ft._reference(ft.PLANS["CollabEscape"], partner, [0], played)
    br = find("CollabEscape", partner, 0, {})
    assert ref is not None and ref.kind in ("lower bound", "trained lower bound") and ref.values
    assert ref.policy in (*members, f"br/{partner}")
    assert br is not None and br.name in ref.trained and "selection seeds 10000..10001" in ref.trained + ref.source


def test_a_winning_trained_br_is_the_known_groups_oracle_and_plays() -> None:
    """The oracle of a partner whose reference is its trained BR plays ``br/<partner>`` (the
    cached checkpoint, resolved for the session's configuration) and the selector gets it as an
    arm; one short session of each plays to the end."""
    from tom_envs.known_groups import SelectorAgent, play_u

    plan = ft.PLANS["CollabEscape"]
    won = ft.RefRow("zoo/ppo_s0", "trained lower bound", {0: 1.0}, None, "", 0.0,
                    ft.reference_policy("CollabEscape", "zoo/ppo_s0", "br/zoo/ppo_s0"))  # fmt: skip
    gp = ft._groups_plan(plan, {"optimal": ft._reference(plan, "optimal", [0], {}), "zoo/ppo_s0": won})
    assert gp is not None and gp.members["zoo/ppo_s0"] == "br/zoo/ppo_s0"
    u = play_u(gp, gp.members["zoo/ppo_s0"], "zoo/ppo_s0", [20_000, 20_001])
    assert len(u) == 2 and all(0.0 <= x <= 1.0 for x in u)  # escaped or not
    arms = tuple(dict.fromkeys(gp.members.values()))
    assert "br/zoo/ppo_s0" in arms and len(play_u(gp, SelectorAgent(arms), "zoo/ppo_s0", [20_000, 20_001])) == 2


def test_guandans_shipped_brs_are_found_with_the_pages_opponents_and_play_by_spec() -> None:
    """Guandan's BRs were trained with heuristic opponents at seats 1 and 3 (the page's seats):
    the page finds them with those seats, and their agent spec names the seats, so the oracle
    built from it resolves the same BR; without the seats no BR matches, and a spec option other
    than seatK=SPEC is refused."""
    from tom_envs.agents import make_agent
    from tom_envs.best_responses import BestResponseAgent, agent_spec_of, find
    from tom_envs.registration import game_spec

    plan = ft.PLANS["Guandan"]
    assert ft._other_seats(plan) == {1: "heuristic", 3: "heuristic"}
    br, status = ft._cached_br(plan, "heuristic")
    assert br is not None and status == "" and dict(br.others) == {1: "heuristic", 3: "heuristic"}
    spec = agent_spec_of(br)
    assert spec == "br/heuristic:seat1=heuristic:seat3=heuristic"
    game = game_spec("Guandan")
    agent = make_agent(spec, game)
    assert isinstance(agent, BestResponseAgent) and agent.others == {1: "heuristic", 3: "heuristic"}
    assert find(game, "heuristic", 0, {}, others=agent.others) == br  # what reset() resolves
    assert find(game, "heuristic", 0, {}, others=make_agent("br/heuristic", game).others) is None
    with pytest.raises(ValueError, match="takes only seatK=SPEC"):
        make_agent("br/heuristic:path=x", game)
    _, why = ft._cached_br(dataclasses.replace(plan, others="random"), "heuristic")
    assert why.startswith("config mismatch: ") and "other seats" in why
