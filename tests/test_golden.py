"""Golden seeded playthroughs of every registered game, in one format (``tests/golden.py``).

Each registered game plays the case in :data:`CASES` (a game the table does not list plays its
demo agents on seed 0 with its registered arguments) and must match ``tests/golden/<Name>.txt``
exactly. Any change to the rules, the text, the bots, the driver or the seeding shows up as a diff.
If the change is intended, regenerate, review ``git diff tests/golden/`` and commit:

    TOM_ENVS_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/test_golden.py

A regenerating run writes the files, prints which it wrote and FAILS, so a CI run with the
variable set can never pass by rewriting its own expectations.
"""

from __future__ import annotations

import difflib
import json
import os

import pytest
from golden import (
    GOLDEN_DIR,
    REGEN_ENV,
    GoldenCase,
    apply_hunks,
    default_case,
    generate,
    hunks,
    make_agents,
    parse,
    play,
    read,
    registered_names,
    render,
    write,
)

from tom_envs.runner import play_episode

_MATRIX = ("rmax", "tit_for_tat")
_SHORT = "horizon 20 of the paper's 100 keeps the file small"

#: One case per game: agents per seat, seed, and the arguments a case needs (with the reason).
CASES: dict[str, GoldenCase] = {
    c.game: c
    for c in (
        GoldenCase("RockPaperScissors", _MATRIX, kwargs={"horizon": 20}, note=_SHORT),
        GoldenCase("BattleOfSexes", _MATRIX, kwargs={"horizon": 20}, note=_SHORT),
        GoldenCase("PrisonersDilemma", _MATRIX, kwargs={"horizon": 20}, note=_SHORT),
        GoldenCase("BombDefusal", ("heuristic", "heuristic", "heuristic")),
        GoldenCase(
            "CollabCapture",
            ("optimal", "greedy"),
            kwargs={"scenario": "door12_closed"},
            note="a closed door makes the optimal pursuer plan around it",
        ),
        GoldenCase("CollabEscape", ("optimal", "greedy")),
        GoldenCase("Hanabi", ("convention", "simple")),
        GoldenCase(
            "Guandan",
            ("heuristic", "bestp_lowv", "heuristic", "bestp_lowv"),
            seed=1,
            kwargs={"previous_order": [0, 2, 1, 3], "start_levels": [3, 0]},
            note="a previous deal's order, so the deal starts with tribute (a double-down)",
        ),
        GoldenCase(
            "CoBlock",
            ("cooperative", "passive"),
            kwargs={"task_type": "skill_dependent", "task_index": 0},
            note="player_1 lacks a colour: the disclosure, the plan, the stall and the request",
        ),
        GoldenCase(
            "Overcooked",
            ("role_dishes", "greedy"),
            kwargs={"layout": "forced_coordination", "horizon": 70},
            render_every=10,
            note="the kitchen where the chefs must hand over; horizon 70 of 400 keeps it small",
        ),
        GoldenCase("Example", ("copycat", "stubborn")),
    )
}


def case_of(name: str) -> GoldenCase:
    """The table's case of a game, or its default."""
    from tom_envs.registration import game_spec

    return CASES.get(name) or default_case(game_spec(name))


games = pytest.mark.parametrize("name", registered_names())


def test_the_table_names_registered_games_only() -> None:
    stale = set(CASES) - set(registered_names())
    assert not stale, f"CASES lists games that are not registered: {sorted(stale)}"
    extra = {p.stem for p in GOLDEN_DIR.glob("*.txt")} - set(registered_names())
    assert not extra, f"tests/golden/ holds files of unregistered games: {sorted(extra)}"


@games
def test_golden_playthrough(name: str) -> None:
    case = case_of(name)
    text = generate(case)
    path = case.path
    if os.environ.get(REGEN_ENV) == "1":
        old = path.read_bytes().decode("utf-8") if path.exists() else None
        if old == text:
            return  # nothing to write: this game's golden is current
        write(path, text)
        print(f"wrote {path}")
        pytest.fail(
            f"{REGEN_ENV}=1: wrote {path}; review `git diff {path}` and run again without it"
        )
    assert path.exists(), f"{path} is missing: run with {REGEN_ENV}=1 to create it, then review it"
    expected = path.read_bytes().decode("utf-8")
    if text != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                text.splitlines(keepends=True),
                f"golden/{path.name}",
                "now",
                n=2,
            )
        )
        pytest.fail(
            f"the playthrough of {name} changed ({REGEN_ENV}=1 to accept, then review):\n"
            f"{diff[:6000]}"
        )


@games
def test_playthrough_is_reproducible_and_matches_play_episode(name: str) -> None:
    """Twice the same text in one process; the harness's stops change nothing: the runner's
    ``play_episode`` with the same agents plays the same moves, rewards, returns and metrics."""
    case = case_of(name)
    p = play(case)
    assert render(p) == render(play(case))
    ep = play_episode(case.spec, make_agents(case), case.seed, dict(case.kwargs), record_text=True)
    keys = ("agent", "joint_step", "action", "action_text", "rewards", "message", "prediction")
    assert [[s.get(k) for k in keys] for s in ep.steps] == [
        [d.record.get(k) for k in keys] for d in p.decisions
    ]
    assert ep.returns == p.episode.returns
    assert json.dumps(ep.metrics, sort_keys=True) == json.dumps(p.episode.metrics, sort_keys=True)


@games
def test_golden_file_reads_back(name: str) -> None:
    """Every seat's texts rebuild from the file exactly (the diffs are complete)."""
    case = case_of(name)
    if not case.path.exists():
        pytest.skip(f"{case.path.name} is missing")
    p = play(case)
    g = read(case.path)
    assert g.header["env"] == case.spec.id and int(g.header["seed"]) == case.seed
    assert len(g.decisions) == len(p.decisions)
    for got, d in zip(g.decisions, p.decisions, strict=True):
        assert (got.agent, got.joint_step, got.action) == (
            d.agent,
            d.joint_step,
            d.record["action"],
        )
        assert got.observation == d.observation, got.index
        assert got.rules == d.rules, got.index
        assert got.legal == d.legal, got.index
    assert g.returns == p.episode.returns


def test_hunks_round_trip() -> None:
    cases = [
        ([], ["a", "", "b"]),
        (["a", "b", "c"], ["a", "c"]),
        (["a", "b", "c"], ["x", "a", "b", "c", "y"]),
        (["", " x", "y "], [" x", "", "y ", ""]),
        (["same"], ["same"]),
    ]
    for old, new in cases:
        assert apply_hunks(old, hunks(old, new)) == new


def test_parse_reads_what_render_writes() -> None:
    text = generate(case_of("CollabCapture"))
    g = parse(text)
    assert g.decisions and g.metrics and g.end["status"] == "ok"
