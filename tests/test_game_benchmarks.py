"""The per-game benchmark scripts share one command shape (benchmarks/gamebench.py): a part writes
JSON recording its command, ``report`` writes the page from those files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def bench(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, check=True)  # fmt: skip


@pytest.mark.parametrize("game", ["hanabi", "overcooked", "guandan"])
def test_every_game_benchmark_lists_its_parts_and_a_report(game: str) -> None:
    out = bench(f"benchmarks/{game}.py", "--help").stdout
    parts = {"hanabi": ["parity", "speed"], "overcooked": ["parity", "speed"],
             "guandan": ["legal"]}[game]  # fmt: skip
    assert all(p in out for p in [*parts, "report"]), out


def test_guandan_legal_part_checks_positions_and_its_report_quotes_the_command(tmp_path) -> None:
    runs = tmp_path / "runs"
    bench("benchmarks/guandan.py", "--runs", str(runs), "legal", "--positions", "12",
          "--seconds", "0.05", "--deals", "4")  # fmt: skip
    data = json.loads((runs / "legal.json").read_text())
    assert data["positions"] == 12 and data["problems"] == 0 and data["legal_plays"] > 0
    assert data["command"] == ("python benchmarks/guandan.py legal --positions 12 --seconds 0.05 "
                               "--deals 4")
    page = tmp_path / "page.md"
    bench("benchmarks/guandan.py", "--runs", str(runs), "report", "--out", str(page))
    text = page.read_text()
    assert f"Command: `{data['command']}`" in text
    assert "Positions checked: **12**" in text and ": **0**." in text


def test_hanabi_parity_report_renders_recorded_runs(tmp_path) -> None:
    """The page's parity table from a parity JSON (as ``parity`` writes it), no peer needed."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_hanabi", ROOT / "benchmarks" / "hanabi.py")
    assert spec is not None and spec.loader is not None
    hanabi_bench = importlib.util.module_from_spec(spec)
    saved = list(sys.path)
    try:
        spec.loader.exec_module(hanabi_bench)  # a file name, not "hanabi" (tests/games/hanabi)
    finally:
        sys.path[:] = saved
    from tom_envs.games.hanabi.parity import parity, read_records

    records = read_records(ROOT / "tests" / "games" / "hanabi" / "openspiel_games.jsonl.gz")[:5]
    res = parity(records)
    assert res["games"] == 5 and res["games_with_differences"] == 0
    res.update(peer="openspiel", players=2, seconds=0.0, command="python benchmarks/hanabi.py x")
    (tmp_path / "parity_openspiel_2p.json").write_text(json.dumps(res))
    page = hanabi_bench.report(tmp_path)
    assert f"| openspiel | 2 | 5 | {res['steps']:,} | 0 |" in page
    assert "`python benchmarks/hanabi.py x`" in page
