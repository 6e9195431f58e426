"""Partner bots for CollabEscape. They read the structured view, never the vector.

| name | rule |
|---|---|
| ``greedy`` | the paper's greedy baseline, our reading (no greedy agent is in the released code): fix the generator here if it is unrepaired, else walk a shortest path to the nearest unrepaired generator (ties: room 1 first), and once the gate is open walk a shortest path to it; ignores the killer and the partner |
| ``optimal`` | its part of the optimal joint action (``tom_envs/games/joint_planner.py``), assuming an optimal partner; predicts the partner's part |
| ``lazy`` | a passive partner: always waits; the focal must repair both generators and reach the gate alone |
| ``far_first`` | greedy's order reversed: repairs generator 6 before generator 1 (from the coded start, the far one first), fixing in the target's room and walking a shortest path to it otherwise; once the gate is open walks to it; ignores the killer |
| ``split`` | a role split: generator 6 is its job, generator 1 the partner's: it walks to room 6 and repairs it, then waits there until the gate is open, then walks to it; never touches generator 1; ignores the killer |

The three last are conventions that split the work differently from ``greedy`` (both repair the
nearest generator) and ``optimal``. Every bot here but ``optimal`` reads only the rooms, the
generators' fixes and the gate (never the killer, the turn or the display-only "was fixing"
flags), so it is Markov in the exact planner's state and has an exact best response
(:func:`tom_envs.references.markov_partner`).
"""

from __future__ import annotations

from collections.abc import Callable

from tom_envs.core.agents import BaseAgent, Turn
from tom_envs.core.contract import Bot
from tom_envs.core.game import GameBundle
from tom_envs.games.collab_escape.rules import (
    GENERATORS,
    OUTCOME_CAUGHT,
    OUTCOME_ESCAPED,
    OUTCOME_RUNNING,
    Action,
    EscapeGame,
    EscapeState,
)
from tom_envs.games.collab_escape.view import EscapeView, absolute_memory
from tom_envs.games.joint_planner import planner_bot_table, rule_bot
from tom_envs.games.room_maze import RoomMaze


def state_from_view(view: EscapeView) -> EscapeState:
    """The rules state a view shows (everything but chance is observable)."""
    mine, theirs = (view.my_room, view.partner_room), (view.i_was_fixing, view.partner_was_fixing)
    if view.player == 1:
        mine, theirs = (mine[1], mine[0]), (theirs[1], theirs[0])
    outcome = (
        OUTCOME_ESCAPED if view.escaped else OUTCOME_CAUGHT if view.caught else OUTCOME_RUNNING
    )
    fixes = tuple(done for _, done, _ in view.generators)
    return EscapeState(
        rooms=mine,
        killer=view.killer_room,
        fixes=(fixes[0], fixes[1]),
        memory=absolute_memory(view.killer_memory, view.player),
        fixing=theirs,
        turn=view.turn,
        outcome=outcome,
    )


def greedy_action(view: EscapeView, maze: RoomMaze) -> int:
    """Fix here, else head for the nearest unrepaired generator, else for the open gate."""
    if view.gate_open:
        goals = [view.gate_room]
    else:
        todo = [room for room, done, needed in view.generators if done < needed]
        if view.my_room in todo and Action.FIX in view.legal_actions:
            return int(Action.FIX)
        dist = {g: maze.distance(view.my_room, g) for g in todo}
        reachable = [g for g in todo if dist[g] is not None]
        goals = sorted(reachable, key=lambda g: (dist[g], GENERATORS.index(g)))[:1]
    for goal in goals:
        step = maze.step_toward(view.my_room, goal)
        if step is not None:
            return step
    return int(Action.WAIT)


#: ``far_first``'s order of the generators' rooms (greedy's nearest-first from the coded start,
#: reversed) and ``split``'s own generator.
FAR_FIRST = (6, 1)
SPLIT_GENERATOR = 6


def _walk(view: EscapeView, maze: RoomMaze, goal: int) -> int:
    step = maze.step_toward(view.my_room, goal)
    return int(Action.WAIT) if step is None else step


def _todo(view: EscapeView) -> list[int]:
    return [room for room, done, needed in view.generators if done < needed]


def lazy_action(view: EscapeView, maze: RoomMaze) -> int:
    """Always wait."""
    return int(Action.WAIT)


def far_first_action(view: EscapeView, maze: RoomMaze) -> int:
    """Repair generator 6, then 1 (fix in the target's room, else walk to it); then the gate."""
    if view.gate_open:
        return _walk(view, maze, view.gate_room)
    todo = _todo(view)
    target = next(g for g in FAR_FIRST if g in todo)
    if view.my_room == target and Action.FIX in view.legal_actions:
        return int(Action.FIX)
    return _walk(view, maze, target)


def split_action(view: EscapeView, maze: RoomMaze) -> int:
    """Repair generator 6 only, wait in room 6 until the gate opens, then walk to the gate."""
    if view.gate_open:
        return _walk(view, maze, view.gate_room)
    if view.my_room == SPLIT_GENERATOR and Action.FIX in view.legal_actions:
        return int(Action.FIX)
    return _walk(view, maze, SPLIT_GENERATOR)


def _maze_bot(name: str, rule: Callable[[EscapeView, RoomMaze], int], description: str) -> Bot:
    return rule_bot(name, rule, description, lambda bundle: _game(bundle).maze)


class GreedyRepairer(BaseAgent):
    """Repairs the nearest generator, then runs for the gate; ignores the killer."""

    name = "greedy"

    def __init__(self, maze: RoomMaze) -> None:
        super().__init__()
        self.maze = maze

    def act(self, turn: Turn) -> int:
        """Fix, walk to a generator, or walk to the gate."""
        return greedy_action(turn.view, self.maze)


def _game(bundle: GameBundle) -> EscapeGame:
    return bundle.game  # type: ignore[return-value]


#: The conventions that split the work differently (one-line descriptions in the zoo).
CONVENTIONS = (
    _maze_bot("lazy", lazy_action,
              "a passive partner: always waits; the focal must repair both generators and reach "
              "the gate alone"),
    _maze_bot("far_first", far_first_action,
              "greedy's order reversed: repairs generator 6 before generator 1 (the far one from "
              "the coded start first), then runs for the gate; ignores the killer"),
    _maze_bot("split", split_action,
              "a role split: repairs generator 6 only (generator 1 is the partner's), waits there "
              "until the gate is open, then runs for it; ignores the killer"),
)  # fmt: skip
#: The bots that read only what the exact planner's state keeps (rooms, fixes, gate; never the
#: display-only "was fixing" flags): Markov there, so the planner gives each an exact best
#: response (``optimal`` is tabulated apart).
MARKOV_BOTS = ("greedy", *(b.name for b in CONVENTIONS))

#: The bots (the same for every scenario) and the population ``all``.
bot_table = planner_bot_table(
    Bot("greedy", lambda bundle: GreedyRepairer(_game(bundle).maze),
        "the paper's greedy baseline (our reading): repair the nearest generator, then run for "
        "the gate; ignores the killer"),
    state_from_view,
    "CollabEscape",
    ", exact over the killer's random moves",
    conventions=CONVENTIONS,
)  # fmt: skip
