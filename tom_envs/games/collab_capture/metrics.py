"""Per-episode metrics of CollabCapture, computed from a trajectory against the optimal planner.

The episode is replayed from its seed and recorded joint actions (the game is deterministic, so
the replay is exact), then scored with the exact optimal joint planner
(``tom_envs/games/joint_planner.py``):

* ``captured`` (0/1), ``turns`` (turns played), ``optimal_turns`` (fewest turns in which the team
  can surely capture the thief from the start), ``turn_regret`` = turns used (the limit + 1 when
  the thief was not caught) - ``optimal_turns``: the paper's "turns to capture" against its optimum.
* ``optimal_capture`` (1 when capture within the limit is possible) and ``functional_regret`` =
  ``optimal_capture - captured``.
* per seat, in turns: ``br_regret/player_i`` (turns lost by not best-responding to the partner's
  actual move, summed), and with predictions (``prediction={"partner_action": k}``)
  ``tom_accuracy/player_i`` (percent right) and ``tom_regret/player_i`` (turns lost by acting on
  the prediction). See :func:`tom_envs.games.joint_planner.seat_metrics`.
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
    """Capture, turns and regrets of one episode (see the module docstring)."""

    game, planner, trajectory, final, start = replay_with_planner(bundle, episode)
    limit = game.config.max_turns
    captured = float(final.captured)
    turns = len(trajectory)
    optimal_turns = planner.turns_to_success(start)
    optimal = planner.value(start)
    out = {
        "captured": captured,
        "turns": float(turns),
        "optimal_turns": float(optimal_turns),
        "turn_regret": float((turns if captured else limit + 1) - optimal_turns),
        "optimal_capture": optimal,
        "functional_regret": optimal - captured,
    }

    def score(pl: Any, state: Any) -> dict[tuple[int, int], float]:
        return {j: -v for j, v in pl.q_turns(state).items()}

    out.update(seat_metrics(planner, trajectory, predictions_of(episode.steps), score))
    return out


def functional_objective(game: Any) -> FunctionalObjective:
    """The functional objective ``U`` (:mod:`tom_envs.core.functional`): capture first, then speed (one capture outweighs every turn); T = ``max_turns``."""
    limit = game.config.max_turns
    return metric_objective(
        f"captured - turns / {limit + 1}", "captures", limit, "captured", "turns", 1.0 / (limit + 1)
    )
