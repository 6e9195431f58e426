"""The text layer: the paper's App. A prompt, state description and mid-level list; parsing."""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.games.overcooked.kitchen import kitchen
from tom_envs.games.overcooked.midlevel import MidLevelView, mid_level_actions, parse_mid_level
from tom_envs.games.overcooked.rules import Item
from tom_envs.games.overcooked.text import OvercookedText

from .helpers import game, state

N, S, E, W = range(4)


def assert_says(text: str, *phrases: str) -> None:
    """Every phrase stands in ``text`` (the failure lists each one missing)."""
    missing = [p for p in phrases if p not in text]
    assert not missing, (missing, text)


def text_for(layout: str, **kwargs) -> tuple:
    g = game(layout, **kwargs)
    return g, OvercookedText(g.config)


def test_rules_prompt_follows_app_a() -> None:
    g, t = text_for("forced_coordination")
    s = g.initial_state(np.random.default_rng(0))
    bob = t.rules_prompt(g.observe(s, 1))
    assert bob.startswith("I am Bob. I am playing the game Overcooked with my partner Alice.")
    assert_says(
        bob,
        "The layout is Forced Coordination, a kitchen of 5 by 5 cells",
        "3 shared counters (s0, s1, s2)",
        "I start in a partition that reaches o0, o1, p0, s0, s1, s2",
        "Alice starts in a partition that reaches c0, c1, d0, s0, s1, s2",
        "Overcooked has the following rules: Two chefs cook",
        "starts cooking by itself when the third onion goes in",
    )
    alice = t.rules_prompt(g.observe(s, 0))
    assert alice.startswith("I am Alice.") and "partition" in alice
    _, ti = text_for("cramped_room", cooking="interact")
    assert "interact with it with empty hands to start cooking" in ti.game_rules()
    assert "partition" not in ti.layout_description(0)


def test_state_description_for_a_partitioned_kitchen() -> None:
    g, t = text_for("forced_coordination")
    k = g.layout.counters.index((2, 1))  # s0
    s = state(g, (((3, 1), N, 0), ((1, 2), W, Item.ONION)), ((1, -1), (3, 12)), {k: Item.DISH})
    assert_says(
        t.observation_text(g.observe(s, 1)),
        "<Inventory>: I am holding onion. Alice is holding nothing.",
        "<My Location Information>: o0 is 1 units away. o1 is 0 units away. p0 is 1 units "
        "away. c0 is inaccessible. c1 is inaccessible. d0 is inaccessible. s0 is 1 units away.",
        "<Alice's Location Information>: o0 is inaccessible.",
        "c0 contains 1 out of 3 onions. c0 is off. Soup in c0 is not started.",
        "c1 contains 3 out of 3 onions. c1 is on. Soup in c1 is cooking (8 steps left).",
        "s0 contains plate. s1 is empty. s2 is empty.",
        "Kitchen counters are empty.",
        "<Time>: step 0 of 400; score 0.",
        "I am at cell (1, 2) facing west, towards the onion dispenser o1.",
    )


def test_blocked_and_around() -> None:
    g, t = text_for("coordination_ring")
    s = g.initial_state(np.random.default_rng(0))  # Alice (2, 1), Bob (1, 2)
    text = t.observation_text(g.observe(s, 0))
    assert "p0 is blocked by Bob." in text
    assert "o0 is 3 units away blocked by Bob (5 units around)." in text
    assert "Closest empty kitchen counter" in text
    _, tc = text_for("cramped_room")
    gc = game()
    assert "o1 is blocked by Bob." in tc.observation_text(gc.observe(gc.initial_state(None), 0))


def test_cooked_soup_and_kitchen_counters() -> None:
    g, t = text_for("cramped_room")
    k = g.layout.counters.index((2, 3))
    s = state(g, (((1, 2), N, Item.SOUP_3), ((3, 1), N, 0)), ((3, 20),), {k: Item.ONION})
    text = t.observation_text(g.observe(s, 0))
    assert "I am holding soup." in text
    assert "c0 contains 3 out of 3 onions. c0 is off. Soup in c0 is cooked." in text
    assert (
        f"k{[p.pos for p in kitchen(g.layout).pois.values() if p.name[0] == 'k'].index((2, 3))}"
        " contains onion." in text
    )


def test_mid_level_prompt_lists_available_actions() -> None:
    g, t = text_for("forced_coordination")
    s = state(g, (((3, 1), N, 0), ((1, 2), W, Item.ONION)))
    options = tuple(mid_level_actions(kitchen(g.layout), s, 1))
    view = MidLevelView(1, g.observe(s, 1), options, "start", ("pick up onion from o1",),
                        tuple(range(len(options))))  # fmt: skip
    obs = t.mid_level_observation(view)
    assert (
        "Available Actions: [place onion on s0, place onion on s1, place onion on s2, "
        "place onion on k0, wait, move away]" in obs.observation
    )
    assert "<My Action History>: pick up onion from o1." in obs.observation
    assert "Format your response as:\nExplanation:" in obs.rules
    assert list(obs.legal_actions.values()) == [o.text for o in options]
    assert parse_mid_level(options, "Explanation: pass it.\nAction: place onion on s1.").action == 1
    assert parse_mid_level(options, "2").action == 1
    assert parse_mid_level(options, "PLACE ONION ON S2").action == 2
    for junk in ("", "cook", None, 3, "place onion on s9"):
        result = parse_mid_level(options, junk)
        assert result.action is None and result.feedback


@pytest.mark.parametrize(
    ("reply", "action"),
    [("move up", 0), ("Move Down.", 1), ("right", 2), ("go left", 3), ("wait", 4), ("stay", 4),
     ("interact", 5), ("<action>north</action>", 0), ("I think... Action: east", 2), ("3", 2),
     ("INTERACT!", 5)],
)  # fmt: skip
def test_primitive_parser(reply, action) -> None:
    g, t = text_for("cramped_room")
    view = g.observe(g.initial_state(np.random.default_rng(0)), 0)
    result = t.parse_action(view, reply)
    assert result.action == action and result.feedback.startswith("understood")


@pytest.mark.parametrize("reply", ["", "fly", "up and down", "move up or interact", None, 7, "0"])
def test_primitive_parser_refuses_with_feedback(reply) -> None:
    g, t = text_for("cramped_room")
    view = g.observe(g.initial_state(np.random.default_rng(0)), 0)
    result = t.parse_action(view, reply)
    assert result.action is None and result.feedback


def test_render_state_draws_the_kitchen() -> None:
    g, t = text_for("cramped_room")
    out = t.render_state(g.initial_state(np.random.default_rng(0)))
    lines = out.splitlines()
    assert lines[0] == "Cramped Room, step 0/400, score 0"
    assert lines[1:5] == ["XXPXX", "O  2O", "X1  X", "XDXSX"]
    assert "player_0 (Alice, 1) at (1, 2) facing north, holding nothing" in out
