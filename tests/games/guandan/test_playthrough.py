"""Golden seeded playthrough: heuristic (seats 0, 2) vs bestp_lowv (seats 1, 3), one deal that
starts with tribute (previous order 0, 2, 1, 3), seed 1, English text.

Any change to the rules, the catalogue, the text, the bots, the runner or the seeding shows up as
a diff against ``playthrough_seed1.txt``. If the change is intended, regenerate and review it:

    TOM_ENVS_REGEN=1 .venv/bin/python -m pytest tests/games/guandan/test_playthrough.py
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from tom_envs.agents import make_agent
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode

GOLDEN = Path(__file__).with_name("playthrough_seed1.txt")
SEED = 1
KWARGS = {"previous_order": (0, 2, 1, 3), "start_levels": (3, 0)}
AGENTS = ("heuristic", "bestp_lowv", "heuristic", "bestp_lowv")


def generate() -> str:
    """Every move with its text; player_0's full text observation at its first two decisions."""
    spec = game_spec("Guandan")
    agents = [make_agent(a, spec) for a in AGENTS]
    ep = play_episode(spec, agents, SEED, env_kwargs=KWARGS, record_text=True)
    lines = [f"# {spec.id}: {' / '.join(AGENTS)}, seed {SEED}, {KWARGS}", ""]
    shown = 0
    for s in ep.steps:
        if s["agent"] == "player_0" and shown < 2:
            shown += 1
            lines.append("player_0 observation:")
            lines += ["    " + x for x in s["observation_text"].splitlines()]
        lines.append(f"{s['index']:3d} {s['agent']}: [{s['action']}] {s['action_text']}")
    lines.append("returns: " + ", ".join(f"{a}={r:+g}" for a, r in ep.returns.items()))
    lines.append(f"length: {ep.length}")
    return "\n".join(lines) + "\n"


def test_golden_playthrough() -> None:
    text = generate()
    if os.environ.get("TOM_ENVS_REGEN") == "1":
        GOLDEN.write_text(text)
    assert GOLDEN.exists(), f"{GOLDEN.name} is missing: run with TOM_ENVS_REGEN=1 to create it"
    expected = GOLDEN.read_text()
    if text != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                text.splitlines(keepends=True),
                "golden",
                "now",
                n=2,
            )
        )
        raise AssertionError(f"playthrough changed (TOM_ENVS_REGEN=1 to accept):\n{diff[:6000]}")


def test_golden_facts() -> None:
    """Facts of the golden file that hold by the rules."""
    text = GOLDEN.read_text()
    moves = [x for x in text.splitlines() if x[:3].strip().isdigit()]
    assert "Tribute" in moves[0] and "Tribute" in moves[1], "double-down: both losers pay"
    assert "Return" in moves[2] and "Return" in moves[3]
    returns = text.split("returns: ")[1].splitlines()[0]
    values = [float(x.split("=")[1]) for x in returns.split(", ")]
    assert values[0] == values[2] == -values[1] == -values[3] and abs(values[0]) in (1, 2, 3)
