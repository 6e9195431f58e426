"""CollabCapture bots: legal, deterministic, and the greedy chase as specified."""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.agents import make_agent
from tom_envs.core.agents import AgentAction, EpisodeInfo, Turn, as_agent_action
from tom_envs.games.collab_capture import bots
from tom_envs.games.collab_capture.env import bot_table, make_bundle
from tom_envs.games.collab_capture.rules import Action, CaptureState
from tom_envs.registration import game_spec

S = int(Action.STAY)
BUNDLE = make_bundle(scenario="both_open")
GAME = BUNDLE.game


def turn(view, player: int) -> Turn:
    return Turn(f"player_{player}", player, view, np.zeros(1), np.zeros(1), 0.0, 0)


@pytest.mark.parametrize(
    ("me", "thief", "doors", "expected"),
    [
        (1, 3, (True, True), 2),  # 1-2-3
        (1, 3, (False, True), 6),  # door closed: the long way 1-6-5-4-3
        (6, 8, (True, True), 5),
        (9, 2, (True, True), 6),
        (4, 2, (True, False), 5),  # door 3-4 closed: 4-5-6-1-2
        (1, 3, (False, False), S),  # unreachable: stay
    ],
)
def test_greedy_chases_along_shortest_paths(me, thief, doors, expected) -> None:
    view = GAME.observe(CaptureState(rooms=(me, 7 if me != 7 else 8), thief=thief, doors=doors), 0)
    assert bots.greedy_action(view) == expected
    assert expected in view.legal_actions


def test_bot_registry() -> None:
    table = bot_table()
    assert table.names() == ["greedy", "optimal", "lazy", "guard", "opener"]
    assert table.populations == {"all": ("greedy", "optimal"),
                                 "conventions": ("lazy", "guard", "opener")}  # fmt: skip
    assert bots.MARKOV_BOTS == ("greedy", "lazy", "guard", "opener")
    with pytest.raises(KeyError, match="greedy"):
        table.make("nope", BUNDLE)


@pytest.mark.parametrize("name", ["greedy", "optimal", "lazy", "guard", "opener"])
def test_bots_play_legal_deterministic_moves(name) -> None:
    spec = game_spec("CollabCapture")
    rng = np.random.default_rng(0)
    for seed in range(3):
        bot = make_agent(name, spec, BUNDLE)
        bot.reset(EpisodeInfo("x", "player_1", 1, 2, 11, seed, (0.0, 1.0), 30))
        s = GAME.initial_state(rng)
        for _ in range(10):
            if GAME.is_terminal(s):
                break
            view = GAME.observe(s, 1)
            a1 = as_agent_action(bot.act(turn(view, 1)))
            assert a1.action in view.legal_actions
            assert as_agent_action(bot.act(turn(view, 1))).action == a1.action
            if name == "optimal":
                assert isinstance(a1, AgentAction) and "partner_action" in a1.prediction
            legal0 = GAME.legal_actions(s, 0)
            s = GAME.step(s, {0: int(legal0[rng.integers(len(legal0))]), 1: a1.action}, rng).state


# ------------------------------------------------------------------ the conventions
P = int(Action.PRESS)


def _view(me: int, thief: int, doors: tuple[bool, bool]):
    return GAME.observe(CaptureState(rooms=(me, 7 if me != 7 else 8), thief=thief, doors=doors), 0)


@pytest.mark.parametrize(("me", "thief", "doors"),
                         [(1, 2, (False, True)), (9, 6, (True, True)), (5, 4, (False, False))])  # fmt: skip
def test_lazy_always_stays(me, thief, doors) -> None:
    assert bots.lazy_action(_view(me, thief, doors)) == S


@pytest.mark.parametrize(
    ("me", "doors", "expected"),
    [
        (1, (False, True), 6),  # 1-6-5: the way round when door 1-2 is closed
        (1, (True, True), 6),  # 1-6-5 (two moves) beats 1-2-3-4-5
        (3, (True, True), 4),
        (8, (True, True), 7),
        (5, (True, True), S),  # holds the hub
        (2, (False, False), S),  # cut off from the hub by both doors: stays
    ],
)
def test_guard_walks_to_the_hub_and_holds_it(me, doors, expected) -> None:
    view = _view(me, 9 if me != 9 else 8, doors)
    assert bots.guard_action(view) == expected
    assert expected in view.legal_actions


@pytest.mark.parametrize(
    ("me", "thief", "doors", "expected"),
    [
        (6, 2, (False, True), 9),  # door 1-2 closed: to its button (room 9)
        (9, 2, (False, True), P),  # on the button of the closed door: press
        (9, 2, (True, False), 6),  # door 1-2 open, 3-4 closed: toward room 8 (9-6-5-7-8)
        (8, 2, (True, False), P),
        (9, 2, (False, False), P),  # both closed: door 1-2's first
        (6, 8, (True, True), 5),  # both open: the greedy chase
        (2, 3, (False, False), 3),  # no button reachable (2-3 sealed off): the greedy chase
    ],
)
def test_opener_opens_the_closed_doors_then_chases(me, thief, doors, expected) -> None:
    view = _view(me, thief, doors)
    assert bots.opener_action(view) == expected
    assert expected in view.legal_actions


def test_opener_never_closes_an_open_door() -> None:
    """In a button room whose door is already open it does not press (it would close it)."""
    for room, doors in ((9, (True, False)), (8, (False, True)), (9, (True, True)), (8, (True, True))):
        assert bots.opener_action(_view(room, 2, doors)) != P
