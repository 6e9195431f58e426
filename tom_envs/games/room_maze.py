"""Room mazes shared by the pursuit games (CollabCapture, CollabEscape): rooms, passages, paths.

A :class:`RoomMaze` is a value (frozen, hashable): numbered rooms and, for each room, the rooms a
player may move to from it, *in the order the game lists them* (that order is the order of the
options shown to players and breaks ties in the scripted policies). Passages may be one-way: the
CollabEscape map as coded has two (7 -> 3 and 8 -> 7, with no way back).

Passages can be blocked (closed doors) by passing ``closed``: a frozenset of frozenset room pairs,
each blocking its passage in both directions.

This module also holds what both games build on in the same way: :class:`RoomGame` (Alice and Bob
act every turn until the end, from each game's ``options``), :class:`RoomConfig` (a named scenario
whose start rooms may be overridden), :class:`RoomEncoder` (the state is Alice's view), :class:`RoomView` (a view's seat, rooms and names), :class:`RoomText` (answers read the same way), and the two text
helpers both text layers use: a list of rooms in English, and the parser of an answer to a lettered
option list (``"B"``, ``"B. Move to room 2."``, the option's text, ``"2"`` for the second option, or
``"room 5"``), with :class:`RoomActions` (the stay and room actions as text and as answers). Each game's own rules (doors, generators, the thief, the killer) live in its package.
"""

from __future__ import annotations

import abc
import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar

import numpy as np

from tom_envs.core.game import Encoder, Game, ParseResult, TextInterface
from tom_envs.core.skin import Symbols, room_symbols
from tom_envs.core.text import NUMBER, answer_segment, letter, match_action, option_number

#: Closed passages: each an unordered pair of rooms, blocked both ways.
Closed = frozenset[frozenset[int]]
NO_CLOSED: Closed = frozenset()


@dataclass(frozen=True)
class RoomMaze:
    """Rooms and the passages out of each, in listed order.

    Attributes:
        adjacency: ``((room, (neighbour, ...)), ...)`` sorted by room; neighbours in listed order.
    """

    adjacency: tuple[tuple[int, tuple[int, ...]], ...]

    @classmethod
    def from_dict(cls, adjacency: Mapping[int, Sequence[int]]) -> RoomMaze:
        """Build from ``{room: [neighbours in listed order]}``; every neighbour must be a room."""
        rooms = set(adjacency)
        for room, nbrs in adjacency.items():
            unknown = set(nbrs) - rooms
            if unknown:
                raise ValueError(f"room {room} leads to unknown rooms {sorted(unknown)}")
            if room in nbrs or len(set(nbrs)) != len(nbrs):
                raise ValueError(f"room {room}: bad neighbour list {list(nbrs)}")
        return cls(tuple((r, tuple(adjacency[r])) for r in sorted(adjacency)))

    @property
    def rooms(self) -> tuple[int, ...]:
        """Room numbers, ascending."""
        return tuple(r for r, _ in self.adjacency)

    def out(self, room: int) -> tuple[int, ...]:
        """Rooms reachable from ``room`` in one move (ignoring doors), in listed order."""
        return _out(self, room)

    def neighbors(self, room: int, closed: Closed = NO_CLOSED) -> tuple[int, ...]:
        """Rooms reachable from ``room`` in one move through open passages, in listed order."""
        if not closed:
            return self.out(room)
        return tuple(n for n in self.out(room) if frozenset((room, n)) not in closed)

    def one_way(self) -> tuple[tuple[int, int], ...]:
        """Passages ``(a, b)`` that lead from a to b with no passage back."""
        return tuple((a, b) for a, nbrs in self.adjacency for b in nbrs if a not in self.out(b))

    def symmetric(self) -> RoomMaze:
        """The same maze with every passage two-way (a missing way back is appended)."""
        adj = {r: list(n) for r, n in self.adjacency}
        for a, b in self.one_way():
            adj[b].append(a)
        return RoomMaze.from_dict(adj)

    def distances_to(self, target: int, closed: Closed = NO_CLOSED) -> dict[int, int]:
        """Moves on a shortest path from every room that can reach ``target`` (one-way aware)."""
        return dict(_distances_to(self, target, closed))

    def distance(self, src: int, dst: int, closed: Closed = NO_CLOSED) -> int | None:
        """Moves on a shortest path from ``src`` to ``dst``; ``None`` if unreachable."""
        return dict(_distances_to(self, dst, closed)).get(src)

    def step_toward(self, src: int, dst: int, closed: Closed = NO_CLOSED) -> int | None:
        """The first room on a shortest path from ``src`` to ``dst`` (ties: listed order).

        ``None`` when ``src == dst`` or ``dst`` cannot be reached.
        """
        if src == dst:
            return None
        dist = dict(_distances_to(self, dst, closed))
        if src not in dist:
            return None
        for n in self.neighbors(src, closed):
            if dist.get(n) == dist[src] - 1:
                return n
        raise AssertionError("unreachable: BFS distances are consistent")  # pragma: no cover


@lru_cache(maxsize=4096)
def _out(maze: RoomMaze, room: int) -> tuple[int, ...]:
    for r, nbrs in maze.adjacency:
        if r == room:
            return nbrs
    raise ValueError(f"no room {room} in this maze (rooms {list(maze.rooms)})")


@lru_cache(maxsize=4096)
def _distances_to(maze: RoomMaze, target: int, closed: Closed) -> tuple[tuple[int, int], ...]:
    """Reverse BFS from ``target`` over open passages."""
    maze.out(target)  # validates the room
    back: dict[int, list[int]] = {r: [] for r in maze.rooms}
    for a in maze.rooms:
        for b in maze.neighbors(a, closed):
            back[b].append(a)
    dist = {target: 0}
    queue = deque([target])
    while queue:
        b = queue.popleft()
        for a in back[b]:
            if a not in dist:
                dist[a] = dist[b] + 1
                queue.append(a)
    return tuple(sorted(dist.items()))


def closed_set(pairs: Iterable[tuple[int, int]]) -> Closed:
    """``[(1, 2)]`` -> the closed-passage set blocking 1-2 both ways."""
    return frozenset(frozenset(p) for p in pairs)


#: Player seats in both games: Alice is seat 0, Bob seat 1.
PLAYER_NAMES = ("Alice", "Bob")

StateT = TypeVar("StateT")
ViewT = TypeVar("ViewT")


class RoomGame(Game[StateT, ViewT]):
    """What the two room games share: Alice and Bob act at once every turn, both get 1 on success.

    A subclass holds ``config`` (with ``max_turns``) and gives ``options``, the actions of a player
    in a state in display order; here they become the legal actions until the game is over.
    """

    num_players: int = 2  #: Alice and Bob
    reward_range: tuple[float, float] = (0.0, 1.0)  #: 0 per turn, 1 to both on success
    config: Any

    @property
    def max_steps(self) -> int | None:
        """The turn limit, if any."""
        return self.config.max_turns

    def current_players(self, state: StateT) -> tuple[int, ...]:
        """Both players act every turn."""
        return () if self.is_terminal(state) else (0, 1)

    def legal_actions(self, state: StateT, player: int) -> tuple[int, ...]:
        """:meth:`options` until the game is over, then none."""
        if self.is_terminal(state):
            return ()
        return self.options(state, player)

    @abc.abstractmethod
    def options(self, state: StateT, player: int) -> tuple[int, ...]:
        """The actions of ``player`` in ``state``, terminal or not (in display order)."""


class RoomConfig:
    """A config's start rooms: the scenario's (``preset.starts``) unless ``starts`` overrides them.

    For frozen config dataclasses with ``scenario``, ``starts`` and ``preset`` fields; their
    ``__post_init__`` checks both with :func:`check_scenario` and :func:`check_starts`.
    """

    starts: tuple[int, int, int] | None
    preset: Any

    @property
    def start_rooms(self) -> tuple[int, int, int]:
        """``(alice, bob, the third)`` at the start."""
        return self.starts if self.starts is not None else self.preset.starts


def check_scenario(scenario: str, scenarios: Mapping[str, Any]) -> Any:
    """The preset named ``scenario``; a clear error for an unknown name."""
    if scenario not in scenarios:
        raise ValueError(f"unknown scenario {scenario!r}; choose from {sorted(scenarios)}")
    return scenarios[scenario]


def check_starts(starts: Sequence[int], rooms: Sequence[int]) -> tuple[int, int, int]:
    """``starts`` as three ints, each a room of ``rooms``; a clear error otherwise."""
    out = tuple(int(r) for r in starts)
    if len(out) != 3 or any(r not in rooms for r in out):
        raise ValueError(f"starts must be three rooms of {list(rooms)}, got {starts}")
    return out  # type: ignore[return-value]


@dataclass(frozen=True)
class RoomView:
    """The start of both games' views (each game's view adds its own fields after these).

    Attributes:
        player: my seat (0 = Alice, 1 = Bob).
        my_room: my room.
        partner_room: my partner's room.
    """

    player: int
    my_room: int
    partner_room: int

    @property
    def name(self) -> str:
        """My name ("Alice" or "Bob")."""
        return PLAYER_NAMES[self.player]

    @property
    def partner_name(self) -> str:
        """My partner's name."""
        return PLAYER_NAMES[1 - self.player]


class RoomEncoder(Encoder[ViewT, StateT]):
    """An encoder of a game with nothing private: the state's vector is Alice's view's."""

    def __init__(self, game: Game[StateT, ViewT]) -> None:
        self.game = game

    def encode_state(self, state: StateT) -> np.ndarray:
        """Alice's vector."""
        return self.encode(self.game.observe(state, 0))


def check_player(player: int) -> None:
    """A clear error unless ``player`` is seat 0 or 1."""
    if player not in (0, 1):
        raise ValueError(f"player must be 0 or 1, got {player}")


def sample_outcome(outcomes: Sequence[tuple[float, object]], rng: np.random.Generator) -> object:
    """Draw one ``(probability, value)`` outcome. A single outcome consumes no randomness."""
    if len(outcomes) == 1:
        return outcomes[0][1]
    probs = [p for p, _ in outcomes]
    if all(abs(p - probs[0]) < 1e-12 for p in probs):
        return outcomes[int(rng.integers(len(outcomes)))][1]
    return outcomes[int(rng.choice(len(outcomes), p=np.asarray(probs) / sum(probs)))][1]


# ----------------------------------------------------------------------------------- text
def english_list(items: Sequence[object], conjunction: str = "and") -> str:
    """``[2, 6, 9]`` -> ``"2, 6 and 9"``."""
    words = [str(i) for i in items]
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} {conjunction} {words[-1]}"


def lettered(options: Mapping[int, str]) -> list[str]:
    """``["A. Stay in current room.", "B. Move to room 2.", ...]`` in the options' order."""
    return [f"{letter(i)}. {text}." for i, text in enumerate(options.values())]


_LETTER = re.compile(r"\(?([A-Z]{1,2})\s*(?:[.):]\s*(.*)|\s*$)", re.DOTALL)


def parse_lettered(
    text: object,
    options: Mapping[int, str],
    aliases: Callable[[str], set[int]] | None = None,
) -> ParseResult:
    """Free text to one of ``options`` (legal action -> text, in display order). Never raises.

    Accepted, in order: an option letter alone or leading the answer (``"B"``, ``"(B)"``,
    ``"B. Move to room 2."``); the option's text (exact, or the only option named in a longer
    answer, see :func:`~tom_envs.core.text.match_action`); a bare number N, the N-th listed
    option (the suite's number rule, so ``"2"`` is option B); then ``aliases(segment)``, the
    game's reading of short forms ("room 5", "move to 5", "stay", "press"), which must name
    exactly one legal action. Letters and text are read from the answer segment
    (:func:`~tom_envs.core.text.answer_segment`: the last ``<action>`` tag, else the last answer
    label such as ``Action:``, else the whole reply).
    """
    if not isinstance(text, str):
        return ParseResult(None, f"expected text, got {type(text).__name__}")
    if not options:
        return ParseResult(None, "no action is legal for you now: the game is over")
    keys = list(options)
    shown = "; ".join(f"{letter(i)}. {t}" for i, t in enumerate(options.values()))
    segment = answer_segment(text)
    if not segment:
        return ParseResult(None, f"empty answer; choose one of: {shown}")
    m = _LETTER.fullmatch(segment) if len(segment) < 200 else None
    if m is None and len(segment) == 1 and segment.isalpha():
        m = _LETTER.fullmatch(segment.upper())
    if m is not None:
        idx = next((i for i in range(len(keys)) if letter(i) == m.group(1)), None)
        rest = (m.group(2) or "").strip().strip(".").lower()
        if idx is None:
            return ParseResult(
                None, f"there is no option {m.group(1)}; choose a letter A-{letter(len(keys) - 1)}"
            )
        chosen = keys[idx]
        if not rest or rest in options[chosen].lower():
            return ParseResult(chosen, f"understood: {options[chosen]}")
    bare = segment.strip().strip(".")
    if NUMBER.fullmatch(bare):  # the suite's rule: a bare number is the N-th listed option
        return option_number(bare, options)
    result = match_action(segment, options)
    hits = aliases(segment) if aliases is not None else set()
    if result.valid and hits - {result.action}:  # "stay or move to room 6"
        named = ", ".join(repr(options[a]) for a in sorted(hits | {result.action}))
        return ParseResult(
            None, f"ambiguous answer: it names {named}; answer with exactly one option"
        )
    if result.valid or result.feedback.startswith("ambiguous"):
        return result
    if aliases is not None:
        if len(hits) == 1:
            (a,) = hits
            return ParseResult(a, f"understood: {options[a]}")
        if len(hits) > 1:
            named = ", ".join(repr(options[a]) for a in sorted(hits))
            return ParseResult(
                None, f"ambiguous answer: it names {named}; answer with exactly one option"
            )
    return ParseResult(
        None, f"could not match {segment[:80]!r} to a legal action; choose one of: {shown}"
    )


_ROOM_REF = re.compile(
    r"\broom\s*([0-9]{1,3})\b|\b(?:move|go|head|run|walk)\s+(?:to\s+)?([0-9]{1,3})\b", re.ASCII
)


def room_aliases(
    moves: Mapping[int, int], keywords: Mapping[str, int]
) -> Callable[[str], set[int]]:
    """A reader of short answers for :func:`parse_lettered`.

    Args:
        moves: legal destination room -> its action.
        keywords: a regular expression (matched on whole words, lower case) -> legal action,
            e.g. ``{"stay|wait": STAY, "press|button": PRESS}``.

    The reader returns every legal action the answer names: a room mentioned with its noun or
    verb (``"room 5"``, ``"move to 5"``) that is a legal destination, and each keyword. A bare
    number is never a room: it is the N-th listed option (:func:`parse_lettered`).
    Rooms named but not reachable are ignored (``"press the button in room 9"`` names only the
    press while standing in room 9).
    """

    def read(segment: str) -> set[int]:
        low = segment.strip().lower()
        hits = set()
        for m in _ROOM_REF.finditer(low):
            room = int(m.group(1) or m.group(2))  # at most 3 ASCII digits (the pattern's)
            if room in moves:
                hits.add(moves[room])
        for pattern, action in keywords.items():
            if re.search(rf"\b(?:{pattern})\b", low):
                hits.add(action)
        return hits

    return read


@dataclass(frozen=True)
class RoomActions:
    """A game's two actions besides the moves (action ``r`` moves to room ``r``): the one that
    keeps a player in place (``idle``) and its room action (``special``: press or fix, when
    legal), each with its text and the words that name it in answers (regular expressions matched
    on whole words). ``special_text`` names the room as ``{room}``."""

    idle: int
    idle_text: str
    idle_words: str
    special: int
    special_text: str
    special_words: str

    def text(self, action: int, room: int) -> str:
        """An action as text, for a player in ``room`` (``"Move to room 2"`` for a move)."""
        if action == self.idle:
            return self.idle_text
        if action == self.special:
            return self.special_text.format(room=room)
        return f"Move to room {action}"


class RoomText(TextInterface[ViewT]):
    """What both games' text layers share: the answer format and the reading of answers.

    A subclass names its answer format (``answer``), its :class:`RoomActions` (``actions``), its
    maze (``maze``) and the adversary's role noun a skin renames (``role``: the word and the pool
    of words it may become).
    """

    answer: str
    actions: RoomActions
    maze: RoomMaze
    role: tuple[str, tuple[str, ...]]

    def __init__(self, config: Any) -> None:
        self.config = config

    def answer_format(self, view: ViewT) -> str:
        """The authors' answer format."""
        return self.answer

    def action_text(self, view: ViewT, action: int) -> str:
        """One action as text."""
        return self.actions.text(action, view.my_room)  # type: ignore[attr-defined]

    def parse_action(self, view: ViewT, text: str) -> ParseResult:
        """A letter ("B"), the option text, a bare number (the N-th option: "2" is B), or a short
        form ("room 5", the idle or room action's words); see :func:`parse_lettered`."""
        legal = view.legal_actions  # type: ignore[attr-defined]
        idle, special = self.actions.idle, self.actions.special
        moves = {a: a for a in legal if a not in (idle, special)}
        keywords = {self.actions.idle_words: idle}
        if special in legal:
            keywords[self.actions.special_words] = special
        return parse_lettered(text, self.legal_actions_text(view), room_aliases(moves, keywords))

    def skin_symbols(self) -> tuple[Symbols, ...]:
        """What a skin renames (``skin=``, :mod:`tom_envs.core.skin`): the two players' names,
        the room numbers (after "room", "rooms", "move to", "go to", lists included), onto numbers
        1-99 that name no room, and the adversary's role noun (``thief``, ``killer``)."""
        word, pool = self.role
        return (*room_symbols(self.maze.rooms, PLAYER_NAMES), Symbols("role", (word,), pool))
