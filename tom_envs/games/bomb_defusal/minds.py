"""The epistemic tracker of bomb defusal: every player's beliefs, their updates, the ground truth.

:class:`Minds` holds what each player believes (rooms, bombs, sequences, teammates' whereabouts),
every report sent and each player's last action; :func:`initial_minds` starts it and
:func:`~tom_envs.games.bomb_defusal.tom.update_minds` follows each action, run when the tracker is
read from the rules' record of the actions (:class:`PendingMinds`). The
ground truth of the ToM questions is read from it: :func:`knows` (introspection, first order),
:func:`evidence` and :func:`aware_that_knows` (second order), :func:`believed_room`. The model
(perception, beliefs, the facts a message carries, the ground truth) is documented in
:mod:`~tom_envs.games.bomb_defusal.tom`, which also builds the probes from these functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tom_envs.games.bomb_defusal.view import (
    ActionResult,
    BombFact,
    BombView,
    ChatMessage,
    Fact,
    LocationFact,
    RoomFact,
)

if TYPE_CHECKING:
    from tom_envs.games.bomb_defusal.rules import BombGame
    from tom_envs.games.bomb_defusal.state import BombState

__all__ = [
    "ActionRecord",
    "Belief",
    "Mind",
    "Minds",
    "PendingMinds",
    "Report",
    "aware_that_knows",
    "belief",
    "believed_room",
    "evidence",
    "initial_minds",
    "knows",
    "truth",
]

ROOM, BOMB, SEQ, DEFUSED = "room", "bomb", "seq", "defused"
Key = tuple[str, int]


@dataclass(frozen=True)
class Belief:
    """One believed value.

    Attributes:
        value: bombs in a room, or a bomb's remaining sequence.
        asof: the time the information refers to (observation time, or the message's send time).
        changed: the time the believer's value last changed.
        source: ``"seen"`` or ``"told"``.
    """

    value: tuple[int, ...]
    asof: int
    changed: int
    source: str


@dataclass(frozen=True)
class Report:
    """A fact one player broadcast: ``key`` has ``value``, sent at ``time``."""

    sender: int
    key: Key
    value: tuple[int, ...]
    time: int


@dataclass(frozen=True)
class Mind:
    """One player's beliefs (see "Beliefs" in :mod:`~tom_envs.games.bomb_defusal.tom`)."""

    perceived: int
    rooms: tuple[Belief | None, ...]
    bombs: tuple[Belief | None, ...]
    sequences: tuple[Belief | None, ...]
    whereabouts: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class ActionRecord:
    """A player's last action, for probe generation.

    Attributes:
        time: the action's time stamp; ``round``: its round.
        result: what it did.
        announced: a room the actor's message put it in that it is not in, if any.
    """

    time: int
    round: int
    result: ActionResult
    announced: int | None = None


@dataclass(frozen=True)
class Minds:
    """Everyone's beliefs, every report sent, and each player's last action.

    Attributes:
        before_turn: ``(next player, its mind)`` before it perceived the start of its turn,
            right after the last action: with the other minds, the tracker of that action's own
            moment (the ToM probes' truths at ``probe_timing="action"``); ``None`` at the start
            and once the episode is over.
    """

    agents: tuple[Mind, ...]
    reports: tuple[Report, ...]
    last_action: tuple[ActionRecord | None, ...]
    before_turn: tuple[int, Mind] | None = None


# ======================================================================== lazy updates
class PendingMinds:
    """The tracker of a state that nobody has read yet: the rules' record of the action.

    :meth:`~tom_envs.games.bomb_defusal.rules.BombGame.apply` stores one of these in the state
    it returns instead of updating every mind (``initial_state`` stores one with ``before=None``).
    Reading ``state.minds`` (the probes, the ground truth, the QA) calls :meth:`resolve`, which
    walks back to the last state whose tracker is up to date and replays
    :func:`~tom_envs.games.bomb_defusal.tom.update_minds` forward from there, oldest first: the
    same calls, in the same order, with the same states as the eager tracker made inside
    ``apply``, so every belief, probe and answer is the same. A loop that
    never reads the tracker (RL training) never pays for it.

    Attributes:
        game: the rules that applied the action.
        before: the state the action was applied to (``None``: the episode's start).
        actor, result, message: who acted, what it did, the chat message it sent (if any).
        value: the resolved :class:`Minds` (``None`` until resolved).
    """

    __slots__ = ("actor", "before", "game", "message", "result", "value")

    def __init__(
        self,
        game: BombGame,
        before: BombState | None,
        actor: int = -1,
        result: ActionResult | None = None,
        message: ChatMessage | None = None,
    ) -> None:
        self.game = game
        self.before = before
        self.actor = actor
        self.result = result
        self.message = message
        self.value: Minds | None = None

    def resolve(self, state: BombState) -> Minds:
        """The tracker of ``state`` (the state holding this record), brought up to date."""
        if self.value is not None:
            return self.value
        from tom_envs.games.bomb_defusal.tom import update_minds

        chain = []  # (record, the state it belongs to), newest first
        record, after = self, state
        while True:
            chain.append((record, after))
            if record.before is None:
                break
            after = record.before
            held = after.__dict__["minds"]
            if held.__class__ is not PendingMinds or held.value is not None:
                break
            record = held
        for record, after in reversed(chain):
            if record.before is None:
                value = initial_minds(record.game, after)
            else:
                value = update_minds(
                    record.game, record.before, after, record.actor, record.result, record.message
                )
            record.value = value
            after.__dict__["minds"] = value
            record.game = record.before = record.result = record.message = None
        return self.value  # type: ignore[return-value]


# =============================================================================== updates
class MindBuilder:
    """A mutable copy of one :class:`Mind` for an update."""

    def __init__(self, mind: Mind) -> None:
        self.perceived = mind.perceived
        self.rooms = list(mind.rooms)
        self.bombs = list(mind.bombs)
        self.sequences = list(mind.sequences)
        self.where = [list(w) for w in mind.whereabouts]

    def freeze(self) -> Mind:
        return Mind(
            self.perceived,
            tuple(self.rooms),
            tuple(self.bombs),
            tuple(self.sequences),
            tuple(tuple(w) for w in self.where),
        )

    @staticmethod
    def _new(old: Belief | None, value: tuple[int, ...], asof: int, now: int, src: str) -> Belief:
        changed = old.changed if old is not None and old.value == value else now
        return Belief(value, asof, changed, src)

    def learn(self, table: str, idx: int, value: tuple[int, ...], asof: int, now: int, src: str):
        """Merge new information into a belief.

        What a player sees is adopted. What it is told is merged monotonically, since bombs only
        leave rooms and remaining sequences only shorten: a claim that is *behind* the belief
        (more bombs in a room, a longer remaining sequence) is stale and ignored; one that is ahead
        is adopted; a conflicting one is adopted only if sent after the belief's information.
        ``sequences`` keep the longest suffix known (more of the sequence), the newest on ties.
        """
        beliefs = getattr(self, table)
        old = beliefs[idx]
        if old is not None:
            if table == "sequences":
                if len(value) < len(old.value) or (
                    len(value) == len(old.value) and asof < old.asof
                ):
                    return
            elif src == "told":
                if table == "rooms":
                    ahead, behind = set(value) < set(old.value), set(value) > set(old.value)
                else:
                    ahead, behind = len(value) < len(old.value), len(value) > len(old.value)
                if behind or (not ahead and asof < old.asof):
                    return
        beliefs[idx] = self._new(old, value, asof, now, src)

    def see_room(self, room: int, bombs: tuple[int, ...], now: int) -> None:
        """Observe a room's active bombs; bombs believed there but missing are gone."""
        old = self.rooms[room]
        if old is not None:
            for b in old.value:
                if b not in bombs:
                    self.learn("bombs", b, (), now, now, "seen")
        for b in bombs:
            belief = self.bombs[b]
            if belief is not None and belief.value == ():
                self.bombs[b] = None  # it is there and active: an earlier claim was wrong
        self.learn("rooms", room, bombs, now, now, "seen")


def _empty_mind(n_agents: int, n_rooms: int, n_bombs: int) -> Mind:
    return Mind(
        -1,
        (None,) * n_rooms,
        (None,) * n_bombs,
        (None,) * n_bombs,
        ((-1,) * n_rooms,) * n_agents,
    )


def perceive(mind: MindBuilder, view: BombView, now: int) -> None:
    """A player reads its view at the start of its turn."""
    mind.perceived = now
    mind.see_room(view.room, view.room_bombs, now)
    for agent, room in enumerate(view.agent_rooms):
        if room >= 0:
            mind.where[agent][room] = now
    for msg in sorted(view.messages, key=lambda m: m.time):
        for fact in msg.facts:
            _hear(mind, view, msg, fact, now)


def _hear(mind: MindBuilder, view: BombView, msg: ChatMessage, fact: Fact, now: int) -> None:
    if isinstance(fact, RoomFact):
        if fact.room != view.room:  # one's own eyes beat any message
            mind.learn("rooms", fact.room, fact.bombs, msg.time, now, "told")
    elif isinstance(fact, BombFact):
        mind.learn("bombs", fact.bomb, fact.remaining, msg.time, now, "told")
        if fact.remaining:
            mind.learn("sequences", fact.bomb, fact.remaining, msg.time, now, "told")
    elif isinstance(fact, LocationFact):
        visible = view.agent_rooms[fact.agent] >= 0
        if fact.agent != view.player and not visible and fact.room != view.room:
            mind.where[fact.agent][fact.room] = now


def reports_of(msg: ChatMessage) -> list[Report]:
    """The room, bomb and sequence reports a chat message makes, stamped with sender and time."""
    out = []
    for fact in msg.facts:
        if isinstance(fact, RoomFact):
            out.append(Report(msg.sender, (ROOM, fact.room), fact.bombs, msg.time))
        elif isinstance(fact, BombFact):
            out.append(Report(msg.sender, (BOMB, fact.bomb), fact.remaining, msg.time))
            if fact.remaining:
                out.append(Report(msg.sender, (SEQ, fact.bomb), fact.remaining, msg.time))
    return out


def initial_minds(game: BombGame, state: BombState) -> Minds:
    """Everyone perceives the start (the round-0 bootstrap observation)."""
    n_agents, n_bombs = game.num_players, state.mission.num_bombs
    n_rooms = state.mission.game_map.num_rooms
    minds = []
    for p in range(n_agents):
        b = MindBuilder(_empty_mind(n_agents, n_rooms, n_bombs))
        perceive(b, game.observe(state, p), 0)
        minds.append(b.freeze())
    return Minds(tuple(minds), (), (None,) * n_agents)


# ========================================================================== ground truth
def minds_of(state: BombState) -> Minds:
    """Every player's tracked mind in ``state`` (built from the views when not yet tracked)."""
    if state.minds is None:
        raise ValueError("the epistemic tracker is off (probes='none')")
    return state.minds


def truth(state: BombState, key: Key) -> tuple[int, ...]:
    """The true current value of ``key`` (room contents, or a bomb's remaining sequence)."""
    kind, idx = key
    if kind == ROOM:
        rooms = state.mission.bomb_rooms
        return tuple(b for b in range(len(rooms)) if rooms[b] == idx and state.active(b))
    if kind == SEQ:
        return state.mission.sequences[idx]
    return state.remaining(idx)


def belief(state: BombState, agent: int, key: Key) -> Belief | None:
    """``agent``'s belief about ``key`` (``None`` if it has none)."""
    mind = minds_of(state).agents[agent]
    kind, idx = key
    table = {ROOM: mind.rooms, BOMB: mind.bombs, SEQ: mind.sequences}[kind]
    return table[idx]


def is_true(state: BombState, key: Key, value: tuple[int, ...]) -> bool:
    """Whether ``key`` has ``value`` in the true state (the ground truth of a belief)."""
    if key[0] == SEQ:
        seq = state.mission.sequences[key[1]]
        return bool(value) and len(value) <= len(seq) and seq[len(seq) - len(value) :] == value
    return value == truth(state, key)


def knows(state: BombState, agent: int, key: Key) -> bool:
    """Whether ``agent`` holds a true belief about ``key`` now.

    ``key`` is ``("room", r)``, ``("bomb", b)``, ``("seq", b)`` or ``("defused", b)``.
    """
    if key[0] == DEFUSED:
        bomb = key[1]
        when = state.inactive_at[bomb]
        if when < 0:
            return False
        mine = belief(state, agent, (BOMB, bomb))
        return minds_of(state).agents[agent].perceived >= when or (
            mine is not None and mine.value == ()
        )
    b = belief(state, agent, key)
    return b is not None and is_true(state, key, b.value)


def _latest_report(state: BombState, sender: int, key: Key, read_by: int) -> Report | None:
    minds = minds_of(state)
    seen = minds.agents[read_by].perceived
    out = None
    for r in minds.reports:
        if r.sender == sender and r.key == key and r.time <= seen:
            out = r
    return out


def _told(state: BombState, sender: int, reader: int, holder: int, key: Key) -> bool:
    """``sender`` told ``reader`` the true current value of ``key``, and ``holder`` believes it."""
    report = _latest_report(state, sender, key, reader)
    if report is None or not is_true(state, key, report.value):
        return False
    held = belief(state, holder, key)
    return held is not None and held.value == report.value


def evidence(state: BombState, observer: int, agent: int, key: Key) -> str | None:
    """Why ``observer`` believes ``agent`` knows ``key`` (``None``: it has no evidence).

    Labels: ``"saw_in_room"`` (E1), ``"told_by"`` (E2: ``agent`` told ``observer``),
    ``"told_to"`` (E3: ``observer`` told ``agent``), ``"public_score"`` (defusals).
    """
    minds = minds_of(state)
    obs = minds.agents[observer]
    kind, idx = key
    if kind == ROOM:
        own = obs.rooms[idx]
        seen = obs.whereabouts[agent][idx]
        if seen >= 0 and seen >= (own.changed if own is not None else -1):
            return "saw_in_room"
    if kind == DEFUSED:
        when = state.inactive_at[idx]
        if when < 0:
            return None
        if obs.whereabouts[agent][state.mission.bomb_rooms[idx]] >= when:
            return "saw_in_room"
        if _told(state, agent, observer, observer, (BOMB, idx)):
            return "told_by"
        if _told(state, observer, agent, observer, (BOMB, idx)):
            return "told_to"
        if obs.perceived >= when and minds.agents[agent].perceived >= obs.perceived:
            return "public_score"
        return None
    if _told(state, agent, observer, observer, key):
        return "told_by"
    if kind != BOMB and _told(state, observer, agent, observer, key):
        return "told_to"
    return None


def aware_that_knows(state: BombState, observer: int, agent: int, key: Key) -> bool:
    """Second order: ``agent`` knows ``key`` and ``observer`` has evidence of it."""
    return knows(state, agent, key) and evidence(state, observer, agent, key) is not None


def believed_room(state: BombState, observer: int, agent: int) -> int | None:
    """Where ``observer`` last believed ``agent`` was (``None``: no belief)."""
    where = minds_of(state).agents[observer].whereabouts[agent]
    best = max(where)
    return None if best < 0 else where.index(best)
