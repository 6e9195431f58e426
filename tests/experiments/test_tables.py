"""The games' and papers' tables beyond paper004: cells name the episodes, render reads only them."""

from __future__ import annotations

import pytest

from tom_envs.agents import make_agent
from tom_envs.evaluation.tables import PaperTable, get_table, table_names
from tom_envs.records import Episode
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode
from tom_experiments import guandan, overcooked

#: The tables tom_experiments registers (pyproject's tom_envs.tables entry points).
SHIPPED = ("hanabi", "overcooked", "paper000", "paper001", "paper002", "paper003", "paper004")


def fake(returns: dict[str, float], steps: list[dict] | None = None, seed: int = 0) -> Episode:
    return Episode("x", seed, {}, {}, steps=steps or [], returns=returns)


def test_every_table_is_found_by_name_and_cells_have_unique_keys() -> None:
    assert set(SHIPPED) <= set(table_names())
    for name in SHIPPED:
        table = get_table(name)
        assert isinstance(table, PaperTable) and table.name == name
        keys = [c.key for c in table.cells()]
        assert len(keys) == len(set(keys)), name
    with pytest.raises(ValueError, match=r"installed tables: .*tom_experiments"):
        get_table("paper999")


def test_paper001_plays_each_pairing_in_both_seatings_for_deals_and_matches() -> None:
    cells = {c.key: c for c in guandan.table_cells(("random", "heuristic"), games=4, matches=2)}
    assert sorted(cells) == ["random-vs-heuristic.A_first", "random-vs-heuristic.A_second",
                             "random-vs-heuristic.match.A_first",
                             "random-vs-heuristic.match.A_second"]  # fmt: skip
    first, second = cells["random-vs-heuristic.A_first"], cells["random-vs-heuristic.A_second"]
    assert first.seats == ("random", "heuristic", "random", "heuristic") and first.episodes == 2
    assert second.seats == ("heuristic", "random", "heuristic", "random") and second.seed == 0
    assert cells["random-vs-heuristic.match.A_first"].kwargs == {"match": True}
    assert all("match" not in c.key for c in guandan.table_cells(("random", "heuristic")))


def test_a_match_is_won_by_the_team_that_won_its_last_deal_and_drawn_at_the_deal_limit() -> None:
    def deal(sign: float) -> dict:
        return {"rewards": {"player_0": sign, "player_1": -sign, "player_2": sign,
                            "player_3": -sign}}  # fmt: skip

    quiet = {"rewards": {"player_0": 0.0, "player_1": 0.0, "player_2": 0.0, "player_3": 0.0}}
    ep = fake({"player_0": -1.0}, [deal(3.0), quiet, deal(-2.0), quiet, deal(1.0), quiet])
    assert guandan.match_outcome(ep, "player_0") == 1  # the last deal decides, not the sum
    assert guandan.match_outcome(ep, "player_1") == -1
    limit = fake({"player_0": 0.0}, [deal(1.0)] * guandan.MAX_DEALS)
    assert guandan.match_outcome(limit, "player_0") == 0


def test_paper001_renders_win_rates_from_the_cells_episodes() -> None:
    spec = game_spec("Guandan")
    agents = ("random", "bestp_lowv")
    played = {
        c.key: [play_episode(spec, [make_agent(s, spec) for s in c.seats], seed)
                for seed in range(c.seed, c.seed + c.episodes)]
        for c in guandan.table_cells(agents, games=2)
    }  # fmt: skip
    page = guandan.render(played, agents, games=2)
    wins = sum(ep.returns["player_0"] > 0 for ep in played["random-vs-bestp_lowv.A_first"])
    wins += sum(ep.returns["player_1"] > 0 for ep in played["random-vs-bestp_lowv.A_second"])
    assert f"| random | bestp_lowv | 2 | {wins} | {wins / 2:.1%} |" in page
    assert "one match to A" not in page  # no match cells asked for


def test_overcooked_table_scores_every_pair_on_every_layout() -> None:
    cells = overcooked.table_cells(episodes=2)
    assert len(cells) == len(overcooked.PAIRS) * 5 and all(c.episodes == 2 for c in cells)
    assert overcooked.table_cells(llm_episodes=1)[-1].seats == (overcooked.LLM_SPEC,) * 2
    played = {c.key: [fake({"player_0": 20.0 * (i + 1)}, seed=i) for i in range(2)] for c in cells}
    page = overcooked.render(played, episodes=2)
    assert "| ours: greedy | 30.0 ± 19.6 | 30.0 ± 19.6 |" in page  # 20 and 40: 1.96 * 14.1 / 1.41
    assert "| paper: PBT | 216.9 ± 1.31 |" in page  # the paper's rows beside
    assert "was not run for this page" in page and "LLM calls" not in page  # no LLM cell


def test_no_file_cites_the_removed_experiment_scripts() -> None:
    """Bot tables are ``tom-envs reproduce NAME``, parity and speed ``benchmarks/<game>.py``."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    import re

    # the removed modules by their whole names (``tom_experiments.guandan_conventions`` is not one)
    old = re.compile(r"python -m (tom_envs\.experiments|tom_experiments)\."
                     r"(hanabi|overcooked|guandan|coblock|paper002)\b")  # fmt: skip
    stale = [
        str(p.relative_to(root))
        for folder in ("tom_envs", "experiments", "benchmarks", "docs", "baselines", "llm_agents",
                       "README.md")
        for p in ([root / folder] if folder.endswith(".md") else (root / folder).rglob("*"))
        if p.suffix in (".py", ".md", ".toml") and "eval" not in p.relative_to(root).parts
        and old.search(p.read_text(errors="ignore"))
    ]  # fmt: skip
    assert stale == []
