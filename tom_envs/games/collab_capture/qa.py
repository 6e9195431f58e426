"""CoordinationQA for CollabCapture: EC from the maze and the doors, ToM from the partner's
behaviour, JP from the exhaustive joint planner (``tom_envs/games/joint_planner.py``).

Every item comes in a contrast set: twins that share the question and the options (the set's
keys, one per twin) and differ in one thing.

* **EC** (the context: the rules and the current state): ``moves_to_thief`` /
  ``partner_moves_to_thief``: the fewest moves from your (your partner's) room to the thief's
  room through the doors open now (twins: the thief in other rooms); ``rooms_within_two_moves``:
  how many other rooms you can reach in two moves (twins: you in other rooms).
* **ToM** ``partner_next_room``: where the partner will be after its next decision. The partner
  plays by one rule of :data:`RULES` (chase, open, follow, hold; the family is stated, the rule
  is not); the context shows an earlier game it played by that rule, then the current situation.
  Twins: the same situation with the evidence of another rule
  (:mod:`~tom_envs.games.collab_capture.qa_partner`).
* **JP** ``best_action``: your part of the team's optimal joint action (least expected turns to
  the capture), keyed where exactly one action is best by at least one turn (twins: the thief in
  other rooms, the context: the rules and the current state).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from tom_envs.games.collab_capture import qa_partner
from tom_envs.games.collab_capture.bots import greedy_action
from tom_envs.games.collab_capture.rules import (
    DOORS,
    MAZE,
    PLAYER_NAMES,
    ROOMS,
    SCENARIOS,
    Action,
    closed_doors,
    next_room,
)
from tom_envs.games.collab_capture.text import action_text
from tom_envs.qa.generate import context_text
from tom_envs.qa.items import QAItem, Scenario, situation_set

GENERATOR_VERSION = 5

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


def _chase(game: Any, state: Any, seat: int) -> int:
    return greedy_action(game.observe(state, seat))


def _open(game: Any, state: Any, seat: int) -> int:
    """Go to the button room of a closed door (the nearest; ties: door order) and press it;
    with every door open, chase."""
    closed = closed_doors(state.doors)
    here = state.rooms[seat]
    shut = [d for d, is_open in zip(DOORS, state.doors, strict=True) if not is_open]
    if any(d.button == here for d in shut):
        return int(Action.PRESS)
    reach = [(MAZE.distance(here, d.button, closed), i, d) for i, d in enumerate(shut)]
    reach = [r for r in reach if r[0] is not None]
    if not reach:
        return _chase(game, state, seat)
    _, _, door = min(reach)
    return qa_partner.step(MAZE, here, door.button, closed, int(Action.STAY))


def _follow(game: Any, state: Any, seat: int) -> int:
    closed = closed_doors(state.doors)
    return qa_partner.step(MAZE, state.rooms[seat], state.rooms[1 - seat], closed,
                           int(Action.STAY))  # fmt: skip


def _hold(game: Any, state: Any, seat: int) -> int:
    return int(Action.STAY)


#: The partner rules ToM items name (the first is the partner-blind reasoner's default).
RULES: dict[str, qa_partner.Rule] = {
    "chase": _chase,
    "open": _open,
    "follow": _follow,
    "hold": _hold,
}

FAMILY = qa_partner.Family(
    rules=RULES,
    text=(
        "Your partner plays every game by one fixed rule, one of these: chase (step along a "
        "shortest path through the open doors toward the thief's room; stay if there is none); "
        "open (while a door is closed, go to the room of its button, the nearest first, and "
        "press it; with every door open, chase); follow (step along a shortest path toward "
        "you); or hold (stay in its room)."
    ),
    me=_chase,
    action_text=action_text,
    mover="thief",
    names=PLAYER_NAMES,
    rooms=ROOMS,
)


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


def _distance_text(d: Any) -> str:
    return "unreachable with the doors as they are" if d == UNREACHABLE else str(d)


#: The key of a distance item when no path through the open doors exists.
UNREACHABLE = 99


def questions(bundle: Any, state: Any, player: int, scenario: Scenario) -> list[QAItem]:
    """EC, ToM and JP contrast sets for ``player`` in ``state``."""
    game = bundle.game
    if game.is_terminal(state):
        return []
    base = f"capture/{scenario.env_kwargs.get('scenario', 'default')}/s{scenario.seed}/t{state.turn}/p{player}"
    rng = np.random.default_rng([scenario.seed, state.turn, player, 29])
    closed = closed_doors(state.doors)
    me, mate = state.rooms[player], state.rooms[1 - player]
    thief_at = [(f"thief{r}", replace(state, thief=r)) for r in ROOMS if r not in (me, mate)]

    def ctx(st: Any) -> str:
        return context_text(bundle, st, player)

    def moves(seat: int) -> Any:
        def key(st: Any) -> int:
            d = MAZE.distance(st.rooms[seat], st.thief, closed)
            return UNREACHABLE if d is None else d

        return key

    items: list[QAItem] = []
    for kind, who, seat in (
        ("moves_to_thief", "you", player),
        ("partner_moves_to_thief", "your partner", 1 - player),
    ):
        items += situation_set(
            base, "EC", kind,
            "Through the doors as they are now, what is the fewest number of moves that takes "
            f"{who} to the thief's current room?",
            "rules", scenario, thief_at, moves(seat), _distance_text, ctx, rng,
        )  # fmt: skip
    mine_at = []
    for r in ROOMS:
        if r not in (mate, state.thief):
            rooms = (r, mate) if player == 0 else (mate, r)
            mine_at.append((f"me{r}", replace(state, rooms=rooms)))
    items += situation_set(
        base, "EC", "rooms_within_two_moves",
        "Through the doors as they are now, how many other rooms can you reach in at most two "
        "moves?",
        "rules", scenario, mine_at,
        lambda st: _reachable_within(st.rooms[player], 2, closed), str, ctx, rng,
    )  # fmt: skip
    question = (
        "Assume your partner will also play its best part of the team's plan. Which action "
        "should you take now so that the team catches the thief as soon as possible?"
    )
    items += qa_partner.partner_and_plan_sets(
        bundle, state, player, scenario, base, FAMILY, next_room, question, thief_at, ctx, rng,
    )  # fmt: skip
    return items


def blind(bundle: Any, state: Any, item: QAItem) -> int:
    """The partner-blind reasoner on a ToM twin: where chasing takes the partner."""
    return qa_partner.blind(FAMILY, bundle, state, item, next_room)
