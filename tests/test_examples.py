"""Every script in examples/ runs (so the examples never rot) and says what it promises."""

from __future__ import annotations

import re
import runpy
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.py"))
#: Small settings for the examples that train (their defaults show more).
SMALL = {
    "overcooked_rl.py": ["--total-steps", "512", "--num-envs", "4"],
    "hanabi_sb3.py": ["--total-steps", "256", "--n-envs", "2", "--episodes", "3"],
}


def test_examples_exist() -> None:
    names = {p.name for p in EXAMPLES}
    assert {"pettingzoo_loop.py", "custom_policy.py", "gymnasium_vs_partner.py", "overcooked_rl.py",
            "hanabi_sb3.py", "hanabi_text.py", "llm_custom_policy.py", "text_loop.py",
            "gymnasium_text.py"} <= names  # fmt: skip
    assert (EXAMPLES[0].parent / "eval_hanabi_overcooked.toml").exists()


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path: Path, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    if path.name in ("overcooked_rl.py", "hanabi_sb3.py"):
        pytest.importorskip("torch")
        pytest.importorskip("sb3_contrib")
    monkeypatch.setattr(sys, "argv", [str(path), *SMALL.get(path.name, [])])
    runpy.run_path(str(path), run_name="__main__")
    out = capsys.readouterr().out
    assert out.strip(), f"{path.name} printed nothing"
    if path.name == "gymnasium_vs_partner.py":
        assert "return 42.0 (optimal against tit-for-tat over 5 rounds: 42)" in out
    if path.name == "pettingzoo_loop.py":
        assert "AEC returns:" in out and "Parallel returns:" in out
    if path.name == "custom_policy.py":
        # Against a constant partner, predicting "it repeats" is right and best-responding is optimal
        # after the first round: 99 of 100 rounds won.
        assert "vs always_1     return   99.00  ΔFunctional/T 0.010  ToM % 99.0" in out
    if path.name == "text_loop.py":  # a plain PettingZoo loop over TextAECEnv
        assert "model calls: 8, invalid answers: 2" in out and "policy: reask, max_reasks 2" in out
        assert "ends with: Your previous answer could not be used: could not match 'hmm" in out
    if path.name == "gymnasium_text.py":  # a registered -text id, stepped with strings
        assert "5 turns, return 42.0 (optimal against tit-for-tat over 5 rounds: 42)" in out
        assert "sloppy model: 10 turns (5 re-asked), return 42.0" in out
        assert "on_invalid='terminate': 1 turn, reward -1.0, recorded player_0" in out
    if path.name == "rllib_ppo.py":  # PPO, a remote runner: a Parallel and a masked AEC game
        for game in ("Overcooked", "Hanabi"):
            line = re.search(rf"{game} iteration 2: 512 env steps; mean return per seat: (.*)", out)
            assert line, out
            seats = re.findall(r"(player_\d) (-?[\d.]+)", line.group(1))
            assert [s for s, _ in seats] == ["player_0", "player_1"], line.group(0)
            assert seats[0][1] == seats[1][1], line.group(0)  # one team reward: nothing skewed
    if path.name == "overcooked_rl.py":
        assert re.search(r"vector engine: 256 kitchens x 100 steps, observations \(256, 2, \d+\)", out)
        assert "MAPPO self-play: 512 env steps, 8 episodes" in out  # 4 kitchens x 64 steps, twice
        line = re.search(r"MAPPO \+ planner bot: \[(.*)\] \(team returns\)", out)
        assert line and len(line.group(1).split(",")) == 2, out
    if path.name == "hanabi_sb3.py":
        assert "tom_envs/HanabiVsConvention-v0: observation (658,), 20 actions" in out
        assert re.search(r"MaskablePPO after 256 steps: score [\d.]+ ± [\d.]+ over 3 episodes", out)
        assert "random legal play: score 0.00" in out  # random Hanabi play loses its 3 lives
    if path.name == "hanabi_text.py":
        # the policy reads only the text, and every reply it writes is understood by the parser
        assert "player_1: 'My hints prove card 3 is playable, so I play my Card 3.'" in out
        assert "72 replies, 0 unparseable; team score 10 of 25" in out


def test_the_eval_toml_example_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tom_envs.cli import main

    config = EXAMPLES[0].parent / "eval_hanabi_overcooked.toml"
    out = tmp_path / "run"
    assert main(["eval", str(config), "--episodes", "1", "--workers", "1", "--out", str(out)]) == 0
    report = (out / "report.md").read_text()
    for heading in ("## Matchups", "## Cross-play", "## Functional vs literal ToM"):
        assert heading in report
    assert (out / "crossplay_Hanabi.png").exists()
    # Hanabi has no exact optimum: regret against the declared candidates' lower bound, no curve
    functional = report.split("## Functional vs literal ToM", 1)[1]
    assert "lower bound" in functional
    assert not (out / "regret_Hanabi.png").exists()
    # seed 0: the convention bots in self-play score 25 (as `tom-envs run Hanabi --agents
    # convention` does on seed 0); with the simple bot or random play they lose every life
    assert "| convention | 25.00 | 0.00 | 0.00 |" in report


def test_the_readme_lists_every_example() -> None:
    readme = (EXAMPLES[0].parent.parent / "README.md").read_text()
    section = readme.split("## Examples", 1)[1].split("\n## ", 1)[0]
    for path in sorted(EXAMPLES[0].parent.glob("*.*")):
        assert f"(examples/{path.name})" in section, f"README's Examples table lacks {path.name}"
