"""The study load test on a small crowd (the 60-participant run is `benchmarks/study_load.py`,
its figures in docs/study.md): people in pairs and alone at once against a real `tom-envs study
serve`, then every record checked (every move acknowledged is journaled once, every episode ended,
every participant completed, the dataset replays)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_small_crowd_leaves_every_record_complete(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    run = subprocess.run([sys.executable, "benchmarks/study_load.py", "--participants", "7",
                          "--wait", "3", "--think", "0.02", "--work", str(tmp_path / "w"),
                          "--json", str(report)], cwd=ROOT, capture_output=True, text=True,
                         timeout=600)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    r = json.loads(report.read_text())
    rec = r["records"]
    assert r["unfinished"] == 0 and rec["completed"] == 7 and r["dataset_replays"]
    assert rec["moves_acknowledged"] == rec["moves_journaled"] == r["moves"] > 0
    assert rec["episodes"] == rec["episodes_ended"] and rec["seq_contiguous"]
    assert rec["human_human_episodes"] >= 2  # people were matched (7: one waits, then falls back)
