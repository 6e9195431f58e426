"""Every script in examples/ runs (so the examples never rot) and says what it promises."""

from __future__ import annotations

import re
import runpy
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.py"))


def test_examples_exist() -> None:
    names = {p.name for p in EXAMPLES}
    assert {"pettingzoo_loop.py", "custom_policy.py", "gymnasium_vs_partner.py"} <= names


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path: Path, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    monkeypatch.setattr(sys, "argv", [str(path)])
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
    if path.name == "text_loop.py":
        assert "invalid answers: 2" in out
    if path.name == "rllib_ppo.py":  # PPO, a remote runner: a Parallel and a masked AEC game
        for game in ("Overcooked", "Hanabi"):
            line = re.search(rf"{game} iteration 2: 512 env steps; mean return per seat: (.*)", out)
            assert line, out
            seats = re.findall(r"(player_\d) (-?[\d.]+)", line.group(1))
            assert [s for s, _ in seats] == ["player_0", "player_1"], line.group(0)
            assert seats[0][1] == seats[1][1], line.group(0)  # one team reward: nothing skewed
