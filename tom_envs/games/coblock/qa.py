"""CoordinationQA for CoBlock: EC from your own goal and the world, ToM from the game's probes
(what the partner knows of your goal and inventory), JP from Alg. 1's balanced assignment
(:mod:`tom_envs.games.coblock.planner`).

* **EC** ``own_goal_missing``: how many blocks of your own goal are not yet in place.
* **ToM** the game's probes (the partner's knowledge of your goal, needs and inventory, from
  the dialogue; see :mod:`tom_envs.games.coblock.probes`).
* **JP** ``next_placement``: the block you should place now under the optimal joint assignment
  of the remaining goal blocks (Alg. 1 on both goals and the current inventories: privileged,
  since the partner's goal is private; ``details["privileged"]``), against placements that are
  in neither goal.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tom_envs.games.coblock.planner import next_placement, optimal_assignment
from tom_envs.games.coblock.rules import Action, ActionKind, decode_action, encode_action
from tom_envs.games.coblock.structures import pos_of
from tom_envs.qa.generate import context_text, probe_items
from tom_envs.qa.items import ItemMaker, QAItem, Scenario

GENERATOR_VERSION = 1

KINDS = {
    "goal_dependent": "a goal-dependent task (the goals overlap)",
    "partner_stalled": "the partner did nothing useful last round",
    "half_built": "half or more of the target blocks are in place",
}

SCENARIOS: list[dict[str, Any]] = [
    {"env_kwargs": {"task_type": t}, "seats": seats}
    for t in ("independent", "skill_dependent", "goal_dependent")
    for seats in (["cooperative", "cooperative"], ["cooperative", "egoist"], ["helper", "passive"])
]


def _remaining(state: Any) -> tuple[tuple[tuple, ...], tuple[tuple, ...]]:
    world = set(state.world)
    goals = state.task.goals
    return tuple(tuple(b for b in g.blocks if b not in world) for g in goals)  # type: ignore[return-value]


def tags(bundle: Any, state: Any, player: int) -> tuple[str, ...]:
    """The named filters ``state`` matches."""
    out = []
    task = state.task
    if task.type == "goal_dependent":
        out.append("goal_dependent")
    last = [h for h in state.history if h[0] == state.round - 1 and h[1] == 1 - player]
    if last and not last[-1][4]:
        out.append("partner_stalled")
    total = sum(len(g.blocks) for g in task.goals)
    if total and sum(len(g) for g in _remaining(state)) * 2 <= total:
        out.append("half_built")
    return tuple(out)


def questions(bundle: Any, state: Any, player: int, scenario: Scenario) -> list[QAItem]:
    """EC, ToM and JP items for ``player``."""
    game, text = bundle.game, bundle.text
    cfg = game.config
    base = f"coblock/{scenario.env_kwargs.get('task_type', 'all')}/s{scenario.seed}/r{state.round}/p{player}"
    context = context_text(bundle, state, player)
    make = ItemMaker(base, scenario, context)
    items: list[QAItem] = []
    goal = state.task.goals[player].blocks
    missing = len(_remaining(state)[player])
    top = max(len(goal), 4)
    if goal:
        items.append(
            make(
                "EC",
                "own_goal_missing",
                "How many blocks of your own goal are not yet in place in the world?",
                tuple(str(k) for k in range(top + 1)),
                (missing,),
                "rules",
            )
        )

    items += probe_items(bundle, state, player, scenario, base, limit=2)

    legal = list(game.legal_actions(state, player))
    remaining = _remaining(state)
    assignment = optimal_assignment(remaining, state.inventories)
    if assignment is not None:
        occupied = {pos_of(b) for b in state.world}
        block = next_placement(assignment[player], occupied)
        if block is not None:
            best = encode_action(cfg, Action(ActionKind.PLACE, block[3], pos_of(block)))
            targets = {pos_of(b) for g in remaining for b in g}
            wrong = []
            for a in legal:
                act = decode_action(cfg, a)
                if act.kind == ActionKind.PLACE and act.pos not in targets:
                    wrong.append(a)
            if best in legal and len(wrong) >= 2:
                rng = np.random.default_rng([scenario.seed, state.round, player, 3])
                picks = sorted(
                    int(a) for a in rng.choice(wrong, size=min(3, len(wrong)), replace=False)
                )
                chosen = sorted({best, *picks})
                view = game.observe(state, player)
                items.append(
                    make(
                        "JP",
                        "next_placement",
                        (
                            "To finish both goals together as fast as possible, which block "
                            "should you place now?"
                        ),
                        tuple(text.action_text(view, a) for a in chosen),
                        (chosen.index(best),),
                        "planner",
                        details={"privileged": True, "block": list(block)},
                    )
                )
    return items
