"""CoordinationQA for Overcooked: EC from the kitchen state, ToM about the partner's next task
(never stated: inferred from what it holds and what the cookers need), JP from the rollout
planner (:mod:`tom_envs.games.overcooked.planner`).

* **EC** ``onions_needed``: onions a cooker still needs before it cooks; ``cooker_needs``: what a
  chef must bring to a cooker for it to progress (an onion, a plate, nothing while it cooks);
  ``onions_to_fill_all``: onions still needed to fill every cooker that is not cooking. Nothing
  the answer is printed: the context shows onions in a cooker and whether it cooks, not the
  difference nor the steps left.
* **ToM** ``partner_next_task``: the task the partner bot that played the seat (greedy or a role
  chef) picks now; kept only when all three rule chefs pick the same task (``answerable``).
* **JP** ``best_task``: your mid-level task with the highest simulated value (exact rules for
  20 steps, the partner taking the nearest useful task, as the question states;
  ``source="planner"``); kept when it beats every other option by at least 2 points.
"""

from __future__ import annotations

from typing import Any

from tom_envs.games.overcooked.bots import ROLES, choose
from tom_envs.games.overcooked.kitchen import kitchen
from tom_envs.games.overcooked.midlevel import MOVE_AWAY_ACTION, mid_level_actions
from tom_envs.games.overcooked.planner import RolloutPlanner
from tom_envs.games.overcooked.rules import ONIONS_PER_SOUP
from tom_envs.qa.generate import context_text
from tom_envs.qa.items import ItemMaker, QAItem, Scenario

GENERATOR_VERSION = 2

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
    for seats in (
        ["greedy", "greedy"],
        ["planner", "greedy"],
        ["random", "greedy"],
        ["role_onions", "role_dishes"],
    )
]

#: Partner bots that pick tasks by a rule (name -> role), as keys of ToM items.
PARTNERS = {"greedy": "any", "role_onions": "onions", "role_dishes": "dishes"}

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
        items.append(make("EC", "onions_needed",
                          f"How many more onions must be put in cooker {name} before it starts "
                          "cooking?", tuple(str(x) for x in range(ONIONS_PER_SOUP + 1)),
                          (ONIONS_PER_SOUP - n,), "rules"))  # fmt: skip
    need = ("an onion", "a plate, to load the soup", "nothing: the soup is still cooking")
    key = 0 if tick < 0 else 1 if tick >= cfg.cook_time else 2
    items.append(make("EC", "cooker_needs",
                      f"What must a chef bring to cooker {name} for it to make progress now?",
                      need, (key,), "rules"))  # fmt: skip
    total = sum(ONIONS_PER_SOUP - m for m, t in state.pots if t < 0)
    top = ONIONS_PER_SOUP * len(state.pots)
    items.append(make("EC", "onions_to_fill_all",
                      "How many onions must still be put into cookers, in total, so that every "
                      "cooker that is not cooking is full?", tuple(str(x) for x in range(top + 1)),
                      (total,), "rules"))  # fmt: skip

    other = 1 - player
    theirs = mid_level_actions(k, state, other, cfg.cooking)
    if len(scenario.seats) == 2 and scenario.seats[other] in PARTNERS and len(theirs) >= 3:
        role = PARTNERS[scenario.seats[other]]
        pick = choose(k, cfg, state, other, theirs, role, "", None)
        # waiting and stepping aside are options only when they are the answer (they are the
        # short ones: kept always, they would make "not the shortest" a shortcut)
        labels = [a.text for a in theirs if a == pick or a.verb not in ("wait", "move_away")]
        if len(labels) >= 3:  # too few tasks left to choose from: no question
            items.append(make("ToM", "partner_next_task",
                              "Your partner works for the team's score and sees the same "
                              "kitchen. Which task will your partner take on next?",
                              tuple(labels), (labels.index(pick.text),), "partner_policy",
                              details={"partner": scenario.seats[other]}))  # fmt: skip

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
                    (
                        "Assume your partner keeps taking the nearest useful task. Which task "
                        "should you take on now to score the most as a team?"
                    ),
                    tuple(labels),
                    (labels.index(best),),
                    "planner",
                    details={"values": values, "gap": ranked[0] - ranked[1]},
                )
            )
    return items


def answerable(bundle: Any, state: Any, item: QAItem) -> bool:
    """The kitchen is fully visible, so EC and JP keys are functions of the printed state. The
    partner's next task is inferable only when every goal-directed model of a partner (the
    greedy chef and both role chefs, :data:`PARTNERS`) picks the same task in this state: then
    what it holds, where it stands and what the cookers need decide it, not a hidden rule."""
    if item.type != "ToM":
        return True
    game = bundle.game
    cfg = game.config
    k = kitchen(cfg.kitchen)
    other = 1 - item.scenario.player
    theirs = mid_level_actions(k, state, other, cfg.cooking)
    picks = {choose(k, cfg, state, other, theirs, role, "", None).text for role in ROLES}
    shown = {a.text for a in theirs}
    return (
        len(picks) == 1
        and picks == {item.options[a] for a in item.answers}
        and set(item.options) <= shown
        and len(item.options) >= 2
    )
