"""CoordinationQA for bomb defusal: EC from the player's own observations and the team's chat,
ToM from what a teammate did, saw and was told, JP from the exhaustive optimum
(``tom_envs.games.bomb_defusal.planner.exhaustive_optimum``: breadth-first search over the joint state).

The context is the rules, then every observation the asked player has had so far, each followed
by the message the player itself sent that turn (the game shows one observation per turn; what a
player knows comes from all of them).

* **EC** ``inspected_bombs``: which bombs you have inspected yourself, or which you have not,
  whichever set is the smaller; several letters may be right.
  ``lacks_cutter``: which player holds no cutter for the next phase of a bomb whose remaining
  sequence you know (your own inspection or a teammate's message, combined with the tools in the
  rules); ``moves_to_bomb``: the fewest moves from your room to the room of a bomb whose place you
  know (the map in the rules). Both are kept only when what your observations and the chat tell
  you is the truth (the game's epistemic tracker, built from your own perceptions, holds the
  current value).
* **ToM** ``teammate_learned`` / ``teammate_not_learned``: which of these bombs' phase order a
  named teammate has learned by now (or has not). Keyed by the game's epistemic tracker (the
  teammate's own perceptions); an option is shown only when the asked player can tell from the
  context: the teammate has learned it if it announced the sequence itself or had already taken
  its turn after someone did; it cannot have learned it if no such message reached it and it was
  never in the bomb's room (every teammate's room is shown at every observation).
* **JP** ``best_action``: your action after which the team can finish in the fewest rounds; kept
  when it saves at least one round over every other option and the key does not change when the
  sequences you do not know (neither inspected nor told, as they are now) are drawn afresh
  (``answerable``).

EC and ToM items that the fact lookup of :mod:`tom_envs.qa.shortcuts` would answer (an option
printed in a context line that shares two words with the question) are not written.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from tom_envs.games.bomb_defusal.planner import exhaustive_optimum
from tom_envs.games.bomb_defusal.view import BombFact, RoomFact
from tom_envs.qa.items import ItemMaker, QAItem, Scenario
from tom_envs.qa.shortcuts import lookup_pick

GENERATOR_VERSION = 3

KINDS = {
    "teammate_in_room": "a teammate shares your room",
    "bomb_in_room": "an active bomb is in your room",
    "late": "round 8 or later",
}

SCENARIOS: list[dict[str, Any]] = [
    {"env_kwargs": {}, "seats": ["heuristic", "heuristic", "heuristic"]},
    {"env_kwargs": {}, "seats": ["random", "heuristic", "heuristic"]},
    {"env_kwargs": {"map": "random"}, "seats": ["heuristic", "heuristic", "heuristic"]},
    {"env_kwargs": {}, "seats": ["heuristic", "random", "heuristic"]},
    {"env_kwargs": {"map": "random"}, "seats": ["heuristic", "heuristic", "random"]},
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


def history_context(bundle: Any, scenario: Scenario, player: int) -> str:
    """The rules prompt, then every observation the asked player has had so far, in order, each
    followed by the message the player sent that turn: the player's own history (the game shows
    one observation at a time; what a player knows comes from all of them)."""
    from gymnasium.utils import seeding

    game, text = bundle.game, bundle.text
    rng, _ = seeding.np_random(scenario.seed)
    state = game.initial_state(rng)
    seen: list[str] = []
    messages = list(scenario.messages) + [{}] * (len(scenario.actions) - len(scenario.messages))
    for actions, msgs in zip(scenario.actions, messages, strict=True):
        if player in actions:
            obs = text.observation_text(game.observe(state, player))
            if msgs and msgs.get(player):
                obs += f'\nYou sent to your teammates: "{msgs[player]}"'
            seen.append(obs)
        state = game.step(state, actions, rng, msgs or None).state
    view = game.observe(state, player)
    seen.append(text.observation_text(view))
    past = "\n\n".join(f"[Observation {i + 1}]\n{o}" for i, o in enumerate(seen))
    return f"{text.rules_prompt(view)}\n\nYour observations so far, oldest first:\n\n{past}"


# ------------------------------------------------------------------ what the asked player can tell
def believed_room(state: Any, player: int, bomb: int) -> int | None:
    """The room index the asked player places ``bomb`` in, from its own perceptions (its view,
    its intel, the chat), or ``None`` when it cannot place it (or two places disagree)."""
    mind = state.minds.agents[player]
    rooms = {r for r, b in enumerate(mind.rooms) if b is not None and bomb in b.value}
    rooms |= {i.room for i in state.intel[player] if i is not None and i.bomb == bomb}
    for msg in state.chat:
        for fact in msg.facts:
            if isinstance(fact, BombFact) and fact.bomb == bomb and fact.room is not None:
                rooms.add(fact.room)
            if isinstance(fact, RoomFact) and bomb in fact.bombs:
                rooms.add(fact.room)
    return rooms.pop() if len(rooms) == 1 else None


def believed_remaining(state: Any, player: int, bomb: int) -> tuple[int, ...] | None:
    """The remaining sequence of ``bomb`` as the asked player last saw or was told it."""
    belief = state.minds.agents[player].bombs[bomb]
    return None if belief is None else tuple(belief.value)


def learned_as_seen_by(state: Any, asker: int, mate: int, bomb: int) -> bool | None:
    """Whether teammate ``mate`` has learned ``bomb``'s phase order, as the asker can tell from
    its context: ``True`` when a message stating the sequence was sent by ``mate`` or before
    ``mate``'s latest turn; ``False`` when no such message was and ``mate`` has never been in the
    bomb's room (the asker sees every teammate's room each turn); ``None`` when it cannot tell."""
    last = state.last_action_time[mate]
    for msg in state.chat:
        if msg.sender != mate and msg.time >= last:
            continue  # not yet read by the teammate
        for fact in msg.facts:
            if isinstance(fact, BombFact) and fact.bomb == bomb and fact.remaining:
                return True
    room = believed_room(state, asker, bomb)
    if room is None or room != state.mission.bomb_rooms[bomb]:
        return None
    if state.minds.agents[asker].whereabouts[mate][room] != -1:
        return None  # it was there: it may have inspected the bomb without saying so
    return False


def learned(state: Any, mate: int, bomb: int) -> bool:
    """The truth: the game's epistemic tracker holds a sequence for ``bomb`` in ``mate``'s mind."""
    return state.minds.agents[mate].sequences[bomb] is not None


def _rounds_left(game: Any, state: Any, player: int, legal: list[int]) -> dict[int, float]:

    out = {}
    for a in legal:
        nxt = game.step(state, {player: a}, np.random.default_rng(0)).state
        done = game.is_terminal(nxt) and nxt.score == state.mission.max_score
        r = 0 if done else exhaustive_optimum(game, nxt)
        out[a] = float("inf") if r is None else float(r)
    return out


def _ec_items(
    bundle: Any, state: Any, player: int, make: ItemMaker, rng: np.random.Generator
) -> list[QAItem]:
    """The EC items (see the module docstring)."""
    game = bundle.game
    view = game.observe(state, player)
    mission = state.mission
    names = game.config.agents
    n = view.num_bombs
    items: list[QAItem] = []

    seen = sorted({i.bomb for i in view.intel})
    unseen = [b for b in range(n) if b not in seen]
    options = tuple(f"Bomb {b + 1}" for b in range(n))
    question = ""
    if seen and len(seen) <= n // 2:
        question, answers = "Which bombs have you inspected yourself so far?", tuple(seen)
    elif unseen and len(unseen) <= n // 2:
        question, answers = "Which bombs have you not inspected yourself yet?", tuple(unseen)
    if question and n >= 2:
        items.append(make("EC", "inspected_bombs", question, options, answers, "rules"))

    active = [b for b in range(n) if state.progress[b] < len(mission.sequences[b])]
    known = [b for b in active if believed_remaining(state, player, b) == _remaining(state, b)]
    if known and len(names) == 3:
        bomb = int(rng.choice(known))
        colour = _remaining(state, bomb)[0]
        lacking = [p for p, tools in enumerate(mission.tools) if colour not in tools]
        if len(lacking) == 1:
            items.append(
                make(
                    "EC",
                    "lacks_cutter",
                    f"For the next phase of Bomb {bomb + 1}, who on the team holds no suitable "
                    "wire cutter?",
                    tuple(f"Player {a}" for a in names),
                    (lacking[0],),
                    "rules",
                    details={"bomb": bomb, "colour": colour},
                )
            )
    placed = [
        b
        for b in active
        if believed_room(state, player, b) == mission.bomb_rooms[b]
        and mission.bomb_rooms[b] != view.room
    ]
    if placed:
        bomb = int(rng.choice(placed))
        d = int(mission.game_map.distance[view.room][mission.bomb_rooms[bomb]])
        steps = max(4, d + 1)
        items.append(
            make(
                "EC",
                "moves_to_bomb",
                f"Walking from where you stand, how many moves until you reach Bomb {bomb + 1}?",
                tuple(str(k) for k in range(1, steps + 1)),
                (d - 1,),
                "rules",
                details={"bomb": bomb},
            )
        )
    return items


def _remaining(state: Any, bomb: int) -> tuple[int, ...]:
    """The true remaining sequence of ``bomb``."""
    return tuple(state.mission.sequences[bomb][state.progress[bomb] :])


def _tom_items(
    bundle: Any, state: Any, player: int, make: ItemMaker, rng: np.random.Generator
) -> list[QAItem]:
    """The ToM item (see the module docstring): one teammate, one variant, one correct bomb."""
    game = bundle.game
    if not game.config.teammate_locations:
        return []
    names = game.config.agents
    n = state.mission.num_bombs
    mates = [p for p in range(len(names)) if p != player]
    for mate in [int(m) for m in rng.permutation(mates)]:
        yes = [b for b in range(n) if learned_as_seen_by(state, player, mate, b) is True]
        no = [b for b in range(n) if learned_as_seen_by(state, player, mate, b) is False]
        if not yes or not no:
            continue
        variants = [
            ("teammate_learned", yes, no, "learned"),
            ("teammate_not_learned", no, yes, "not learned yet"),
        ]
        kind, right, wrong, verb = variants[int(rng.integers(2))]
        correct = int(rng.choice(right))
        others = [int(b) for b in rng.choice(wrong, size=min(3, len(wrong)), replace=False)]
        shown = sorted([correct, *others])
        truth = [b for b in shown if learned(state, mate, b) == (kind == "teammate_learned")]
        if truth != [correct]:
            return []  # the tracker and what the asked player can tell disagree: no item
        return [
            make(
                "ToM",
                kind,
                f"Which of these bombs' phase order has {names[mate]} {verb}?",
                tuple(f"Bomb {b + 1}" for b in shown),
                tuple(shown.index(b) for b in truth),
                "knowledge",
                details={"teammate": mate, "bombs": shown},
            )
        ]
    return []


def questions(bundle: Any, state: Any, player: int, scenario: Scenario) -> list[QAItem]:
    """EC, ToM and JP items for the player to act."""
    game, text = bundle.game, bundle.text
    if state.over or state.turn != player:
        return []
    view = game.observe(state, player)
    base = f"bomb/s{scenario.seed}/t{state.time}/p{player}"
    make = ItemMaker(base, scenario, history_context(bundle, scenario, player))
    rng = np.random.default_rng([scenario.seed, state.time, player, 17])
    items = [
        it
        for it in _ec_items(bundle, state, player, make, rng)
        + _tom_items(bundle, state, player, make, rng)
        if lookup_pick(it) is None
    ]

    legal = list(game.legal_actions(state, player))
    if len(legal) >= 2:
        rounds = _rounds_left(game, state, player, legal)
        best = min(rounds.values())
        top = [a for a in legal if rounds[a] == best]
        rest = [rounds[a] for a in legal if a not in top]
        if rest and min(rest) - best >= 1 and len(top) <= len(legal) // 2:
            names = [text.action_text(view, a) for a in legal]
            items.append(make("JP", "best_action",
                              "Which action now lets the team defuse every bomb in the fewest "
                              "rounds, if everyone plays perfectly afterwards?", tuple(names),
                              tuple(legal.index(a) for a in top), "exact_optimum",
                              details={"rounds_left": {names[i]: rounds[a]
                                                       for i, a in enumerate(legal)}}))  # fmt: skip
    return items


#: Other bomb sequences a JP key must survive (see :func:`answerable`).
VARIANTS = 2


def answerable(bundle: Any, state: Any, item: QAItem) -> bool:
    """Recompute the key from what the asked player can tell (see the module docstring).

    EC: your own inspections are in your observations; the bomb's remaining sequence or room
    must be what your perceptions say it is. ToM: every shown bomb's status, as the context
    tells it (:func:`learned_as_seen_by`), must be the key. JP: the search knows every bomb's
    sequence, so the key is recomputed with the sequences you do not know as they are now
    (neither inspected nor told) drawn afresh (the phases already cut kept): it must not
    change."""
    player = item.scenario.player
    if item.type == "EC":
        bomb = item.details.get("bomb")
        if item.kind == "lacks_cutter":
            return believed_remaining(state, player, bomb) == _remaining(state, bomb)
        if item.kind == "moves_to_bomb":
            return believed_room(state, player, bomb) == state.mission.bomb_rooms[bomb]
        return True
    if item.type == "ToM":
        mate, shown = item.details["teammate"], item.details["bombs"]
        want = item.kind == "teammate_learned"
        told = [learned_as_seen_by(state, player, mate, b) for b in shown]
        if None in told:
            return False
        keyed = [shown[a] for a in _unarranged(item)]
        return keyed == [b for b, t in zip(shown, told, strict=True) if t == want]
    return _jp_answerable(bundle, state, item)


def _unarranged(item: QAItem) -> tuple[int, ...]:
    """The item's answers in the option order the game wrote (before balancing)."""
    order = item.details.get("order")
    if order is None:
        return item.answers
    return tuple(sorted(order[a] for a in item.answers))


def _jp_answerable(bundle: Any, state: Any, item: QAItem) -> bool:
    """The JP check (see :func:`answerable`)."""
    game = bundle.game
    player = item.scenario.player
    mission = state.mission
    known = {i.bomb for i in game.observe(state, player).intel}
    known |= {
        b
        for b in range(mission.num_bombs)
        if believed_remaining(state, player, b) == _remaining(state, b)
    }
    colours = sorted({c for seq in mission.sequences for c in seq})
    rng = np.random.default_rng([item.scenario.seed, state.time, 41])
    legal = list(game.legal_actions(state, player))
    want = {item.options[a] for a in item.answers}
    view = game.observe(state, player)
    names = [bundle.text.action_text(view, a) for a in legal]
    for _ in range(VARIANTS):
        seqs = []
        for b, seq in enumerate(mission.sequences):
            if b in known:
                seqs.append(seq)
            else:
                cut = state.progress[b]
                seqs.append(tuple(seq[:cut]) + tuple(int(rng.choice(colours)) for _ in seq[cut:]))
        variant = dataclasses.replace(
            state, mission=dataclasses.replace(mission, sequences=tuple(seqs))
        )
        rounds = _rounds_left(game, variant, player, legal)
        best = min(rounds.values())
        if {names[i] for i, a in enumerate(legal) if rounds[a] == best} != want:
            return False
    return True
