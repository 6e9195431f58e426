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

When probes are asked (``probe_timing``)
    ``"action"`` (default, the paper's timing, specs §1.9): right after the action, before any
    teammate has had a turn. The ground truth is computed at that moment, as the original code
    asked its questions right after each action with the action's result in hand: a teammate has
    not yet read the message sent with the action, nor seen where the actor went. The probes are
    frozen in the tracker then (:attr:`~tom_envs.games.bomb_defusal.minds.Minds.asked`) and
    :func:`make_probes` returns them from that moment until the actor acts again; the driver
    should ask the actor right after its action (a driver that asks at the actor's next decision
    gets the same questions and truths, which then refer to the moment of the action). The
    questions are balanced per question type (below); the announced-room questions are always
    asked.

    ``"action_all"``: the same timing and truths, every question asked (no balancing).

    ``"turn"`` (the suite's earlier timing): at the actor's *next* decision, with its current
    observation in hand; the truth is computed then, when every teammate has had one turn since
    (messages sent with the action have been read, teammates have seen its location); every
    question asked.

    Which questions (App. C / specs §1.9): a move to room ``r`` → room contents; an inspection
    (or the wrong-tool feedback, which reveals the sequence) → the bomb's sequence; a cut that
    leaves phases → the bomb's state; a defusal → "a bomb phase has just been defused". When the
    actor's message announced a room it is not in (e.g. it claimed a move it failed to make), the
    room-contents questions about the announced room are asked too (``about["announced"] =
    True``): the paper's false-belief case.

Balancing (``probe_timing="action"``)
    Right after an action the answer of most question types barely varies, so a per-type prior
    would score well without any ToM. Two measures, neither of which changes any answer:

    * **Question variants.** After a move (or an inspection) the introspection question is also
      asked, with the same App. C template, about every *other* room (every other bomb): "Do you
      know the current contents of room 3?" is "yes" only if the player saw room 3 (or was told)
      and nothing changed there since. The question about the action's own consequence is
      always "yes".
    * **Thinning.** A candidate question of type ``t`` (kind and order) whose true answer is
      ``a`` is asked at rate :func:`keep_rate`: the commoner answer of the reference fit
      (:data:`REFERENCE_COUNTS`, the heuristic team's candidates) is thinned to the rarer one's
      count. The k-th candidate of ``(t, a)`` in an episode is asked when
      ``floor(k·rate + u) > floor((k-1)·rate + u)`` (systematic sampling: the episode asks
      ``rate·count ± 1`` of them), ``u`` a hash of the mission, ``t`` and ``a`` (no generator
      state: same episode, same questions). Whether a question is asked depends on its truth
      only through the rate, never on the other questions' answers.

    What the game cannot balance at this timing (the figures are the reference fit's): the
    first- and second-order questions about a cut or a defusal (``bomb_state``,
    ``bomb_defused``) are always "no" (no teammate has perceived anything since the action), and
    their introspection questions always "yes". These one-sided types are asked at
    :data:`ONE_SIDED_RATE` (1 in 32), so they stay in the set without carrying the order
    totals. With the heuristic team (seeds 0..199, ``docs/results/paper000.md``) the majority
    answer per type then scores about 50-55% on every other type and on every order; an LLM
    team's questions follow its own play, so each report prints the baselines measured on the
    questions actually asked. ``"action_all"`` asks every candidate (no variants thinned, no
    balancing). ``Probe.no_tom`` is the asked player's own knowledge ("do I know X?"), the
    answer of a player without ToM (for introspection it is the truth itself).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from tom_envs.core.probes import Probe, question_type
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
    out = Minds(tuple(agents), reports, tuple(records), minds.asked, minds.tally)
    if probe_timing(game.config) != "turn":  # the paper's timing: before anyone else perceives
        out = _ask_now(game, _with_minds(after, out), actor)
    if not after.over:
        nxt = after.turn
        b = MindBuilder(out.agents[nxt])
        perceive(b, game.observe(after, nxt), now)
        agents[nxt] = b.freeze()
        out = Minds(tuple(agents), out.reports, out.last_action, out.asked, out.tally)
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
    if is_true(state, key, b.value):
        return f"true_{b.source}"
    return f"stale_{b.source}"  # e.g. left the room before it changed, or told a stale fact


#: Values of ``probe_timing`` (see the module docstring).
TIMINGS = ("action", "action_all", "turn")


def probe_timing(config: BombConfig) -> str:
    """The configured probe timing: ``config.probe_timing`` if the config declares it, else
    ``"action"`` (the paper's). Raises ``ValueError`` for a value not in :data:`TIMINGS`."""
    timing = getattr(config, "probe_timing", "action")
    if timing not in TIMINGS:
        raise ValueError(f"probe_timing must be one of {TIMINGS}, got {timing!r}")
    return timing


#: Decides, in order, whether a candidate (kind, order, answer, announced) is asked.
Keep = Callable[[str, int, str, bool], bool]


def _candidates(
    game: BombGame, state: BombState, player: int, keep: Keep | None = None
) -> list[Probe]:
    """Every App. C question about ``player``'s last action, with truths read from ``state``
    (only those ``keep`` accepts, when given: it sees every candidate, in this order)."""
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
        name = _KIND_NAMES[kind]
        truth0 = knows(state, player, key)
        own = _yes(truth0)  # the no-ToM answer: what the asked player itself knows
        if keep is None or keep(name, 0, own, announced):
            out.append(
                Probe(
                    f"{base}.order0",
                    name,
                    0,
                    q0.format(**fields),
                    YES_NO,
                    own,
                    {**about, "target": None},
                    no_tom=own,
                )
            )
        if not announced:
            out.extend(_variants(state, player, key, base, about, keep))
        for t in teammates:
            target = names[t]
            answer = _yes(knows(state, t, key))
            if keep is None or keep(name, 1, answer, announced):
                out.append(
                    Probe(
                        f"{base}.order1.{target}",
                        name,
                        1,
                        q1.format(target=target, **fields),
                        YES_NO,
                        answer,
                        {**about, "target": target, "belief": _first_order_tag(state, t, key)},
                        no_tom=own,
                    )
                )
            ev = evidence(state, t, player, key)
            answer = _yes(truth0 and ev is not None)
            if keep is None or keep(name, 2, answer, announced):
                out.append(
                    Probe(
                        f"{base}.order2.{target}",
                        name,
                        2,
                        q2.format(target=target, **fields),
                        YES_NO,
                        answer,
                        {**about, "target": target, "evidence": ev},
                        no_tom=own,
                    )
                )
    return out


def _variants(
    state: BombState,
    player: int,
    key: Key,
    base: str,
    about: dict[str, Any],
    keep: Keep | None = None,
) -> list[Probe]:
    """The introspection question of the same template about every *other* room (after a move)
    or every other bomb (after an inspection): App. C's question with another subject, whose
    answer depends on what the player has seen and whether it is still true."""
    kind = key[0]
    if kind == ROOM:
        rooms = state.mission.game_map.rooms
        others = [((ROOM, r), {"room": rooms[r]}, f"room{rooms[r]}") for r in range(len(rooms))]
    elif kind == SEQ:
        others = [
            ((SEQ, b), {"bomb": b + 1}, f"bomb{b + 1}") for b in range(state.mission.num_bombs)
        ]
    else:
        return []
    out = []
    for k, fields, tag in others:
        if k == key:
            continue
        own = _yes(knows(state, player, k))
        if keep is not None and not keep(_KIND_NAMES[kind], 0, own, False):
            continue
        out.append(
            Probe(
                f"{base}.order0.variant.{tag}",
                _KIND_NAMES[kind],
                0,
                _QUESTIONS[kind][0].format(**fields),
                YES_NO,
                own,
                {**about, **fields, "target": None, "variant": True},
                no_tom=own,
            )
        )
    return out


def _unit(text: str) -> float:
    """A uniform number in [0, 1) fixed by ``text`` (a hash: no generator state)."""
    digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0**64


#: The reference fit of the balancing: the candidate questions of each type that the heuristic
#: team produces at ``probe_timing="action_all"`` (seeds 0..1999, the default mission), as
#: (true "yes", true "no"). Types absent here keep every question.
REFERENCE_COUNTS: dict[str, tuple[int, int]] = {
    "room_contents/introspection": (64486, 40669),
    "room_contents/first_order": (23334, 18728),
    "room_contents/second_order": (15564, 26498),
    "bomb_sequence/introspection": (40865, 24140),
    "bomb_sequence/first_order": (4970, 21032),
    "bomb_sequence/second_order": (2735, 23267),
    "bomb_state/introspection": (8000, 0),
    "bomb_state/first_order": (0, 16000),
    "bomb_state/second_order": (0, 16000),
    "bomb_defused/introspection": (7286, 0),
    "bomb_defused/first_order": (0, 14572),
    "bomb_defused/second_order": (0, 14572),
}

#: Keep rate of a type whose answer cannot vary at the paper's timing (one side is 0 above).
ONE_SIDED_RATE = 1 / 32


def keep_rate(qtype: str, answer: str) -> float:
    """The probability that a candidate question of ``qtype`` whose true answer is ``answer`` is
    asked at ``probe_timing="action"``: the commoner answer of the reference fit thinned to the
    rarer one's count, every question of a one-sided type at :data:`ONE_SIDED_RATE`."""
    counts = REFERENCE_COUNTS.get(qtype)
    if counts is None:
        return 1.0
    yes, no = counts
    if yes == 0 or no == 0:
        return ONE_SIDED_RATE
    mine, other = (yes, no) if answer == "yes" else (no, yes)
    return min(1.0, other / mine)


_QTYPES = {(kind, order): question_type(kind, order) for kind in _KIND_NAMES.values()
           for order in range(3)}  # fmt: skip
_keep_rate = lru_cache(maxsize=64)(keep_rate)


@lru_cache(maxsize=1024)
def _offset(mission: str, qtype: str, answer: str) -> float:
    """The sampling offset ``u`` of a question type and answer in a mission."""
    return _unit(f"{mission}|{qtype}|{answer}")


def _ask_now(game: BombGame, state: BombState, actor: int) -> Minds:
    """Freeze the questions about ``actor``'s action just applied (balanced for ``"action"``)."""
    minds = minds_of(state)
    tally = {(t, a): n for t, a, n in minds.tally}
    mission = state.mission.text_key  # the sampling offsets: a hash of mission, type and answer

    def keep(kind: str, order: int, answer: str, announced: bool) -> bool:
        if announced:  # the false-belief case: always asked
            return True
        qtype = _QTYPES[kind, order]
        k = tally.get((qtype, answer), 0) + 1
        tally[(qtype, answer)] = k
        rate = _keep_rate(qtype, answer)
        u = _offset(mission, qtype, answer) if rate < 1.0 else 0.0
        return math.floor(k * rate + u) > math.floor((k - 1) * rate + u)

    balance = probe_timing(game.config) == "action"
    asked = _candidates(game, state, actor, keep if balance else None)
    per_player = list(minds.asked) or [()] * game.num_players
    per_player[actor] = tuple(asked)
    return Minds(
        minds.agents,
        minds.reports,
        minds.last_action,
        tuple(per_player),
        tuple((t, a, n) for (t, a), n in sorted(tally.items())),
    )


def make_probes(
    game: BombGame, state: BombState, player: int, timing: str | None = None
) -> list[Probe]:
    """The App. C questions about ``player``'s last action, with computed answers.

    ``timing`` (default: the config's, see :func:`probe_timing`): ``"action"`` and
    ``"action_all"`` return the questions frozen right after the action (the paper's timing),
    from then until the player acts again; ``"turn"`` computes every question from ``state`` now
    (the earlier timing: call it at the player's next decision). Returns ``[]`` before the
    player's first action and when the tracker is off; with ``"turn"`` also once the episode is
    over.
    """
    if state.minds is None or game.config.probes == "none":
        return []
    timing = probe_timing(game.config) if timing is None else timing
    if timing not in TIMINGS:
        raise ValueError(f"timing must be one of {TIMINGS}, got {timing!r}")
    if timing == "turn":
        return [] if state.over else _candidates(game, state, player)
    if probe_timing(game.config) == "turn":
        raise ValueError(
            f"timing={timing!r} needs the probes frozen after each action: configure "
            "probe_timing='action' or 'action_all' (this game asks at the next turn)"
        )
    asked = minds_of(state).asked
    return list(asked[player]) if asked else []
