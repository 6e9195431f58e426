"""Per-episode Hanabi metrics, computed by replaying a trajectory's moves from its seed.

The episode's deck comes from its seed (``env.reset(seed)``), so replaying the recorded actions on
the rules engine rebuilds the final state exactly; the metrics are read from it, not estimated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gymnasium.utils import seeding

from tom_envs.core.action_classes import ActionClasses
from tom_envs.core.agents import Agent
from tom_envs.core.functional import FunctionalObjective, metric_objective
from tom_envs.core.game import GameBundle
from tom_envs.games.hanabi.rules import HanabiGame
from tom_envs.games.hanabi.state import DISCARD, PLAY, REVEAL_COLOR, HanabiState, move_catalogue


def replay(game: HanabiGame, seed: int, actions: Sequence[int]) -> HanabiState:
    """The state after ``actions`` from the start of the episode seeded with ``seed``."""
    rng, _ = seeding.np_random(seed)
    state = game.initial_state(rng)
    for a in actions:
        state = game.step(state, {state.current: int(a)}, rng).state
    return state


def final_metrics(game: HanabiGame, state: HanabiState) -> dict[str, float]:
    """Score, stacks, bomb-out, lives lost, perfect game, and the move mix of a final state."""
    hist = state.history
    plays = sum(1 for h in hist if h.kind == PLAY)
    misplays = sum(1 for h in hist if h.kind == PLAY and not h.scored)
    discards = sum(1 for h in hist if h.kind == DISCARD)
    return {
        "score": float(game.score(state)),
        "stacks": float(state.stacks),
        "bombed": float(state.life_tokens <= 0),
        "lives_lost": float(game.max_life - state.life_tokens),
        "perfect": float(state.stacks == game.max_score),
        "plays": float(plays),
        "misplays": float(misplays),
        "discards": float(discards),
        "reveals": float(len(hist) - plays - discards),
        "moves": float(len(hist)),
    }


def trajectory_metrics(
    bundle: GameBundle, episode: Any, agents: Sequence[Agent]
) -> dict[str, float]:
    """The runner's hook: :func:`final_metrics` of the replayed episode."""
    game: HanabiGame = bundle.game  # type: ignore[assignment]
    actions = [s["action"] for s in episode.steps]
    state = replay(game, episode.seed, actions)
    return final_metrics(game, state)


def functional_objective(game: HanabiGame) -> FunctionalObjective:
    """The functional objective ``U`` (:mod:`tom_envs.core.functional`): the team score (0 when bombed out, the paper's rule); T = ``max_steps``."""
    return metric_objective("team score (0 when bombed out)", "points", game.max_steps, "score")


def action_classes(game: HanabiGame) -> ActionClasses:
    """The coarse classes of a move (for next-action questions): play, discard, hint a colour,
    hint a rank."""
    kinds = [m.kind for m in move_catalogue(game.config)]
    index = {PLAY: 0, DISCARD: 1, REVEAL_COLOR: 2}
    return ActionClasses(
        ("play a card", "discard a card", "hint a colour", "hint a rank"),
        lambda a: index.get(kinds[a], 3),
    )
