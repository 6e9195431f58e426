"""CoBlock's evaluation metrics (paper §4.3, Eq. 1-3, Alg. 1), computed from a trajectory.

* **success** (Eq. 1 per episode): 1 if every target block was in place with its colour.
* **timesteps**: rounds played (the original code's turn counter; both agents act once per
  round). ``actions`` counts the actions that did something (everything but ``wait``), the
  paper's "total number of actions" read literally; both are reported.
* **workload balance** γ (Eq. 2-3): with ``N_a, N_b`` the agents' building actions
  (place and break, successful or not) and ``N*_a, N*_b`` the optimal block counts of Alg. 1
  (:func:`~tom_envs.games.coblock.planner.optimal_counts`), ``a = N_a · N*_b / N*_a``,
  ``b = N_b`` and ``γ = a·b / (a² + b²)``; 0.5 is the optimum (the agents share the work in the
  optimal proportion), 0 means one agent did everything. Undefined (NaN) when nobody built.

The trajectory holds actions and messages but not the task, so the episode is replayed through
the rules from its seed (the rules are deterministic given the task drawn at reset).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from gymnasium.utils import seeding

from tom_envs.core.action_classes import ActionClasses
from tom_envs.core.agents import Agent
from tom_envs.core.functional import FunctionalObjective, metric_objective
from tom_envs.core.game import GameBundle
from tom_envs.games.coblock.planner import optimal_counts
from tom_envs.games.coblock.rules import (
    ActionKind,
    CoBlockGame,
    CoBlockState,
    Outcome,
    decode_action,
)
from tom_envs.games.coblock.tasks import TASK_TYPES


def workload_balance(n_a: float, n_b: float, opt_a: float, opt_b: float) -> float:
    """γ of Eq. 2-3 (NaN when undefined: no building, or an optimal count of zero)."""
    if opt_a <= 0 or opt_b <= 0:
        return float("nan")
    a = n_a * opt_b / opt_a
    b = float(n_b)
    if a == 0 and b == 0:
        return float("nan")
    return a * b / (a * a + b * b)


def replay(game: CoBlockGame, seed: int, steps: Sequence[dict[str, Any]]) -> CoBlockState:
    """The final state of an episode from its seed and its recorded decisions."""
    rng, _ = seeding.np_random(seed)
    state = game.initial_state(rng)
    joint: dict[int, int] = {}
    messages: dict[int, str] = {}
    for step in steps:
        p = int(step["agent"].rsplit("_", 1)[1])
        joint[p] = int(step["action"])
        if step.get("message") is not None and "message_error" not in step:
            messages[p] = step["message"]
        if len(joint) == game.num_players:
            state = game.apply(state, joint, rng, messages or None).state
            joint, messages = {}, {}
    return state


def episode_metrics(game: CoBlockGame, state: CoBlockState) -> dict[str, float]:
    """Success, timesteps, actions, building counts, ``N*`` and γ of a finished state."""
    task = state.task
    built = [0, 0]
    acted = 0
    for rec in state.records():
        kind = decode_action(game.config, rec.action).kind
        if kind != ActionKind.WAIT:
            acted += 1
        if kind in (ActionKind.PLACE, ActionKind.BREAK):
            built[rec.player] += 1
    opt = optimal_counts([g.blocks for g in task.goals], task.inventories) or (0, 0)
    out = {
        "success": 1.0 if state.outcome == Outcome.SUCCESS else 0.0,
        "timesteps": float(state.round),
        "actions": float(acted),
        "progress": state.matched() / len(task.target_cells),
        "gamma": workload_balance(built[0], built[1], opt[0], opt[1]),
        "task_type_index": float(TASK_TYPES.index(task.type)),
    }
    for p in (0, 1):
        out[f"build_actions/player_{p}"] = float(built[p])
        out[f"optimal_blocks/player_{p}"] = float(opt[p])
    if math.isnan(out["gamma"]):
        del out["gamma"]  # averaged over the episodes where it is defined
    return out


def trajectory_metrics(
    bundle: GameBundle, episode: Any, agents: Sequence[Agent]
) -> dict[str, float]:
    """The runner's hook: replay the episode and compute :func:`episode_metrics`."""
    game: CoBlockGame = bundle.game  # type: ignore[assignment]
    return episode_metrics(game, replay(game, episode.seed, episode.steps))


def functional_objective(game: CoBlockGame) -> FunctionalObjective:
    """The functional objective ``U`` (:mod:`tom_envs.core.functional`): Eq. 1's success first, then timesteps; T = ``max_rounds``."""
    limit = game.config.max_rounds
    return metric_objective(
        f"success - rounds / {limit + 1}", "successes", limit, "success", "timesteps",
        1.0 / (limit + 1),
    )


def action_classes(game: CoBlockGame) -> ActionClasses:
    """The coarse classes of an action (for next-action questions): place a block, break a
    block, wait, send a message, end the task."""
    kind = {ActionKind.PLACE: 0, ActionKind.BREAK: 1, ActionKind.WAIT: 2,
            ActionKind.SEND_MESSAGE: 3, ActionKind.END_TASK: 4}  # fmt: skip
    config = game.config
    return ActionClasses(
        ("place a block", "break a block", "wait", "send a message", "end the task"),
        lambda a: kind[decode_action(config, a).kind],
        "kind of action",
    )
