"""CoordinationQA for CoBlock: EC from your own goal and the world, ToM about the goal your
partner stated. Every item is a contrast set.

* **EC** ``own_goal_missing`` / ``own_goal_placed``: blocks of your own goal not yet (already) in
  place. Twins: the same situation with the first few missing blocks of your goal (in build
  order, each supported) placed by you in rounds before those the history shows (and gone from
  your inventory); written when you waited in enough of those rounds.
* **ToM** ``partner_goal``: does the goal your partner stated include a tower, an arch, a bridge,
  a wall, a symbol... (the chat lists blocks, not structures)? Twins: the same situation with the
  partner's disclosure stating another goal (goals of other tasks of the game), one whose goal
  includes the structure and one whose goal does not; written when the disclosure is the
  partner's only message so far and it has placed or broken no block (nothing else it did shows
  its goal). The partner-blind reasoner (no access to what the partner said) is at chance.
* **No JP item** (generator 3). The earlier ``next_placement`` item (the block to place now
  under Alg. 1's balanced assignment, against placements in neither goal) could not be built as
  a contrast set (any block of your own share is as good as the planner's first one, so the
  twins' keys are not exclusive), and written alone it gives its answer away: the key's cell is
  printed in a goal list and the distractors' cells are not (a learned adversary: 61-63% where
  chance is 25%). It is not shipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from tom_envs.games.coblock.rules import ActionKind, decode_action
from tom_envs.games.coblock.structures import build_order, pos_of
from tom_envs.qa.generate import context_text
from tom_envs.qa.items import QAItem, Scenario, contrast_set, situation_set

GENERATOR_VERSION = 3

#: Tasks drawn (seeded by the situation) for the goals a partner may state in ToM twins.
GOAL_BANK = 24
#: EC twins: at most this many of your goal's missing blocks placed earlier.
MAX_PLACED = 4
#: The abilities asked about (no JP: see the module docstring).
ABILITIES = ("EC", "ToM")

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


def _placed_earlier(state: Any, player: int, blocks: Sequence[Any]) -> Any:
    """``state`` as if ``player`` had placed ``blocks`` before the rounds its history shows (they
    are in the world and no longer in its inventory); ``None`` when it lacks the colours."""
    inv = list(state.inventories[player])
    for b in blocks:
        inv[b[3]] -= 1
    if min(inv) < 0:
        return None
    inventories = list(state.inventories)
    inventories[player] = tuple(inv)
    world = tuple(sorted({*state.world, *blocks}))
    return replace(state, world=world, inventories=tuple(inventories))


def questions(bundle: Any, state: Any, player: int, scenario: Scenario) -> list[QAItem]:
    """The EC and ToM contrast sets for ``player`` (no JP: see the module docstring)."""
    game = bundle.game
    base = f"coblock/{scenario.env_kwargs.get('task_type', 'all')}/s{scenario.seed}/r{state.round}/p{player}"
    items: list[QAItem] = []
    goal = state.task.goals[player].blocks
    missing = _remaining(state)[player]
    shown = game.observe(state, player).history
    hidden = state.history[: len(state.history) - len(shown)]
    free = sum(1 for e in hidden if e[1] == player
               and decode_action(game.config, e[2]).kind == ActionKind.WAIT)  # fmt: skip
    if goal and missing and free:
        # twins: the first blocks of the missing part (build order, each supported) placed by you
        # before the rounds the history shows
        order = build_order(missing, {pos_of(b) for b in state.world})
        edits = []
        for m in range(min(MAX_PLACED, len(order), free) + 1):
            st = _placed_earlier(state, player, order[:m])
            if st is not None:
                edits.append((f"placed{m}", st))
        rng = np.random.default_rng([scenario.seed, state.round, player, 5])

        def ctx(st: Any) -> str:
            return context_text(bundle, st, player)

        for kind, question, count in (
            ("own_goal_missing", "How many blocks of your own goal are not yet in place in the "
             "world?", lambda st: len(_remaining(st)[player])),
            ("own_goal_placed", "How many blocks of your own goal are already in place in the "
             "world?", lambda st: len(goal) - len(_remaining(st)[player])),
        ):  # fmt: skip
            items += situation_set(base, "EC", kind, question, "rules", scenario, edits, count,
                                   str, ctx, rng)  # fmt: skip
    items += _goal_set(bundle, state, player, scenario, base)
    return items


def _goal_set(bundle: Any, state: Any, player: int, scenario: Scenario,
              base: str) -> list[QAItem]:  # fmt: skip
    """ToM ``partner_goal``: the contrast set over the goal the partner stated (module
    docstring). Written when the partner's only message so far is its disclosure and it has
    placed or broken no block (nothing else it did shows its goal)."""
    from tom_envs.games.coblock.bots import disclosure_text
    from tom_envs.games.coblock.structures import KINDS
    from tom_envs.qa.items import replay

    game = bundle.game
    cfg = game.config
    q = 1 - player
    said = [(j, m[q]) for j, m in enumerate(scenario.messages) if q in m]
    if len(said) != 1 or "My goal:" not in said[0][1] or "My inventory:" not in said[0][1]:
        return []
    for acts in scenario.actions:
        if q in acts and decode_action(cfg, acts[q]).kind in (ActionKind.PLACE, ActionKind.BREAK):
            return []
    j, text = said[0]
    inventory = text.split("My inventory:", 1)[1]
    rng = np.random.default_rng([scenario.seed, len(scenario.actions), player, 71])
    kind = KINDS[int(rng.integers(len(KINDS)))]
    pool: dict[str, list[tuple[int, Any]]] = {"yes": [], "no": []}
    for k in range(GOAL_BANK):
        goal = game.draw_task(np.random.default_rng([scenario.seed, 72, k])).goals[q]
        has = kind in {c.kind for c in goal.components}
        pool["yes" if has else "no"].append((k, goal))
    if not pool["yes"] or not pool["no"]:
        return []
    twins = []
    for key in ("no", "yes"):
        k, goal = pool[key][int(rng.integers(len(pool[key])))]
        msgs = list(scenario.messages)
        m = dict(msgs[j])
        m[q] = (
            disclosure_text(goal.blocks, ()).split("My inventory:", 1)[0]
            + "My inventory:"
            + inventory
        )
        msgs[j] = m
        twin = replace(scenario, messages=tuple(msgs), variant=f"goal{k}")
        twins.append((twin, context_text(bundle, replay(twin)[1], player), key, key))
    return contrast_set(
        base, "ToM", "partner_goal",
        f"Does your partner's goal include a {kind} (or a part of one)?",
        "knowledge", twins, details={"structure": kind},
    )  # fmt: skip
