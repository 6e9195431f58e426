"""The epistemic tracker, the fact extractor and the ToM probes' ground truth.

The hard cases of the paper (§5.3, §6.5): the teammate who left before the change, the fact told
by message, and the agent who announced a move it failed to make (false belief).
"""

from __future__ import annotations

import numpy as np
import pytest
from bomb_helpers import ROOM, B, G, R, act, new_game, play, start

from tom_envs.games.bomb_defusal import minds, tom
from tom_envs.games.bomb_defusal.maps import paper_map
from tom_envs.games.bomb_defusal.rules import ActionKind, MessageOption, encode_action
from tom_envs.games.bomb_defusal.state import BombConfig
from tom_envs.games.bomb_defusal.view import BombFact, LocationFact, RequestFact, RoomFact

ALPHA, BRAVO, CHARLIE = 0, 1, 2


def probes_by_id(game, state, player, timing="turn"):
    """The probes about ``player``'s last action, keyed without the round and actor."""
    return {p.id.split(".", 2)[-1]: p for p in tom.make_probes(game, state, player, timing)}


# ------------------------------------------------------------------- hard case 1: left before
@pytest.mark.parametrize("visible", [True, False])
@pytest.mark.parametrize("told", [False, True])
def test_teammate_who_left_before_the_change(visible: bool, told: bool) -> None:
    game = new_game(teammate_locations=visible)
    s = start(game, [(0, (R,)), (3, (G,))], at=0)
    note = "Room 0 has no bomb." if told else None
    s = play(
        game,
        s,
        [
            ("inspect",),  # alpha learns bomb 1 is red
            ("move", 3),  # bravo leaves room 0 (it saw bomb 1 there)
            ("move", 5),  # charlie leaves too
            ("use", R, note),  # round 2: alpha defuses bomb 1: room 0 is now empty
            ("inspect",),  # bravo, in room 3 (it has read alpha's message, if any)
            ("move", 0),  # charlie comes back to room 0
        ],
    )
    room0 = ("room", ROOM[0])
    assert minds.knows(s, ALPHA, room0), "alpha made the change"
    assert minds.knows(s, BRAVO, room0) == told, "untold, bravo's belief is stale"
    assert minds.belief(s, BRAVO, room0).value == (() if told else (0,))
    s = play(game, s, [("wait",), ("wait",)])  # round 3: alpha, bravo; charlie to act
    p = probes_by_id(game, s, CHARLIE)
    assert p["room_contents.order0"].answer == "yes"
    assert p["room_contents.order1.bravo"].answer == ("yes" if told else "no")
    assert p["room_contents.order1.bravo"].about["belief"] == (
        "true_told" if told else "stale_seen"
    )
    assert p["room_contents.order1.alpha"].answer == "yes"
    # second order: bravo believes charlie knows room 0 if it believes charlie has been there
    # since room 0 last changed as far as bravo knows. Visible: bravo sees charlie there now.
    # Hidden: bravo last saw charlie in room 0 at the start; that still counts unless bravo
    # has learned since that room 0 changed (told).
    expected = "yes" if visible or not told else "no"
    assert p["room_contents.order2.bravo"].answer == expected
    assert p["room_contents.order2.alpha"].answer == "yes", "alpha is in room 0 with charlie"
    assert p["room_contents.order2.alpha"].about["evidence"] == "saw_in_room"


# -------------------------------------------------------------- hard case 2: told by message
@pytest.mark.parametrize("symbolic", [False, True])
def test_fact_told_by_message(symbolic: bool) -> None:
    game = new_game(symbolic_messages=symbolic)
    s = start(game, [(0, (G, B)), (5, (R,))], at=0)
    s = play(game, s, [("inspect",), ("move", 5), ("move", 6)])
    # round 2: alpha inspects again and tells the team the sequence
    seq = ("seq", 0)
    assert not minds.knows(s, BRAVO, seq) and not minds.knows(s, CHARLIE, seq)
    p = probes_by_id(game, s, ALPHA)  # about alpha's round-1 inspection, nobody told yet
    assert p["bomb_sequence.order0"].answer == "yes"
    assert p["bomb_sequence.order1.bravo"].answer == "no"
    assert p["bomb_sequence.order2.bravo"].answer == "no"
    if symbolic:
        a = encode_action(game.config, ActionKind.INSPECT, None, MessageOption.SHARE_BOMBS)
        s = game.step(s, {0: a}, np.random.default_rng(0)).state
        assert s.chat[-1].facts == (BombFact(0, (G, B), ROOM[0]),)
    else:
        s = act(game, s, "inspect", message="Bomb 1 is in room 0, sequence: green then blue").state
    assert minds.knows(s, BRAVO, seq), "bravo has read it: its turn has come"
    assert not minds.knows(s, CHARLIE, seq), "charlie reads it at its turn"
    s = play(game, s, [("wait",)])
    assert minds.knows(s, CHARLIE, seq)
    s = play(game, s, [("wait",)])
    assert minds.belief(s, BRAVO, seq).source == "told"
    p = probes_by_id(game, s, ALPHA)  # about alpha's round-2 action (inspect + message)
    assert p["bomb_sequence.order1.bravo"].answer == "yes"
    assert p["bomb_sequence.order1.bravo"].about["belief"] == "true_told"
    assert p["bomb_sequence.order2.bravo"].answer == "yes"
    assert p["bomb_sequence.order2.bravo"].about["evidence"] == "told_by"


def test_stale_claims_do_not_override_newer_knowledge() -> None:
    game = new_game()
    s = start(game, [(0, (G, B)), (5, (R,))], at=0)
    s = play(
        game,
        s,
        [
            ("inspect",),
            ("use", G),  # bravo cuts green: remaining Blue
            ("move", 5, "Bomb 1 is in Room 0 and its remaining sequence is Green-Blue."),
        ],
    )  # charlie never inspected: its claim is false (stale at best)
    s = play(game, s, [("move", 3)])  # bravo has just read charlie's claim
    assert minds.belief(s, BRAVO, ("bomb", 0)).value == (B,), "bravo keeps what it saw"
    assert minds.knows(s, BRAVO, ("bomb", 0))
    assert minds.belief(s, ALPHA, ("bomb", 0)).value == (G, B) and not minds.knows(
        s, ALPHA, ("bomb", 0)
    )


# ----------------------------------------------------- hard case 3: false announcement
@pytest.mark.parametrize("visible", [True, False])
def test_announced_move_that_failed_is_a_false_belief(visible: bool) -> None:
    game = new_game(teammate_locations=visible)
    s = start(game, [(5, (R,)), (8, (G,))], at=5)
    s = play(game, s, [("wait",), ("move", 0), ("move", 6)])  # charlie can no longer see alpha
    view = game.observe(s, ALPHA)
    from tom_envs.games.bomb_defusal.text import BombText

    reply = 'Action selection: Move to Room 8. Message to Team: "I\'m moving to Room 8."'
    parsed = BombText(game.config).parse_action(view, reply)
    assert not parsed.valid and "not adjacent" in parsed.feedback  # 8 is not next to 5
    assert parsed.message == "I'm moving to Room 8."
    # the runner plays a fallback; the message is still sent
    s = act(game, s, "inspect", message=parsed.message).state
    assert s.chat[-1].facts == (LocationFact(ALPHA, ROOM[8]),)
    s = play(game, s, [("wait",), ("wait",)])  # bravo and charlie read the claim
    believed = minds.believed_room(s, CHARLIE, ALPHA)
    assert believed == (ROOM[5] if visible else ROOM[8]), "hidden: charlie believes the claim"
    p = probes_by_id(game, s, ALPHA)
    q = {k: v for k, v in p.items() if k.startswith("announced_room.")}
    assert q["announced_room.order0"].answer == "no", "alpha never saw room 8"
    assert q["announced_room.order0"].question == (
        "Do you know the current contents of room 8?"
    )
    second = q["announced_room.order2.charlie"]
    assert second.answer == "no", "alpha does not know: charlie cannot be aware of it"
    assert second.question == (
        "Based on the observation and previous history, is player charlie aware of the fact "
        "that you know the current contents of room 8?"
    )
    # hidden locations: charlie *believes* alpha knows (a false belief the probe exposes)
    assert second.about["evidence"] == (None if visible else "saw_in_room")
    assert p["bomb_sequence.order0"].answer == "yes", "alpha's actual action was an inspection"


# ------------------------------------------------------------------------- other questions
def test_state_change_and_defusal_questions() -> None:
    game = new_game()
    s = start(game, [(0, (R, B)), (5, (G,))], at=0)
    s = play(game, s, [("use", R), ("wait",), ("wait",)])  # alpha cuts red; bravo's wait inspects
    p = probes_by_id(game, s, ALPHA)
    assert p["bomb_state.order0"].question == (  # named by the action (the suite's default)
        "Do you know the state and remaining sequence of the bomb you just acted on has been "
        "changed?"
    )
    assert p["bomb_state.order0"].subject == {}
    assert p["bomb_state.order1.bravo"].subject == {"target": "bravo"}
    paper = new_game(probe_subject="number")  # App. C's wording names the bomb's number
    (q,) = [x for x in tom.make_probes(paper, play(paper, start(paper, [(0, (R, B)), (5, (G,))],
            at=0), [("use", R)]), ALPHA) if x.order == 0]  # fmt: skip
    assert q.question == "Do you know the state and remaining sequence of bomb 1 has been changed?"
    assert q.subject == {"bomb": 1}
    assert p["bomb_state.order0"].answer == "yes"
    assert p["bomb_state.order1.bravo"].answer == "yes", "bravo inspected after the cut"
    assert p["bomb_state.order1.charlie"].answer == "yes", "charlie inspected too"
    assert p["bomb_state.order2.bravo"].answer == "no", "only a message can say who cut"
    s = play(game, s, [("wait", None, "I cut red on bomb 1."), ("use", B)])  # bravo defuses
    s = play(game, s, [("wait",), ("wait",)])  # charlie, then alpha: bravo to act
    p = probes_by_id(game, s, BRAVO)
    assert p["bomb_defused.order0"].question == "Do you know a bomb phase has just been defused?"
    assert p["bomb_defused.order0"].answer == "yes"
    assert p["bomb_defused.order1.alpha"].answer == "yes", "the team score is public"
    assert p["bomb_defused.order2.alpha"].answer == "yes"


def test_probes_only_after_an_action_and_not_when_off() -> None:
    game = new_game()
    s = start(game, [(0, (R,))], at=3)
    assert tom.make_probes(game, s, ALPHA) == [] == tom.make_probes(game, s, ALPHA, "turn")
    s = play(game, s, [("move", 0)])
    assert tom.make_probes(game, s, BRAVO) == []
    # the action's moment: 1 introspection + 2 teammates x 2 orders, each with its subject
    now = tom.make_probes(game, s, ALPHA)
    assert len(now) == 5 == len(tom.make_probes(game, s, ALPHA, "turn"))
    assert {tuple(sorted(p.subject.items())) for p in now} == {
        (), (("target", "bravo"),), (("target", "charlie"),)
    }
    assert now[0].question == "Do you know the current contents of the room you just moved to?"
    paper = new_game(probe_subject="number")
    numbered = tom.make_probes(paper, play(paper, start(paper, [(0, (R,))], at=3),
                                           [("move", 0)]), ALPHA)  # fmt: skip
    assert numbered[0].question == "Do you know the current contents of room 0?"
    assert {tuple(sorted(p.subject.items())) for p in numbered} == {
        (("room", 0),), (("room", 0), ("target", "bravo")), (("room", 0), ("target", "charlie"))
    }
    later = play(game, s, [("move", 0)])  # bravo has acted: alpha's moment is gone
    assert tom.make_probes(game, later, ALPHA) == [] and tom.make_probes(game, later, BRAVO)
    one = new_game(probes="one")
    s1 = play(one, start(one, [(0, (R,))], at=3), [("move", 0)])
    assert len(tom.make_probes(one, s1, ALPHA)) == 3  # the paper's: one teammate, three orders
    off = new_game(probes="none")
    s2 = play(off, start(off, [(0, (R,))], at=3), [("move", 0)])
    assert s2.minds is None and tom.make_probes(off, s2, ALPHA) == []
    with pytest.raises(ValueError, match="timing"):
        tom.make_probes(game, s, ALPHA, "action_all")


def test_the_truth_is_the_action_moments_before_the_next_player_perceives() -> None:
    """Right after alpha's move, bravo (next) has not yet perceived: the action-moment truth
    says bravo does not know alpha is in room 0 with it; at bravo's turn it does."""
    game = new_game()
    s = start(game, [(0, (R,)), (5, (G,))], at=5)
    s = play(game, s, [("wait",), ("move", 0), ("wait",)])  # bravo now in room 0
    s = play(game, s, [("move", 0, "Room 0 contains Bomb 1.")])  # alpha joins bravo, and says so
    at_action = {p.id.split(".", 2)[-1]: p for p in tom.make_probes(game, s, ALPHA)}
    at_turn = probes_by_id(game, s, ALPHA)  # computed on the state now: bravo has perceived
    second = "room_contents.order2.bravo"
    assert at_action[second].answer == "no" and at_turn[second].answer == "yes"
    assert at_action["room_contents.order1.bravo"].answer == "yes"  # bravo saw room 0 itself


def test_probe_ids_are_unique_and_answers_valid_over_random_play() -> None:
    game = new_game()
    rng = np.random.default_rng(0)
    from gymnasium.utils import seeding

    kinds = set()
    for seed in range(10):
        s = game.initial_state(seeding.np_random(seed)[0])
        while not s.over:
            probes = tom.make_probes(game, s, s.turn, "turn")
            assert len({p.id for p in probes}) == len(probes)
            kinds |= {p.kind for p in probes}
            legal = game.legal_actions(s, s.turn)
            s = game.step(s, {s.turn: int(rng.choice(legal))}, rng).state
    assert kinds <= {"room_contents", "bomb_sequence", "bomb_state", "bomb_defused", "announced_room"}
    assert kinds >= {"room_contents", "bomb_sequence", "bomb_state", "bomb_defused"}


# ---------------------------------------------------------------------------- extractor
CFG = BombConfig()
MAP = paper_map()


def facts(text: str, sender: int = ALPHA) -> set:
    return set(tom.extract_facts(text, sender, CFG, MAP))


def test_canonical_sentences_round_trip() -> None:
    rng = np.random.default_rng(0)
    for _ in range(300):
        pool = [
            LocationFact(ALPHA, int(rng.integers(5))),
            RoomFact(int(rng.integers(5)), tuple(sorted(set(rng.integers(5, size=2).tolist())))),
            RoomFact(int(rng.integers(5)), ()),
            BombFact(
                int(rng.integers(5)),
                tuple(rng.permutation(3)[: rng.integers(1, 4)].tolist()),
                int(rng.integers(5)),
            ),
            BombFact(int(rng.integers(5)), ()),
            RequestFact(ALPHA, int(rng.integers(3)), int(rng.integers(5))),
        ]
        chosen = [f for f in pool if rng.random() < 0.5]
        rooms = [f.room for f in chosen if isinstance(f, RoomFact)]
        bombs = [f.bomb for f in chosen if isinstance(f, BombFact)]
        if len(set(rooms)) != len(rooms) or len(set(bombs)) != len(bombs):
            continue
        text = tom.render_facts(tuple(chosen), CFG, MAP, ALPHA)
        assert facts(text) == set(chosen), text


@pytest.mark.parametrize(
    "text, expected",
    [
        ("I'm heading to room 8 to check it out", {LocationFact(ALPHA, ROOM[8])}),
        ("Moving to Room 5.", {LocationFact(ALPHA, ROOM[5])}),
        ("I am in room 3 and will go to room 0", {LocationFact(ALPHA, ROOM[0])}),
        ("Bravo, go to room 3", set()),
        ("I'm not going to room 6", set()),
        ("Room 5 has bomb 3", {RoomFact(ROOM[5], (2,))}),
        ("I'm in room 6 with bomb 2.", {LocationFact(ALPHA, ROOM[6]), RoomFact(ROOM[6], (1,))}),
        ("Found bomb 4 in room 0!", {RoomFact(ROOM[0], (3,))}),
        ("room 3 is empty", {RoomFact(ROOM[3], ())}),
        ("There are no bombs in room 8.", {RoomFact(ROOM[8], ())}),
        ("Bomb 5 sequence: red, green, blue", {BombFact(4, (R, G, B))}),
        ("bomb 2 is blue", {BombFact(1, (B,))}),
        ("Bomb 3's phases are Green -> Red", {BombFact(2, (G, R))}),
        ("bomb #1 has a red-blue sequence", {BombFact(0, (R, B))}),
        ("Bomb 4 is defused!", {BombFact(3, ())}),
        ("I defused bomb 2", {BombFact(1, ())}),
        ("I need a Blue tool in Room 5.", {RequestFact(ALPHA, B, ROOM[5])}),
        ("Apply the red tool to bomb 3", set()),
        ("bomb 2 is in room 3", set()),
        ("Let's meet in room 42 about bomb 9", set()),
        ("", set()),
    ],
)
def test_free_text_extractor(text: str, expected: set) -> None:
    assert facts(text) == expected


def test_extractor_never_raises() -> None:
    for junk in [
        "room",
        "bomb bomb bomb 1 1 1",
        "Room 5 has",
        "\n\n",
        "red red red",
        "“”",
        "9" * 50,
    ]:
        tom.extract_facts(junk, ALPHA, CFG, MAP)
    assert tom.extract_facts(None, ALPHA, CFG, MAP) == ()  # type: ignore[arg-type]


def test_probe_timing_is_a_game_argument() -> None:
    """The paper's timing by default, the next-turn timing by name; each asks at its own moment
    (the driver's ``probe_moment``) and every question of a subject is asked."""
    from tom_envs.agents import make_agent
    from tom_envs.experiments.paper000 import AlwaysYes
    from tom_envs.registration import game_spec
    from tom_envs.runner import play_episode

    spec = game_spec("BombDefusal")

    def steps(timing: str) -> list:
        team = [AlwaysYes(make_agent("heuristic", spec)) for _ in range(3)]
        ep = play_episode(spec, team, 0, {"probe_timing": timing})
        return [s for s in ep.steps if s.get("probes")]

    action, turn = steps("action"), steps("turn")
    assert {s["probe_moment"] for s in action} == {"action"}
    assert {s["probe_moment"] for s in turn} == {"decision"}
    truths = lambda ss: {(p["id"], p["truth"]) for s in ss for p in s["probes"]}  # noqa: E731
    ids = lambda ss: {i for i, _ in truths(ss)}  # noqa: E731
    assert ids(turn) <= ids(action)  # the same questions (the last action's are never asked)
    assert truths(turn) - truths(action), "later, teammates have read the actor's message"
    with pytest.raises(ValueError, match="probe_timing"):
        play_episode(spec, [make_agent("heuristic", spec) for _ in range(3)], 0,
                     {"probe_timing": "action_all"})  # fmt: skip


def test_which_questions_are_asked_never_depends_on_an_answer() -> None:
    """Every question of a subject is asked: per action, the introspection question and both
    orders about every teammate, for each subject of the action; the set is the same whatever
    the truths (nothing is thinned)."""
    from gymnasium.utils import seeding

    game = new_game()
    rng = np.random.default_rng(0)
    for seed in range(5):
        s = game.initial_state(seeding.np_random(seed)[0])
        while not s.over:
            actor = s.turn
            legal = game.legal_actions(s, actor)
            s = game.step(s, {actor: int(rng.choice(legal))}, rng).state
            probes = tom.make_probes(game, s, actor)
            subjects = {p.id.split(".order")[0] for p in probes}
            assert len(probes) == 5 * len(subjects)
            for subject in subjects:
                mine = sorted(p.id for p in probes if p.id.startswith(subject + "."))
                mates = [n for i, n in enumerate(game.config.agents) if i != actor]
                assert [i.split(subject)[1] for i in mine] == [
                    ".order0", *(f".order{k}.{m}" for k in (1, 2) for m in mates)
                ]
