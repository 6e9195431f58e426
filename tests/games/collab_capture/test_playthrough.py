"""Golden seeded playthrough: the optimal bot (Alice) with the greedy bot (Bob), door12_closed.

Any change to the rules, the text, the bots, the planner, the runner or the seeding shows up as a
diff against ``playthrough_door12_closed_seed0.txt``. If the change is intended, regenerate and
review the diff:

    TOM_ENVS_REGEN=1 .venv/bin/python -m pytest tests/games/collab_capture/test_playthrough.py
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from tom_envs.agents import make_agent
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode

GOLDEN = Path(__file__).with_name("playthrough_door12_closed_seed0.txt")
SEED = 0
SCENARIO = "door12_closed"
AGENTS = ("optimal", "greedy")


def generate() -> str:
    """Play the episode; render every turn (actions, rewards, Alice's prediction and text)."""
    spec = game_spec("CollabCapture")
    bundle = spec.load().make_bundle(scenario=SCENARIO)
    agents = [make_agent(a, spec, bundle) for a in AGENTS]
    ep = play_episode(spec, agents, SEED, env_kwargs={"scenario": SCENARIO}, record_text=True)
    lines = [
        f"# {spec.id} ({SCENARIO}): {AGENTS[0]} (Alice) with {AGENTS[1]} (Bob), seed {SEED}",
        "",
    ]
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


def test_golden_facts() -> None:
    """What holds by the rules whatever the bots do: positions in the text follow the moves."""
    text = GOLDEN.read_text()
    blocks = text.split("=== turn ")[1:]
    assert blocks and "captured: 1" in text
    rooms = (1, 6)
    for block in blocks:
        head = block.splitlines()
        assert f"I Alice am in room {rooms[0]}. Bob is in room {rooms[1]}." in block
        moves = [part.split(": ", 1)[1] for part in head[1].split(" | ")]
        rooms = tuple(
            int(m.rsplit(" ", 1)[1]) if m.startswith("Move to room") else r
            for m, r in zip(moves, rooms, strict=True)
        )
