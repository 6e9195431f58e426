"""Partner bots for CollabEscape. They read the structured view, never the vector.

| name | rule |
|---|---|
| ``greedy`` | the paper's greedy baseline, our reading (no greedy agent is in the released code): fix the generator here if it is unrepaired, else walk a shortest path to the nearest unrepaired generator (ties: room 1 first), and once the gate is open walk a shortest path to it; ignores the killer and the partner |
| ``optimal`` | its part of the optimal joint action (``tom_envs/games/joint_planner.py``), assuming an optimal partner; predicts the partner's part |
"""

from __future__ import annotations

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
from tom_envs.games.joint_planner import planner_bot_table
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


#: The bots (the same for every scenario) and the population ``all``.
bot_table = planner_bot_table(
    Bot("greedy", lambda bundle: GreedyRepairer(_game(bundle).maze),
        "the paper's greedy baseline (our reading): repair the nearest generator, then run for "
        "the gate; ignores the killer"),
    state_from_view,
    "CollabEscape",
    ", exact over the killer's random moves",
)  # fmt: skip
