"""The scenarios realise what their labels say, checked with the exact joint planner: each
challenge's optimal play needs its mechanism (without it the optimum is strictly worse or the
capture impossible), no challenge is solved in one turn, and the figures are the env docstring's.

Mechanisms are removed by restricting the moves the planner may choose: no button press at all,
presses that open a door only, presses that close a door only, or one seat frozen in place (it
may only stay). The rules themselves are unchanged.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tom_envs.games.collab_capture import env as capture_env
from tom_envs.games.collab_capture.rules import (
    SCENARIOS,
    Action,
    CaptureConfig,
    CaptureGame,
    CaptureState,
    button_door,
)
from tom_envs.games.joint_planner import JointPlanner

STAY, PRESS = int(Action.STAY), int(Action.PRESS)


class Restricted:
    """``game`` with fewer moves: ``press`` in {None (all), "none", "open", "close"} keeps every
    press, none, only the presses that open a door, or only those that close one; ``frozen`` is a
    seat that may only stay."""

    def __init__(self, game: CaptureGame, press: str | None = None, frozen: int | None = None):
        self.game, self.press, self.frozen = game, press, frozen
        self.config = game.config

    def __getattr__(self, name: str) -> Any:
        return getattr(self.game, name)

    def _keep(self, state: CaptureState, player: int, action: int) -> bool:
        if self.frozen == player:
            return action == STAY
        if action != PRESS or self.press is None:
            return True
        opens = not state.doors[button_door(state.rooms[player])]
        return {"none": False, "open": opens, "close": not opens}[self.press]

    def options(self, state: CaptureState, player: int) -> tuple[int, ...]:
        return tuple(a for a in self.game.options(state, player) if self._keep(state, player, a))

    def legal_actions(self, state: CaptureState, player: int) -> tuple[int, ...]:
        acts = self.game.legal_actions(state, player)
        return tuple(a for a in acts if self._keep(state, player, a))


RESTRICTIONS = {
    "no press": {"press": "none"},
    "opening only": {"press": "open"},
    "closing only": {"press": "close"},
    "Alice frozen": {"frozen": 0},
    "Bob frozen": {"frozen": 1},
}


def optimum(scenario: str, **restriction: Any) -> int | None:
    """Fewest turns to the capture (``None``: impossible within the 30-turn limit)."""
    game = CaptureGame(CaptureConfig(scenario=scenario))
    start = game.initial_state(None)
    planned = Restricted(game, **restriction) if restriction else game
    return JointPlanner(planned, [start]).optimal_turns(start)


def docstring_table() -> dict[str, list[int | None]]:
    """The env docstring's scenario table: optimal turns, then each restriction's."""
    out = {}
    for line in capture_env.__doc__.splitlines():
        m = re.match(r"\| `(\w+)`(?: \(default\))? \|", line)
        if m and m.group(1) in SCENARIOS:
            cells = [c.strip() for c in line.strip("|").split("|")][-6:]
            out[m.group(1)] = [None if c == "-" else int(c) for c in cells]
    return out


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_the_docstring_table_is_the_planners(scenario: str) -> None:
    row = [optimum(scenario)] + [optimum(scenario, **r) for r in RESTRICTIONS.values()]
    assert docstring_table()[scenario] == row


def worse(value: int | None, best: int) -> bool:
    return value is None or value > best


@pytest.mark.parametrize("scenario", ["pincer", "enable", "disable", "both_closed"])
def test_each_challenge_needs_its_mechanism(scenario: str) -> None:
    best = optimum(scenario)
    assert best is not None and best >= 2  # never solved in one turn (by a swap or otherwise)
    # every challenge needs both agents
    assert worse(optimum(scenario, frozen=0), best) and worse(optimum(scenario, frozen=1), best)
    no_press = optimum(scenario, press="none")
    if scenario == "pincer":  # two agents from two sides, no door involved
        assert no_press == best
    elif scenario in ("enable", "both_closed"):  # a door must be opened
        assert worse(no_press, best) and worse(optimum(scenario, press="close"), best)
        assert optimum(scenario, press="open") == best
    else:  # disable: a door must be closed
        assert worse(no_press, best) and worse(optimum(scenario, press="open"), best)
        assert optimum(scenario, press="close") == best


def _optimal_play(scenario: str) -> list[tuple[CaptureState, tuple[int, int]]]:
    game = CaptureGame(CaptureConfig(scenario=scenario))
    planner = JointPlanner(game)
    state, out = game.initial_state(None), []
    while not state.captured:
        joint = planner.best_joint_action(state)
        out.append((state, joint))
        state = game.transition(state, {0: joint[0], 1: joint[1]})[0]
    return out


def test_the_optimal_plays_read_as_labelled() -> None:
    # enable: Bob presses in room 9 at once (opening door 1-2), Alice walks through it
    play = _optimal_play("enable")
    assert play[0][1] == (STAY, PRESS) and play[1][1][0] == 2
    # disable: Bob's first move closes door 3-4 behind the thief
    play = _optimal_play("disable")
    assert play[0][1][1] == PRESS and play[0][0].doors == (False, True)
    assert play[1][0].doors == (False, False)
    # pincer: the last joint move puts Alice and Bob on both sides of the thief's room
    state, (a, b) = _optimal_play("pincer")[-1]
    assert {a, b} == {1, 3} and state.thief == 2
