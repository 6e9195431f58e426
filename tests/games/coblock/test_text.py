"""CoBlock text: the paper's XML and the plain rendering, commands, and a tolerant parser."""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.games.coblock.env import make_bundle
from tom_envs.games.coblock.rules import ActionKind

from .conftest import BLUE, END, RED, SEND, WAIT, YELLOW, brk, place, step, tiny_task


@pytest.fixture
def setup():
    """The tiny task after round 1 (red (0,0,0) by player_0, blue (2,0,0) by player_1, a chat)."""
    bundle = make_bundle(task=tiny_task(), grid=(4, 3, 2), text_format="both")
    game = bundle.game
    s = game.initial_state(np.random.default_rng(0))
    s = step(game, s, place(game, RED, (0, 0, 0)), place(game, BLUE, (2, 0, 0))).state
    s = step(game, s, SEND, WAIT, {0: 'I need "yellow" help'}).state
    return bundle, game, s


PARSES = [
    # text, expected action builder, expected message
    ('place_block(block_type="red", pos=(0, 1, 0))', lambda g: place(g, RED, (0, 1, 0)), None),
    ("place_block(block_type=red, pos=(0,1,0))", lambda g: place(g, RED, (0, 1, 0)), None),
    ("PLACE_BLOCK(Red, (0, 1, 0))", lambda g: place(g, RED, (0, 1, 0)), None),
    (
        "Thought: the column needs a top.\nplace_block(block_type='red', pos=(0, 1, 0))\n"
        "then wait()",
        lambda g: place(g, RED, (0, 1, 0)),
        None,
    ),
    ("<action>break_block(pos=(2, 0, 0))</action>", lambda g: brk(g, (2, 0, 0)), None),
    ("I could wait(). Action: break_block(pos=(2,0,0))", lambda g: brk(g, (2, 0, 0)), None),
    ("Place a yellow block at (1, 0, 1).", lambda g: place(g, YELLOW, (1, 0, 1)), None),
    ("please put red on (0, 1, 0)", lambda g: place(g, RED, (0, 1, 0)), None),
    ("remove the block at (2, 0, 0)", lambda g: brk(g, (2, 0, 0)), None),
    ('send_message(message="Hello, partner")', lambda g: SEND, "Hello, partner"),
    ("send_message(message='He said \"hi\" (twice)')", lambda g: SEND, 'He said "hi" (twice)'),
    ("send_message(Can you build blue?)", lambda g: SEND, "Can you build blue?"),
    ("say: I have red blocks", lambda g: SEND, "I have red blocks"),
    ('send_message(message="...")', lambda g: SEND, None),
    ("wait()", lambda g: WAIT, None),
    ("Wait.", lambda g: WAIT, None),
    ("end_task()", lambda g: END, None),
    ('end_session(message="done")', lambda g: END, None),
    ("end the task", lambda g: END, None),
]


@pytest.mark.parametrize(("text", "expected", "message"), PARSES, ids=[p[0][:40] for p in PARSES])
def test_parser_accepts(setup, text, expected, message) -> None:
    bundle, game, s = setup
    result = bundle.text.parse_action(game.observe(s, 0), text)
    assert result.action == expected(game), result.feedback
    assert result.message == message
    assert result.feedback


REFUSALS = [
    ('place_block(block_type="red", pos=(2, 0, 0))', "Block exists at (2, 0, 0)."),
    (
        'place_block(block_type="blue", pos=(1, 0, 0))',
        "Block with type blue not found in inventory",
    ),
    (
        'place_block(block_type="red", pos=(1, 2, 1))',
        "Block position (1, 2, 1) is not either on the ground or adjacent to any existing block.",
    ),
    ('place_block(block_type="red", pos=(9, 0, 0))', "Position (9, 0, 0) is outside the world"),
    ('place_block(block_type="pink", pos=(1, 0, 0))', "unknown block type 'pink'"),
    ("place_block(pos=(1, 0, 0))", "no block_type given"),
    ('place_block(block_type="red")', "place_block needs a position"),
    ("break_block(pos=(1, 0, 1))", "No block at (1, 0, 1) to break."),
    ("I am not sure what to do", "could not find a command"),
    ("", "empty answer"),
    ("<action></action>", "empty answer"),
]


@pytest.mark.parametrize(("text", "feedback"), REFUSALS, ids=[r[0][:40] for r in REFUSALS])
def test_parser_refuses_with_the_papers_messages(setup, text, feedback) -> None:
    bundle, game, s = setup
    result = bundle.text.parse_action(game.observe(s, 0), text)
    assert result.action is None
    assert feedback in result.feedback


def test_parser_never_raises(setup) -> None:
    bundle, game, s = setup
    view = game.observe(s, 0)
    for junk in (
        None,
        3,
        b"x",
        ["place_block"],
        "place_block(" * 1000,
        "((((" * 5000,
        'send_message(message="' + "x" * 3000 + '")',
        "\x00" * 50,
    ):
        result = bundle.text.parse_action(view, junk)  # type: ignore[arg-type]
        assert result.action is None or result.action in view.legal_actions
        assert result.feedback
    too_long = bundle.text.parse_action(view, 'send_message(message="' + "y" * 2001 + '")')
    assert too_long.action is None and "exceeds the limit" in too_long.feedback


def test_every_legal_action_round_trips(setup) -> None:
    bundle, game, s = setup
    for p in (0, 1):
        view = game.observe(s, p)
        for a, said in bundle.text.legal_actions_text(view).items():
            assert bundle.text.parse_action(view, said).action == a


def test_xml_world_state(setup) -> None:
    bundle, game, s = setup
    xml = bundle.text.xml(game.observe(s, 0))
    expected_lines = [
        "<Input>",
        '<Myself name="player_0"/>',
        '<Round current="3" max="60"/>',
        "<Motives>",
        "<VisualMotive>",
        '<block block_type="red", pos=(0, 0, 0)>',
        '<block block_type="red", pos=(0, 1, 0)>',
        "</VisualMotive>",
        "<World>",
        '<block block_type="blue", pos=(2, 0, 0)>',
        "<Inventory>",
        '<block block_type="red", count=2>',
        '<block block_type="yellow", count=1>',
        "<Dialogue>",
        '<chat sender="You", round=2, message="I need \'yellow\' help">',
        "<ActionHistory>",
        "<ComparisonResult>",
        "<MissingBlocks>",
        "<ExtraBlocks>",
        "<LastActionResponse command=\"send_message(message='I need 'yellow' help')\", "
        'status="success", message="Message sent."/>',
        "</Input>",
    ]
    lines = xml.splitlines()
    for line in expected_lines:
        assert line in lines, line
    missing = lines[lines.index("<MissingBlocks>") + 1 : lines.index("</MissingBlocks>")]
    extra = lines[lines.index("<ExtraBlocks>") + 1 : lines.index("</ExtraBlocks>")]
    assert missing == ['<block block_type="red", pos=(0, 1, 0)>']
    assert extra == ['<block block_type="blue", pos=(2, 0, 0)>']
    assert "<Description>a red tower of 2 blocks, from (0, 0, 0) to (0, 1, 0)</Description>" in xml


def test_plain_rendering_and_rules(setup) -> None:
    bundle, game, s = setup
    view = game.observe(s, 1)
    plain = bundle.text.plain(view)
    assert "Round 3 of 60. You are player_1." in plain
    assert "Your inventory: blue 2." in plain
    assert 'round 2, partner: "I need "yellow" help"' in plain
    assert "3 block(s) missing: blue (2, 1, 0), yellow (3, 1, 0)" not in plain
    assert "2 block(s) missing: blue (2, 1, 0), yellow (3, 1, 0)." in plain
    rules = bundle.text.rules_prompt(view)
    for needle in (
        "x from 0 to 3",
        "y from 0 (the ground) to 2",
        'place_block(block_type="red"',
        "end_task()",
        "red, blue, yellow, green, black, purple",
        "<Motives>",
    ):
        assert needle in rules
    both = bundle.text.observation_text(view)
    assert both.startswith("<Input>") and plain in both


def test_end_and_terminal_texts(setup) -> None:
    bundle, game, s = setup
    end = step(game, s, END, WAIT).state
    view = game.observe(end, 1)
    assert '<Outcome result="ended"/>' in bundle.text.xml(view)
    assert "The episode is over: ended." in bundle.text.plain(view)
    result = bundle.text.parse_action(view, "wait()")
    assert result.action is None and "over" in result.feedback
    assert "CoBlock tiny" in bundle.text.render_state(end)


def test_action_texts(setup) -> None:
    bundle, game, s = setup
    view = game.observe(s, 0)
    assert bundle.text.action_text(view, WAIT) == "wait()"
    assert bundle.text.action_text(view, SEND) == 'send_message(message="...")'
    assert bundle.text.action_text(view, END) == "end_task()"
    assert bundle.text.action_text(view, place(game, RED, (0, 1, 0))) == (
        'place_block(block_type="red", pos=(0, 1, 0))'
    )
    assert bundle.text.action_text(view, brk(game, (2, 0, 0))) == "break_block(pos=(2, 0, 0))"
    assert int(ActionKind.PLACE) == 3
