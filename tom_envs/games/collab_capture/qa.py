"""CoordinationQA for CollabCapture: EC from the maze and the doors, ToM from the greedy
partner's policy, JP from the exhaustive joint planner (``baselines/joint_planner.py``).

* **EC** ``moves_to_thief``: the fewest moves from your room to the thief's current room through
  the doors open now (options 1..6 and "unreachable").
* **ToM** ``partner_next_action``: the greedy partner's next move (a shortest-path step toward
  the thief; stateless, so exact).
* **JP** ``best_action``: your part of the team's optimal joint action (least expected turns to
  the capture); kept when it is at least one turn better than every other option.
"""

from __future__ import annotations

from typing import Any

from tom_envs.games.collab_capture.bots import BOT_DESCRIPTIONS
from tom_envs.games.collab_capture.rules import MAZE, closed_doors
from tom_envs.games.collab_capture.rules import SCENARIOS as DOOR_SCENARIOS
from tom_envs.qa.generate import context_text
from tom_envs.qa.items import ItemMaker, QAItem, Scenario
from tom_envs.qa.joint import team_items

GENERATOR_VERSION = 1

KINDS = {
    "blocked_path": "a closed door lies on every shortest path from you to the thief",
    "thief_adjacent": "the thief is one move away from you",
    "partner_adjacent_thief": "the thief is one move away from your partner",
}

SCENARIOS: list[dict[str, Any]] = [
    {"env_kwargs": {"scenario": sc}, "seats": seats}
    for sc in DOOR_SCENARIOS
    for seats in (["random", "greedy"], ["optimal", "greedy"], ["greedy", "greedy"])
]


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


def questions(bundle: Any, state: Any, player: int, scenario: Scenario) -> list[QAItem]:
    """EC, ToM and JP items for ``player`` in ``state``."""
    base = f"capture/{scenario.env_kwargs.get('scenario', 'default')}/s{scenario.seed}/t{state.turn}/p{player}"
    make = ItemMaker(base, scenario, context_text(bundle, state, player))
    items: list[QAItem] = []
    d = MAZE.distance(state.rooms[player], state.thief, closed_doors(state.doors))
    opts = ["1", "2", "3", "4", "5", "6", "unreachable with the doors as they are"]
    if d != 0 and (d is None or d <= 6):
        items.append(
            make(
                "EC",
                "moves_to_thief",
                (
                    "Through the doors as they are now, what is the fewest number of moves that "
                    "takes you from your room to the thief's current room?"
                ),
                tuple(opts),
                (6 if d is None else d - 1,),
                "rules",
            )
        )
    stateless = {"greedy": BOT_DESCRIPTIONS["greedy"]}  # the optimal bot plans: not a ToM target
    items += team_items(
        bundle,
        state,
        player,
        scenario,
        base,
        stateless,
        "so that the team catches the thief as soon as possible",
    )
    return items
