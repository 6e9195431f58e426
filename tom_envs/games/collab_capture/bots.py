"""Partner bots for CollabCapture. They read the structured view, never the vector.

| name | rule |
|---|---|
| ``greedy`` | the paper's greedy baseline: one step along a shortest path (through the doors open now) to the thief's current room, first in listed order on ties; stays if the thief cannot be reached; never presses a button |
| ``optimal`` | its part of the optimal joint action (``tom_envs/games/joint_planner.py``), assuming an optimal partner; predicts the partner's part |

The authors' greedy-agent class is not in the released code (only its loop is); the chase rule
above is our reading of "greedy".
"""

from __future__ import annotations

from tom_envs.core.agents import BaseAgent, Turn
from tom_envs.core.contract import Bot
from tom_envs.games.collab_capture.rules import (
    MAZE,
    Action,
    CaptureState,
    closed_doors,
)
from tom_envs.games.collab_capture.view import CaptureView
from tom_envs.games.joint_planner import planner_bot_table


def state_from_view(view: CaptureView) -> CaptureState:
    """The rules state a view shows (the game is fully observable)."""
    rooms = (
        (view.my_room, view.partner_room)
        if view.player == 0
        else (
            view.partner_room,
            view.my_room,
        )
    )
    return CaptureState(
        rooms=rooms,
        thief=view.thief_room,
        doors=(view.doors_open[0], view.doors_open[1]),
        turn=view.turn,
        captured=view.captured,
    )


def greedy_action(view: CaptureView) -> int:
    """One step toward the thief through the open doors, or stay."""
    step = MAZE.step_toward(view.my_room, view.thief_room, closed_doors(view.doors_open))
    return int(Action.STAY) if step is None else step


class GreedyChaser(BaseAgent):
    """Chases the thief along a shortest path; never touches the doors."""

    name = "greedy"

    def act(self, turn: Turn) -> int:
        """One step toward the thief's current room."""
        return greedy_action(turn.view)


#: The bots (the same for every scenario) and the population ``all``.
bot_table = planner_bot_table(
    Bot("greedy", lambda bundle: GreedyChaser(),
        "the paper's greedy baseline: a shortest-path step toward the thief; never presses"),
    state_from_view,
    "CollabCapture",
)  # fmt: skip
