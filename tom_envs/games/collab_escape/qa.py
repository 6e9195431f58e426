"""CoordinationQA for CollabEscape: EC from the maze and the generators, ToM from the
partner's behaviour, JP from the exhaustive joint planner (exact over the killer's random moves).

The context is the rules, the turns played so far (every player's choice and the killer's move)
and the current state.

* **EC** ``partner_moves_to_gate``: the fewest moves from your partner's room to the exit gate
  along the passages (two are one-way), options 0..6.
  ``moves_to_generator``: your fewest moves to a generator that still needs fixing;
  ``killer_next_rooms``: which rooms the killer can enter with its next move (one-way passages).
* **ToM** ``partner_next_room``: where the partner will be after its next action, keyed by the
  bot that played its seat (greedy or optimal, never stated); kept only when the partner's past
  choices in the history rule out every model of a partner that disagrees
  (:mod:`~tom_envs.games.collab_capture.qa_partner`, shared with CollabCapture).
* **JP** ``best_action``: your part of the team's optimal joint action (highest escape
  probability, then fewest expected turns); kept when it beats every other option by 0.1 in
  probability or one expected turn.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from tom_envs.games.collab_capture import qa_partner
from tom_envs.games.collab_escape.bots import greedy_action, state_from_view
from tom_envs.games.collab_escape.rules import GATE, GENERATORS, PLAYER_NAMES, next_room
from tom_envs.games.collab_escape.rules import SCENARIOS as STARTS
from tom_envs.games.collab_escape.text import action_text
from tom_envs.games.joint_planner import planner_for
from tom_envs.qa.items import ItemMaker, QAItem, Scenario
from tom_envs.qa.joint import best_action_item

GENERATOR_VERSION = 3

KINDS = {
    "killer_adjacent": "the killer is one move away from you",
    "generator_half_fixed": "a generator has been fixed once and needs one more fix",
    "both_repaired": "both generators are repaired: only the escape is left",
}

SCENARIOS: list[dict[str, Any]] = [
    {"env_kwargs": {"scenario": sc}, "seats": seats}
    for sc in STARTS
    for seats in qa_partner.SEATINGS
]

#: The partner models the ToM answerability check considers (see ``qa_partner``).
MODELS: dict[str, qa_partner.Model] = {
    "greedy": lambda bundle, state, seat: frozenset(
        {greedy_action(bundle.game.observe(state, seat), bundle.game.maze)}
    ),
    "optimal": qa_partner.optimal_model,
}


def tags(bundle: Any, state: Any, player: int) -> tuple[str, ...]:
    """The named filters ``state`` matches."""
    game = bundle.game
    out = []
    if state.killer in game.maze.out(state.rooms[player]):
        out.append("killer_adjacent")
    if any(0 < f < game.config.fixes_needed for f in state.fixes):
        out.append("generator_half_fixed")
    if all(f >= game.config.fixes_needed for f in state.fixes):
        out.append("both_repaired")
    return tuple(out)


def history_lines(bundle: Any, scenario: Scenario) -> list[str]:
    """One line per turn played: both players' choices and the killer's move."""
    return qa_partner.turn_lines(bundle, scenario, PLAYER_NAMES, action_text, "killer")


def context(bundle: Any, state: Any, player: int, scenario: Scenario) -> str:
    """The asked player's rules prompt, the turns played so far and its current observation."""
    return qa_partner.context_with_history(
        bundle, state, player, history_lines(bundle, scenario)
    )


def questions(bundle: Any, state: Any, player: int, scenario: Scenario) -> list[QAItem]:
    """EC, ToM and JP items for ``player`` in ``state``."""

    game = bundle.game
    maze = game.maze
    base = f"escape/{scenario.env_kwargs.get('scenario', 'default')}/s{scenario.seed}/t{state.turn}/p{player}"
    make = ItemMaker(base, scenario, context(bundle, state, player, scenario))
    items: list[QAItem] = []
    d = maze.distance(state.rooms[1 - player], GATE)
    if d is not None and d <= 6:
        items.append(
            make(
                "EC",
                "partner_moves_to_gate",
                (
                    f"Once both generators are repaired, what is the fewest number of moves your "
                    f"partner needs from its current room to reach the exit gate in room {GATE}?"
                ),
                tuple(str(k) for k in range(7)),
                (d,),
                "rules",
            )
        )
    broken = [
        g for g, f in zip(GENERATORS, state.fixes, strict=True) if f < game.config.fixes_needed
    ]
    if broken:
        target = broken[(scenario.seed + state.turn) % len(broken)]
        d = maze.distance(state.rooms[player], target)
        if d is not None and d <= 6:
            items.append(
                make(
                    "EC",
                    "moves_to_generator",
                    (
                        "What is the fewest number of moves that takes you from your current room "
                        f"to the generator in room {target}?"
                    ),
                    tuple(str(k) for k in range(7)),
                    (d,),
                    "rules",
                )
            )
    rooms = sorted(maze.out(state.killer))
    if len(rooms) >= 2:
        others = [r for r in maze.rooms if r not in rooms and r != state.killer]
        rng = np.random.default_rng([scenario.seed, state.turn, player, 23])
        extra = [
            int(r)
            for r in rng.choice(others, size=min(len(others), 5 - len(rooms) + 1), replace=False)
        ]
        shown = sorted({*rooms[:2], *extra})
        items.append(
            make(
                "EC",
                "killer_next_rooms",
                "Which of these rooms can the killer enter with its next move?",
                tuple(f"Room {r}" for r in shown),
                tuple(i for i, r in enumerate(shown) if r in rooms),
                "rules",
            )
        )
    item = qa_partner.partner_room_item(bundle, state, player, scenario, make, next_room)
    if item is not None:
        items.append(item)
    item = best_action_item(
        bundle, state, player, scenario, planner_for(type(game), game.config), base,
        "Assume your partner will also play its best part of the team's plan. Which action "
        "should you take now to give the team the best chance to escape, as soon as possible?",
    )  # fmt: skip
    if item is not None:  # the shared builder's context has no history: give it this one
        items.append(replace(item, context=make.context, answers=tuple(sorted(item.answers))))
    return items


def answerable(bundle: Any, state: Any, item: QAItem) -> bool:
    """Recompute the key from the state rebuilt from the asked player's view (everything but
    chance is visible): EC from the maze, JP from the exact planner, ToM from the partner's
    choices in the history (``qa_partner.partner_room_answerable``)."""
    game = bundle.game
    view = game.observe(state, item.scenario.player)
    visible = state_from_view(view)
    if visible != state:
        return False
    if item.type == "ToM":
        return qa_partner.partner_room_answerable(bundle, visible, item, MODELS, next_room)
    if item.type == "JP":
        return qa_partner.best_action_answerable(bundle, visible, item)
    return True
