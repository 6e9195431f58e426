"""Question builders shared by games solved by :mod:`tom_envs.games.joint_planner` (exact optimum).

No game logic: the game supplies its planner and texts. The planner
(``tom_envs/games/joint_planner.py``) is imported lazily, inside the functions that need it.
"""

from __future__ import annotations

from typing import Any

from tom_envs.qa.generate import context_text
from tom_envs.qa.items import ItemMaker, QAItem, Scenario

#: A JP item is written when exactly one action is best and it is at least this many expected
#: turns sooner than every other option (or this much likelier to succeed, for probabilities):
#: the paper's unambiguous items. The condition is the same whichever option is best.
TURN_GAP = 1.0
PROB_GAP = 0.10


def best_action_item(
    bundle: Any, state: Any, player: int, scenario: Scenario, planner: Any, base: str, question: str
) -> QAItem | None:
    """JP: my part of the team's optimal joint action, by exhaustive search; the options are
    every legal action (canonical order: the game's legal order)."""
    game = bundle.game
    legal = list(game.legal_actions(state, player))
    if len(legal) < 2:
        return None
    q_prob = planner.q_table(state)
    q_turns = planner.q_turns(state) if planner.horizon is not None else None
    best_joint = planner.optimal_joint_actions(state)
    mine = sorted({j[player] for j in best_joint})
    per_action = {}
    for a in legal:
        joints = [j for j in q_prob if j[player] == a]
        prob = max(q_prob[j] for j in joints)
        turns = min(q_turns[j] for j in joints) if q_turns is not None else 0.0
        per_action[a] = (prob, turns)
    others = [a for a in legal if a not in mine]
    if len(mine) != 1 or not others:
        return None  # exactly one best action (the paper kept unambiguous items only)
    best_prob = max(per_action[a][0] for a in mine)
    best_turns = min(per_action[a][1] for a in mine)
    prob_gap = best_prob - max(per_action[a][0] for a in others)
    turn_gap = min(per_action[a][1] for a in others) - best_turns
    if prob_gap < PROB_GAP and (q_turns is None or turn_gap < TURN_GAP or prob_gap < -1e-9):
        return None
    view = game.observe(state, player)
    names = [bundle.text.action_text(view, a) for a in legal]
    make = ItemMaker(base, scenario, context_text(bundle, state, player))
    return make(
        "JP",
        "best_action",
        question,
        tuple(names),
        (legal.index(mine[0]),),
        "exact_optimum",
        details={
            "success_probability": {names[legal.index(a)]: v[0] for a, v in per_action.items()},
            "expected_turns": {names[legal.index(a)]: v[1] for a, v in per_action.items()},
            "gap": {"probability": prob_gap, "turns": turn_gap},
        },
    )
