"""The values the bomb-defusal rules (:mod:`~tom_envs.games.bomb_defusal.rules`) work on.

:class:`BombConfig` (the settings of a mission; the defaults are the paper's), :class:`Mission`
(every chance outcome of an episode: map, bombs, start room) and :class:`BombState` (an episode's
value-semantics state, never mutated by the rules).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from tom_envs.games.bomb_defusal.maps import GameMap, paper_map, random_map
from tom_envs.games.bomb_defusal.minds import PendingMinds
from tom_envs.games.bomb_defusal.view import ActionResult, ChatMessage, Intel

if TYPE_CHECKING:
    from tom_envs.games.bomb_defusal.minds import Minds

#: NATO names for teams larger than the paper's three.
NATO = (
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett",
    "kilo", "lima", "mike", "november", "oscar", "papa",
)  # fmt: skip

#: The deterministic mission of the original code's ``mturk_bomb.csv`` (specs §1.3), as
#: (room id, sequence of colour indices) for bombs 1..5, start room 0.
MTURK_BOMBS: tuple[tuple[int, tuple[int, ...]], ...] = (
    (0, (0,)),
    (3, (1,)),
    (5, (2, 1, 0)),
    (6, (1, 0)),
    (8, (0, 2)),
)


def _tuple(value: object, cast: type = str) -> tuple:
    """Lists, tuples or comma-separated strings (from the CLI) as a tuple."""
    if isinstance(value, str):
        return tuple(cast(v.strip()) for v in value.split(",") if v.strip())
    return tuple(cast(v) for v in value)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class BombConfig:
    """Settings of a mission. Every size is configurable; the defaults are the paper's mission.

    Attributes:
        map: ``"paper"`` (rooms 0, 3, 5, 6, 8) or ``"random"`` (a random connected map).
        num_rooms: rooms of a random map (ids ``0 … num_rooms-1``).
        extra_edge_prob: random maps: probability of each hallway beyond a random spanning tree.
        map_seed: random maps: a fixed map from this seed; ``None`` draws a new map every episode.
        bomb_phases: number of phases of each bomb (bomb ``k`` is "Bomb k+1").
        colors: colour names (the tools).
        agents: player names (seat order = turn order). ``num_agents`` overrides them with the
            first NATO names.
        num_agents: team size (``None``: ``len(agents)``).
        tools: each player's colours; ``None`` gives player ``i`` colours ``i`` and ``i+1`` (mod
            ``m``), which is the paper's allocation for three players and colours.
        points_per_phase: points per phase of a defused bomb (10).
        max_rounds: round limit (30).
        start_room: common start room id; ``None`` draws it uniformly.
        layout: ``"random"`` (specs §1.3) or ``"mturk"`` (the original fixed mission: bomb 1 red
            in room 0, 2 green in 3, 3 blue-green-red in 5, 4 green-red in 6, 5 red-blue in 8,
            start in room 0; paper map and default colours only).
        wrong_tool: ``"reject"`` (feedback, nothing changes) or ``"explode"`` (the bomb is lost).
        shaping: add the paper's MAPPO shaping: +1 to every player per correct cut, −1 per
            explosion.
        symbolic_messages: pair every action with a symbolic message option (for RL).
        teammate_locations: whether players see every teammate's room (else only those sharing
            their room, as the original text observation).
        probes: Theory-of-Mind probes after each action: ``"all"`` teammates as targets,
            ``"one"`` teammate (drawn deterministically from the state), or ``"none"`` (also
            turns the epistemic tracker off).
        intel_in_text: also print the player's first-hand bomb intel in its observation text.
        probe_timing: when probes are asked: ``"action"`` (the paper's: right after the action,
            truths of that moment) or ``"turn"`` (at the actor's next decision, truths of that
            moment); see ``tom``.
        probe_subject: how a probe names what it asks about: ``"action"`` ("the room you just
            moved to", "the bomb you just acted on": numbers are cues a no-reasoning answerer
            learns across missions) or ``"number"`` ("room 5", "bomb 3", App. C's wording); see
            ``tom``.
    """

    map: str = "paper"
    num_rooms: int = 5
    extra_edge_prob: float = 0.3
    map_seed: int | None = None
    bomb_phases: tuple[int, ...] = (1, 1, 2, 2, 3)
    colors: tuple[str, ...] = ("red", "green", "blue")
    agents: tuple[str, ...] = ("alpha", "bravo", "charlie")
    num_agents: int | None = None
    tools: tuple[tuple[str, ...], ...] | None = None
    points_per_phase: int = 10
    max_rounds: int = 30
    start_room: int | None = None
    layout: str = "random"
    wrong_tool: str = "reject"
    shaping: bool = False
    symbolic_messages: bool = False
    teammate_locations: bool = True
    probes: str = "all"
    intel_in_text: bool = False
    probe_timing: str = "action"
    probe_subject: str = "action"
    tool_colors: tuple[tuple[int, ...], ...] = field(init=False, repr=False, compare=False)
    fixed_map: GameMap | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "bomb_phases", _tuple(self.bomb_phases, int))
        set_(self, "colors", tuple(c.lower() for c in _tuple(self.colors)))
        agents = _tuple(self.agents)
        if self.num_agents is not None:
            if not 1 <= self.num_agents <= len(NATO):
                raise ValueError(f"num_agents must be in [1, {len(NATO)}], got {self.num_agents}")
            agents = NATO[: self.num_agents]
        set_(self, "agents", tuple(a.lower() for a in agents))
        set_(self, "num_agents", len(agents))
        m = len(self.colors)
        if m < 1 or len(set(self.colors)) != m:
            raise ValueError(f"colors must be distinct names, got {self.colors}")
        if not agents or len(set(self.agents)) != len(agents):
            raise ValueError(f"agents must be distinct names, got {agents}")
        if not self.bomb_phases or min(self.bomb_phases) < 1:
            raise ValueError(f"bomb_phases must be positive, got {self.bomb_phases}")
        if self.tools is None:
            tools = tuple((i % m, (i + 1) % m) if m > 1 else (0,) for i in range(len(agents)))
        else:
            raw = self.tools
            if isinstance(raw, str):  # "red+green,green+blue,blue+red" from the CLI
                raw = tuple(tuple(part.split("+")) for part in raw.split(","))
            if len(raw) != len(agents):
                raise ValueError(f"tools needs one colour list per agent, got {len(raw)}")
            # the given order, duplicates dropped: re-reading a resolved configuration (the
            # default's charlie holds blue+red, the paper's words) gives the same game
            tools = tuple(tuple(dict.fromkeys(self._color(c) for c in t)) for t in raw)
        set_(self, "tools", tuple(tuple(self.colors[c] for c in t) for t in tools))
        set_(self, "tool_colors", tools)
        held = {c for t in tools for c in t}
        if held != set(range(m)):
            missing = [self.colors[c] for c in range(m) if c not in held]
            raise ValueError(f"arguments 'tools', 'colors', 'agents' and 'num_agents': no agent "
                             f"holds a {missing} tool, so some bombs could not be defused; "
                             "allowed: every colour held by at least one agent")  # fmt: skip
        if self.map not in ("paper", "random"):
            raise ValueError(f"map must be 'paper' or 'random', got {self.map!r}")
        if self.layout not in ("random", "mturk"):
            raise ValueError(f"layout must be 'random' or 'mturk', got {self.layout!r}")
        if self.layout == "mturk":
            if self.map != "paper" or m != 3 or len(self.bomb_phases) != len(MTURK_BOMBS):
                raise ValueError("layout='mturk' needs the paper map, 3 colours and 5 bombs")
            set_(self, "bomb_phases", tuple(len(s) for _, s in MTURK_BOMBS))
        if self.wrong_tool not in ("reject", "explode"):
            raise ValueError(f"wrong_tool must be 'reject' or 'explode', got {self.wrong_tool!r}")
        if self.probes is None:  # `--kw probes=none` on the command line reads as None
            object.__setattr__(self, "probes", "none")
        if self.probes not in ("all", "one", "none"):
            raise ValueError(f"probes must be 'all', 'one' or 'none', got {self.probes!r}")
        if self.max_rounds < 1 or self.points_per_phase < 1:
            raise ValueError("max_rounds and points_per_phase must be >= 1")
        fixed = None
        if self.map == "paper":
            fixed = paper_map()
        elif self.map_seed is not None:
            fixed = random_map(
                self.num_rooms, self.extra_edge_prob, np.random.default_rng(self.map_seed)
            )
        else:
            random_map(self.num_rooms, self.extra_edge_prob, np.random.default_rng(0))  # validate
        set_(self, "fixed_map", fixed)
        if self.start_room is not None and fixed is not None and self.start_room not in fixed.rooms:
            raise ValueError(f"start_room {self.start_room} is not a room of {fixed.rooms}")

    def _color(self, name: object) -> int:
        key = str(name).strip().lower()
        if key not in self.colors:
            raise ValueError(f"unknown colour {name!r}; colours are {self.colors}")
        return self.colors.index(key)

    @property
    def num_rooms_of_map(self) -> int:
        """Rooms of the map (fixed or random)."""
        return self.fixed_map.num_rooms if self.fixed_map is not None else self.num_rooms

    @property
    def num_colors(self) -> int:
        """Colours m."""
        return len(self.colors)

    @property
    def num_bombs(self) -> int:
        """Bombs."""
        return len(self.bomb_phases)

    @property
    def max_phases(self) -> int:
        """Phases of the longest bomb."""
        return max(self.bomb_phases)

    @property
    def num_base_actions(self) -> int:
        """``n + m + 1``: inspect, go to each room, use each colour."""
        return self.num_rooms_of_map + self.num_colors + 1

    @property
    def num_message_options(self) -> int:
        """``3 + m`` with symbolic messages (none, share room, share intel, ask per colour), else 1."""
        return 3 + self.num_colors if self.symbolic_messages else 1

    @property
    def max_score(self) -> int:
        """Score when every bomb is defused (90 for the paper's mission)."""
        return self.points_per_phase * sum(self.bomb_phases)


@dataclass(frozen=True)
class Mission:
    """Every chance outcome of an episode: the map, the bombs and the start room.

    Attributes:
        game_map: the map.
        bomb_rooms: room index of each bomb.
        sequences: each bomb's colour sequence (colour indices).
        tools: each player's colours.
        start_room: the common start room index.
        points_per_phase: points per phase of a defused bomb.
    """

    game_map: GameMap
    bomb_rooms: tuple[int, ...]
    sequences: tuple[tuple[int, ...], ...]
    tools: tuple[tuple[int, ...], ...]
    start_room: int
    points_per_phase: int = 10

    @property
    def num_bombs(self) -> int:
        """Bombs."""
        return len(self.sequences)

    @cached_property
    def max_score(self) -> int:
        """Score when every bomb is defused."""
        return self.points_per_phase * sum(len(s) for s in self.sequences)

    @cached_property
    def text_key(self) -> str:
        """The mission as one string: hallways, bomb rooms, sequences, start room (the ToM
        probes' sampling offsets hash it)."""
        return f"{self.game_map.edges}|{self.bomb_rooms}|{self.sequences}|{self.start_room}"

    @cached_property
    def bombs_by_room(self) -> tuple[tuple[int, ...], ...]:
        """For each room index, the bombs placed there (active or not), by id."""
        rooms = self.bomb_rooms
        return tuple(
            tuple(b for b in range(len(rooms)) if rooms[b] == r)
            for r in range(self.game_map.num_rooms)
        )

    @cached_property
    def legal_cache(self) -> dict[tuple[int, ...], tuple[int, ...]]:
        """The rules' legal actions, kept per (message options, player, room, bomb here)."""
        return {}

    def value(self, bomb: int) -> int:
        """Points for defusing ``bomb``."""
        return self.points_per_phase * len(self.sequences[bomb])


class _TrackedMinds:
    """``BombState.minds``: the tracker, brought up to date when read (see
    :class:`~tom_envs.games.bomb_defusal.minds.PendingMinds`); ``None`` when it is off."""

    def __get__(self, state: BombState | None, owner: type | None = None) -> Minds | None:
        if state is None:
            return None  # the field's default
        held = state.__dict__["minds"]
        if held.__class__ is PendingMinds:
            return held.resolve(state)
        return held

    def __set__(self, state: BombState, value: Minds | PendingMinds | None) -> None:
        state.__dict__["minds"] = value


@dataclass(frozen=True)
class BombState:
    """Value-semantics state of an episode.

    Attributes:
        mission: the chance outcomes (shared, never changes within an episode).
        time: actions applied so far.
        round: the current round (1-based; the last round played once the episode is over).
        turn: the seat to act.
        over: whether the episode has ended.
        locations: each player's room index.
        progress: phases cut of each bomb.
        exploded: whether each bomb exploded (``wrong_tool="explode"`` only).
        score: team score.
        results: each player's last action result (the start bootstrap before its first action).
        intel: per player, per bomb, first-hand :class:`Intel` (or ``None``).
        chat: every message so far, in order.
        last_action_time: per player, the time stamp of its last action (``-1`` before it).
        inactive_at: per bomb, the time it was defused or exploded (``-1`` while active).
        minds: the epistemic tracker (:mod:`tom_envs.games.bomb_defusal.tom`), ``None`` when off;
            the rules store a :class:`~tom_envs.games.bomb_defusal.minds.PendingMinds` record
            and reading the attribute brings the tracker up to date.
    """

    mission: Mission
    time: int
    round: int
    turn: int
    over: bool
    locations: tuple[int, ...]
    progress: tuple[int, ...]
    exploded: tuple[bool, ...]
    score: int
    results: tuple[ActionResult, ...]
    intel: tuple[tuple[Intel | None, ...], ...]
    chat: tuple[ChatMessage, ...]
    last_action_time: tuple[int, ...]
    inactive_at: tuple[int, ...]
    minds: Minds | None = _TrackedMinds()  # type: ignore[assignment]

    def __getstate__(self) -> dict[str, object]:
        """Pickled and copied with the tracker brought up to date (not the chain behind it)."""
        return {**self.__dict__, "minds": self.minds}

    def remaining(self, bomb: int) -> tuple[int, ...]:
        """The bomb's remaining sequence (``()`` once defused or exploded)."""
        if self.exploded[bomb]:
            return ()
        return self.mission.sequences[bomb][self.progress[bomb] :]

    def active(self, bomb: int) -> bool:
        """Neither defused nor exploded."""
        return not self.exploded[bomb] and self.progress[bomb] < len(self.mission.sequences[bomb])

    def defused(self, bomb: int) -> bool:
        """Every phase cut."""
        return self.progress[bomb] == len(self.mission.sequences[bomb])
