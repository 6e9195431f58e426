"""CollabCapture views (egocentric, nothing pending leaks), vector, text (the paper's) and parser."""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.games.collab_capture.encode import PIECES, SIZE
from tom_envs.games.collab_capture.env import make_bundle, raw_env
from tom_envs.games.collab_capture.rules import Action, CaptureState
from tom_envs.games.collab_capture.view import CaptureView

S, P = int(Action.STAY), int(Action.PRESS)
BUNDLE = make_bundle()  # door12_closed
GAME, TEXT, ENC = BUNDLE.game, BUNDLE.text, BUNDLE.encoder


def test_views_are_egocentric() -> None:
    s = CaptureState(rooms=(9, 3), thief=5, doors=(False, True), turn=4)
    v0, v1 = GAME.observe(s, 0), GAME.observe(s, 1)
    assert v0 == CaptureView(
        player=0,
        my_room=9,
        partner_room=3,
        thief_room=5,
        doors=((1, 2, 9, False), (3, 4, 8, True)),
        turn=4,
        max_turns=30,
        captured=False,
        legal_actions=(S, 6, P),
    )
    assert (v1.my_room, v1.partner_room, v1.name, v1.partner_name) == (3, 9, "Bob", "Alice")
    assert v1.legal_actions == (S, 2, 4)
    with pytest.raises(ValueError):
        GAME.observe(s, 2)


def test_vector_layout() -> None:
    assert SIZE == 31 and [n for _, n in PIECES] == [9, 9, 9, 2, 1, 1]
    s = CaptureState(rooms=(9, 3), thief=5, doors=(False, True), turn=3)
    v = ENC.encode(GAME.observe(s, 1))
    assert np.flatnonzero(v[:27]).tolist() == [2, 9 + 8, 18 + 4]  # me 3, partner 9, thief 5
    assert v[27:29].tolist() == [0.0, 1.0] and v[29] == pytest.approx(0.1) and v[30] == 0.0
    assert np.array_equal(ENC.encode_state(s), ENC.encode(GAME.observe(s, 0)))


def test_a_pending_action_does_not_leak() -> None:
    env = raw_env()
    env.reset(seed=0)
    before = (env.observe("player_1"), env.text_observation("player_1"), env.view("player_1"))
    env.step(6)  # Alice moves to 6; Bob has not chosen yet
    after = (env.observe("player_1"), env.text_observation("player_1"), env.view("player_1"))
    assert np.array_equal(before[0]["observation"], after[0]["observation"])
    assert before[1:] == after[1:]


def test_the_papers_state_sentence_and_options() -> None:
    s = GAME.initial_state(None)
    assert TEXT.observation_text(GAME.observe(s, 0)) == (
        "I Alice am in room 1. Bob is in room 6. Thief is in room 2. Door between room 1 and "
        "room 2 is closed. Door between room 3 and room 4 is open.\n"
        "Turn 1 of at most 30. Available actions:\n"
        "A. Stay in current room.\n"
        "B. Move to room 6."
    )
    bob = TEXT.observation_text(GAME.observe(s, 1))
    assert bob.startswith("I Bob am in room 6. Alice is in room 1. Thief is in room 2.")
    assert bob.endswith(
        "A. Stay in current room.\nB. Move to room 5.\nC. Move to room 9.\nD. Move to room 1."
    )
    s9 = CaptureState(rooms=(9, 1), thief=4, doors=(False, True))
    assert TEXT.action_text(GAME.observe(s9, 0), P) == "Press button in room 9"
    over = CaptureState(rooms=(2, 6), thief=2, doors=(False, True), turn=3, captured=True)
    assert TEXT.observation_text(GAME.observe(over, 0)).endswith(
        "The thief has been caught after 3 turns."
    )


def test_rules_prompt() -> None:
    rules = TEXT.rules_prompt(GAME.observe(GAME.initial_state(None), 1))
    assert rules.startswith('I Bob am playing the game "Collab Capture" with Alice.')
    for line in (
        "- Room 1 directly connects to Room 2 and Room 6.",
        "- Room 6 directly connects to Room 5, Room 9 and Room 1.",
        "There is a door between Room 1 and Room 2 controlled by a button in Room 9. There is a "
        "door between Room 3 and Room 4 controlled by a button in Room 8.",
        "3. The thief always takes the greediest action to move away from the player closest to "
        "him.",
        "9. The thief must be caught within 30 turns.",
        "Action: <your selected action from the list>.",
    ):
        assert line in rules


PARSE_VIEW = GAME.observe(CaptureState(rooms=(9, 1), thief=4, doors=(False, True)), 0)
# Alice in 9: A. Stay, B. Move to room 6, C. Press button in room 9


@pytest.mark.parametrize(
    ("answer", "action"),
    [
        ("B", 6),
        ("b", 6),
        ("(C)", P),
        ("C.", P),
        ("B. Move to room 6.", 6),
        ("Analysis: go back.\nAction: B", 6),
        ("Analysis: the door.\nAction: C Press button", P),
        ("<action>A</action>", S),
        ("Move to room 6", 6),
        ("move to room 6.", 6),
        ("room 6", 6),
        ("2", 6),  # a bare number is the N-th listed option (B), never a room
        ("1", S),
        ("I will go to 6", 6),
        ("Stay", S),
        ("stay here", S),
        ("press the button", P),
        ("Action: press the button in room 9", P),
        ("PRESS BUTTON IN ROOM 9", P),
    ],
)
def test_parser_accepts(answer, action) -> None:
    result = TEXT.parse_action(PARSE_VIEW, answer)
    assert result.action == action, (answer, result.feedback)
    assert result.feedback.startswith("understood")


@pytest.mark.parametrize(
    "answer",
    [
        "D",
        "Z.",
        "7",
        "room 2",
        "Move to room 2",
        "stay or move to room 6",
        "A or B",
        "",
        "Action:",
        "what?",
        "6",  # room 6 is written with its noun; as a bare number there is no sixth option
    ],
)
def test_parser_refuses_with_feedback(answer) -> None:
    result = TEXT.parse_action(PARSE_VIEW, answer)
    assert result.action is None and result.feedback.strip()


def test_parser_at_the_end() -> None:
    over = CaptureState(rooms=(2, 6), thief=2, doors=(False, True), captured=True)
    result = TEXT.parse_action(GAME.observe(over, 0), "A")
    assert result.action is None and "over" in result.feedback


def test_render_state() -> None:
    env = raw_env(render_mode="ansi")
    env.reset(seed=0)
    assert env.render() == (
        "Collab Capture (door12_closed), turn 0/30: Alice room 1, Bob room 6, thief room 2; "
        "door 1-2 closed, door 3-4 open"
    )
