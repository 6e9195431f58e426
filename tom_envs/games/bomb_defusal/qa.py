"""CoordinationQA for bomb defusal: EC from the player's own intel, ToM from the epistemic
tracker (the game's first- and second-order probes), JP from the exhaustive optimum
(``baselines.cbs.exhaustive_optimum``: breadth-first search over the joint state).

* **EC** ``inspected_bombs``: which bombs you have inspected yourself (you know their sequence
  first-hand), or which you have not, whichever set is the smaller; several letters may be right.
* **ToM** the game's probes: does a teammate know a bomb's sequence / that you know it (exact,
  from the tracker of who saw or was told what).
* **JP** ``best_action``: your action after which the team can finish in the fewest rounds
  (privileged: the search knows every bomb's sequence; ``details["privileged"]``); kept when it
  saves at least one round over every other option.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tom_envs.qa.generate import context_text, probe_items
from tom_envs.qa.items import ItemMaker, QAItem, Scenario

GENERATOR_VERSION = 1

KINDS = {
    "teammate_in_room": "a teammate shares your room",
    "bomb_in_room": "an active bomb is in your room",
    "late": "round 8 or later",
}

SCENARIOS: list[dict[str, Any]] = [
    {"env_kwargs": {}, "seats": ["heuristic", "heuristic", "heuristic"]},
    {"env_kwargs": {}, "seats": ["random", "heuristic", "heuristic"]},
    {"env_kwargs": {"map": "random"}, "seats": ["heuristic", "heuristic", "heuristic"]},
]


def tags(bundle: Any, state: Any, player: int) -> tuple[str, ...]:
    """The named filters ``state`` matches."""
    view = bundle.game.observe(state, player)
    out = []
    if view.room_agents:
        out.append("teammate_in_room")
    if view.room_bombs:
        out.append("bomb_in_room")
    if view.round >= 8:
        out.append("late")
    return tuple(out)


def questions(bundle: Any, state: Any, player: int, scenario: Scenario) -> list[QAItem]:
    """EC, ToM and JP items for the player to act."""
    from baselines.cbs import exhaustive_optimum

    game, text = bundle.game, bundle.text
    if state.over or state.turn != player:
        return []
    view = game.observe(state, player)
    base = f"bomb/s{scenario.seed}/t{state.time}/p{player}"
    context = context_text(bundle, state, player)
    make = ItemMaker(base, scenario, context)
    items: list[QAItem] = []

    n = view.num_bombs
    seen = sorted({i.bomb for i in view.intel})
    unseen = [b for b in range(n) if b not in seen]
    options = tuple(f"Bomb {b + 1}" for b in range(n))
    if seen and len(seen) <= n // 2:
        question, answers = "Which bombs have you inspected yourself so far?", tuple(seen)
    elif unseen and len(unseen) <= n // 2:
        question, answers = "Which bombs have you not inspected yourself yet?", tuple(unseen)
    else:
        question = ""
    if question and n >= 2:
        items.append(make("EC", "inspected_bombs", question, options, answers, "rules"))

    items += probe_items(bundle, state, player, scenario, base, limit=3)

    legal = list(game.legal_actions(state, player))
    if len(legal) >= 2:
        rounds = {}
        for a in legal:
            nxt = game.step(state, {player: a}, np.random.default_rng(0)).state
            r = (
                0
                if game.is_terminal(nxt) and nxt.score == view.max_score
                else exhaustive_optimum(game, nxt)
            )
            rounds[a] = float("inf") if r is None else float(r)
        best = min(rounds.values())
        top = [a for a in legal if rounds[a] == best]
        rest = [rounds[a] for a in legal if a not in top]
        if rest and min(rest) - best >= 1 and len(top) <= len(legal) // 2:
            names = [text.action_text(view, a) for a in legal]
            items.append(
                make(
                    "JP",
                    "best_action",
                    (
                        "Which action now lets the team defuse every bomb in the fewest rounds, "
                        "if everyone plays perfectly afterwards?"
                    ),
                    tuple(names),
                    tuple(legal.index(a) for a in top),
                    "exact_optimum",
                    details={
                        "rounds_left": {names[i]: rounds[a] for i, a in enumerate(legal)},
                        "privileged": True,
                    },
                )
            )
    return items
