"""Per-episode metrics of the bomb-defusal mission, recomputed exactly from a trajectory.

The trajectory holds the seed, the env arguments, every action and every message, so the episode is
replayed through the pure rules (same seed, same mission) and the final state is read directly:
no reward arithmetic, which would be ambiguous with reward shaping. The runner adds probe accuracy
per order (``probe_acc/introspection``, ``probe_acc/first_order``, ``probe_acc/second_order``) and
per player valid-action shares.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gymnasium.utils import seeding

from tom_envs.core.agents import Agent
from tom_envs.core.functional import FunctionalObjective, metric_objective
from tom_envs.core.game import GameBundle
from tom_envs.games.bomb_defusal.rules import BombGame
from tom_envs.games.bomb_defusal.state import BombState


def replay(game: BombGame, seed: int, steps: Sequence[dict[str, Any]]) -> BombState:
    """The final state of a recorded episode (as ``reset(seed)`` and the recorded steps made it)."""
    rng, _ = seeding.np_random(seed)
    state = game.initial_state(rng)
    for step in steps:
        if state.over:
            break
        player = int(step["agent"].rsplit("_", 1)[1])
        message = step.get("message") if "message_error" not in step else None
        msgs = {player: message} if message else None
        state = game.step(state, {player: int(step["action"])}, rng, msgs).state
    return state


def episode_metrics(bundle: GameBundle, episode: Any, agents: Sequence[Agent]) -> dict[str, float]:
    """Team score, rounds (of the last defusal, or the limit), completion and validity."""
    game: BombGame = bundle.game  # type: ignore[assignment]
    state = replay(game, episode.seed, episode.steps)
    n_bombs = state.mission.num_bombs
    defused = sum(state.defused(b) for b in range(n_bombs))
    steps = episode.steps
    valid = sum(bool(s["valid"]) for s in steps)
    return {
        "team_score": float(state.score),
        "rounds": float(state.round),
        "completed": float(defused == n_bombs),
        "bombs_defused": float(defused),
        "valid_action_pct": 100.0 * valid / len(steps) if steps else 100.0,
        "messages": float(len(state.chat)),
    }


#: The weight of a round in ``U``: one phase (10 points) outweighs all 30 rounds (0.3 x 30 = 9).
ROUND_WEIGHT = 0.3


def functional_objective(game: BombGame) -> FunctionalObjective:
    """The functional objective ``U`` (:mod:`tom_envs.core.functional`): team score minus
    :data:`ROUND_WEIGHT` per round (score first, then speed), read from the metrics (never from the
    shaped return); T = ``max_rounds``."""
    return metric_objective(f"team score - {ROUND_WEIGHT} x rounds", "points",
                            game.config.max_rounds, "team_score", "rounds", ROUND_WEIGHT)
