"""CoordinationQA for Overcooked: EC from the kitchen state, ToM from the greedy partner's
mid-level rules, JP from the rollout planner (:mod:`tom_envs.games.overcooked.planner`).

* **EC** ``pot_status``: for one pot, how many onions it still needs before it cooks, or, if it
  is cooking, how many steps until the soup is ready (options: the possible counts).
* **ToM** ``partner_next_task``: the mid-level task the greedy partner would pick now (its rules
  are deterministic without a blocked standoff).
* **JP** ``best_task``: your mid-level task with the highest simulated value (exact rules for
  20 steps, the partner following the greedy rules; ``source="planner"``); kept when it beats
  every other option by at least 2 points.
"""

from __future__ import annotations

from typing import Any

from tom_envs.games.overcooked.bots import BOTS, choose
from tom_envs.games.overcooked.midlevel import MOVE_AWAY_ACTION, kitchen, mid_level_actions
from tom_envs.games.overcooked.planner import RolloutPlanner
from tom_envs.games.overcooked.rules import ONIONS_PER_SOUP
from tom_envs.qa.generate import context_text
from tom_envs.qa.items import ItemMaker, QAItem, Scenario

GENERATOR_VERSION = 1

KINDS = {
    "partner_finishing_subtask": "your partner holds an onion or a plate: it is about to finish a subtask",
    "soup_ready": "a soup is cooked and waiting",
    "pot_almost_full": "a pot holds two onions",
}

_LAYOUTS = ("cramped_room", "asymmetric_advantages", "coordination_ring", "forced_coordination",
            "counter_circuit")  # fmt: skip
SCENARIOS: list[dict[str, Any]] = [
    {"env_kwargs": {"layout": lay, "horizon": 120}, "seats": seats}
    for lay in _LAYOUTS
    for seats in (["greedy", "greedy"], ["planner", "greedy"], ["random", "greedy"])
]

#: JP: the best task's simulated value must beat every other option by this many points.
GAP = 2.0


def tags(bundle: Any, state: Any, player: int) -> tuple[str, ...]:
    """The named filters ``state`` matches."""
    cfg = bundle.game.config
    out = []
    if state.chefs[1 - player].held:
        out.append("partner_finishing_subtask")
    if any(n > 0 and tick >= cfg.cook_time for n, tick in state.pots):
        out.append("soup_ready")
    if any(n == ONIONS_PER_SOUP - 1 and tick < 0 for n, tick in state.pots):
        out.append("pot_almost_full")
    return tuple(out)


def questions(bundle: Any, state: Any, player: int, scenario: Scenario) -> list[QAItem]:
    """EC, ToM and JP items for ``player`` in ``state``."""
    game = bundle.game
    cfg = game.config
    k = kitchen(cfg.kitchen)
    base = f"overcooked/{cfg.layout}/s{scenario.seed}/t{state.timestep}/p{player}"
    context = context_text(bundle, state, player)
    make = ItemMaker(base, scenario, context)
    items: list[QAItem] = []

    pot = (scenario.seed + state.timestep) % len(state.pots)
    n, tick = state.pots[pot]
    name = f"c{pot}"
    if tick < 0:
        question = f"How many more onions must be put in pot {name} before it starts cooking?"
        options = tuple(str(x) for x in range(ONIONS_PER_SOUP + 1))
        answer = ONIONS_PER_SOUP - n
    else:
        question = f"How many more steps until the soup in pot {name} is ready?"
        left = max(0, cfg.cook_time - tick)
        options = tuple(str(x) for x in range(cfg.cook_time + 1))
        answer = left
        options = tuple(sorted({options[answer], "0", str(cfg.cook_time // 2), str(cfg.cook_time)},
                               key=int))  # fmt: skip
        answer = options.index(str(left))
    items.append(make("EC", "pot_status", question, options, (answer,), "rules"))

    other = 1 - player
    theirs = mid_level_actions(k, state, other, cfg.cooking)
    if len(scenario.seats) == 2 and scenario.seats[other] == "greedy" and len(theirs) >= 2:
        pick = choose(k, cfg, state, other, theirs, "any", "", None)
        labels = [a.text for a in theirs]
        items.append(
            make(
                "ToM",
                "partner_next_task",
                (
                    f"Your partner picks its tasks by this rule: {BOTS['greedy']}. If it picked "
                    "its next task now, which would it be?"
                ),
                tuple(labels),
                (labels.index(pick.text),),
                "partner_policy",
            )
        )

    mine = [a for a in mid_level_actions(k, state, player, cfg.cooking) if a != MOVE_AWAY_ACTION]
    if len(mine) >= 2:
        planner = RolloutPlanner(cfg)
        values = {a.text: planner.value(state, player, a, scenario.seed) for a in mine}
        ranked = sorted(values.values(), reverse=True)
        if ranked[0] - ranked[1] >= GAP:
            labels = [a.text for a in mine]
            best = max(values, key=lambda t: values[t])
            items.append(
                make(
                    "JP",
                    "best_task",
                    "Which task should you take on now to score the most as a team?",
                    tuple(labels),
                    (labels.index(best),),
                    "planner",
                    details={"values": values, "gap": ranked[0] - ranked[1]},
                )
            )
    return items
