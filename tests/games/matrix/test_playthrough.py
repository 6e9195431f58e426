"""Golden seeded playthrough: RMax vs tit-for-tat in Rock-Paper-Scissors, 20 rounds, seed 0.

Any change to the rules, the text, the bots, RMax, the runner or the seeding shows up as a diff
against ``playthrough_rps_seed0.txt``. If the change is intended, regenerate and review the diff:

    TOM_ENVS_REGEN=1 .venv/bin/python -m pytest tests/games/matrix/test_playthrough.py
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from tom_envs.agents import make_agent
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode

GOLDEN = Path(__file__).with_name("playthrough_rps_seed0.txt")
SEED = 0
ROUNDS = 20
AGENTS = ("rmax", "tit_for_tat")
METRICS = ("return", "optimal_return", "functional_regret", "tom_regret", "tom_accuracy")


def _num(x: float) -> str:
    return f"{x:+g}"


def generate() -> str:
    """Play the episode and render every round: actions, rewards, player_0's prediction and the
    text observation player_0 was shown before choosing."""
    spec = game_spec("RockPaperScissors")
    agents = [make_agent(a, spec) for a in AGENTS]
    ep = play_episode(spec, agents, SEED, env_kwargs={"horizon": ROUNDS}, record_text=True)
    lines = [
        f"# {spec.id}: {AGENTS[0]} (player_0) vs {AGENTS[1]} (player_1), seed {SEED}, "
        f"{ROUNDS} rounds",
        "",
    ]
    rounds: dict[int, dict[str, dict]] = {}
    for step in ep.steps:
        rounds.setdefault(step["joint_step"], {})[step["agent"]] = step
    assert sorted(rounds) == list(range(ROUNDS))
    for t in range(ROUNDS):
        p0, p1 = rounds[t]["player_0"], rounds[t]["player_1"]
        rewards = p1["rewards"]  # the joint action is applied on player_1's move
        assert p0["rewards"] is None and rewards is not None
        lines += [
            f"=== round {t + 1} ===",
            f"actions: player_0={p0['action']} ({p0['action_text']}), "
            f"player_1={p1['action']} ({p1['action_text']})",
            f"rewards: player_0={_num(rewards['player_0'])}, player_1={_num(rewards['player_1'])}",
            f"valid: player_0={p0['valid']}, player_1={p1['valid']}",
            f"player_0 prediction: {p0['prediction']}",
            "player_0 observation:",
            *("    " + x for x in p0["observation_text"].splitlines()),
            "",
        ]
    lines.append(
        f"returns: player_0={_num(ep.returns['player_0'])}, player_1={_num(ep.returns['player_1'])}"
    )
    lines.append(f"length: {ep.length}")
    for key in METRICS:
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
                expected.splitlines(keepends=True), text.splitlines(keepends=True),
                "golden", "now", n=2,
            )
        )
        raise AssertionError(f"playthrough changed (TOM_ENVS_REGEN=1 to accept):\n{diff[:6000]}")


def test_playthrough_is_reproducible_in_process() -> None:
    assert generate() == generate()


def test_golden_facts() -> None:
    """Facts of the golden file that hold by the rules, whatever RMax explores."""
    text = GOLDEN.read_text()
    blocks = text.split("=== round ")[1:]
    assert len(blocks) == ROUNDS
    prev_p0 = None
    for i, block in enumerate(blocks, start=1):
        head = block.splitlines()
        assert head[0] == f"{i} ==="
        acts = head[1]
        p0 = int(acts.split("player_0=")[1][0])
        p1 = int(acts.split("player_1=")[1][0])
        # tit-for-tat in RPS opens with rock, then best-responds to player_0's previous action
        assert p1 == (0 if prev_p0 is None else (prev_p0 + 1) % 3), (i, acts)
        win = {(1, 0), (2, 1), (0, 2)}
        r0 = 1 if (p0, p1) in win else -1 if (p1, p0) in win else 0
        assert head[2] == f"rewards: player_0={r0:+d}, player_1={-r0:+d}"
        assert f"    You are currently playing round {i}." in block
        prev_p0 = p0
    assert "    Q: Which Option do you choose, Option J, Option F or Option B?" in blocks[0]
    assert "optimal_return: 20" in text
