"""The evaluation tests' config (imported as ``from eval_configs import ...``)."""

from __future__ import annotations

from pathlib import Path


def pd_config(tmp_path: Path, name: str, horizon: int, **extra: object) -> dict:
    """An eval config: RMax, tit-for-tat and the two single-action bots on the Prisoner's
    Dilemma of ``horizon`` rounds, 3 episodes a cell, written under ``tmp_path/run``; ``extra``
    adds or replaces top-level keys."""
    data = {
        "name": name,
        "episodes": 3,
        "out": str(tmp_path / "run"),
        "agents": {"rmax": "rmax", "tft": "tit_for_tat", "a0": "always_0", "a1": "always_1"},
        "games": [{"game": "PrisonersDilemma", "kwargs": {"horizon": horizon}}],
    }
    data.update(extra)
    return data
