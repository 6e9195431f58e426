"""What one bomb-defusal player sees: the only place that decides it.

A player sees (specs §1.6, §1.8; the issue's observation list):

* the round, the team score, whose turn it is;
* its own room: which teammates are there and which bombs are still active there (a bomb's sequence
  is *not* visible: it must be inspected);
* its teammates' locations (``teammate_locations=True``, the default) or only those sharing its room;
* the result of its own last action (teammates' actions and results are never shown);
* the chat messages teammates sent since its own previous turn;
* its own first-hand intel: the remaining sequence of every bomb it inspected, cut or was told
  about by the wrong-tool feedback, as of the moment it learned it (it may be stale);
* public facts: the map and every player's tools (both are in the rules prompt).

Everything here is a frozen value. The value types that flow through the game (action results,
chat messages and the facts a message carries) are defined here because the view is where they
reach a player; the rules, the text layer and the epistemic tracker all import them from here.

Indices: rooms are addressed by their index in the map's sorted room ids, bombs by 0-based index
(text says "Bomb 1" for index 0), colours by index into the configured colour names.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Union

from tom_envs.games.bomb_defusal.maps import GameMap

if TYPE_CHECKING:
    from tom_envs.games.bomb_defusal.rules import BombGame
    from tom_envs.games.bomb_defusal.state import BombState


class ResultKind(IntEnum):
    """What the last action did (each kind has the paper's message, see ``text.py``)."""

    START = 0  # the round-0 bootstrap: "You moved to Room r. In the new room you found ..."
    MOVED = 1
    INSPECTED = 2
    CUT = 3  # correct tool, phases remain
    DEFUSED = 4  # correct tool, last phase
    WRONG_TOOL = 5  # rejected with feedback (the original code's behaviour)
    EXPLODED = 6  # wrong tool with ``wrong_tool="explode"``
    NO_BOMB = 7  # a tool used where no active bomb is


@dataclass(frozen=True)
class ActionResult:
    """The outcome of one action, as its actor learns it.

    Attributes:
        kind: what happened.
        room: the actor's room index after the action.
        bomb: the bomb acted on (``None`` for moves and tool uses without a bomb).
        color: the tool colour used (tool actions only).
        remaining: the bomb's remaining sequence after the action (inspect, cut, wrong tool).
        stages: the bomb's total number of phases (inspect).
        agents_seen: other players in the room after a move (or at the start).
        bombs_seen: active bombs in the room after a move (or at the start).
    """

    kind: ResultKind
    room: int
    bomb: int | None = None
    color: int | None = None
    remaining: tuple[int, ...] = ()
    stages: int = 0
    agents_seen: tuple[int, ...] = ()
    bombs_seen: tuple[int, ...] = ()


# ------------------------------------------------------------------------------------ facts
@dataclass(frozen=True)
class RoomFact:
    """ "Room ``room`` contains exactly the active bombs ``bombs``" (``()``: no bomb)."""

    room: int
    bombs: tuple[int, ...]


@dataclass(frozen=True)
class BombFact:
    """ "Bomb ``bomb`` (in room ``room``, if said) has remaining sequence ``remaining``".

    ``remaining == ()`` means the bomb is defused.
    """

    bomb: int
    remaining: tuple[int, ...]
    room: int | None = None


@dataclass(frozen=True)
class LocationFact:
    """ "Player ``agent`` is in (or is going to) room ``room``" (said by that player)."""

    agent: int
    room: int


@dataclass(frozen=True)
class RequestFact:
    """ "Player ``agent`` needs a ``color`` tool in room ``room``"."""

    agent: int
    color: int
    room: int


Fact = Union[RoomFact, BombFact, LocationFact, RequestFact]  # noqa: UP007 (runtime alias)


@dataclass(frozen=True)
class ChatMessage:
    """One broadcast message.

    Attributes:
        sender: the player who sent it.
        time: the game time it was sent (actions applied so far, counting the sender's).
        round: the round it was sent in.
        text: the text teammates read.
        facts: what the message tells: exact for symbolic messages, read by the documented
            extractor (:func:`tom_envs.games.bomb_defusal.tom.extract_facts`) for free text.
        symbolic: whether it came from a symbolic message option (RL agents).
    """

    sender: int
    time: int
    round: int
    text: str
    facts: tuple[Fact, ...] = ()
    symbolic: bool = False


@dataclass(frozen=True)
class Intel:
    """First-hand knowledge of one bomb: its room and remaining sequence when last seen."""

    bomb: int
    room: int
    remaining: tuple[int, ...]
    round: int


@dataclass(frozen=True)
class BombView:
    """One player's view.

    Attributes:
        player: the seat.
        round: the current round (1-based); ``max_rounds``: the limit.
        turn: whose turn it is (the seat), or ``-1`` once the episode is over.
        score: the team score; ``max_score``: the score when every bomb is defused.
        room: my room index.
        room_agents: other players in my room.
        room_bombs: active bombs in my room (ids only: sequences are not visible).
        agent_rooms: every player's room index (mine included), ``-1`` where not visible.
        tools: every player's tool colours (public: the rules prompt states them).
        intel: my first-hand bomb knowledge (see :class:`Intel`), one entry per bomb I know.
        last_result: the result of my last action (the start bootstrap before my first action).
        messages: messages teammates sent since my previous turn, oldest first.
        game_map: the map (public).
        num_bombs: how many bombs the mission has.
        legal_actions: my legal actions now (empty when it is not my turn).
    """

    player: int
    round: int
    max_rounds: int
    turn: int
    score: int
    max_score: int
    room: int
    room_agents: tuple[int, ...]
    room_bombs: tuple[int, ...]
    agent_rooms: tuple[int, ...]
    tools: tuple[tuple[int, ...], ...]
    intel: tuple[Intel, ...]
    last_result: ActionResult
    messages: tuple[ChatMessage, ...]
    game_map: GameMap
    num_bombs: int
    legal_actions: tuple[int, ...]

    @property
    def my_tools(self) -> tuple[int, ...]:
        """My tool colours."""
        return self.tools[self.player]


def observe(game: BombGame, state: BombState, player: int) -> BombView:
    """Build ``player``'s view of ``state``."""
    cfg = game.config
    if not 0 <= player < cfg.num_agents:
        raise ValueError(f"player must be in [0, {cfg.num_agents}), got {player}")
    mission = state.mission
    room = state.locations[player]
    here = tuple(p for p, r in enumerate(state.locations) if r == room and p != player)
    if cfg.teammate_locations:
        rooms = state.locations
    else:
        rooms = tuple(r if r == room else -1 for r in state.locations)
    since = state.last_action_time[player]
    messages = tuple(m for m in state.chat if m.time > since and m.sender != player)
    intel = tuple(i for i in state.intel[player] if i is not None)
    view = _new_view(BombView)  # the dataclass's fields, set without its per-field __init__
    view.__dict__.update(
        player=player,
        round=state.round,
        max_rounds=cfg.max_rounds,
        turn=-1 if state.over else state.turn,
        score=state.score,
        max_score=mission.max_score,
        room=room,
        room_agents=here,
        room_bombs=game.active_bombs_in(state, room),
        agent_rooms=rooms,
        tools=mission.tools,
        intel=intel,
        last_result=state.results[player],
        messages=messages,
        game_map=mission.game_map,
        num_bombs=len(mission.sequences),
        legal_actions=game.legal_actions(state, player),
    )
    return view


_new_view = object.__new__
