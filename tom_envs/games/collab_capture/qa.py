"""CoordinationQA for CollabCapture: EC from the maze and the doors, ToM from the partner's
behaviour, JP from the exhaustive joint planner (``tom_envs/games/joint_planner.py``).

The context is the rules, the turns played so far (every player's choice and the thief's move)
and the current state.

* **EC** ``moves_to_thief`` / ``partner_moves_to_thief``: the fewest moves from your (your
  partner's) room to the thief's room through the doors open now (options 1..6, "unreachable");
  ``rooms_within_two_moves``: how many other rooms you can reach in two moves.
* **ToM** ``partner_next_room``: where the partner will be after its next action, keyed by the
  bot that played its seat (greedy or optimal, never stated); kept only when the partner's past
  choices in the history rule out every model of a partner that disagrees
  (:mod:`~tom_envs.games.collab_capture.qa_partner`).
* **JP** ``best_action``: your part of the team's optimal joint action (least expected turns to
  the capture); kept when it is at least one turn better than every other option.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tom_envs.games.collab_capture import qa_partner
from tom_envs.games.collab_capture.bots import greedy_action, state_from_view
from tom_envs.games.collab_capture.rules import (
    MAZE,
    PLAYER_NAMES,
    SCENARIOS,
    closed_doors,
    next_room,
)
from tom_envs.games.collab_capture.text import action_text
from tom_envs.games.joint_planner import planner_for
from tom_envs.qa.items import ItemMaker, QAItem, Scenario
from tom_envs.qa.joint import best_action_item

GENERATOR_VERSION = 4

KINDS = {
    "blocked_path": "a closed door lies on every shortest path from you to the thief",
    "thief_adjacent": "the thief is one move away from you",
    "partner_adjacent_thief": "the thief is one move away from your partner",
}

SCENARIOS: list[dict[str, Any]] = [
    {"env_kwargs": {"scenario": sc}, "seats": seats}
    for sc in SCENARIOS
    for seats in qa_partner.SEATINGS
]

#: The partner models the ToM answerability check considers (see :mod:`.qa_partner`).
MODELS: dict[str, qa_partner.Model] = {
    "greedy": lambda bundle, state, seat: frozenset(
        {greedy_action(bundle.game.observe(state, seat))}
    ),
    "optimal": qa_partner.optimal_model,
}


def tags(bundle: Any, state: Any, player: int) -> tuple[str, ...]:
    """The named filters ``state`` matches."""
    out = []
    closed = closed_doors(state.doors)
    me, other = state.rooms[player], state.rooms[1 - player]
    open_d, free_d = MAZE.distance(me, state.thief, closed), MAZE.distance(me, state.thief)
    if free_d is not None and (open_d is None or open_d > free_d):
        out.append("blocked_path")
    if open_d == 1:
        out.append("thief_adjacent")
    if MAZE.distance(other, state.thief, closed) == 1:
        out.append("partner_adjacent_thief")
    return tuple(out)


def _reachable_within(room: int, steps: int, closed: Any) -> int:
    """Rooms (other than ``room``) reachable in at most ``steps`` moves through open doors."""
    dist = {room: 0}
    frontier = [room]
    for d in range(1, steps + 1):
        nxt = []
        for r in frontier:
            for n in MAZE.neighbors(r, closed):
                if n not in dist:
                    dist[n] = d
                    nxt.append(n)
        frontier = nxt
    return len(dist) - 1


def history_lines(bundle: Any, scenario: Scenario) -> list[str]:
    """One line per turn played: both players' choices and the thief's move."""
    return qa_partner.turn_lines(bundle, scenario, PLAYER_NAMES, action_text, "thief")


def context(bundle: Any, state: Any, player: int, scenario: Scenario) -> str:
    """The asked player's rules prompt, the turns played so far and its current observation."""
    return qa_partner.context_with_history(
        bundle, state, player, history_lines(bundle, scenario)
    )


def questions(bundle: Any, state: Any, player: int, scenario: Scenario) -> list[QAItem]:
    """EC, ToM and JP items for ``player`` in ``state``."""

    game = bundle.game
    base = f"capture/{scenario.env_kwargs.get('scenario', 'default')}/s{scenario.seed}/t{state.turn}/p{player}"
    make = ItemMaker(base, scenario, context(bundle, state, player, scenario))
    items: list[QAItem] = []
    closed = closed_doors(state.doors)
    opts = ["1", "2", "3", "4", "5", "6", "unreachable with the doors as they are"]
    for kind, who, room in (
        ("moves_to_thief", "you", state.rooms[player]),
        ("partner_moves_to_thief", "your partner", state.rooms[1 - player]),
    ):
        d = MAZE.distance(room, state.thief, closed)
        if d != 0 and (d is None or d <= 6):
            items.append(
                make(
                    "EC",
                    kind,
                    (
                        "Through the doors as they are now, what is the fewest number of moves "
                        f"that takes {who} to the thief's current room?"
                    ),
                    tuple(opts),
                    (6 if d is None else d - 1,),
                    "rules",
                )
            )
    n = _reachable_within(state.rooms[player], 2, closed)
    items.append(
        make(
            "EC",
            "rooms_within_two_moves",
            (
                "Through the doors as they are now, how many other rooms can you reach in at most "
                "two moves?"
            ),
            tuple(str(k) for k in range(1, 9)),
            (n - 1,),
            "rules",
        )
    )
    item = qa_partner.partner_room_item(bundle, state, player, scenario, make, next_room)
    if item is not None:
        items.append(item)
    item = best_action_item(
        bundle, state, player, scenario, planner_for(type(game), game.config), base,
        "Assume your partner will also play its best part of the team's plan. Which action "
        "should you take now so that the team catches the thief as soon as possible?",
    )  # fmt: skip
    if item is not None:  # the shared builder's context has no history: give it this one
        items.append(replace(item, context=make.context, answers=tuple(sorted(item.answers))))
    return items


def answerable(bundle: Any, state: Any, item: QAItem) -> bool:
    """Recompute the key from the state rebuilt from the asked player's view (the game is fully
    observable): EC from the maze and doors, JP from the exact planner, ToM from the partner's
    choices in the history (:func:`~.qa_partner.partner_room_answerable`)."""
    view = bundle.game.observe(state, item.scenario.player)
    visible = state_from_view(view)
    if visible != state:
        return False
    if item.type == "ToM":
        return qa_partner.partner_room_answerable(bundle, visible, item, MODELS, next_room)
    if item.type == "JP":
        return qa_partner.best_action_answerable(bundle, visible, item)
    return True
