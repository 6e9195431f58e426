"""Oracles for 004's Oracle prompting: the partner's true next action, for games where it is known.

For the iterated matrix games every partner bot is a finite-state policy of the public history, so
its next action is computed exactly from the agent's own view (which shows the whole history when
``window=None``, the default). Stochastic partners (``random``) have no oracle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tom_envs.core.agents import Turn


def matrix_partner_oracle(partner: str | Any, config: Any) -> Callable[[Turn], int]:
    """``turn -> the partner's action this round`` for a matrix partner.

    Args:
        partner: a partner name (``"tit_for_tat"``), or the partner agent itself (a
            ``PartnerAgent`` or a ``PopulationAgent`` of them; read at every call, so a population's
            member drawn for this episode is used).
        config: the game's ``MatrixConfig`` (``bundle.game.config``).
    """
    from tom_envs.games.matrix.bots import make_partner

    def current_name() -> str:
        if isinstance(partner, str):
            return partner
        member = getattr(partner, "current", partner)
        return str(member.policy_name)

    def oracle(turn: Turn) -> int:
        view = turn.view
        if view.first_round != 1:
            raise ValueError("the matrix oracle needs the whole history (window=None)")
        policy = make_partner(current_name(), config, 1 - turn.player)
        state = policy.initial_state()
        for mine, theirs in view.history:
            state = policy.next_state(state, theirs, mine)
        probs = policy.action_probs(state)
        if max(probs) < 1.0:
            raise ValueError(f"{current_name()} is stochastic: its next action is not known")
        return int(max(range(len(probs)), key=lambda a: probs[a]))

    return oracle
