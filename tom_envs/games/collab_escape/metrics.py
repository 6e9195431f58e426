"""Per-episode metrics of CollabEscape, computed from a trajectory against the optimal planner.

The episode is replayed from its seed and recorded joint actions (the killer's random moves come
from the same seeded generator as in the env, so the replay is exact), then scored with the exact
optimal joint planner (``tom_envs/games/joint_planner.py``):

* ``escaped``, ``caught`` (0/1), ``turns`` (turns played).
* ``optimal_escape``: the highest probability of escaping within the turn limit from the start
  (exact over the killer's random moves); ``functional_regret`` = ``optimal_escape - escaped``
  (its mean over episodes is the team's expected regret).
* per seat, in escape probability: ``br_regret/player_i`` (summed over turns: probability lost by
  not best-responding to the partner's actual move), and with predictions
  (``prediction={"partner_action": k}``) ``tom_accuracy/player_i`` and ``tom_regret/player_i``.
  See :func:`tom_envs.games.joint_planner.seat_metrics`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tom_envs.core.agents import Agent
from tom_envs.core.functional import FunctionalObjective, metric_objective
from tom_envs.core.game import GameBundle
from tom_envs.games.joint_planner import predictions_of, replay_with_planner, seat_metrics


def trajectory_metrics(
    bundle: GameBundle, episode: Any, agents: Sequence[Agent]
) -> dict[str, float]:
    """Escape, turns and regrets of one episode (see the module docstring)."""

    game, planner, trajectory, final, start = replay_with_planner(bundle, episode)
    escaped = float(game.succeeded(final))
    optimal = planner.value(start)
    out = {
        "escaped": escaped,
        "caught": float(game.failed(final)),
        "turns": float(len(trajectory)),
        "optimal_escape": optimal,
        "functional_regret": optimal - escaped,
    }

    def score(pl: Any, state: Any) -> dict[tuple[int, int], float]:
        return pl.q_table(state)

    out.update(seat_metrics(planner, trajectory, predictions_of(episode.steps), score))
    return out


def functional_objective(game: Any) -> FunctionalObjective:
    """The functional objective ``U`` (:mod:`tom_envs.core.functional`): the escape (its mean is the escape probability, the planner's value); T = ``max_turns``."""
    return metric_objective("escaped", "escapes", game.config.max_turns, "escaped")
