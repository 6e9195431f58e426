"""CoordinationQA for CoBlock: EC from your own goal, inventory and the world, ToM about the
partner's goal and next sub-structure once it has told you its goal, JP from Alg. 1's balanced
assignment (:mod:`tom_envs.games.coblock.planner`).

* **EC** ``own_goal_missing`` / ``own_goal_placed``: blocks of your own goal not yet (already) in
  place; ``spare_after_goal``: blocks of one colour left in your inventory after you finish your
  goal's blocks of that colour.
* **ToM** the game's probes ``partner_goal`` (does its goal include a tower, an arch...: the chat
  lists blocks, not structures) and ``partner_next_substructure``; inventory probes are not used
  (what the partner has placed since it last stated its inventory is not always visible).
* **JP** ``next_placement``: the block you should place now under the optimal joint assignment
  of the remaining goal blocks (Alg. 1 on both goals and both inventories), against placements
  that are in neither goal.

Items about the partner are kept only once the partner's chat has stated its goal (and, for JP,
its current inventory) truthfully, in a message the asked player can see (``answerable``): never
in round 1.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from tom_envs.games.coblock.planner import next_placement, optimal_assignment
from tom_envs.games.coblock.rules import Action, ActionKind, decode_action, encode_action
from tom_envs.games.coblock.structures import COLORS, pos_of
from tom_envs.qa.generate import context_text, probe_items
from tom_envs.qa.items import ItemMaker, QAItem, Scenario

GENERATOR_VERSION = 2

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


_BLOCK_RE = re.compile(r"\b(" + "|".join(COLORS) + r") \((\d+), (\d+), (\d+)\)")
_INV_RE = re.compile(r"My inventory:([^.]*)")


def disclosed(view: Any) -> tuple[set[tuple[int, int, int, int]] | None, tuple[int, ...] | None]:
    """The partner's goal blocks and inventory as its last chat messages visible in ``view``
    state them (``None`` where it has not said)."""
    goal = inv = None
    for _round, mine, text in view.dialogue:
        if mine:
            continue
        if "My goal:" in text:
            part = text.split("My goal:", 1)[1].split("My inventory:", 1)[0]
            goal = {
                (int(x), int(y), int(z), COLORS.index(c)) for c, x, y, z in _BLOCK_RE.findall(part)
            }
        m = _INV_RE.search(text)
        if m:
            counts = [0] * len(COLORS)
            for colour, n in re.findall(r"(" + "|".join(COLORS) + r") (\d+)", m.group(1)):
                counts[COLORS.index(colour)] = int(n)
            inv = tuple(counts)
    return goal, inv


def questions(bundle: Any, state: Any, player: int, scenario: Scenario) -> list[QAItem]:
    """EC, ToM and JP items for ``player``."""
    game, text = bundle.game, bundle.text
    cfg = game.config
    base = f"coblock/{scenario.env_kwargs.get('task_type', 'all')}/s{scenario.seed}/r{state.round}/p{player}"
    context = context_text(bundle, state, player)
    make = ItemMaker(base, scenario, context)
    items: list[QAItem] = []
    goal = state.task.goals[player].blocks
    remaining = _remaining(state)
    missing = remaining[player]
    top = max(len(goal), 4)
    if goal:
        items.append(make("EC", "own_goal_missing",
                          "How many blocks of your own goal are not yet in place in the world?",
                          tuple(str(k) for k in range(top + 1)), (len(missing),), "rules"))  # fmt: skip
        colours = sorted({b[3] for b in goal})
        c = colours[(scenario.seed + state.round) % len(colours)]
        need = sum(1 for b in missing if b[3] == c)
        have = state.inventories[player][c]
        after = have - need
        if after >= 0:
            opts = (
                tuple(str(k) for k in range(max(after, 0) + 4))[-5:]
                if after > 3
                else tuple(str(k) for k in range(5))
            )
            if str(after) in opts:
                items.append(make("EC", "spare_after_goal",
                                  f"After you place every {COLORS[c]} block your goal still "
                                  f"lacks, how many {COLORS[c]} blocks will be left in your "
                                  "inventory?", opts, (opts.index(str(after)),), "rules"))  # fmt: skip
        placed = len(goal) - len(missing)
        items.append(make("EC", "own_goal_placed",
                          "How many blocks of your own goal are already in place in the world?",
                          tuple(str(k) for k in range(top + 1)), (placed,), "rules"))  # fmt: skip

    for probe in probe_items(bundle, state, player, scenario, base, limit=3):
        if probe.kind in ("partner_goal", "partner_next_substructure"):
            items.append(probe)

    legal = list(game.legal_actions(state, player))
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
                items.append(make("JP", "next_placement",
                                  "To finish both goals together as fast as possible, which "
                                  "block should you place now?",
                                  tuple(text.action_text(view, a) for a in chosen),
                                  (chosen.index(best),), "planner",
                                  details={"block": list(block)}))  # fmt: skip
    return items


def answerable(bundle: Any, state: Any, item: QAItem) -> bool:
    """EC items read your own goal, inventory and the world, all shown to you. Items about the
    partner (its goal, its next sub-structure, and the JP plan, which needs its goal and
    inventory) are answerable only once the partner has stated its goal (and, for JP, its
    inventory) in a chat message you can see, and the statement is the truth: then the key is a
    function of what you were told. Never in round 1, before the partner has said anything."""
    if item.type == "EC":
        return True
    player = item.scenario.player
    view = bundle.game.observe(state, player)
    goal, inv = disclosed(view)
    true_goal = set(state.task.goals[1 - player].blocks)
    if goal is None or goal != true_goal:
        return False
    if item.type == "JP":
        return inv is not None and inv == tuple(state.inventories[1 - player])
    return True
