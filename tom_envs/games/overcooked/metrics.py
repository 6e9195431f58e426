"""Per-episode Overcooked metrics, computed from a trajectory."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tom_envs.core.agents import Agent
from tom_envs.core.functional import FunctionalObjective, return_objective
from tom_envs.core.game import GameBundle


def trajectory_metrics(
    bundle: GameBundle, episode: Any, agents: Sequence[Agent]
) -> dict[str, float]:
    """``score`` (points delivered, shared), ``soups`` delivered and mid-level ``choices`` per
    seat (how often a mid-level agent chose an action: LLM calls for an LLM chef)."""
    config = bundle.game.config  # type: ignore[attr-defined]
    score = float(episode.returns.get("player_0", 0.0))
    out = {"score": score, "soups": score / float(config.delivery_reward)}
    for step in episode.steps:
        info = step.get("info") or {}
        if "asked" in info:
            key = f"mid_level_choices/{step['agent']}"
            out[key] = out.get(key, 0.0) + 1.0
    return out


def functional_objective(game: Any) -> FunctionalObjective:
    """The functional objective ``U`` (:mod:`tom_envs.core.functional`): the score (points delivered, shared); T = the horizon."""
    return return_objective("score (points delivered)", "points", game.max_steps)
