"""Partner bots for CollabCapture. They read the structured view, never the vector.

| name | rule |
|---|---|
| ``greedy`` | the paper's greedy baseline: one step along a shortest path (through the doors open now) to the thief's current room, first in listed order on ties; stays if the thief cannot be reached; never presses a button |
| ``optimal`` | its part of the optimal joint action (``tom_envs/games/joint_planner.py``), assuming an optimal partner; predicts the partner's part |
| ``lazy`` | a passive partner: always stays, never presses; the focal must catch the thief alone (the partner only blocks its own room) |
| ``guard`` | holds the hub: a shortest-path step (through the doors open now) toward room 5, where the corridor 3-4, room 6 and the dead end 7-8 meet, then stays there; never presses; the focal does the chase |
| ``opener`` | opens the doors: a shortest-path step toward the button of the first closed door (door 1-2's in room 9, then door 3-4's in room 8) and presses it there; with both doors open it chases as ``greedy`` does |

The three last are conventions that split the work differently from ``optimal``'s plan (in the
default ``door12_closed`` start it chases through rooms 5, 4, 3 while the focal holds room 1):
each leaves the chase, or the door, to the focal. Every bot here is deterministic and reads only
the rooms, the thief and the doors (never the turn), so it is Markov in the exact planner's state
and has an exact best response (:func:`tom_envs.references.markov_partner`).

The authors' greedy-agent class is not in the released code (only its loop is); the chase rule
above is our reading of "greedy".
"""

from __future__ import annotations

from tom_envs.core.agents import BaseAgent, Turn
from tom_envs.core.contract import Bot
from tom_envs.games.collab_capture.rules import (
    DOORS,
    MAZE,
    Action,
    CaptureState,
    closed_doors,
)
from tom_envs.games.collab_capture.view import CaptureView
from tom_envs.games.joint_planner import planner_bot_table, rule_bot


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


#: The junction the ``guard`` holds (the corridor 3-4, room 6 and the dead end 7-8 meet there).
HUB = 5


def lazy_action(view: CaptureView) -> int:
    """Always stay."""
    return int(Action.STAY)


def guard_action(view: CaptureView) -> int:
    """A step toward the hub (room 5) through the open doors; stay there (or if cut off)."""
    step = MAZE.step_toward(view.my_room, HUB, closed_doors(view.doors_open))
    return int(Action.STAY) if step is None else step


def opener_action(view: CaptureView) -> int:
    """Press the button of the first closed door when in its room, else step toward that button;
    with every door open, chase as ``greedy``."""
    for door, is_open in zip(DOORS, view.doors_open, strict=True):
        if is_open:
            continue
        if view.my_room == door.button:
            return int(Action.PRESS)
        step = MAZE.step_toward(view.my_room, door.button, closed_doors(view.doors_open))
        if step is not None:
            return step
    return greedy_action(view)


#: The conventions that split the work differently (one-line descriptions in the zoo).
CONVENTIONS = (
    rule_bot("lazy", lazy_action,
              "a passive partner: always stays, never presses; the focal must catch the thief "
              "alone"),
    rule_bot("guard", guard_action,
              "holds the hub: walks to room 5 (where the corridor 3-4, room 6 and the dead end "
              "7-8 meet) and stays there; never presses; the focal does the chase"),
    rule_bot("opener", opener_action,
              "opens the doors: walks to the button of the first closed door (1-2's in room 9, "
              "then 3-4's in room 8) and presses it; with both doors open, chases as greedy"),
)  # fmt: skip
#: The bots that read only what the exact planner's state keeps (rooms, thief, doors): Markov
#: there, so the planner gives each an exact best response (``optimal`` is tabulated apart).
MARKOV_BOTS = ("greedy", *(b.name for b in CONVENTIONS))


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
    conventions=CONVENTIONS,
)  # fmt: skip
