"""CollabCapture rules ("Catch the Thief", paper 002 §3.1 and App. E.1), as coded by the authors.

Pure rules: a frozen config, a frozen hashable state and the :class:`CaptureGame`. No gymnasium or
pettingzoo here. Facts from ``specs/games.md`` §2.1 (the authors' ``collab_capture_*`` code):

* Rooms 1-9; passages 1:[2,6] 2:[1,3] 3:[2,4] 4:[3,5] 5:[4,6,7] 6:[5,9,1] 7:[5,8] 8:[7] 9:[6]
  (listed order = option order = tie order).
* Door "1" on passage 1-2, toggled by a button in room 9; door "3" on passage 3-4, toggled by a
  button in room 8. A closed door blocks its passage both ways. Pressing a button keeps the presser
  in place.
* Each turn: both agents choose from the same state; the thief then plans (from the agents'
  *planned* next rooms and the doors as they were at the start of the turn); then Alice presses
  and/or moves, Bob presses and/or moves, the thief moves. All moves were checked against the doors
  at the start of the turn, so a door closed this turn blocks only from the next turn.
* Thief: only moves (stays only when no passage is open), to the open neighbour maximising
  ``min(|room - alice_next|, |room - bob_next|)`` (room-number difference as coded; graph distance
  as an option), first in listed order on ties.
* Capture: the thief shares a room with an agent after the turn, or an agent and the thief swapped
  rooms across a passage. 30 turns at most.
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
    Closed,
    RoomConfig,
    RoomGame,
    RoomMaze,
    check_scenario,
    check_starts,
    closed_set,
)

if TYPE_CHECKING:
    from tom_envs.games.collab_capture.view import CaptureView

#: The coded map (listed order matters: it orders options and breaks the thief's ties).
MAZE = RoomMaze.from_dict(
    {
        1: [2, 6],
        2: [1, 3],
        3: [2, 4],
        4: [3, 5],
        5: [4, 6, 7],
        6: [5, 9, 1],
        7: [5, 8],
        8: [7],
        9: [6],
    }
)
ROOMS: tuple[int, ...] = MAZE.rooms


@dataclass(frozen=True)
class Door:
    """A door on the passage ``rooms`` toggled by the button in ``button``."""

    rooms: tuple[int, int]
    button: int


#: Door "1" (passage 1-2, button in room 9) and door "3" (passage 3-4, button in room 8).
DOORS: tuple[Door, ...] = (Door((1, 2), 9), Door((3, 4), 8))


@dataclass(frozen=True)
class Scenario:
    """A named start: door states (in :data:`DOORS` order) and rooms of Alice, Bob and the thief."""

    key: str
    doors_open: tuple[bool, bool]
    starts: tuple[int, int, int]
    challenge: str


#: App. E.1's four door states at the coded starts (Alice 1, Bob 6, thief 2), then the paper's
#: three named challenges at starts that require them (ours: the released code has no such
#: starts). Optimal turns and what the team can do without each mechanism are in the env
#: docstring, checked by the exact joint planner in ``tests/games/collab_capture``.
SCENARIOS: dict[str, Scenario] = {
    s.key: s
    for s in (
        Scenario(
            "both_open",
            (True, True),
            (1, 6, 2),
            "the coded starts with both doors open: solved in one turn (Alice swaps with the "
            "thief); no challenge",
        ),
        Scenario(
            "door12_closed",
            (False, True),
            (1, 6, 2),
            "the authors' LLM benchmark: Bob chases through rooms 5, 4 and 3 while Alice holds "
            "room 1; no button needed",
        ),
        Scenario(
            "door34_closed",
            (True, False),
            (1, 6, 2),
            "the authors' greedy-agent run: solved in one turn (Alice swaps with the thief)",
        ),
        Scenario(
            "both_closed",
            (False, False),
            (1, 6, 2),
            "the thief's corridor is sealed: Bob opens door 1-2 (button in room 9) so that Alice "
            "can reach the thief",
        ),
        Scenario(
            "pincer",
            (True, True),
            (5, 7, 4),
            "pincer: Alice and Bob close in on the corridor 1-2-3 from both ends",
        ),
        Scenario(
            "enable",
            (False, True),
            (1, 9, 2),
            "enable: Bob, in the button room, opens door 1-2 for Alice instead of chasing",
        ),
        Scenario(
            "disable",
            (False, True),
            (6, 8, 3),
            "disable: Bob closes door 3-4 (button in room 8) to cut off the thief's escape",
        ),
    )
}
#: The four door-state scenarios of App. E.1 at the coded starts (the paper's Table 2 aggregates
#: over its four scenarios); the others are the named challenges.
DOOR_STATE_SCENARIOS: tuple[str, ...] = (
    "both_open",
    "door12_closed",
    "door34_closed",
    "both_closed",
)
DEFAULT_SCENARIO = "door12_closed"


class Action(IntEnum):
    """The two named actions. The catalogue is: 0 stay, r (1-9) move to room r, 10 press the
    button here; a move is the room's own number, so ``action in ROOMS`` means "move"."""

    STAY = 0
    PRESS = 10


NUM_ACTIONS = 11


@dataclass(frozen=True)
class CaptureConfig(RoomConfig):
    """Settings of CollabCapture.

    Attributes:
        scenario: a key of :data:`SCENARIOS` (door states and starts).
        doors_open: override the scenario's door states (door 1-2, door 3-4).
        starts: override the scenario's starts ``(alice, bob, thief)``.
        max_turns: turn limit (the code: 30).
        swap_capture: a swap across a passage also captures (the code's LLM loop: yes; its
            greedy-agent loop checked same-room capture only).
        thief_distance: ``"room_number"`` (as coded: |room - agent's next room|) or ``"graph"``
            (moves on a shortest path through the doors open at the start of the turn).
    """

    scenario: str = DEFAULT_SCENARIO
    doors_open: tuple[bool, bool] | None = None
    starts: tuple[int, int, int] | None = None
    max_turns: int = 30
    swap_capture: bool = True
    thief_distance: str = "room_number"
    preset: Scenario = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "preset", check_scenario(self.scenario, SCENARIOS))
        if self.doors_open is not None:
            doors = tuple(bool(d) for d in self.doors_open)
            if len(doors) != len(DOORS):
                raise ValueError(f"doors_open needs {len(DOORS)} flags, got {self.doors_open}")
            object.__setattr__(self, "doors_open", doors)
        if self.starts is not None:
            object.__setattr__(self, "starts", check_starts(self.starts, ROOMS))
        if self.max_turns < 1:
            raise ValueError(f"max_turns must be >= 1, got {self.max_turns}")
        if self.thief_distance not in ("room_number", "graph"):
            raise ValueError(
                f"thief_distance must be 'room_number' or 'graph', got {self.thief_distance!r}"
            )

    @property
    def start_doors(self) -> tuple[bool, bool]:
        """Door states at the start."""
        return self.doors_open if self.doors_open is not None else self.preset.doors_open


@dataclass(frozen=True)
class CaptureState:
    """Value-semantics state.

    Attributes:
        rooms: ``(alice, bob)`` rooms.
        thief: the thief's room.
        doors: open flags in :data:`DOORS` order.
        turn: turns played.
        captured: the thief was caught (the episode is over).
    """

    rooms: tuple[int, int]
    thief: int
    doors: tuple[bool, bool]
    turn: int = 0
    captured: bool = False


def closed_doors(doors: tuple[bool, ...]) -> Closed:
    """The closed passages for door flags."""
    return closed_set(d.rooms for d, is_open in zip(DOORS, doors, strict=True) if not is_open)


def next_room(action: int, room: int) -> int:
    """Where an agent in ``room`` plans to be after ``action`` (stay and press keep it there)."""
    return action if action in ROOMS else room


def button_door(room: int) -> int | None:
    """Index of the door whose button is in ``room``, if any."""
    for i, d in enumerate(DOORS):
        if d.button == room:
            return i
    return None


def thief_plan(config: CaptureConfig, state: CaptureState, planned: tuple[int, int]) -> int:
    """The room the thief moves to, given the agents' planned next rooms (as coded)."""
    closed = closed_doors(state.doors)
    options = MAZE.neighbors(state.thief, closed)
    if not options:
        return state.thief
    if config.thief_distance == "room_number":

        def dist(room: int, agent: int) -> float:
            return abs(room - agent)

    else:

        def dist(room: int, agent: int) -> float:
            d = MAZE.distance(agent, room, closed)
            return float("inf") if d is None else d

    best, best_value = options[0], -1.0
    for room in options:  # first maximum in listed order, as Python's max()
        value = min(dist(room, planned[0]), dist(room, planned[1]))
        if value > best_value:
            best, best_value = room, value
    return best


class CaptureGame(RoomGame[CaptureState, "CaptureView"]):
    """CollabCapture's rules (turns, legal actions and facts shared with CollabEscape: :class:`RoomGame`)."""

    name = "collab_capture"
    num_actions: int = NUM_ACTIONS  #: stay, move to room 1-9, press
    #: Simultaneous, deterministic (the thief is scripted), fully observable, common payoff.
    tags: GameTags = GameTags(SIMULTANEOUS, "deterministic", "perfect", "identical")

    def __init__(self, config: CaptureConfig | None = None) -> None:
        self.config = config or CaptureConfig()

    def initial_state(self, rng: np.random.Generator) -> CaptureState:
        """The scenario's start (no chance)."""
        a, b, t = self.config.start_rooms
        return CaptureState(rooms=(a, b), thief=t, doors=self.config.start_doors)

    def is_terminal(self, state: CaptureState) -> bool:
        """Captured, or out of turns."""
        return state.captured or state.turn >= self.config.max_turns

    def options(self, state: CaptureState, player: int) -> tuple[int, ...]:
        """Stay, the open neighbours (listed order), and press if in a button room."""
        room = state.rooms[player]
        out = [int(Action.STAY), *MAZE.neighbors(room, closed_doors(state.doors))]
        if button_door(room) is not None:
            out.append(int(Action.PRESS))
        return tuple(out)

    def outcomes(
        self, state: CaptureState, actions: Mapping[int, int]
    ) -> tuple[tuple[float, CaptureState], ...]:
        """Every outcome of a joint action with its probability (here always one)."""
        return ((1.0, self.transition(state, actions)[0]),)

    def transition(
        self, state: CaptureState, actions: Mapping[int, int]
    ) -> tuple[CaptureState, tuple[str, ...]]:
        """The next state and named events (rules as coded; no validation)."""
        acts = (int(actions[0]), int(actions[1]))
        planned = (next_room(acts[0], state.rooms[0]), next_room(acts[1], state.rooms[1]))
        thief_next = thief_plan(self.config, state, planned)
        doors = list(state.doors)
        events: list[str] = []
        for p, a in enumerate(acts):
            if a == Action.PRESS:
                d = button_door(state.rooms[p])
                if d is not None:
                    doors[d] = not doors[d]
                    r1, r2 = DOORS[d].rooms
                    events.append(
                        f"{PLAYER_NAMES[p]} pressed the button in room {state.rooms[p]}: the door "
                        f"between room {r1} and room {r2} is now {'open' if doors[d] else 'closed'}"
                    )
        same = thief_next in planned
        swap = self.config.swap_capture and any(
            planned[p] == state.thief and thief_next == state.rooms[p] for p in (0, 1)
        )
        nxt = CaptureState(
            rooms=planned,
            thief=thief_next,
            doors=(doors[0], doors[1]),
            turn=state.turn + 1,
            captured=same or swap,
        )
        if same:
            events.append("captured")
        elif swap:
            events.append("captured by swap")
        return nxt, tuple(events)

    def apply(
        self,
        state: CaptureState,
        actions: Mapping[int, int],
        rng: np.random.Generator,
        messages: Mapping[int, str] | None = None,
    ) -> StepResult[CaptureState]:
        """One turn; both agents get 1 on capture."""
        nxt, events = self.transition(state, actions)  # deterministic: ``rng`` is not used
        r = 1.0 if nxt.captured else 0.0
        return StepResult(nxt, (r, r), events)

    def observe(self, state: CaptureState, player: int) -> CaptureView:
        """The player's view (see :mod:`tom_envs.games.collab_capture.view`)."""
        from tom_envs.games.collab_capture.view import observe

        return observe(self, state, player)

    def canonical(self, state: CaptureState) -> CaptureState:
        """The state without its turn counter (what the joint planner searches over)."""
        return replace(state, turn=0)

    def succeeded(self, state: CaptureState) -> bool:
        """The team's goal is reached (the thief is caught)."""
        return state.captured

    def failed(self, state: CaptureState) -> bool:
        """The team has lost outright (never in CollabCapture; only the turn limit ends it)."""
        return False
