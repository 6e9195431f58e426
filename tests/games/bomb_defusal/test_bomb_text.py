"""The text layer: the paper's prompt and messages word for word, and a tolerant parser."""

from __future__ import annotations

import pytest
from bomb_helpers import ROOM, B, G, R, act, new_game, play, start

from tom_envs.games.bomb_defusal.rules import ActionKind, encode_action
from tom_envs.games.bomb_defusal.text import BombText, split_reply


def text_of(game):
    return BombText(game.config)


# ------------------------------------------------------------------------------ prompt
def test_task_context_prompt_is_the_papers() -> None:
    game = new_game()
    s = start(game, [(0, (R,)), (3, (G,)), (5, (B, R)), (6, (R, G)), (8, (B, G, R))], at=0)
    prompt = text_of(game).rules_prompt(game.observe(s, 1))
    for sentence in (
        "Welcome to our interactive text game! In this game, you'll assume the role of a "
        "specialist on a search and rescue team. Alongside two other players, you'll navigate a "
        "five-room environment with a mission to defuse five hidden bombs.",
        "The rooms are numbered 0, 3, 6, 5, and 8. Room 0 is connected to all other rooms. Room 5 "
        "shares a hallway with room 6. Room 3 is linked to room 8. And room 8 is also connected "
        "with room 6. You can only travel to adjacent, directly connected rooms at each turn.",
        "There are one-phase, two-phase, and three-phase bombs, needing 1, 2, or 3 color-coded "
        "tool applications in sequence to disarm. For instance, a bomb with a red-green phase "
        "sequence requires the red tool first, then the green one.",
        "with each tool use worth 10 points.",
        # App. A.1's tool sentence, written for the reader (Bravo here); Alpha's is the paper's
        "As player Bravo, you have green and blue tools, player Charlie wields blue and red, and "
        "player Alpha possesses red and green.",
        "Actions: Each round, you can opt to do one of the following: 1) Move to an adjacent room, "
        "2) Inspect a bomb's phase sequence in your current room, or 3) Apply your wire cutters to "
        "a bomb in the current room.",
        "The message text you sent will be shared with both of your teammates in their "
        "observation in the next round.",
        'Action selection: Your action. Message to Team: "Your Message". To move to an adjacent '
        "room, say: 'Move to Room X'. To inspect the sequence of a bomb in your current room, "
        "say: 'Inspect Bomb'. To apply a wire cutter tool, say: 'Apply X Tool'.",
        "You are playing as Player bravo.",
    ):
        assert sentence in prompt, sentence
    alpha = text_of(game).rules_prompt(game.observe(s, 0))
    assert (
        "As player Alpha, you have red and green tools, player Bravo wields green and blue, and "
        "player Charlie possesses blue and red." in alpha
    )


def test_prompt_follows_the_configuration() -> None:
    game = new_game(map="random", num_rooms=4, map_seed=1, num_agents=4, teammate_locations=False)
    s = game.initial_state(__import__("numpy").random.default_rng(0))
    prompt = text_of(game).rules_prompt(game.observe(s, 0))
    assert "Alongside three other players, you'll navigate a four-room environment" in prompt
    assert "Room 0 is connected to room" in prompt
    assert "the current location of your teammates" not in prompt
    assert "all of your teammates" in prompt


# ----------------------------------------------------------------------- result messages
def observation(game, state, player) -> str:
    return text_of(game).observation_text(game.observe(state, player))


def test_result_messages_are_the_original_ones() -> None:
    game = new_game()
    s = start(game, [(0, (R, B)), (3, (G,)), (5, (B, G, R))], at=0)
    assert (
        "Results: You moved to Room 0. In the new room you found Player bravo and Player "
        "charlie, Bomb 1." in observation(game, s, 0)
    )
    s = act(game, s, "inspect").state
    s = act(game, s, "use", B, "Bravo here").state  # wrong colour
    s = act(game, s, "move", 3).state
    s = act(game, s, "use", R).state  # alpha: cut, red done
    obs = {p: observation(game, s, p) for p in range(3)}
    assert (
        "Results: You inspected Bomb 1. This bomb is a 2-stage bomb and its remaining sequence "
        "is Red-Blue." not in obs[0]
    ), "the result shown is the last action's"
    assert (
        "Results: You applied Tool Red to Bomb 1. This bomb is active and its remaining sequence is Blue."
        in obs[0]
    )
    assert (
        "Results: You can not apply Tool Blue to Bomb 1 because the sequence of this bomb is "
        "Red-Blue. You will need to apply other color tool first." in obs[1]
    )
    assert "Results: You moved to Room 3. In the new room you found Bomb 2." in obs[2]
    s = act(game, s, "use", B).state  # bravo defuses bomb 1
    assert (
        "Results: You applied Tool Blue to Bomb 1. This bomb is defused successfully."
        in observation(game, s, 1)
    )
    s = act(game, s, "move", 0).state  # charlie back to room 0
    s = act(game, s, "use", G).state  # alpha: green in room 0, no bomb left
    assert (
        "Results: There is no bomb in your current location, room 0, for you to defuse."
        in observation(game, s, 0)
    )
    s = play(game, start(game, [(3, (R,))], at=0), [("move", 3), ("move", 5)])
    assert "Results: You moved to Room 5. In the new room you found nothing." in observation(
        game, s, 1
    )


def test_observation_format() -> None:
    game = new_game()
    s = start(game, [(0, (R,)), (5, (G,))], at=0)
    s = play(game, s, [("inspect", None, 'I found "bomb 1"'), ("move", 5), ("wait",)])
    text = observation(game, s, 0)
    assert text.startswith("Your observation is: Round: 2. Total team score: 0. Results: ")
    assert (
        "Room contents: You are currently in Room 0. Contents of this room include Player "
        "charlie, Bomb 1." in text
    )
    assert (
        "Teammate Locations: Player alpha is in Room 0; Player bravo is in Room 5; Player "
        "charlie is in Room 0." in text
    )
    assert "Communication messages sent by your teammates:" not in text  # nobody wrote
    s = play(game, start(game, [(0, (R,))], at=0), [("inspect", None, 'I found "bomb 1"')])
    text1 = observation(game, s, 1)
    assert (
        'Communication messages sent by your teammates: Player alpha: "I found "bomb 1""' in text1
    )
    s = play(game, s, [("wait",)])
    assert "Player alpha" in observation(game, s, 2) and "Player alpha:" not in observation(
        game, act(game, s, "wait").state, 1
    ), "a message is shown once, at the next turn"
    hidden = new_game(teammate_locations=False)
    s = play(hidden, start(hidden, [(0, (R,))], at=0), [("move", 3)])
    assert "Player alpha is in an unknown room" in observation(hidden, s, 1)


# ------------------------------------------------------------------------------- parser
@pytest.fixture
def at_room_5():
    game = new_game()
    s = start(game, [(5, (R,)), (3, (G,))], at=5)
    return game, s, game.observe(s, 0)


@pytest.mark.parametrize(
    "reply, kind, arg, message",
    [
        (
            'Action selection: Move to Room 6. Message to Team: "Heading to 6"',
            "go",
            6,
            "Heading to 6",
        ),
        (
            "action selection: move to room 0. message to team: “I’m going to room 0”",
            "go",
            0,
            "I’m going to room 0",
        ),
        (
            "ACTION SELECTION: INSPECT BOMB. MESSAGE TO TEAM: 'I'll inspect it'",
            "inspect",
            None,
            "I'll inspect it",
        ),
        (
            "**Action selection:** Apply Red Tool\n**Message to Team:** «cutting red»",
            "use",
            R,
            "cutting red",
        ),
        (
            "Action selection: apply the green wire cutter. Message to Team: no quotes here",
            "use",
            G,
            "no quotes here",
        ),
        (
            'Message to Team: "first the message"\nAction selection: go_to_node_6',
            "go",
            6,
            "first the message",
        ),
        ("Action selection: Move to Room 0", "go", 0, None),
        ("I will move to Room 0 and then inspect the bomb there.", "go", 0, None),
        ("Action selection: Inspect Bomb. Message to Team: ''", "inspect", None, None),
        ("Action: use red tool", "use", R, None),
        ("<action>Inspect Bomb</action>", "inspect", None, None),
        ("2", "go", 0, None),  # the 2nd legal action: Move to Room 0
        ("Inspect Bomb", "inspect", None, None),
        ("Action selection: Red tool. Message to Team: `cut`", "use", R, "cut"),
    ],
)
def test_parser_tolerance(at_room_5, reply, kind, arg, message) -> None:
    game, _s, view = at_room_5
    res = text_of(game).parse_action(view, reply)
    assert res.valid, res.feedback
    if kind == "go":
        want = encode_action(game.config, ActionKind.GO_TO, ROOM[arg])
    elif kind == "inspect":
        want = encode_action(game.config, ActionKind.INSPECT)
    else:
        want = encode_action(game.config, ActionKind.USE, arg)
    assert res.action == want
    assert res.message == message


@pytest.mark.parametrize(
    "reply, feedback",
    [
        (
            'Action selection: Move to Room 8. Message to Team: "I\'m moving to Room 8"',
            "You can not directly move to Room 8 because it is not adjacent to your current "
            "location, Room 5. Consider taking a detour to another room first and then move to "
            "your destination.",
        ),
        (
            "Action selection: Apply Blue Tool",
            "You do not have Tool Blue. Consider asking your teammates who have this tool to help "
            "you defuse the bomb.",
        ),
        ("Action selection: dance", "Your action is invalid."),
        ("", "Your action is invalid."),
        ("Action selection: Move to Room 7", "Your action is invalid. There is no Room 7"),
        ("Action selection: Move to Room 5", "Your action is invalid. You are already in Room 5."),
        ("Action selection: apply a tool", "Your action is invalid. Name the tool's colour"),
    ],
)
def test_parser_feedback_is_the_papers(at_room_5, reply, feedback) -> None:
    game, _s, view = at_room_5
    res = text_of(game).parse_action(view, reply)
    assert not res.valid and res.feedback.startswith(feedback), res.feedback
    if "I'm moving" in reply:
        assert res.message == "I'm moving to Room 8", "the message survives a refused action"


def test_no_bomb_to_inspect_feedback() -> None:
    game = new_game()
    s = start(game, [(5, (R,))], at=0)
    res = text_of(game).parse_action(game.observe(s, 0), "Action selection: Inspect Bomb")
    assert res.feedback == (
        "There is no bomb in the current current location, Room 0, for you to inspect."
    )
    assert (
        text_of(game)
        .parse_action(game.observe(s, 0), 42)
        .feedback.startswith("Your action is invalid.")
    )


def test_parse_never_raises_and_only_for_the_acting_player() -> None:
    game = new_game()
    s = start(game, [(0, (R,))], at=0)
    t = text_of(game)
    for junk in [
        "",
        "   ",
        "Message to Team:",
        "Action selection:",
        "\x00\n\n",
        "room " * 500,
        "Move to Room 99999999999999999999",
        "apply apply apply",
        "«",
        "Message to Team: “",
    ]:
        t.parse_action(game.observe(s, 0), junk)
    assert not t.parse_action(game.observe(s, 1), "Action selection: Move to Room 3").valid


@pytest.mark.parametrize("symbolic", [False, True])
def test_every_legal_action_text_parses_back(symbolic: bool) -> None:
    game = new_game(symbolic_messages=symbolic)
    s = start(game, [(0, (R,)), (3, (G,))], at=0)
    for _ in range(3):
        view = game.observe(s, s.turn)
        t = text_of(game)
        for a, txt in t.legal_actions_text(view).items():
            assert t.parse_action(view, txt).action == a, txt
        s = act(game, s, "wait").state
    if symbolic:
        assert "Apply Red Tool. Message to Team: <ask for a Blue tool here>" in set(
            t.legal_actions_text(game.observe(s, 0)).values()
        )


def test_split_reply() -> None:
    assert split_reply('Action selection: Inspect Bomb. Message to Team: "a" b') == (
        "Inspect Bomb.",
        "a",
    )
    assert split_reply('<action>Move to Room 5. Message to Team: "hi"</action> then') == (
        "Move to Room 5.",
        "hi",
    )
    assert split_reply("just text") == ("just text", None)
    _action, message = split_reply('Action selection: X\nMessage to Team: "line"\n\nP.S. ignore')
    assert message == "line"


def test_render_state_is_a_spectator_summary() -> None:
    game = new_game()
    s = start(game, [(0, (R, B))], at=0)
    text = text_of(game).render_state(s)
    assert "Bomb 1 in Room 0: Red-Blue, remaining Red-Blue" in text and "alpha to act" in text
