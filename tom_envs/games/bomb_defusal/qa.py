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

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from tom_envs.games.bomb_defusal.view import BombFact, RoomFact
from tom_envs.qa.items import QAItem, Scenario, contrast_set

GENERATOR_VERSION = 4

#: The abilities asked about (no JP: see the module docstring).
ABILITIES = ("EC", "ToM")

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


def _told_fact(config: Any, variant: str) -> Any:
    """The fact a ``said-`` twin adds to a teammate's message: ``said-seq-<bomb>-<colour>`` (the
    bomb's remaining sequence is that one colour) or ``said-room-<bomb>-<room>``."""
    _, what, bomb, value = variant.split("-")
    if what == "seq":
        return BombFact(int(bomb), (int(value),))
    return RoomFact(int(value), (int(bomb),))


def _last_heard(scenario: Scenario, player: int) -> tuple[int, int] | None:
    """The latest step at which a teammate sent a message, and that teammate."""
    for j in range(len(scenario.messages) - 1, -1, -1):
        senders = [q for q in scenario.messages[j] if q != player]
        if senders:
            return j, senders[0]
    return None


def _say(scenario: Scenario, j: int, sender: int, sentence: str, remove: bool = False) -> Scenario:
    """``scenario`` with ``sentence`` appended to (or, with ``remove``, taken off the end of)
    ``sender``'s message at step ``j``."""
    msgs = list(scenario.messages)
    m = dict(msgs[j])
    text = m.get(sender, "")
    if remove:
        text = text[: -len(sentence)].rstrip() if text.endswith(sentence) else text
    else:
        text = f"{text} {sentence}".strip()
    if text:
        m[sender] = text
    else:
        m.pop(sender, None)
    msgs[j] = m
    return replace(scenario, messages=tuple(msgs))


def _told_bomb_set(base: str, bomb: int, kind: str, question: str, twins: list) -> list[QAItem]:
    """An EC contrast set about what was told of ``bomb`` (none from fewer than two twins)."""
    if len(twins) < 2:
        return []
    return contrast_set(base, "EC", kind, question, "rules", twins, details={"bomb": bomb},
                        varies="situation")  # fmt: skip


def _told_ec_sets(bundle: Any, state: Any, player: int, scenario: Scenario, base: str,
                  rng: np.random.Generator) -> list[QAItem]:  # fmt: skip
    """EC ``lacks_cutter`` and ``moves_to_bomb``: contrast sets over what a teammate's latest
    message said about a bomb you know nothing else about (module docstring)."""
    from tom_envs.games.bomb_defusal.facts import render_facts
    from tom_envs.qa.items import replay

    game = bundle.game
    config = game.config
    names = config.agents
    heard = _last_heard(scenario, player)
    if heard is None:
        return []
    j, sender = heard
    gmap = state.mission.game_map
    if scenario.variant.startswith("said-"):  # a twin: rebuild the situation it was made from
        fact = _told_fact(config, scenario.variant)
        scenario = _say(scenario, j, sender, render_facts((fact,), config, gmap, sender), True)
        scenario = replace(scenario, variant="")
        state = replay(scenario)[1]
    mission = state.mission
    view = game.observe(state, player)
    quiet = [
        b for b in range(mission.num_bombs)
        if state.progress[b] < len(mission.sequences[b])
        and believed_room(state, player, b) is None
        and believed_remaining(state, player, b) is None
        and not any(f"Bomb {b + 1}" in m for msgs in scenario.messages for m in msgs.values())
        and not any(i.bomb == b for i in view.intel)
    ]  # fmt: skip
    if not quiet:
        return []
    bomb = int(rng.choice(quiet))

    def twin(variant: str) -> tuple[Scenario, Any]:
        fact = _told_fact(config, variant)
        sc = _say(scenario, j, sender, render_facts((fact,), config, gmap, sender))
        return replace(sc, variant=variant), replay(sc)[1]

    items: list[QAItem] = []
    if len(names) == 3:
        twins = []
        for p in range(len(names)):
            colours = [c for c in range(len(config.colors))
                       if [q for q, tools in enumerate(mission.tools) if c not in tools] == [p]]  # fmt: skip
            if not colours:
                continue
            variant = f"said-seq-{bomb}-{int(rng.choice(colours))}"
            sc, st = twin(variant)
            if believed_remaining(st, player, bomb) != _told_fact(config, variant).remaining:
                return []
            twins.append((sc, history_context(bundle, sc, player), p, f"Player {names[p]}"))
        items += _told_bomb_set(base, bomb, "lacks_cutter",
                                "From what you have seen and been told, who on the team holds no "
                                f"suitable wire cutter for the next phase of Bomb {bomb + 1}?",
                                twins)  # fmt: skip
    by_distance: dict[int, list[int]] = {}
    for room in range(len(gmap.rooms)):
        if room != view.room:
            by_distance.setdefault(int(gmap.distance[view.room][room]), []).append(room)
    twins = []
    for d in sorted(by_distance)[:MAX_DISTANCES]:
        room = int(rng.choice(by_distance[d]))
        variant = f"said-room-{bomb}-{room}"
        sc, st = twin(variant)
        if believed_room(st, player, bomb) != room:
            return items
        twins.append((sc, history_context(bundle, sc, player), d, str(d)))
    items += _told_bomb_set(base, bomb, "moves_to_bomb",
                            "From what you have seen and been told, how many moves does it take "
                            f"you to walk from where you stand to Bomb {bomb + 1}?",
                            twins)  # fmt: skip
    return items


def _remaining(state: Any, bomb: int) -> tuple[int, ...]:
    """The true remaining sequence of ``bomb``."""
    return tuple(state.mission.sequences[bomb][state.progress[bomb] :])


def _announce(state: Any, bomb: int, bundle: Any, sender: int) -> str:
    """The canonical sentence stating ``bomb``'s remaining sequence now."""
    from tom_envs.games.bomb_defusal.facts import render_facts

    fact = BombFact(bomb, _remaining(state, bomb))
    return render_facts((fact,), bundle.game.config, state.mission.game_map, sender)


def _untold(bundle: Any, twin: Scenario) -> tuple[Scenario, Any]:
    """The situation a ``teammate_learned`` twin was made from: its two added sentences removed
    (the variant ``told<b>-<c>`` names the bombs announced)."""
    from tom_envs.qa.items import replay

    mine, theirs = (int(x) - 1 for x in twin.variant[len("told") :].split("-"))
    acts = twin.actions
    before = replay(replace(twin, actions=acts[:-3], messages=twin.messages[:-3]))[1]
    player, second = next(iter(acts[-3])), next(iter(acts[-1]))
    msgs = list(twin.messages)

    def strip(text: str, sentence: str) -> str | None:
        rest = text[: -len(sentence)].rstrip() if text.endswith(sentence) else text
        return rest or None

    for idx, seat, bomb in ((-3, player, mine), (-1, second, theirs)):
        m = dict(msgs[idx])
        rest = strip(m.get(seat, ""), _announce(before, bomb, bundle, seat))
        if rest is None:
            m.pop(seat, None)
        else:
            m[seat] = rest
        msgs[idx] = m
    base = replace(twin, messages=tuple(msgs), variant="")
    return base, replay(base)[1]


def _told_set(bundle: Any, state: Any, player: int, scenario: Scenario, base: str,
              rng: np.random.Generator) -> list[QAItem]:  # fmt: skip
    """ToM ``teammate_learned``: the contrast set over who told what when (module docstring)."""
    from tom_envs.qa.items import replay

    game = bundle.game
    names = game.config.agents
    n = len(names)
    acts = scenario.actions
    if n != 3 or len(acts) < 3 or not game.config.teammate_locations:
        return []
    if scenario.variant.startswith("told"):  # a twin: rebuild the situation it was made from
        scenario, state = _untold(bundle, scenario)
    # the last three turns: mine, then the first teammate's (it read my message), then the
    # second teammate's (sent after the first one's turn: the first one has not read it)
    if list(acts[-3]) != [player] or len(acts[-2]) != 1 or len(acts[-1]) != 1:
        return []
    first, second = next(iter(acts[-2])), next(iter(acts[-1]))
    if {first, second, player} != set(range(3)):
        return []
    before = replay(replace(scenario, actions=acts[:-3], messages=scenario.messages[:-3]))[1]
    bombs = [b for b in range(state.mission.num_bombs)
             if _remaining(before, b) and not learned(state, first, b)]  # fmt: skip
    if len(bombs) < 2:
        return []
    pair = sorted(int(b) for b in rng.choice(bombs, size=2, replace=False))
    msgs = list(scenario.messages) + [{}] * (len(acts) - len(scenario.messages))
    twins = []
    for mine, theirs in ((pair[0], pair[1]), (pair[1], pair[0])):
        edited = list(msgs)
        m3, m1 = dict(edited[-3]), dict(edited[-1])
        m3[player] = " ".join(
            filter(None, [m3.get(player), _announce(before, mine, bundle, player)])
        )
        m1[second] = " ".join(
            filter(None, [m1.get(second), _announce(before, theirs, bundle, second)])
        )
        edited[-3], edited[-1] = m3, m1
        twin = replace(scenario, messages=tuple(edited), variant=f"told{mine + 1}-{theirs + 1}")
        _, st = replay(twin)
        got = [b for b in pair if learned(st, first, b)]
        if got != [mine]:
            return []
        twins.append((twin, history_context(bundle, twin, player), mine, f"Bomb {mine + 1}"))
    return contrast_set(
        base, "ToM", "teammate_learned",
        f"Which of these bombs' phase order has {names[first]} learned by now?",
        "knowledge", twins, details={"teammate": first, "bombs": pair},
    )  # fmt: skip


def questions(bundle: Any, state: Any, player: int, scenario: Scenario,
              types: Sequence[str] = ("EC", "ToM", "JP")) -> list[QAItem]:  # fmt: skip
    """The EC and ToM contrast sets of the player to act (only ``types``; no JP: see the module
    docstring)."""
    if state.over or state.turn != player:
        return []
    base = f"bomb/s{scenario.seed}/t{state.time}/p{player}"

    def rng(tag: int) -> np.random.Generator:  # one stream per template
        return np.random.default_rng([scenario.seed, state.time, player, tag])

    items: list[QAItem] = []
    if "EC" in types:
        items += _told_ec_sets(bundle, state, player, scenario, base, rng(17))
    if "ToM" in types and not scenario.variant.startswith("said-"):
        items += _told_set(bundle, state, player, scenario, base, rng(18))
    return items


#: Most distances a ``moves_to_bomb`` set offers (the nearest first).
MAX_DISTANCES = 4
