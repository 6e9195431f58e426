"""Golden seeded playthrough: the cooperative bot (player_0) and the passive one (player_1) on
the skill-dependent task 0 (two towers; player_1 lacks yellow), seed 0.

It shows the whole protocol: the disclosure and its answer, the joint plan, the stall, the
request, the passive bot placing what it was asked for. Any change to the rules, the text, the
bots, the runner or the seeding shows up as a diff against ``playthrough_seed0.txt``. If the
change is intended, regenerate and review the diff:

    TOM_ENVS_REGEN=1 .venv/bin/python -m pytest tests/games/coblock/test_playthrough.py
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
AGENTS = ("cooperative", "passive")
KWARGS = {"task_type": "skill_dependent", "task_index": 0}
#: Rounds whose full observation text (player_0's XML) is written out.
SHOWN = (0, 1, 4)


def generate() -> str:
    """Play the episode and render every round."""
    spec = game_spec("CoBlock")
    agents = [make_agent(a, spec) for a in AGENTS]
    ep = play_episode(spec, agents, SEED, env_kwargs=KWARGS, record_text=True)
    lines = [
        f"# {spec.id} {KWARGS}: {AGENTS[0]} (player_0) vs {AGENTS[1]} (player_1), seed {SEED}",
        "",
    ]
    rounds: dict[int, dict[str, dict]] = {}
    for s in ep.steps:
        rounds.setdefault(s["joint_step"], {})[s["agent"]] = s
    for t in sorted(rounds):
        p0, p1 = rounds[t]["player_0"], rounds[t]["player_1"]
        lines.append(f"=== round {t + 1} ===")
        for s in (p0, p1):
            said = f' + message "{s["message"]}"' if s.get("message") else ""
            lines.append(f"{s['agent']}: {s['action_text']}{said}")
        if t in SHOWN:
            lines.append("player_0 observation:")
            lines += ["    " + x for x in p0["observation_text"].splitlines()]
        lines.append("")
    lines.append(
        "metrics: "
        + ", ".join(
            f"{k}={v:g}" for k, v in sorted(ep.metrics.items()) if not k.startswith("valid")
        )
    )
    return "\n".join(lines) + "\n"


def test_golden_playthrough() -> None:
    text = generate()
    if os.environ.get("TOM_ENVS_REGEN"):
        GOLDEN.write_text(text)
    expected = GOLDEN.read_text()
    if text != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(True), text.splitlines(True), "golden", "now", n=2
            )
        )
        raise AssertionError(f"playthrough differs from {GOLDEN.name}:\n{diff[:4000]}")
