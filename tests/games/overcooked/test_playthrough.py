"""Golden seeded playthrough: greedy (Bob's side) and the dish role in forced coordination.

Any change to the rules, the text, the mid-level grounding, the bots, the runner or the seeding
shows up as a diff against ``playthrough_forced_coordination_seed0.txt``. If the change is
intended, regenerate and review the diff:

    TOM_ENVS_REGEN=1 .venv/bin/python -m pytest tests/games/overcooked/test_playthrough.py
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from tom_envs.agents import make_agent
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode

GOLDEN = Path(__file__).with_name("playthrough_forced_coordination_seed0.txt")
SEED = 0
STEPS = 70
AGENTS = ("role_dishes", "greedy")
KWARGS = {"layout": "forced_coordination", "horizon": STEPS}


def generate() -> str:
    """Play the episode; every step's actions, mid-level choices and rewards, the kitchen every
    10 steps, and player_1's full text observation at a few steps."""
    spec = game_spec("Overcooked")
    agents = [make_agent(a, spec) for a in AGENTS]
    ep = play_episode(spec, agents, SEED, env_kwargs=KWARGS, record_text=True)
    env = spec.load().raw_env(render_mode="ansi", **KWARGS)
    env.reset(seed=SEED)
    lines = [f"# {spec.id} {KWARGS}: {AGENTS[0]} (player_0) vs {AGENTS[1]} (player_1), seed {SEED}"]
    steps: dict[int, dict[str, dict]] = {}
    for step in ep.steps:
        steps.setdefault(step["joint_step"], {})[step["agent"]] = step
    for t in range(STEPS):
        p0, p1 = steps[t]["player_0"], steps[t]["player_1"]
        if t % 10 == 0:
            lines += ["", env.render()]
        if t in (0, 25):
            lines += [
                "player_1 observation:",
                *("    " + x for x in p1["observation_text"].splitlines()),
            ]
        mids = [p["info"].get("mid_level", "-") for p in (p0, p1)]
        lines.append(
            f"step {t}: {p0['action_text']} [{mids[0]}] | {p1['action_text']} [{mids[1]}] "
            f"-> reward {p1['rewards']['player_0']:g}"
        )
        env.step(p0["action"])
        env.step(p1["action"])
    lines += ["", env.render(), f"returns: {ep.returns}", f"metrics: {ep.metrics}"]
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
        raise AssertionError(f"the playthrough changed:\n{diff[:6000]}")
