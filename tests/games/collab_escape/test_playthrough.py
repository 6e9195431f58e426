"""Golden seeded playthrough: the optimal bot (Alice) with the greedy bot (Bob), seed 0.

The killer's random moves come from the seed, so any change to the rules, the text, the bots, the
planner, the runner or the seeding shows up as a diff against ``playthrough_together_seed0.txt``.
If the change is intended, regenerate and review the diff:

    TOM_ENVS_REGEN=1 .venv/bin/python -m pytest tests/games/collab_escape/test_playthrough.py
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from tom_envs.agents import make_agent
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode

GOLDEN = Path(__file__).with_name("playthrough_together_seed0.txt")
SEED = 0
AGENTS = ("optimal", "greedy")


def generate(seed: int = SEED) -> str:
    """Play the episode; render every turn (actions, rewards, Alice's prediction and text)."""
    spec = game_spec("CollabEscape")
    agents = [make_agent(a, spec) for a in AGENTS]
    ep = play_episode(spec, agents, seed, record_text=True)
    lines = [f"# {spec.id} (together): {AGENTS[0]} (Alice) with {AGENTS[1]} (Bob), seed {seed}", ""]
    turns: dict[int, dict[str, dict]] = {}
    for step in ep.steps:
        turns.setdefault(step["joint_step"], {})[step["agent"]] = step
    for t in sorted(turns):
        a, b = turns[t]["player_0"], turns[t]["player_1"]
        lines += [
            f"=== turn {t + 1} ===",
            f"Alice: {a['action_text']} | Bob: {b['action_text']}",
            f"rewards: {b['rewards']}",
            f"Alice's prediction of Bob: {a['prediction']}",
            "Alice saw:",
            *("    " + x for x in a["observation_text"].splitlines()),
            "",
        ]
    lines.append(f"returns: {ep.returns}, length: {ep.length}")
    for key in sorted(ep.metrics):
        if not key.startswith("valid"):
            lines.append(f"{key}: {ep.metrics[key]:.6g}")
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


def test_the_seed_decides_the_killer() -> None:
    assert generate(1) == generate(1)
    assert len({generate(s) for s in range(4)}) > 1
