"""CollabEscape bots: the greedy repairer as specified; both bots legal and deterministic."""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.agents import make_agent
from tom_envs.core.agents import EpisodeInfo, Turn, as_agent_action
from tom_envs.games.collab_escape import bots
from tom_envs.games.collab_escape.env import make_bundle
from tom_envs.games.collab_escape.rules import CODED_MAZE, Action, EscapeState
from tom_envs.registration import game_spec

W, F = int(Action.WAIT), int(Action.FIX)
BUNDLE = make_bundle()
GAME = BUNDLE.game


def turn(view, player: int) -> Turn:
    return Turn(f"player_{player}", player, view, np.zeros(1), np.zeros(1), 0.0, 0)


@pytest.mark.parametrize(
    ("me", "fixes", "expected"),
    [
        (1, (0, 0), F),  # on an unrepaired generator: fix
        (2, (0, 0), 1),  # nearest generator is 1 (one move)
        (4, (0, 0), 5),  # generator 6 is two moves away, generator 1 three
        (3, (0, 0), 2),  # tie (1 and 6 both 3 moves away): room 1 first
        (2, (2, 0), 3),  # generator 1 repaired: head for 6
        (6, (2, 2), 7),  # gate open: run for it
        (3, (2, 2), 8),  # 3 -> 8 -> 7 (3 -> 7 is not a passage in the code)
    ],
)
def test_greedy_repairer(me, fixes, expected) -> None:
    view = GAME.observe(
        EscapeState(rooms=(me, 9 if me != 9 else 10), killer=5 if me != 5 else 4, fixes=fixes), 0
    )
    assert bots.greedy_action(view, CODED_MAZE) == expected
    assert expected in view.legal_actions


@pytest.mark.parametrize("name", ["greedy", "optimal", "lazy", "far_first", "split"])
def test_bots_play_legal_deterministic_moves(name) -> None:
    spec = game_spec("CollabEscape")
    rng = np.random.default_rng(0)
    bot = make_agent(name, spec, BUNDLE)
    bot.reset(EpisodeInfo("x", "player_0", 0, 2, 12, 0, (0.0, 1.0), 30))
    s = GAME.initial_state(rng)
    for _ in range(15):
        if GAME.is_terminal(s):
            break
        view = GAME.observe(s, 0)
        a0 = as_agent_action(bot.act(turn(view, 0))).action
        assert a0 in view.legal_actions
        assert as_agent_action(bot.act(turn(view, 0))).action == a0
        legal1 = GAME.legal_actions(s, 1)
        s = GAME.step(s, {0: a0, 1: int(legal1[rng.integers(len(legal1))])}, rng).state


# ------------------------------------------------------------------ the conventions
def _view(me: int, fixes: tuple[int, int], partner: int = 9):
    state = EscapeState(rooms=(me, partner if me != partner else 10), killer=4 if me != 4 else 5,
                        fixes=fixes)  # fmt: skip
    return GAME.observe(state, 0)


def test_registry_and_markov_bots() -> None:
    assert bots.bot_table().names() == ["greedy", "optimal", "lazy", "far_first", "split"]
    assert bots.bot_table().populations["conventions"] == ("lazy", "far_first", "split")
    assert bots.MARKOV_BOTS == ("greedy", "lazy", "far_first", "split")


@pytest.mark.parametrize(("me", "fixes"), [(1, (0, 0)), (6, (2, 1)), (7, (2, 2))])
def test_lazy_always_waits(me, fixes) -> None:
    assert bots.lazy_action(_view(me, fixes), CODED_MAZE) == W


@pytest.mark.parametrize(
    ("me", "fixes", "expected"),
    [
        (1, (0, 0), 2),  # on generator 1 but generator 6 comes first: walk (1-2-3-4-5-6)
        (2, (0, 0), 3),  # greedy would go to room 1
        (6, (0, 1), F),  # on generator 6: fix
        (6, (0, 2), 7),  # generator 6 repaired: walk to generator 1 (6-7-3-2-1, one-way 7 -> 3)
        (1, (1, 2), F),
        (6, (2, 2), 7),  # the gate is open: walk to it
        (3, (2, 2), 8),  # 3-8-7 (3 -> 7 is one-way the other way)
    ],
)
def test_far_first_repairs_generator_6_then_1_then_runs(me, fixes, expected) -> None:
    view = _view(me, fixes)
    assert bots.far_first_action(view, CODED_MAZE) == expected
    assert expected in view.legal_actions


@pytest.mark.parametrize(
    ("me", "fixes", "expected"),
    [
        (1, (0, 0), 2),  # never fixes generator 1, even standing on it
        (2, (0, 0), 3),
        (6, (0, 0), F),
        (6, (0, 2), W),  # its generator is repaired: waits there for the gate
        (5, (1, 2), 6),  # goes back to its post
        (6, (2, 2), 7),  # the gate is open: walk to it
    ],
)
def test_split_repairs_only_generator_6(me, fixes, expected) -> None:
    view = _view(me, fixes)
    assert bots.split_action(view, CODED_MAZE) == expected
    assert expected in view.legal_actions
