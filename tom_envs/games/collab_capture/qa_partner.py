"""Partner-prediction ToM items for the two-player room-maze games (CollabCapture, CollabEscape).

The question put to a player is where its partner will be after the partner's next action. The
partner's policy is never stated: the context shows the turns played so far (every room, every
choice), and the asker has to infer from them how the partner plays.

* **Key** (:func:`partner_room_item`): the room the bot that actually played the partner's seat
  (``greedy`` or ``optimal``) moves to, computed by running that bot on the state.
* **Answerability** (:func:`partner_room_answerable`): recomputed from the context only. The two
  goal-directed ways a partner plays these games are the models (the shortest-path greedy bot and
  the team-optimal planner, whose part may be any optimal joint action's). A model is kept when
  every choice the partner made in the history is one it could have made; the item is answerable
  when at least one model is kept, the partner has made at least one choice, every kept model
  puts the partner in the same room, and that room is the key.

Nothing here is game logic: each game supplies its models, its ``next_room`` rule and its history
lines. CollabEscape imports this module from the CollabCapture package, where it was written
first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gymnasium.utils import seeding

from tom_envs.games.joint_planner import planner_for
from tom_envs.qa.generate import bot_action
from tom_envs.qa.items import ItemMaker, QAItem, Scenario

#: A partner model: ``(bundle, state, seat) -> the actions it may take there``.
Model = Callable[[Any, Any, int], frozenset[int]]

#: The ToM question (no policy is stated; the history shows how the partner plays).
QUESTION = (
    "Judging by your partner's choices so far, where will your partner be right after its next "
    "decision?"
)


#: The seatings scenarios are played with: every pairing of a random, a greedy and an optimal
#: player that has at least one scripted seat (the partner whose behaviour ToM items ask about).
SEATINGS: tuple[list[str], ...] = (
    ["random", "greedy"],
    ["random", "optimal"],
    ["greedy", "random"],
    ["optimal", "random"],
    ["optimal", "greedy"],
    ["greedy", "greedy"],
    ["greedy", "optimal"],
    ["optimal", "optimal"],
)


def states_before(scenario: Scenario, bundle: Any) -> list[Any]:
    """The states before each recorded joint step, then the scenario's state (the last)."""
    game = bundle.game
    rng, _ = seeding.np_random(scenario.seed)
    state = game.initial_state(rng)
    out = [state]
    messages = list(scenario.messages) + [{}] * (len(scenario.actions) - len(scenario.messages))
    for actions, msgs in zip(scenario.actions, messages, strict=True):
        state = game.step(state, actions, rng, msgs or None).state
        out.append(state)
    return out


def optimal_model(bundle: Any, state: Any, seat: int) -> frozenset[int]:
    """The seat's part of every optimal joint action (``tom_envs/games/joint_planner.py``)."""

    game = bundle.game
    planner = planner_for(type(game), game.config)
    return frozenset(int(j[seat]) for j in planner.optimal_joint_actions(state))


def consistent_models(
    bundle: Any, scenario: Scenario, models: Mapping[str, Model], seat: int
) -> list[str]:
    """The models under which every past choice of ``seat`` (shown in the context) was possible."""
    states = states_before(scenario, bundle)
    keep = []
    for name, model in models.items():
        if all(
            int(acts[seat]) in model(bundle, st, seat)
            for st, acts in zip(states, scenario.actions, strict=False)
            if seat in acts
        ):
            keep.append(name)
    return keep


def partner_room_item(
    bundle: Any,
    state: Any,
    player: int,
    scenario: Scenario,
    make: ItemMaker,
    next_room: Callable[[int, int], int],
) -> QAItem | None:
    """ToM ``partner_next_room``: the room the partner's own bot takes it to next (options: its
    room and the rooms it can move to, by room number)."""
    game = bundle.game
    other = 1 - player
    partner = scenario.seats[other] if len(scenario.seats) == 2 else ""
    if partner not in ("greedy", "optimal") or not scenario.actions:
        return None
    here = state.rooms[other]
    rooms = sorted({next_room(a, here) for a in game.legal_actions(state, other)})
    if len(rooms) < 2:
        return None
    action = bot_action(bundle, state, other, partner, scenario.seed)
    target = next_room(action, here)
    return make(
        "ToM",
        "partner_next_room",
        QUESTION,
        tuple(f"Room {r}" for r in rooms),
        (rooms.index(target),),
        "partner_policy",
        details={"partner": partner, "rooms": rooms},
    )


def partner_room_answerable(
    bundle: Any,
    state: Any,
    item: QAItem,
    models: Mapping[str, Model],
    next_room: Callable[[int, int], int],
) -> bool:
    """The key, recomputed from the history the context shows (see the module docstring)."""
    other = 1 - item.scenario.player
    if not any(other in acts for acts in item.scenario.actions):
        return False
    kept = consistent_models(bundle, item.scenario, models, other)
    if not kept:
        return False
    here = state.rooms[other]
    predicted = {next_room(a, here) for name in kept for a in models[name](bundle, state, other)}
    if len(predicted) != 1:
        return False
    rooms = item.details["rooms"]
    keyed = [rooms[a] for a in _unarranged(item)]
    return keyed == sorted(predicted)


def _unarranged(item: QAItem) -> tuple[int, ...]:
    """The item's answers in the option order the game wrote (before balancing)."""
    order = item.details.get("order")
    if order is None:
        return item.answers
    return tuple(sorted(order[a] for a in item.answers))


def turn_lines(
    bundle: Any,
    scenario: Scenario,
    names: Sequence[str],
    action_text: Callable[[int, int], str],
    mover: str,
) -> list[str]:
    """One line per turn played: both players' choices and the ``mover``'s move (the thief in
    Capture, the killer in Escape: an attribute of the state holding its room)."""
    states = states_before(scenario, bundle)
    out = []
    for t, acts in enumerate(scenario.actions):
        before, after = states[t], states[t + 1]
        chose = "; ".join(
            f'{names[p]} chose "{action_text(acts[p], before.rooms[p])}"' for p in (0, 1)
        )
        out.append(
            f"Turn {t + 1}: {chose}; the {mover} went from room {getattr(before, mover)} to room "
            f"{getattr(after, mover)}."
        )
    return out


def context_with_history(bundle: Any, state: Any, player: int, lines: Sequence[str]) -> str:
    """The asked player's rules prompt, the turns played so far and its current observation."""
    view = bundle.game.observe(state, player)
    text = bundle.text
    parts = [text.rules_prompt(view), history_block(lines), text.observation_text(view)]
    return "\n\n".join(p for p in parts if p)


def history_block(lines: Sequence[str]) -> str:
    """The turns played so far, one line each, under a heading ("" when none were played)."""
    if not lines:
        return ""
    return "Turns played so far, oldest first:\n" + "\n".join(lines)


def best_action_answerable(bundle: Any, visible: Any, item: QAItem) -> bool:
    """JP: the exact planner, run on ``visible`` (the state rebuilt from the asked player's
    view), keys the same set of options (compared as sets: the shared builder may list tied
    answers out of order)."""
    from tom_envs.qa.joint import best_action_item

    game = bundle.game
    planner = planner_for(type(game), game.config)
    fresh = best_action_item(
        bundle, visible, item.scenario.player, item.scenario, planner, "check", item.question
    )
    return fresh is not None and sorted(fresh.answers) == list(_unarranged(item))
