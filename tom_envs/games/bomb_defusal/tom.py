"""Epistemic tracker and Theory-of-Mind probes with computed ground truth (paper 000, App. C).

The paper's ToM questions were answered by human annotators with a global view, its stated
limitation. Here the ground truth is computed from an *epistemic tracker* that the rules update
after every action: who observed what, who was told what, and who saw whom.

Perception model
    A player perceives its view (:mod:`~tom_envs.games.bomb_defusal.view`) at the start of each of
    its turns (and everyone at the start of the episode): the active bombs in its room, teammates'
    locations (all of them, or only those in its room with ``teammate_locations=False``), the team
    score and the messages sent since its last action. It also learns its own action's result
    (the room it entered, the sequence it inspected, the cut it made). It never sees teammates'
    actions. Seeing that a bomb it believed to be in its room is gone tells it the bomb is gone.

Beliefs (per player)
    ``rooms[r]``: the active bombs believed to be in room ``r``; ``bombs[b]``: bomb ``b``'s believed
    remaining sequence (``()`` = defused or exploded); ``sequences[b]``: a believed (suffix of the)
    sequence of bomb ``b``; ``whereabouts[a][r]``: the last time it believed player ``a`` was in
    room ``r`` (from perception or from ``a``'s own announcement when ``a`` is not visible). Each
    belief records the time its information refers to, so newer information wins; a message's
    facts are its sender's claims (possibly stale or false). A player *knows* a fact when it
    believes it and the belief is true now.

Facts a message carries
    Symbolic messages carry their facts exactly. Free text goes through :func:`extract_facts`, a
    documented regular-expression reader of the phrasings below (exact on the canonical sentences
    :func:`render_facts` writes, which the heuristic bots use):

    * ``"Room 5 contains Bomb 1 and Bomb 3."``, ``"room 5 has bomb 3"``, ``"I'm in room 5 with
      bomb 3"``, ``"found bomb 3 in room 5"``  → room 5 holds exactly those bombs;
      ``"Room 5 has no bomb."``, ``"room 5 is empty/clear"``, ``"no bombs in room 5"`` → none;
    * ``"Bomb 3 is in Room 5 and its remaining sequence is Red-Green."``, ``"bomb 3 sequence:
      red, green"``, ``"bomb 3 is red then green"``, ``"bomb 3: red-green"`` → bomb 3's remaining
      sequence (colours joined by - , / -> then and);
    * ``"Bomb 3 is defused."``, ``"defused bomb 3"`` → bomb 3 is defused;
    * first person, in a clause without "not": ``"I am in Room 5."``, ``"I'm moving/going/heading to
      room 8"``, ``"Moving to room 8"`` → the sender is (or will be, after this action) in that
      room; a motion target wins over a static location;
    * ``"I need a Blue tool in Room 5."`` → a request (no knowledge).

    Anything else is ignored (recall on free LLM text is partial; precision is what matters).

Ground truth (``T`` a teammate, ``A`` the player asked)
    * introspection ``A knows X`` and first order ``T knows X``: the tracker's belief is true now.
      ``X`` is: the current contents of room ``r``; bomb ``b``'s current remaining sequence (its
      "state and remaining sequence ... has been changed"); the sequence of bomb ``b`` (any true
      suffix); "a bomb phase has just been defused" (saw the team score since, or believes the
      bomb is gone).
    * second order ``T is aware that A knows X``: ``A knows X`` and ``T`` has evidence of it:
      (E1) ``T`` last believed ``A`` was in room ``r`` no earlier than ``T``'s own belief about
      ``r`` last changed (room contents; for a defusal: ``A`` was in the bomb's room after it);
      (E2) ``A`` told ``T`` the current value and ``T`` still believes it; (E3) ``T`` told ``A``
      the current value, ``A`` has read it and ``T`` still believes it; (public score, defusals
      only) ``T`` saw the score rise and ``A`` has perceived since ``T`` did. "You have changed the
      state of bomb b" needs E2 (only a message can say who cut).

When probes are asked
    After each action, at the actor's *next* decision (the runner asks an agent at its turn), with
    its current observation in hand (which, as in the original, shows the action's result). Ground
    truth is computed then: every teammate has had one turn since, so messages sent with the action
    have been read and teammates have seen its location. Probes follow App. C / specs §1.9: a move
    to room ``r`` → room contents; an inspection (or the wrong-tool feedback, which reveals the
    sequence) → the bomb's sequence; a cut that leaves phases → the bomb's state; a defusal → "a
    bomb phase has just been defused". When the actor's message announced a room it is not in
    (e.g. it claimed a move it failed to make), the room-contents questions about the announced
    room are asked too (``about["announced"] = True``): the paper's false-belief case.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from tom_envs.core.probes import Probe
from tom_envs.games.bomb_defusal.maps import GameMap
from tom_envs.games.bomb_defusal.view import (
    ActionResult,
    BombFact,
    BombView,
    ChatMessage,
    Fact,
    LocationFact,
    RequestFact,
    ResultKind,
    RoomFact,
)

if TYPE_CHECKING:
    from tom_envs.games.bomb_defusal.rules import BombConfig, BombGame, BombState

ROOM, BOMB, SEQ, DEFUSED = "room", "bomb", "seq", "defused"
Key = tuple[str, int]
YES_NO = ("yes", "no")


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
    """One player's beliefs (see the module docstring)."""

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
    """Everyone's beliefs, every report sent, and each player's last action."""

    agents: tuple[Mind, ...]
    reports: tuple[Report, ...]
    last_action: tuple[ActionRecord | None, ...]


# =============================================================================== updates
class _Builder:
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


def _perceive(mind: _Builder, view: BombView, now: int) -> None:
    """A player reads its view at the start of its turn."""
    mind.perceived = now
    mind.see_room(view.room, view.room_bombs, now)
    for agent, room in enumerate(view.agent_rooms):
        if room >= 0:
            mind.where[agent][room] = now
    for msg in sorted(view.messages, key=lambda m: m.time):
        for fact in msg.facts:
            _hear(mind, view, msg, fact, now)


def _hear(mind: _Builder, view: BombView, msg: ChatMessage, fact: Fact, now: int) -> None:
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


def _reports(msg: ChatMessage) -> list[Report]:
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
        b = _Builder(_empty_mind(n_agents, n_rooms, n_bombs))
        _perceive(b, game.observe(state, p), 0)
        minds.append(b.freeze())
    return Minds(tuple(minds), (), (None,) * n_agents)


def update_minds(
    game: BombGame,
    before: BombState,
    after: BombState,
    actor: int,
    result: ActionResult,
    message: ChatMessage | None,
) -> Minds:
    """The tracker after ``actor``'s action: its result, its message, the next player's view."""
    minds = before.minds
    assert minds is not None
    now = after.time
    agents = list(minds.agents)
    me = _Builder(agents[actor])
    kind = result.kind
    if kind == ResultKind.MOVED:
        me.see_room(result.room, result.bombs_seen, now)
        for a in (*result.agents_seen, actor):
            me.where[a][result.room] = now
    elif kind in (ResultKind.INSPECTED, ResultKind.CUT, ResultKind.WRONG_TOOL):
        assert result.bomb is not None
        me.learn("bombs", result.bomb, result.remaining, now, now, "seen")
        me.learn("sequences", result.bomb, result.remaining, now, now, "seen")
    elif kind in (ResultKind.DEFUSED, ResultKind.EXPLODED):
        me.see_room(result.room, game.active_bombs_in(after, result.room), now)
    elif kind == ResultKind.NO_BOMB:
        me.see_room(result.room, (), now)
    agents[actor] = me.freeze()
    reports = minds.reports
    announced = None
    if message is not None:
        reports = reports + tuple(_reports(message))
        claims = [f.room for f in message.facts if isinstance(f, LocationFact) and f.agent == actor]
        if claims and claims[-1] != after.locations[actor]:
            announced = claims[-1]
    records = list(minds.last_action)
    records[actor] = ActionRecord(now, before.round, result, announced)
    out = Minds(tuple(agents), reports, tuple(records))
    if not after.over:
        nxt = after.turn
        b = _Builder(out.agents[nxt])
        _perceive(b, game.observe(after, nxt), now)
        out = replace(
            out, agents=tuple(b.freeze() if i == nxt else m for i, m in enumerate(agents))
        )
    return out


# ========================================================================== ground truth
def _minds(state: BombState) -> Minds:
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
    mind = _minds(state).agents[agent]
    kind, idx = key
    table = {ROOM: mind.rooms, BOMB: mind.bombs, SEQ: mind.sequences}[kind]
    return table[idx]


def _is_true(state: BombState, key: Key, value: tuple[int, ...]) -> bool:
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
        return _minds(state).agents[agent].perceived >= when or (
            mine is not None and mine.value == ()
        )
    b = belief(state, agent, key)
    return b is not None and _is_true(state, key, b.value)


def _latest_report(state: BombState, sender: int, key: Key, read_by: int) -> Report | None:
    minds = _minds(state)
    seen = minds.agents[read_by].perceived
    out = None
    for r in minds.reports:
        if r.sender == sender and r.key == key and r.time <= seen:
            out = r
    return out


def _told(state: BombState, sender: int, reader: int, holder: int, key: Key) -> bool:
    """``sender`` told ``reader`` the true current value of ``key``, and ``holder`` believes it."""
    report = _latest_report(state, sender, key, reader)
    if report is None or not _is_true(state, key, report.value):
        return False
    held = belief(state, holder, key)
    return held is not None and held.value == report.value


def evidence(state: BombState, observer: int, agent: int, key: Key) -> str | None:
    """Why ``observer`` believes ``agent`` knows ``key`` (``None``: it has no evidence).

    Labels: ``"saw_in_room"`` (E1), ``"told_by"`` (E2: ``agent`` told ``observer``),
    ``"told_to"`` (E3: ``observer`` told ``agent``), ``"public_score"`` (defusals).
    """
    minds = _minds(state)
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
    where = _minds(state).agents[observer].whereabouts[agent]
    best = max(where)
    return None if best < 0 else where.index(best)


# ================================================================================ probes
_QUESTIONS = {
    ROOM: (
        "Do you know the current contents of room {room}?",
        "Does player {target} know the current contents of room {room}?",
        "Based on the observation and previous history, is player {target} aware of the fact "
        "that you know the current contents of room {room}?",
    ),
    BOMB: (
        "Do you know the state and remaining sequence of bomb {bomb} has been changed?",
        "Does player {target} know the state and remaining sequence of bomb {bomb} has been "
        "changed?",
        "Based on the observation and previous history, is player {target} aware of the fact "
        "that you have changed the state and remaining sequence of bomb {bomb}?",
    ),
    DEFUSED: (
        "Do you know a bomb phase has just been defused?",
        "Does player {target} know a bomb phase has just been defused?",
        "Based on the observation and previous history, is player {target} aware of the fact "
        "that you know a bomb phase has just been defused?",
    ),
    SEQ: (
        "Do you know the sequence of bomb {bomb}?",
        "Does player {target} know the sequence of bomb {bomb}?",
        "Based on the observation and previous history, is player {target} aware of the fact "
        "that you know the sequence of bomb {bomb}?",
    ),
}
_KIND_NAMES = {
    ROOM: "room_contents",
    BOMB: "bomb_state",
    DEFUSED: "bomb_defused",
    SEQ: "bomb_sequence",
}


def _subjects(rec: ActionRecord) -> list[tuple[Key, bool]]:
    res = rec.result
    out: list[tuple[Key, bool]] = []
    if res.kind == ResultKind.MOVED:
        out.append(((ROOM, res.room), False))
    elif res.kind in (ResultKind.INSPECTED, ResultKind.WRONG_TOOL):
        out.append(((SEQ, res.bomb), False))  # type: ignore[arg-type]
    elif res.kind in (ResultKind.CUT, ResultKind.EXPLODED):
        out.append(((BOMB, res.bomb), False))  # type: ignore[arg-type]
    elif res.kind == ResultKind.DEFUSED:
        out.append(((DEFUSED, res.bomb), False))  # type: ignore[arg-type]
    if rec.announced is not None:
        out.append(((ROOM, rec.announced), True))
    return out


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _first_order_tag(state: BombState, target: int, key: Key) -> str:
    if key[0] == DEFUSED:
        return "known" if knows(state, target, key) else "unknown"
    b = belief(state, target, key)
    if b is None:
        return "no_belief"
    if _is_true(state, key, b.value):
        return f"true_{b.source}"
    return f"stale_{b.source}"  # e.g. left the room before it changed, or told a stale fact


def make_probes(game: BombGame, state: BombState, player: int) -> list[Probe]:
    """The App. C questions about ``player``'s last action, with computed answers.

    Returns ``[]`` before its first action, when the tracker is off or the episode is over.
    """
    if state.minds is None or state.over or game.config.probes == "none":
        return []
    minds = _minds(state)
    rec = minds.last_action[player]
    if rec is None:
        return []
    cfg = game.config
    names = cfg.agents
    teammates = [q for q in range(game.num_players) if q != player]
    if cfg.probes == "one" and teammates:
        salt = sum((i + 1) * (c + 1) for i, s in enumerate(state.mission.sequences) for c in s)
        teammates = [teammates[(salt + 7919 * rec.time) % len(teammates)]]
    out: list[Probe] = []
    rooms = state.mission.game_map.rooms
    for key, announced in _subjects(rec):
        kind, idx = key
        fields = {"room": rooms[idx]} if kind == ROOM else {"bomb": idx + 1}
        base = f"r{rec.round}.{names[player]}.{_KIND_NAMES[kind]}"
        if announced:
            base += ".announced"
        about: dict[str, Any] = {
            "actor": names[player],
            "action_round": rec.round,
            "action": rec.result.kind.name.lower(),
            "announced": announced,
            **fields,
        }
        q0, q1, q2 = _QUESTIONS[kind]
        truth0 = knows(state, player, key)
        out.append(
            Probe(
                f"{base}.order0",
                _KIND_NAMES[kind],
                0,
                q0.format(**fields),
                YES_NO,
                _yes(truth0),
                {**about, "target": None},
            )
        )
        for t in teammates:
            target = names[t]
            first = knows(state, t, key)
            out.append(
                Probe(
                    f"{base}.order1.{target}",
                    _KIND_NAMES[kind],
                    1,
                    q1.format(target=target, **fields),
                    YES_NO,
                    _yes(first),
                    {**about, "target": target, "belief": _first_order_tag(state, t, key)},
                )
            )
            ev = evidence(state, t, player, key)
            second = truth0 and ev is not None
            out.append(
                Probe(
                    f"{base}.order2.{target}",
                    _KIND_NAMES[kind],
                    2,
                    q2.format(target=target, **fields),
                    YES_NO,
                    _yes(second),
                    {**about, "target": target, "evidence": ev},
                )
            )
    return out


# ===================================================================== facts <-> text
def _colour_list(colours: tuple[int, ...], config: BombConfig) -> str:
    return "-".join(config.colors[c].capitalize() for c in colours)


def _bomb_list(bombs: tuple[int, ...]) -> str:
    names = [f"Bomb {b + 1}" for b in bombs]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def render_facts(facts: tuple[Fact, ...], config: BombConfig, gmap: GameMap, sender: int) -> str:
    """Canonical sentences for ``facts`` (what symbolic messages and the heuristic bots say)."""
    if not facts:
        return "I have no bomb intel yet."
    rooms = gmap.rooms
    out = []
    for f in facts:
        if isinstance(f, LocationFact):
            who = "I am" if f.agent == sender else f"Player {config.agents[f.agent]} is"
            out.append(f"{who} in Room {rooms[f.room]}.")
        elif isinstance(f, RoomFact):
            if f.bombs:
                out.append(f"Room {rooms[f.room]} contains {_bomb_list(f.bombs)}.")
            else:
                out.append(f"Room {rooms[f.room]} has no bomb.")
        elif isinstance(f, BombFact):
            if not f.remaining:
                out.append(f"Bomb {f.bomb + 1} is defused.")
            elif f.room is not None:
                out.append(
                    f"Bomb {f.bomb + 1} is in Room {rooms[f.room]} and its remaining sequence is "
                    f"{_colour_list(f.remaining, config)}."
                )
            else:
                out.append(
                    f"Bomb {f.bomb + 1} has remaining sequence {_colour_list(f.remaining, config)}."
                )
        elif isinstance(f, RequestFact):
            out.append(
                f"I need a {config.colors[f.color].capitalize()} tool in Room {rooms[f.room]}."
            )
    return " ".join(out)


_QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "`": "'"})
_SEP = r"(?:\s*(?:->|→|–|—|-|,|/|>|\band then\b|\bthen\b|\bfollowed by\b|\band\b)\s*)"
_NUM = r"\s*(?:no\.?\s*|number\s*|#\s*)?(\d+)"


class _Reader:
    """Compiled patterns for one configuration (colours and names)."""

    def __init__(self, config: BombConfig) -> None:
        col = "(?:" + "|".join(re.escape(c) for c in config.colors) + ")"
        self.col = re.compile(rf"\b{col}\b")
        seq = rf"(?P<seq>\b{col}\b(?:{_SEP}\b{col}\b)*)"
        self.seq = [
            re.compile(
                rf"\bbomb{_NUM}(?P<mid>[^.;!?]*?)\b(?:sequence|phases?|colou?rs?|order)\b"
                rf"(?:\s*(?:is|are|was|of|:|=))*\s*:?\s*{seq}"
            ),
            re.compile(rf"\bbomb{_NUM}\s*(?:is|:|=|\(|-)\s*{seq}"),
            re.compile(rf"\bbomb{_NUM}\b[^.;!?]*?{seq}\s+(?:sequence|phases?|order)\b"),
        ]
        self.bomb_room = re.compile(rf"\bbomb{_NUM}\b[^.;!?]*?\b(?:in|at)\s+room{_NUM}")
        self.defused = [
            re.compile(
                rf"\bbomb{_NUM}\s*(?:is|has been|was|got|are)?\s*(?:now\s+|already\s+|"
                r"successfully\s+|fully\s+)?(?:defused|disarmed|neutrali[sz]ed)\b"
            ),
            re.compile(rf"\b(?:defused|disarmed)\s+(?:the\s+)?bomb{_NUM}"),
        ]
        self.room_empty = [
            re.compile(
                rf"\broom{_NUM}\s*(?:is\s+|now\s+)*(?:has|contains|holds|with)?\s*(?:no|zero)"
                r"\s+(?:more\s+|other\s+|active\s+)?bombs?\b"
            ),
            re.compile(
                rf"\bno\s+(?:more\s+|other\s+|active\s+)?bombs?\s+(?:left\s+|remaining\s+)?"
                rf"in\s+room{_NUM}"
            ),
            re.compile(rf"\broom{_NUM}\s+(?:is\s+)?(?:now\s+)?(?:empty|clear(?:ed)?|bomb-free)\b"),
        ]
        self.room_has = [
            re.compile(rf"\broom{_NUM}\s+(?:has|contains|holds)\s+(?P<rest>[^.;!?]*)"),
            re.compile(rf"\bin\s+room{_NUM}\s+with\s+(?P<rest>[^.;!?]*)"),
        ]
        self.found_in = re.compile(rf"\bfound\s+(?P<rest>bombs?\b[^.;!?]*?)\s+in\s+room{_NUM}")
        self.bomb_nums = re.compile(r"\bbombs?\s*#?\s*(\d+(?:\s*(?:,|and|&)\s*#?\s*\d+)*)")
        first = r"\b(?:i|i'm|im|i'll|i've|we|we're|we'll|me)\b"
        self.first = re.compile(first)
        names = "|".join(re.escape(a) for a in config.agents)
        self.subject = re.compile(
            rf"\b(?:i|i'm|im|i'll|i've|we|we're|we'll|me|you|you're|he|she|they|it|{names})\b"
        )
        motion = (
            r"\b(?:mov\w*|go|goes|going|gone|head\w*|walk\w*|travel\w*|went|arriv\w*|way|"
            r"proceed\w*|return\w*)"
        )
        room = rf"(?:back\s+)?(?:to|towards|into|over to|for|at|in)?\s*(?:the\s+)?room{_NUM}"
        self.motion = re.compile(rf"{first}[^.;!?]{{0,40}}?{motion}\s+{room}")
        self.motion_start = re.compile(
            rf"^(?:\w+\s*[:,-]\s*)?(?:now\s+|next\s+|ok,?\s+|okay,?\s+)?"
            rf"(?:moving|going|heading|headed|on my way|returning)\s+{room}"
        )
        self.static = re.compile(
            r"\b(?:i am|i'm|im|i|we are|we're)\s+(?:now\s+|currently\s+|still\s+|already\s+|"
            rf"also\s+)*(?:in|at|inside)\s+(?:the\s+)?room{_NUM}"
        )
        self.need = re.compile(rf"\bneeds?\b[^.;!?]*?\b(?P<c>{col})\b[^.;!?]*?\broom{_NUM}")
        self.negation = re.compile(r"\bnot\b|n't\b|\bcannot\b|\bcan't\b")
        self.colors = config.colors


_READERS: dict[tuple[str, ...], _Reader] = {}  # by colours and names


def _reader(config: BombConfig) -> _Reader:
    key = (*config.colors, "|", *config.agents)
    if key not in _READERS:
        _READERS[key] = _Reader(config)
    return _READERS[key]


def extract_facts(text: str, sender: int, config: BombConfig, gmap: GameMap) -> tuple[Fact, ...]:
    """Facts a free-text message tells (see the module docstring for the phrasings read).

    Room numbers must be rooms of ``gmap`` and bomb numbers bombs of the mission; anything else is
    ignored. Never raises on any string.
    """
    if not isinstance(text, str) or not text.strip():
        return ()
    rd = _reader(config)
    n_bombs = config.num_bombs
    room_ids = {r: i for i, r in enumerate(gmap.rooms)}

    def room_of(token: str) -> int | None:
        return room_ids.get(int(token))

    def bomb_of(token: str) -> int | None:
        b = int(token) - 1
        return b if 0 <= b < n_bombs else None

    def colours(span: str) -> tuple[int, ...]:
        return tuple(rd.colors.index(c) for c in rd.col.findall(span))

    norm = text.translate(_QUOTES).lower()
    sentences = [s.strip() for s in re.split(r"(?<=[.!?;])\s+|\n+", norm) if s.strip()]
    facts: list[Fact] = []
    rooms: dict[int, set[int]] = {}
    empty: set[int] = set()
    moving_to: int | None = None  # a motion target ("I'm heading to room 8") wins over ...
    staying_in: int | None = None  # ... a static location ("I am in room 5")
    for s in sentences:
        m = rd.need.search(s)
        need_room = room_of(m.group(2)) if m else None
        if m and need_room is not None:
            facts.append(RequestFact(sender, rd.colors.index(m.group("c")), need_room))
        defused = set()
        for pat in rd.defused:
            for m in pat.finditer(s):
                b = bomb_of(m.group(1))
                if b is not None and b not in defused:
                    defused.add(b)
                    facts.append(BombFact(b, ()))
        seen_seq: set[int] = set()
        for pat in rd.seq:
            for m in pat.finditer(s):
                b = bomb_of(m.group(1))
                if b is None or b in seen_seq or b in defused:
                    continue
                seq = colours(m.group("seq"))
                if not seq:
                    continue
                seen_seq.add(b)
                where = None
                for mm in rd.bomb_room.finditer(s):
                    if bomb_of(mm.group(1)) == b:
                        where = room_of(mm.group(2))
                        break
                facts.append(BombFact(b, seq, where))
        for pat in rd.room_empty:
            for m in pat.finditer(s):
                r = room_of(m.group(1))
                if r is not None:
                    empty.add(r)
        has = [(m.group(1), m.group("rest")) for pat in rd.room_has for m in pat.finditer(s)]
        has += [(m.group(2), m.group("rest")) for m in rd.found_in.finditer(s)]
        for room_tok, rest in has:
            r = room_of(room_tok)
            if r is None or r in empty:
                continue
            nums = [bomb_of(x) for g in rd.bomb_nums.findall(rest) for x in re.findall(r"\d+", g)]
            found = {b for b in nums if b is not None}
            if found:
                rooms.setdefault(r, set()).update(found)
        first_person = False
        for clause in re.split(r",|\bbut\b|\bwhile\b|\band then\b|\band\b", s):
            clause = clause.strip()
            if rd.subject.search(clause):
                first_person = bool(rd.first.search(clause))
            elif first_person and clause:  # "I am in room 3 and [I] will go to room 0"
                clause = "i " + clause
            if not clause or rd.negation.search(clause):
                continue
            m = rd.motion.search(clause) or rd.motion_start.search(clause)
            if m and room_of(m.group(1)) is not None:
                moving_to = room_of(m.group(1))
                continue
            m = rd.static.search(clause)
            if m and room_of(m.group(1)) is not None:
                staying_in = room_of(m.group(1))
    out: list[Fact] = []
    location = moving_to if moving_to is not None else staying_in
    if location is not None:
        out.append(LocationFact(sender, location))
    for r in sorted(empty):
        out.append(RoomFact(r, ()))
    for r in sorted(rooms):
        out.append(RoomFact(r, tuple(sorted(rooms[r]))))
    out.extend(facts)
    seen: set[Fact] = set()
    unique = []
    for f in out:
        if f not in seen:
            seen.add(f)
            unique.append(f)
    return tuple(unique)
