"""CoordinationQA for CollabEscape: EC from the maze and the generators, ToM from the
partner's behaviour, JP from the exhaustive joint planner (exact over the killer's random moves).

Every item comes in a contrast set: twins that share the question and the options (the set's
keys, one per twin) and differ in one thing.

* **EC** (the context: the rules and the current state): ``partner_moves_to_gate``: the fewest
  moves from your partner's room to the exit gate (two passages are one-way; twins: the partner
  in other rooms); ``moves_to_generator``: your fewest moves to a generator that still needs
  fixing (twins: you in other rooms); ``killer_moves_to_you``: the killer's fewest moves to your
  room (twins: the killer in other rooms).
* **ToM** ``partner_next_room``: where the partner will be after its next decision. The partner
  plays by one rule of :data:`RULES` (repair, run, follow, wait; the family is stated, the rule
  is not); the context shows an earlier game it played by that rule, then the current situation.
  Twins: the same situation with the evidence of another rule
  (:mod:`~tom_envs.games.collab_capture.qa_partner`, shared with CollabCapture).
* **JP** ``best_action``: your part of the team's optimal joint action (highest escape
  probability, then fewest expected turns), keyed where exactly one action is best by 0.1 in
  probability or one expected turn (twins: the killer in other rooms).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from tom_envs.games.collab_capture import qa_partner
from tom_envs.games.collab_escape.bots import greedy_action
from tom_envs.games.collab_escape.rules import GATE, GENERATORS, PLAYER_NAMES, Action, next_room
from tom_envs.games.collab_escape.rules import ROOMS as CODED_ROOMS
from tom_envs.games.collab_escape.rules import SCENARIOS as STARTS
from tom_envs.games.collab_escape.text import action_text
from tom_envs.qa.generate import context_text
from tom_envs.qa.items import QAItem, Scenario, situation_set

GENERATOR_VERSION = 4

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


def _repair(game: Any, state: Any, seat: int) -> int:
    return greedy_action(game.observe(state, seat), game.maze)


def _run(game: Any, state: Any, seat: int) -> int:
    return qa_partner.farthest_from(game.maze, state.rooms[seat], state.killer,
                                    stay=int(Action.WAIT))  # fmt: skip


def _follow(game: Any, state: Any, seat: int) -> int:
    return qa_partner.step(game.maze, state.rooms[seat], state.rooms[1 - seat],
                           stay=int(Action.WAIT))  # fmt: skip


def _wait(game: Any, state: Any, seat: int) -> int:
    return int(Action.WAIT)


#: The partner rules ToM items name (the first is the partner-blind reasoner's default).
RULES: dict[str, qa_partner.Rule] = {
    "repair": _repair,
    "run": _run,
    "follow": _follow,
    "wait": _wait,
}

FAMILY = qa_partner.Family(
    rules=RULES,
    text=(
        "Your partner plays every game by one fixed rule, one of these: repair (fix the "
        "generator in its room if it needs fixing, else walk a shortest path to the nearest "
        "generator that does, and once the gate is open walk to the gate); run (move to the "
        "neighbouring room farthest from the killer, or wait if none is farther than its own); "
        "follow (step along a shortest path toward you); or wait (stay where it is)."
    ),
    me=_repair,
    action_text=action_text,
    mover="killer",
    names=PLAYER_NAMES,
    rooms=CODED_ROOMS,
)


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


def _moved(state: Any, seat: int, room: int) -> Any:
    """``state`` with ``seat`` in ``room`` (and not fixing: it did not fix there)."""
    rooms = list(state.rooms)
    rooms[seat] = room
    fixing = list(state.fixing)
    fixing[seat] = False
    return replace(state, rooms=tuple(rooms), fixing=tuple(fixing))


#: The key of a distance item when no path exists.
UNREACHABLE = 99


def _distance_text(d: Any) -> str:
    return "it cannot get there" if d == UNREACHABLE else str(d)


def questions(bundle: Any, state: Any, player: int, scenario: Scenario) -> list[QAItem]:
    """EC, ToM and JP contrast sets for ``player`` in ``state``."""
    game = bundle.game
    if game.is_terminal(state):
        return []
    maze = game.maze
    base = f"escape/{scenario.env_kwargs.get('scenario', 'default')}/s{scenario.seed}/t{state.turn}/p{player}"
    rng = np.random.default_rng([scenario.seed, state.turn, player, 31])
    me, mate = state.rooms[player], state.rooms[1 - player]
    free = [r for r in maze.rooms if r not in (me, mate, state.killer)]

    def ctx(st: Any) -> str:
        return context_text(bundle, st, player)

    def dist(src: int, dst: int) -> int:
        d = maze.distance(src, dst)
        return UNREACHABLE if d is None else d

    items: list[QAItem] = []
    mate_at = [(f"partner{r}", _moved(state, 1 - player, r)) for r in free if r != GATE]
    items += situation_set(
        base, "EC", "partner_moves_to_gate",
        "Once both generators are repaired, what is the fewest number of moves your partner "
        f"needs from its current room to reach the exit gate in room {GATE}?",
        "rules", scenario, mate_at, lambda st: dist(st.rooms[1 - player], GATE), _distance_text,
        ctx, rng,
    )  # fmt: skip
    broken = [g for g, f in zip(GENERATORS, state.fixes, strict=True)
              if f < game.config.fixes_needed]  # fmt: skip
    if broken:
        target = broken[(scenario.seed + state.turn) % len(broken)]
        me_at = [(f"me{r}", _moved(state, player, r)) for r in free if r != target]
        items += situation_set(
            base, "EC", "moves_to_generator",
            "What is the fewest number of moves that takes you from your current room to the "
            f"generator in room {target}?",
            "rules", scenario, me_at, lambda st: dist(st.rooms[player], target), _distance_text,
            ctx, rng,
        )  # fmt: skip
    killer_at = [(f"killer{r}", replace(state, killer=r)) for r in free]
    items += situation_set(
        base, "EC", "killer_moves_to_you",
        "Along the passages (some are one-way), what is the fewest number of moves the killer "
        "needs to reach your room?",
        "rules", scenario, killer_at, lambda st: dist(st.killer, me), _distance_text, ctx, rng,
    )  # fmt: skip
    question = (
        "Assume your partner will also play its best part of the team's plan. Which action "
        "should you take now to give the team the best chance to escape, as soon as possible?"
    )
    items += qa_partner.partner_and_plan_sets(
        bundle, state, player, scenario, base, FAMILY, next_room, question, killer_at, ctx, rng,
    )  # fmt: skip
    return items


def blind(bundle: Any, state: Any, item: QAItem) -> int:
    """The partner-blind reasoner on a ToM twin: where repairing takes the partner."""
    return qa_partner.blind(FAMILY, bundle, state, item, next_room)
