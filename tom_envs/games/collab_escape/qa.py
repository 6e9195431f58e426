"""CoordinationQA for CollabEscape: EC from the maze and the generators, ToM from the greedy
partner's policy, JP from the exhaustive joint planner (exact over the killer's random moves).

* **EC** ``partner_moves_to_gate``: the fewest moves from your partner's room to the exit gate
  along the passages (two are one-way), options 0..6.
* **ToM** ``partner_next_action``: the greedy partner's next action (repair the nearest
  generator, then run for the gate; stateless, so exact).
* **JP** ``best_action``: your part of the team's optimal joint action (highest escape
  probability, then fewest expected turns); kept when it beats every other option by 0.1 in
  probability or one expected turn.
"""

from __future__ import annotations

from typing import Any

from tom_envs.games.collab_escape.bots import BOT_DESCRIPTIONS
from tom_envs.games.collab_escape.rules import GATE
from tom_envs.games.collab_escape.rules import SCENARIOS as STARTS
from tom_envs.qa.generate import context_text
from tom_envs.qa.items import ItemMaker, QAItem, Scenario
from tom_envs.qa.joint import team_items

GENERATOR_VERSION = 1

KINDS = {
    "killer_adjacent": "the killer is one move away from you",
    "generator_half_fixed": "a generator has been fixed once and needs one more fix",
    "both_repaired": "both generators are repaired: only the escape is left",
}

SCENARIOS: list[dict[str, Any]] = [
    {"env_kwargs": {"scenario": sc}, "seats": seats}
    for sc in STARTS
    for seats in (["random", "greedy"], ["optimal", "greedy"], ["greedy", "greedy"])
]


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


def questions(bundle: Any, state: Any, player: int, scenario: Scenario) -> list[QAItem]:
    """EC, ToM and JP items for ``player`` in ``state``."""
    game = bundle.game
    base = f"escape/{scenario.env_kwargs.get('scenario', 'default')}/s{scenario.seed}/t{state.turn}/p{player}"
    make = ItemMaker(base, scenario, context_text(bundle, state, player))
    items: list[QAItem] = []
    d = game.maze.distance(state.rooms[1 - player], GATE)
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
    stateless = {"greedy": BOT_DESCRIPTIONS["greedy"]}  # the optimal bot plans: not a ToM target
    items += team_items(
        bundle,
        state,
        player,
        scenario,
        base,
        stateless,
        "to give the team the best chance to escape, as soon as possible",
    )
    return items
