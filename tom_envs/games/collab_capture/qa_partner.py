"""Partner-prediction contrast sets for the two-player room-maze games (CollabCapture,
CollabEscape), and the shared item helpers of their generators.

The question put to a player is where its partner will be after the partner's next decision.
The partner plays every game by one rule of a stated family (each game's ``RULES``: chase the
thief, open a closed door, follow you, hold its room...). Its rule is never stated: the context
shows an earlier game in which the partner played by it (its evidence), then the current
situation, with no history of the current game.

* **Evidence**: the first turns of an earlier game in the same maze from other starting rooms
  (drawn per situation), the partner playing its rule: the rooms it names say nothing of the
  current positions.
* **Twins** (:func:`partner_room_set`): the same current situation with the evidence of a
  different rule, one twin per distinct key (the room the rule takes the partner to next), a
  rule drawn per key. Every twin's key follows from its own evidence: every rule of the family
  that would have made each of the partner's choices in it predicts the same room.
* The options of every twin are the set's keys: a reasoner that sees the whole current state but
  not the partner's behaviour (:meth:`Family.blind`) is right on exactly one twin of each set.

Nothing here is game logic: each game supplies its rules, its move text and its evidence game's
seats. CollabEscape imports this module from the CollabCapture package, where it was written
first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from gymnasium.utils import seeding

from tom_envs.games.joint_planner import planner_for
from tom_envs.qa.generate import context_text
from tom_envs.qa.items import QAItem, Scenario, contrast_set

#: A partner rule: ``(game, state, seat) -> action`` (deterministic).
Rule = Callable[[Any, Any, int], int]

#: Turns of the earlier game shown as evidence (fewer when it ends sooner).
EVIDENCE_TURNS = 8

#: The ToM question (the family is stated before it by the game).
QUESTION = "Where will your partner be right after its next decision in the current game?"


#: The seatings scenarios are played with (the current situations): every pairing of a random,
#: a greedy and an optimal player.
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


@dataclass(frozen=True)
class Family:
    """A game's partner rules and how to show them.

    Attributes:
        rules: name -> rule, in the order the question lists them.
        text: the family as the question states it.
        me: the rule the asked player's seat plays in the evidence game.
        action_text: ``(action, room) -> text`` of a move.
        mover: the adversary's attribute on the state (``"thief"``, ``"killer"``).
        names: the players' names.
        rooms: the maze's rooms (the evidence game's starts are drawn from them).
        next_room: ``(action, room) -> room`` the action takes a player in ``room`` to.
        plan_question: the JP ``best_action`` question.
    """

    rules: Mapping[str, Rule]
    text: str
    me: Rule
    action_text: Callable[[int, int], str]
    mover: str
    names: Sequence[str]
    rooms: Sequence[int]
    next_room: Callable[[int, int], int]
    plan_question: str

    def blind(self, bundle: Any, state: Any, item: QAItem) -> int:
        """The partner-blind reasoner on a ToM twin: the room the family's first rule (the
        natural default: chase the adversary, or repair) takes the partner to, if it is an
        option, else the first option. It reads the current state only, so it picks the same
        option on every twin."""
        partner = 1 - item.scenario.player
        first = next(iter(self.rules.values()))
        room = self.next_room(int(first(bundle.game, state, partner)), state.rooms[partner])
        text = f"Room {room}"
        return item.options.index(text) if text in item.options else 0


def scenarios(names: Iterable[str]) -> list[dict[str, Any]]:
    """The generator's scenarios: each named game scenario played in each of :data:`SEATINGS`."""
    return [{"env_kwargs": {"scenario": sc}, "seats": seats} for sc in names for seats in SEATINGS]


@dataclass(frozen=True, eq=False)
class Situation:
    """What every item of one asked player's situation starts from.

    Attributes:
        bundle: the configured game.
        state: the current state.
        player: the asked player's seat.
        scenario: the recorded scenario that led to ``state``.
        base: the items' id base (``prefix/scenario/seed/turn/player``).
        rng: the generator's draws (seeded by the situation and the game's salt).
    """

    bundle: Any
    state: Any
    player: int
    scenario: Scenario
    base: str
    rng: np.random.Generator

    @classmethod
    def of(
        cls, prefix: str, salt: int, bundle: Any, state: Any, player: int, scenario: Scenario
    ) -> Situation:
        """``player``'s situation ``state``, its ids under ``prefix``, its draws salted by
        ``salt``."""
        name = scenario.env_kwargs.get("scenario", "default")
        base = f"{prefix}/{name}/s{scenario.seed}/t{state.turn}/p{player}"
        rng = np.random.default_rng([scenario.seed, state.turn, player, salt])
        return cls(bundle, state, player, scenario, base, rng)

    def context(self, state: Any) -> str:
        """The context of a (twin) ``state``: the asked player's rules prompt and view."""
        return context_text(self.bundle, state, self.player)


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


def evidence_game(
    bundle: Any, family: Family, rule: str, player: int, seed: int
) -> list[tuple[Any, dict[int, int], Any]]:
    """The earlier game shown as evidence: ``(state, joint action, next state)`` per turn, the
    partner playing ``rule``, the asked player ``family.me``, in the same maze (doors as the
    scenario sets them) from other starting rooms drawn by ``seed`` (so that the rooms it names
    carry no hint of the current situation), the game's chance seeded by ``seed``."""
    game = bundle.game
    draw = np.random.default_rng([seed, 3]).choice(list(family.rooms), 3, replace=False)
    starts = tuple(int(r) for r in draw)
    game = type(game)(replace(game.config, starts=starts))
    rng, _ = seeding.np_random(seed)
    state = game.initial_state(rng)
    out = []
    partner = 1 - player
    for _ in range(EVIDENCE_TURNS):
        if game.is_terminal(state):
            break
        acts = {player: int(family.me(game, state, player)),
                partner: int(family.rules[rule](game, state, partner))}  # fmt: skip
        nxt = game.step(state, acts, rng).state
        out.append((state, acts, nxt))
        state = nxt
    return out


def evidence_text(family: Family, turns: Sequence[tuple[Any, dict[int, int], Any]]) -> str:
    """The evidence block: one line per turn of the earlier game."""
    lines = []
    for t, (before, acts, after) in enumerate(turns):
        chose = "; ".join(
            f'{family.names[p]} chose "{family.action_text(acts[p], before.rooms[p])}"'
            for p in (0, 1)
        )
        lines.append(
            f"Turn {t + 1}: {chose}; the {family.mover} went from room "
            f"{getattr(before, family.mover)} to room {getattr(after, family.mover)}."
        )
    return (
        "An earlier game in this maze (other starting rooms), which your partner played by the "
        "same rule as now, oldest turn first:\n" + "\n".join(lines)
    )


def consistent(
    family: Family, game: Any, turns: Sequence[tuple[Any, dict[int, int], Any]], seat: int
) -> list[str]:
    """The rules that would have made every choice of ``seat`` shown in ``turns``."""
    return [
        name
        for name, rule in family.rules.items()
        if all(int(rule(game, st, seat)) == acts[seat] for st, acts, _ in turns)
    ]


def partner_room_set(sit: Situation, family: Family) -> list[QAItem]:
    """ToM ``partner_next_room``: the contrast set of the situation (see the module docstring);
    each twin's context is :func:`context_with_evidence` of its evidence block."""
    bundle, state, player, scenario = sit.bundle, sit.state, sit.player, sit.scenario
    game = bundle.game
    partner = 1 - player
    if game.is_terminal(state) or partner not in game.current_players(state):
        return []
    here = state.rooms[partner]
    seed = int(np.random.default_rng([scenario.seed, len(scenario.actions), 41]).integers(2**31))
    keys = {name: family.next_room(int(rule(game, state, partner)), here)
            for name, rule in family.rules.items()}  # fmt: skip
    by_key: dict[int, list[tuple[str, list]]] = {}
    for name in family.rules:
        turns = evidence_game(bundle, family, name, player, seed)
        if not turns:
            continue
        rivals = consistent(family, game, turns, partner)
        if all(keys[r] == keys[name] for r in rivals):
            by_key.setdefault(keys[name], []).append((name, turns))
    if len(by_key) < 2:
        return []
    rng = np.random.default_rng([scenario.seed, len(scenario.actions), player, 43])
    twins = []
    for room in sorted(by_key):
        name, turns = by_key[room][int(rng.integers(len(by_key[room])))]
        twin = replace(scenario, variant=name)
        context = context_with_evidence(bundle, state, player, evidence_text(family, turns))
        twins.append((twin, context, room, f"Room {room}"))
    return contrast_set(sit.base, "ToM", "partner_next_room", f"{family.text} {QUESTION}",
                        "partner_policy", twins, details={"evidence_seed": seed})  # fmt: skip


def partner_and_plan_sets(
    sit: Situation, family: Family, edits: Sequence[tuple[str, Any]]
) -> list[QAItem]:
    """The ToM ``partner_next_room`` set and the JP ``best_action`` set (your part of the team's
    optimal joint action, exact planner; twins: the situation ``edits``, e.g. the adversary in
    other rooms) of a maze game's situation."""
    from tom_envs.qa.items import situation_set
    from tom_envs.qa.joint import best_action_item

    bundle, player, scenario, base = sit.bundle, sit.player, sit.scenario, sit.base
    question = family.plan_question
    items = partner_room_set(sit, family)
    game = bundle.game
    planner = planner_for(type(game), game.config)

    def best(st: Any) -> str | None:
        try:
            item = best_action_item(bundle, st, player, scenario, planner, base, question)
        except KeyError:  # a counterfactual the planner's search never reaches: not asked
            return None
        return None if item is None else item.options[item.answer]

    return items + situation_set(base, "JP", "best_action", question, "exact_optimum", scenario,
                                 edits, best, str, sit.context, sit.rng)  # fmt: skip


def turn_lines(
    bundle: Any,
    scenario: Scenario,
    names: Sequence[str],
    action_text: Callable[[int, int], str],
    mover: str,
) -> list[str]:
    """One line per turn of the current game: both players' choices and the ``mover``'s move (the
    thief in Capture, the killer in Escape: an attribute of the state holding its room)."""
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


def context_with_evidence(bundle: Any, state: Any, player: int, evidence: str) -> str:
    """The asked player's rules prompt, the partner's evidence and the current observation."""
    view = bundle.game.observe(state, player)
    text = bundle.text
    return "\n\n".join([text.rules_prompt(view), evidence,
                        "The current game:\n" + text.observation_text(view)])  # fmt: skip


def history_block(lines: Sequence[str]) -> str:
    """The turns played so far, one line each, under a heading ("" when none were played)."""
    if not lines:
        return ""
    return "Turns played so far, oldest first:\n" + "\n".join(lines)


def best_action_answerable(bundle: Any, visible: Any, item: QAItem) -> bool:
    """JP: the exact planner, run on ``visible`` (the state rebuilt from the asked player's
    view), keys the same option."""
    from tom_envs.qa.joint import best_action_item

    game = bundle.game
    planner = planner_for(type(game), game.config)
    fresh = best_action_item(
        bundle, visible, item.scenario.player, item.scenario, planner, "check", item.question
    )
    return fresh is not None and fresh.options[fresh.answer] == item.options[item.answer]


def step(maze: Any, src: int, dst: int, closed: Any = frozenset(), stay: int = 0) -> int:
    """The move one step along a shortest path from ``src`` to ``dst`` (``stay`` when there or
    when ``dst`` cannot be reached)."""
    nxt = maze.step_toward(src, dst, closed) if closed else maze.step_toward(src, dst)
    return stay if nxt is None else int(nxt)


def farthest_from(maze: Any, src: int, threat: int, closed: Any = frozenset(),
                  stay: int = 0) -> int:  # fmt: skip
    """The move to the neighbouring room farthest (in moves) from ``threat``'s room, or ``stay``
    when no neighbour is farther than ``src`` (ties: listed order)."""

    def dist(room: int) -> float:
        d = maze.distance(threat, room, closed) if closed else maze.distance(threat, room)
        return float("inf") if d is None else float(d)

    best, best_d = stay, dist(src)
    for n in maze.neighbors(src, closed) if closed else maze.out(src):
        if dist(n) > best_d:
            best, best_d = int(n), dist(n)
    return best


__all__ = [
    "EVIDENCE_TURNS",
    "QUESTION",
    "SEATINGS",
    "Family",
    "Rule",
    "Situation",
    "best_action_answerable",
    "consistent",
    "context_with_evidence",
    "context_with_history",
    "evidence_game",
    "evidence_text",
    "farthest_from",
    "history_block",
    "partner_and_plan_sets",
    "partner_room_set",
    "scenarios",
    "states_before",
    "step",
    "turn_lines",
]
