"""Epistemic tracker and Theory-of-Mind probes with computed ground truth (paper 000, App. C).

The paper's ToM questions were answered by human annotators with a global view, its stated
limitation. Here the ground truth is computed from an *epistemic tracker* updated after every
action: who observed what, who was told what, and who saw whom. The rules only record each action
(:class:`~tom_envs.games.bomb_defusal.minds.PendingMinds`); the tracker replays the records, in
order, when it is first read (the probes, the ground truth, the QA), so a loop that never reads
it (RL training) does not pay for it, and one that does gets the same questions and answers as if
it had been updated inside every step.

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

When probes are asked (``probe_timing``): one moment
    ``"action"`` (default, the paper's timing, specs §1.9): right after the action, before any
    teammate has had a turn. The truth is computed at that moment, as the original code asked its
    questions right after each action with the action's result in hand: a teammate has not yet
    read the message sent with the action, nor seen where the actor went (the next player
    perceives at the start of its turn, which has not begun). The episode driver asks then
    (:attr:`BombProbes.moment` is ``"action"``) and the actor answers from its observation of the
    same moment (the result of the action it just took). :func:`make_probes` returns the
    questions only in the state the action left: once anyone else has acted the moment is gone
    and it returns ``[]``.

    ``"turn"``: at the actor's *next* decision (``moment="decision"``), with the observation it
    then acts on; the truth is computed then, when every teammate has had one turn since
    (messages sent with the action have been read, teammates have seen its location).

    Which questions (App. C / specs §1.9, named as ``probe_subject`` says: by the action, "the
    room you just moved to", or by number, App. C's "room 5"): a move → room contents; an inspection
    (or the wrong-tool feedback, which reveals the sequence) → the bomb's sequence; a cut that
    leaves phases → the bomb's state; a defusal → "a bomb phase has just been defused". Each
    subject gets the introspection question, and the first- and second-order questions about
    every teammate (``probes="all"``) or about one teammate drawn from the mission and the time
    (``probes="one"``, the paper's: "a random other agent is the target"). When the actor's
    message announced a room it is not in (e.g. it claimed a move it failed to make), the
    room-contents questions about the announced room are asked too (``about["announced"] =
    True``, kind ``"announced_room"``): the paper's false-belief case, a situation of its own
    (the actor does not know that room the way it knows the room it entered, so its own
    knowledge says more about its teammates' there: the known-groups check judges it apart).

Nothing is chosen by its answer
    Which questions are asked depends only on the action, the message and the team, never on a
    truth: every question of a subject is asked, none is thinned or reordered (the driver shuffles
    a step's questions from the episode seed). Some types are one-sided by nature, and the
    reports say so rather than hide them: right after a cut or a defusal no teammate has perceived
    it, so its first- and second-order questions are always "no" (and at ``"turn"`` timing most
    are "yes"); introspection about one's own action is almost always "yes". The reports give
    balanced accuracy and Cohen's kappa beside raw accuracy, and the known-groups check
    (:func:`tom_envs.core.probes.known_groups`) keeps a type from counting as a ToM measure
    unless the partner-blind answerer (``Probe.no_tom``: the asked player's own knowledge, "do I
    know X?") is at chance on it and the exact model (the tracker) is not.

What an agent receives
    The question text, its options and its subject (``Probe.subject``: the target teammate and
    the room or bomb the text names). ``about`` (the actor, the action, the teammate's belief tag
    or the evidence behind a second-order answer) stays with the truth, for analysis.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tom_envs.core.probes import Probe
from tom_envs.games.bomb_defusal.facts import extract_facts, render_facts
from tom_envs.games.bomb_defusal.minds import (
    BOMB,
    DEFUSED,
    ROOM,
    SEQ,
    ActionRecord,
    Key,
    MindBuilder,
    Minds,
    belief,
    evidence,
    is_true,
    knows,
    minds_of,
    perceive,
    reports_of,
)
from tom_envs.games.bomb_defusal.state import BombState
from tom_envs.games.bomb_defusal.view import (
    ActionResult,
    ChatMessage,
    LocationFact,
    ResultKind,
)

if TYPE_CHECKING:
    from tom_envs.games.bomb_defusal.rules import BombGame
    from tom_envs.games.bomb_defusal.state import BombConfig

__all__ = [
    "TIMINGS",
    "BombProbes",
    "extract_facts",
    "make_probes",
    "probe_timing",
    "render_facts",
    "update_minds",
]

YES_NO = ("yes", "no")


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
    me = MindBuilder(agents[actor])
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
        reports = reports + tuple(reports_of(message))
        claims = [f.room for f in message.facts if isinstance(f, LocationFact) and f.agent == actor]
        if claims and claims[-1] != after.locations[actor]:
            announced = claims[-1]
    records = list(minds.last_action)
    records[actor] = ActionRecord(now, before.round, result, announced)
    out = Minds(tuple(agents), reports, tuple(records))
    if not after.over:  # the next player perceives at the start of its turn
        nxt = after.turn
        b = MindBuilder(agents[nxt])
        perceive(b, game.observe(after, nxt), now)
        agents[nxt] = b.freeze()
        # the tracker of the action's own moment differs only in the next player's mind
        out = Minds(tuple(agents), reports, tuple(records), (nxt, out.agents[nxt]))
    return out


def _with_minds(state: BombState, minds: Minds) -> BombState:
    """``state`` with the tracker ``minds`` (``dataclasses.replace`` without its per-call cost)."""
    out = object.__new__(BombState)
    _set_state_dict(out, {**state.__dict__, "minds": minds})
    return out


_set_state_dict = BombState.__dict__["__dict__"].__set__


# ================================================================================ probes
_QUESTIONS = {
    ROOM: (
        "Do you know the current contents of {room}?",
        "Does player {target} know the current contents of {room}?",
        "Based on the observation and previous history, is player {target} aware of the fact "
        "that you know the current contents of {room}?",
    ),
    BOMB: (
        "Do you know the state and remaining sequence of {bomb} has been changed?",
        "Does player {target} know the state and remaining sequence of {bomb} has been changed?",
        "Based on the observation and previous history, is player {target} aware of the fact "
        "that you have changed the state and remaining sequence of {bomb}?",
    ),
    DEFUSED: (
        "Do you know a bomb phase has just been defused?",
        "Does player {target} know a bomb phase has just been defused?",
        "Based on the observation and previous history, is player {target} aware of the fact "
        "that you know a bomb phase has just been defused?",
    ),
    SEQ: (
        "Do you know the sequence of {bomb}?",
        "Does player {target} know the sequence of {bomb}?",
        "Based on the observation and previous history, is player {target} aware of the fact "
        "that you know the sequence of {bomb}?",
    ),
}
#: The kind of the room-contents questions about a room the actor's message announced but it is
#: not in (the false-belief case): the same App. C template, another situation.
ANNOUNCED = "announced_room"
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


#: How a question names the subject of the action it asks about
#: (``probe_subject="action"``).
#: (``probe_subject="action"``): the room by the move, a bomb by "acted on" whatever the action
#: (an inspection, a wrong tool or a cut: naming the action would be a cue of its own, since after
#: a wrong tool, which a player applies to a bomb whose sequence it was told, teammates know the
#: sequence far more often than after an inspection).
_ROOM_NAME = "the room you just moved to"
_BOMB_NAME = "the bomb you just acted on"


def _named(
    cfg: BombConfig, key: Key, announced: bool, rooms: tuple[int, ...]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """What a question about ``key`` names (its subject) and the fields of its text.

    ``probe_subject="action"`` (the default) names the subject by the action that made it the
    subject ("the room you just moved to", "the bomb you just acted on"); ``"number"`` by its
    number, App. C's wording ("room 5", "bomb 3"). A number is a cue a no-reasoning answerer
    learns across missions: in the paper's missions a bomb's number fixes its phases (bombs 1-2
    have one, 3-4 two, 5 three), which tells how often teammates have dealt with it, and the
    paper's map has a hub (room 0) that everyone crosses. The announced room is named by its
    number (the action did not take the actor there); the defusal question names nothing."""
    kind, idx = key
    if kind == DEFUSED:
        return {}, {}
    by_action = getattr(cfg, "probe_subject", "number") == "action" and not announced
    if kind == ROOM:
        if by_action:
            return {}, {"room": _ROOM_NAME}
        return {"room": rooms[idx]}, {"room": f"room {rooms[idx]}"}
    if by_action:
        return {}, {"bomb": _BOMB_NAME}
    return {"bomb": idx + 1}, {"bomb": f"bomb {idx + 1}"}


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _first_order_tag(state: BombState, target: int, key: Key) -> str:
    if key[0] == DEFUSED:
        return "known" if knows(state, target, key) else "unknown"
    b = belief(state, target, key)
    if b is None:
        return "no_belief"
    if is_true(state, key, b.value):
        return f"true_{b.source}"
    return f"stale_{b.source}"  # e.g. left the room before it changed, or told a stale fact


#: Values of ``probe_timing`` (see the module docstring).
TIMINGS = ("action", "turn")


def probe_timing(config: BombConfig) -> str:
    """The configured probe timing: ``config.probe_timing`` if the config declares it, else
    ``"action"`` (the paper's). Raises ``ValueError`` for a value not in :data:`TIMINGS`."""
    timing = getattr(config, "probe_timing", "action")
    if timing not in TIMINGS:
        raise ValueError(f"probe_timing must be one of {TIMINGS}, got {timing!r}")
    return timing


def _candidates(game: BombGame, state: BombState, player: int) -> list[Probe]:
    """Every App. C question about ``player``'s last action, with truths read from ``state``
    (which subjects and targets depend on the action, its message and the team only)."""
    rec = minds_of(state).last_action[player]
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
        named, text = _named(cfg, key, announced, rooms)
        name = ANNOUNCED if announced else _KIND_NAMES[kind]
        base = f"r{rec.round}.{names[player]}.{name}"
        about: dict[str, Any] = {
            "actor": names[player],
            "action_round": rec.round,
            "action": rec.result.kind.name.lower(),
            "announced": announced,
            **fields,
        }
        q0, q1, q2 = _QUESTIONS[kind]
        truth0 = knows(state, player, key)
        own = _yes(truth0)  # the partner-blind answer: what the asked player itself knows
        out.append(
            Probe(
                f"{base}.order0",
                name,
                0,
                q0.format(**text),
                YES_NO,
                own,
                {**about, "target": None},
                no_tom=own,
                subject=dict(named),
            )
        )
        for t in teammates:
            target = names[t]
            subject = {"target": target, **named}
            out.append(
                Probe(
                    f"{base}.order1.{target}",
                    name,
                    1,
                    q1.format(target=target, **text),
                    YES_NO,
                    _yes(knows(state, t, key)),
                    {**about, "target": target, "belief": _first_order_tag(state, t, key)},
                    no_tom=own,
                    subject=subject,
                )
            )
            ev = evidence(state, t, player, key)
            out.append(
                Probe(
                    f"{base}.order2.{target}",
                    name,
                    2,
                    q2.format(target=target, **text),
                    YES_NO,
                    _yes(truth0 and ev is not None),
                    {**about, "target": target, "evidence": ev},
                    no_tom=own,
                    subject=subject,
                )
            )
    return out


def _at_action(state: BombState) -> BombState:
    """``state`` with the tracker of its action's own moment: before the next player perceived
    the start of its turn (see :class:`~tom_envs.games.bomb_defusal.minds.Minds`)."""
    minds = minds_of(state)
    if minds.before_turn is None:
        return state
    nxt, mind = minds.before_turn
    agents = list(minds.agents)
    agents[nxt] = mind
    return _with_minds(state, Minds(tuple(agents), minds.reports, minds.last_action))


def make_probes(
    game: BombGame, state: BombState, player: int, timing: str | None = None
) -> list[Probe]:
    """The App. C questions about ``player``'s last action, with their truths at this moment.

    ``timing`` (default: the config's, see :func:`probe_timing`): ``"action"`` gives them in the
    state the action left (the truths of that moment, before the next player perceives), and
    ``[]`` once anyone else has acted; ``"turn"`` computes them from ``state`` (call it at the
    player's next decision). Returns ``[]`` before the player's first action and when the
    tracker is off; with ``"turn"`` also once the episode is over.
    """
    if state.minds is None or game.config.probes == "none":
        return []
    timing = probe_timing(game.config) if timing is None else timing
    if timing not in TIMINGS:
        raise ValueError(f"timing must be one of {TIMINGS}, got {timing!r}")
    if timing == "turn":
        return [] if state.over else _candidates(game, state, player)
    rec = minds_of(state).last_action[player]
    if rec is None or rec.time != state.time:
        return []
    return _candidates(game, _at_action(state), player)


class BombProbes:
    """The bundle's ``probes`` function: :func:`make_probes` at the configured timing, with the
    moment the driver asks (``"action"`` for ``probe_timing="action"``, ``"decision"`` for
    ``"turn"``)."""

    def __init__(self, game: BombGame) -> None:
        self.game = game
        self.moment = "action" if probe_timing(game.config) == "action" else "decision"

    def __call__(self, state: BombState, player: int) -> list[Probe]:
        """The probes to put to ``player`` now."""
        return make_probes(self.game, state, player)
