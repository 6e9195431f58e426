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


@pytest.mark.parametrize("name", ["greedy", "optimal"])
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
