"""CollabEscape rules (paper 002 §3.1 and App. E.2), as coded by the authors (``CollabEscapeMDP.py``).

Pure rules: a frozen config, a frozen hashable state and the :class:`EscapeGame`. Facts from
``specs/games.md`` §2.2:

* Rooms 1-10. Passages as coded (listed order = option order):
  1:[2,10] 2:[1,3] 3:[2,4,8] 4:[3,5] 5:[4,6] 6:[5,7] 7:[3,6] 8:[3,7,9] 9:[8,10] 10:[1,9].
  Two are one-way: 7 -> 3 and 8 -> 7 exist, 3 -> 7 and 7 -> 8 do not. The authors' prompt says
  instead "room 7 is connected to room 6 and 8" (the symmetric map ``map="prompt"``).
* Generators in rooms 1 and 6, exit gate in room 7. Coded start: Alice 1, Bob 2, killer 6.
* Fixing: a generator is repaired at 2 fixes. At every turn each unrepaired generator in whose room
  nobody chose "fix" drops back to 0, so it takes fixes on two consecutive turns (by either player)
  or both players fixing in the same turn.
* The killer decides at the start of the turn, then moves with the players: if a player's room is
  one step away (his out-passages), he moves to that player's *current* room (both in sight: keep
  the target if both were already seen, else switch to the newly seen one, else Alice); otherwise
  he moves to a uniformly random neighbour. He never stays.
* After the moves: caught (the killer shares a room with a player) is checked first, then escape
  (both generators repaired and a player in room 7). The code has no turn limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import IntEnum
from typing import TYPE_CHECKING

import numpy as np

from tom_envs.core.game import SIMULTANEOUS, GameTags, StepResult
from tom_envs.games.room_maze import (
    PLAYER_NAMES,
    RoomConfig,
    RoomGame,
    RoomMaze,
    check_scenario,
    check_starts,
    sample_outcome,
)

if TYPE_CHECKING:
    from tom_envs.games.collab_escape.view import EscapeView

#: The map as coded (one-way 7 -> 3 and 8 -> 7).
CODED_MAZE = RoomMaze.from_dict(
    {
        1: [2, 10],
        2: [1, 3],
        3: [2, 4, 8],
        4: [3, 5],
        5: [4, 6],
        6: [5, 7],
        7: [3, 6],
        8: [3, 7, 9],
        9: [8, 10],
        10: [1, 9],
    }
)
#: The map the authors' prompt describes: "room 7 is connected to room 6 and 8"; all two-way.
PROMPT_MAZE = RoomMaze.from_dict({**dict(CODED_MAZE.adjacency), 7: (6, 8)})
MAPS: dict[str, RoomMaze] = {"coded": CODED_MAZE, "prompt": PROMPT_MAZE}
ROOMS: tuple[int, ...] = CODED_MAZE.rooms
GENERATORS: tuple[int, ...] = (1, 6)
GATE = 7


@dataclass(frozen=True)
class Scenario:
    """A named start: rooms of Alice, Bob and the killer."""

    key: str
    starts: tuple[int, int, int]
    challenge: str


#: App. E.2's two start scenarios. Only ``together`` is in the released code; ``split`` is ours.
SCENARIOS: dict[str, Scenario] = {
    s.key: s
    for s in (
        Scenario(
            "together",
            (1, 2, 6),
            "the coded start: both near generator 1, the killer on generator 6",
        ),
        Scenario(
            "split",
            (1, 5, 6),
            "Bob starts in sight of the killer: lure him away while Alice repairs (not in the "
            "released code; our reading of App. E.2)",
        ),
    )
}
DEFAULT_SCENARIO = "together"


class Action(IntEnum):
    """The two named actions. The catalogue is: 0 wait, r (1-10) move to room r, 11 fix the
    generator here; a move is the room's own number, so ``action in ROOMS`` means "move"."""

    WAIT = 0
    FIX = 11


NUM_ACTIONS = 12

# Killer memory (what he saw when he last decided), as coded by ``can_see`` + ``target_name``.
MEM_NONE = 0  #: nobody in sight
MEM_SAW_ALICE = 1  #: only Alice in sight: chased Alice
MEM_SAW_BOB = 2  #: only Bob in sight: chased Bob
MEM_BOTH_ALICE = 3  #: both in sight: chased Alice
MEM_BOTH_BOB = 4  #: both in sight: chased Bob

OUTCOME_RUNNING, OUTCOME_ESCAPED, OUTCOME_CAUGHT = 0, 1, 2


@dataclass(frozen=True)
class EscapeConfig(RoomConfig):
    """Settings of CollabEscape.

    Attributes:
        scenario: a key of :data:`SCENARIOS` (the starts).
        map: ``"coded"`` (default, with the code's one-way passages) or ``"prompt"`` (the
            symmetric map the authors' prompt describes).
        starts: override the scenario's starts ``(alice, bob, killer)``.
        max_turns: turn limit; ``None`` for none (as coded). Default 30, as in CollabCapture.
        fixes_needed: fixes to repair a generator (the code: 2).
    """

    scenario: str = DEFAULT_SCENARIO
    map: str = "coded"
    starts: tuple[int, int, int] | None = None
    max_turns: int | None = 30
    fixes_needed: int = 2
    preset: Scenario = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "preset", check_scenario(self.scenario, SCENARIOS))
        if self.map not in MAPS:
            raise ValueError(f"map must be one of {sorted(MAPS)}, got {self.map!r}")
        if self.starts is not None:
            starts = check_starts(self.starts, ROOMS)
            if starts[2] in starts[:2]:
                raise ValueError(f"argument 'starts': got {self.starts}; allowed: three rooms, "
                                 "the killer's (the third) not a player's")  # fmt: skip
            object.__setattr__(self, "starts", starts)
        if self.max_turns is not None and self.max_turns < 1:
            raise ValueError(f"max_turns must be None or >= 1, got {self.max_turns}")
        if self.fixes_needed < 1:
            raise ValueError(f"fixes_needed must be >= 1, got {self.fixes_needed}")

    @property
    def maze(self) -> RoomMaze:
        """The map in use."""
        return MAPS[self.map]


@dataclass(frozen=True)
class EscapeState:
    """Value-semantics state.

    Attributes:
        rooms: ``(alice, bob)`` rooms.
        killer: the killer's room.
        fixes: fixes done per generator (:data:`GENERATORS` order); ``fixes_needed`` = repaired.
        memory: what the killer saw when he last decided (``MEM_*``).
        fixing: whether each player's last action was a fix (shown to the players).
        turn: turns played.
        outcome: ``OUTCOME_RUNNING``, ``OUTCOME_ESCAPED`` or ``OUTCOME_CAUGHT``.
    """

    rooms: tuple[int, int]
    killer: int
    fixes: tuple[int, int] = (0, 0)
    memory: int = MEM_NONE
    fixing: tuple[bool, bool] = (False, False)
    turn: int = 0
    outcome: int = OUTCOME_RUNNING


def next_room(action: int, room: int) -> int:
    """Where a player in ``room`` is after ``action`` (wait and fix keep it there)."""
    return action if action in ROOMS else room


def killer_decision(maze: RoomMaze, state: EscapeState) -> tuple[int | None, int]:
    """The killer's decision at the start of a turn: ``(target player or None, new memory)``."""
    sight = maze.out(state.killer)
    alice, bob = (r in sight for r in state.rooms)
    if alice and bob:
        if state.memory in (MEM_BOTH_ALICE, MEM_BOTH_BOB):
            return (0 if state.memory == MEM_BOTH_ALICE else 1), state.memory
        if state.memory == MEM_SAW_ALICE:  # Bob is newly seen: switch to him
            return 1, MEM_BOTH_BOB
        return 0, MEM_BOTH_ALICE  # Alice newly seen (Bob was), or neither seen before: Alice
    if alice:
        return 0, MEM_SAW_ALICE
    if bob:
        return 1, MEM_SAW_BOB
    return None, MEM_NONE


class EscapeGame(RoomGame[EscapeState, "EscapeView"]):
    """CollabEscape's rules (turns, legal actions and facts shared with CollabCapture: :class:`RoomGame`)."""

    name = "collab_escape"
    num_actions: int = NUM_ACTIONS  #: wait, move to room 1-10, fix
    #: Simultaneous, stochastic (the roaming killer), fully observable, common payoff.
    tags: GameTags = GameTags(SIMULTANEOUS, "stochastic", "perfect", "identical")

    def __init__(self, config: EscapeConfig | None = None) -> None:
        self.config = config or EscapeConfig()
        self.maze = self.config.maze

    def initial_state(self, rng: np.random.Generator) -> EscapeState:
        """The scenario's start (no chance at the start)."""
        a, b, k = self.config.start_rooms
        return EscapeState(rooms=(a, b), killer=k)

    def repaired(self, state: EscapeState, g: int) -> bool:
        """Whether generator ``g`` (index in :data:`GENERATORS`) is repaired."""
        return state.fixes[g] >= self.config.fixes_needed

    def gate_open(self, state: EscapeState) -> bool:
        """Both generators repaired."""
        return all(self.repaired(state, g) for g in range(len(GENERATORS)))

    def is_terminal(self, state: EscapeState) -> bool:
        """Escaped, caught, or out of turns."""
        limit = self.config.max_turns
        return state.outcome != OUTCOME_RUNNING or (limit is not None and state.turn >= limit)

    def options(self, state: EscapeState, player: int) -> tuple[int, ...]:
        """Moves (listed order), fix (in an unrepaired generator's room), wait."""
        room = state.rooms[player]
        out = list(self.maze.out(room))
        if room in GENERATORS and not self.repaired(state, GENERATORS.index(room)):
            out.append(int(Action.FIX))
        out.append(int(Action.WAIT))
        return tuple(out)

    def outcomes(
        self, state: EscapeState, actions: Mapping[int, int]
    ) -> tuple[tuple[float, EscapeState], ...]:
        """Every outcome of a joint action with its probability (one per killer move)."""
        return tuple((p, s) for p, s, _ in self._outcomes(state, actions))

    def _outcomes(
        self, state: EscapeState, actions: Mapping[int, int]
    ) -> list[tuple[float, EscapeState, tuple[str, ...]]]:
        acts = (int(actions[0]), int(actions[1]))
        target, memory = killer_decision(self.maze, state)
        rooms = (next_room(acts[0], state.rooms[0]), next_room(acts[1], state.rooms[1]))
        fixes = list(state.fixes)
        events: list[str] = []
        needed = self.config.fixes_needed
        for g, room in enumerate(GENERATORS):
            fixers = sum(1 for p in (0, 1) if acts[p] == Action.FIX and state.rooms[p] == room)
            if fixes[g] >= needed:
                continue
            if fixers == 0:
                if fixes[g]:
                    events.append(f"the generator in room {room} lost its progress")
                fixes[g] = 0
            else:
                fixes[g] = min(needed, fixes[g] + fixers)
                if fixes[g] >= needed:
                    events.append(f"the generator in room {room} is repaired")
        gate = all(f >= needed for f in fixes)
        if gate and not self.gate_open(state):
            events.append("the exit gate is open")
        fixing = (acts[0] == Action.FIX, acts[1] == Action.FIX)
        if target is not None:
            killer_rooms = [state.rooms[target]]
            events.append(f"the killer chased {PLAYER_NAMES[target]}")
        else:
            killer_rooms = list(self.maze.out(state.killer))
        p = 1.0 / len(killer_rooms)
        out = []
        for k in killer_rooms:
            if k in rooms:
                outcome, tail = OUTCOME_CAUGHT, ("caught",)
            elif gate and GATE in rooms:
                outcome, tail = OUTCOME_ESCAPED, ("escaped",)
            else:
                outcome, tail = OUTCOME_RUNNING, ()
            nxt = EscapeState(
                rooms=rooms,
                killer=k,
                fixes=(fixes[0], fixes[1]),
                memory=memory,
                fixing=fixing,
                turn=state.turn + 1,
                outcome=outcome,
            )
            out.append((p, nxt, (*events, *tail)))
        return out

    def apply(
        self,
        state: EscapeState,
        actions: Mapping[int, int],
        rng: np.random.Generator,
        messages: Mapping[int, str] | None = None,
    ) -> StepResult[EscapeState]:
        """One turn; the roaming killer's move is drawn from ``rng``; both get 1 on escape."""
        options = self._outcomes(state, actions)
        nxt, events = sample_outcome([(p, (s, e)) for p, s, e in options], rng)  # type: ignore[misc]
        r = 1.0 if nxt.outcome == OUTCOME_ESCAPED else 0.0
        return StepResult(nxt, (r, r), events)

    def observe(self, state: EscapeState, player: int) -> EscapeView:
        """The player's view (see :mod:`tom_envs.games.collab_escape.view`)."""
        from tom_envs.games.collab_escape.view import observe

        return observe(self, state, player)

    def canonical(self, state: EscapeState) -> EscapeState:
        """The state without turn counter and display-only flags (what the planner searches)."""
        return replace(state, turn=0, fixing=(False, False))

    def succeeded(self, state: EscapeState) -> bool:
        """A player escaped."""
        return state.outcome == OUTCOME_ESCAPED

    def failed(self, state: EscapeState) -> bool:
        """The killer caught a player."""
        return state.outcome == OUTCOME_CAUGHT
