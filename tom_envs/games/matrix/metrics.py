"""Per-episode ToM metrics for the matrix games, computed from a trajectory.

The focal seat is the first seat whose opponent is a finite-state partner (a bot of
:mod:`tom_envs.games.matrix.bots`, alone or drawn from a population). Its predictions are read
from the ``prediction`` field of its decisions (``{"partner_action": k}``), so any agent, RMax or an
LLM, is scored the same way. See :mod:`tom_envs.games.matrix.planner` for the definitions.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from tom_envs.core.agents import Agent
from tom_envs.core.functional import FunctionalObjective, return_objective
from tom_envs.core.game import GameBundle
from tom_envs.games.matrix.bots import PartnerAgent, make_partner
from tom_envs.games.matrix.planner import OptimalResponse, episode_metrics
from tom_envs.games.matrix.rules import MatrixConfig


def partner_policy_name(agent: Agent) -> str | None:
    """The finite-state policy an agent played this episode, if it is a matrix partner bot."""
    current = getattr(agent, "current", agent)
    return current.policy_name if isinstance(current, PartnerAgent) else None


@lru_cache(maxsize=64)
def solver_for(config: MatrixConfig, partner: str, player: int) -> OptimalResponse:
    """A cached exact solver (values are reused across episodes)."""
    return OptimalResponse(config, make_partner(partner, config, 1 - player), player)


def trajectory_metrics(
    bundle: GameBundle, episode: Any, agents: Sequence[Agent]
) -> dict[str, float]:
    """ΔFunctional/T, ΔToM/T (if predicted), ToM % and the optimal return of the focal seat."""
    config: MatrixConfig = bundle.game.config  # type: ignore[attr-defined]
    focal = partner = None
    for seat in (0, 1):
        name = partner_policy_name(agents[1 - seat])
        if name is not None:
            focal, partner = seat, name
            break
    if focal is None or partner is None:
        return {}
    me, other = f"player_{focal}", f"player_{1 - focal}"
    mine: list[int] = []
    theirs: list[int] = []
    preds: list[int | None] = []
    for step in episode.steps:
        if step["agent"] == me:
            mine.append(step["action"])
            pred = (step.get("prediction") or {}).get("partner_action")
            preds.append(None if pred is None else int(pred))
        elif step["agent"] == other:
            theirs.append(step["action"])
    history = list(zip(mine, theirs, strict=True))
    solver = solver_for(config, partner, focal)
    has_preds = any(p is not None for p in preds)
    out = episode_metrics(
        config, solver.partner, history, preds if has_preds else None, focal, solver
    )
    out["focal_player"] = float(focal)
    return out


def functional_objective(game: Any) -> FunctionalObjective:
    """The functional objective ``U`` (:mod:`tom_envs.core.functional`): the focal seat's return, as paper 004's Def. 2.2; T = the horizon (rounds)."""
    return return_objective("focal return (payoffs)", "points", game.max_steps)
