"""Golden seeded playthrough: the convention bot (player_0) with the simple bot (player_1), seed 0.

Any change to the rules, the text, the bots, the runner or the seeding shows up as a diff against
``playthrough_seed0.txt``. If the change is intended, regenerate and review the diff:

    TOM_ENVS_REGEN=1 .venv/bin/python -m pytest tests/games/hanabi/test_playthrough.py
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from tom_envs.agents import make_agent
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode

GOLDEN = Path(__file__).with_name("playthrough_seed0.txt")
SEED = 0
AGENTS = ("convention", "simple")
SHOWN = (0, 1, 20)  # decisions whose full text observation is written out


def generate() -> str:
    """Play the episode; one line per move, and the text observation of a few decisions."""
    spec = game_spec("Hanabi")
    agents = [make_agent(a, spec) for a in AGENTS]
    ep = play_episode(spec, agents, SEED, record_text=True)
    lines = [f"# {spec.id}: {AGENTS[0]} (player_0) with {AGENTS[1]} (player_1), seed {SEED}", ""]
    score = 0.0
    for i, step in enumerate(ep.steps):
        score += step["rewards"]["player_0"]
        lines.append(
            f"{i:3d} {step['agent']}: {step['action']:2d} {step['action_text']:<36} "
            f"reward {step['rewards']['player_0']:+g}  score {score:g}"
        )
        if i in SHOWN:
            lines += [
                "    text shown:",
                *("      " + x for x in step["observation_text"].splitlines()),
            ]
    lines += ["", "metrics:"]
    for k in (
        "score",
        "stacks",
        "bombed",
        "lives_lost",
        "plays",
        "misplays",
        "discards",
        "reveals",
    ):
        lines.append(f"  {k}: {ep.metrics[k]:g}")
    return "\n".join(lines) + "\n"


def test_playthrough_matches_golden() -> None:
    text = generate()
    if os.environ.get("TOM_ENVS_REGEN"):
        GOLDEN.write_text(text)
    expected = GOLDEN.read_text()
    if text != expected:
        diff = "\n".join(
            difflib.unified_diff(
                expected.splitlines(), text.splitlines(), "golden", "now", lineterm=""
            )
        )
        raise AssertionError(f"playthrough changed (TOM_ENVS_REGEN=1 to accept):\n{diff[:4000]}")
