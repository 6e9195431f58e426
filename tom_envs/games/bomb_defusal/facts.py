"""Facts in bomb-defusal chat: canonical sentences and the free-text fact extractor.

:func:`render_facts` writes the canonical sentences of symbolic messages (and of the heuristic
bots); :func:`extract_facts` is the documented regular-expression reader of free text whose
phrasings are listed in :mod:`tom_envs.games.bomb_defusal.tom` ("Facts a message carries"). It is
exact on the canonical sentences, partial on free LLM text (precision is what matters).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tom_envs.games.bomb_defusal.maps import GameMap
from tom_envs.games.bomb_defusal.view import (
    BombFact,
    Fact,
    LocationFact,
    RequestFact,
    RoomFact,
)

if TYPE_CHECKING:
    from tom_envs.games.bomb_defusal.state import BombConfig


def _colour_list(colours: tuple[int, ...], config: BombConfig) -> str:
    return "-".join(config.colors[c].capitalize() for c in colours)


def _bomb_list(bombs: tuple[int, ...]) -> str:
    names = [f"Bomb {b + 1}" for b in bombs]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def render_facts(facts: tuple[Fact, ...], config: BombConfig, gmap: GameMap, sender: int) -> str:
    """Canonical sentences for ``facts`` (what symbolic messages and the heuristic bots say)."""
    if not facts:
        return "I have no bomb intel yet."
    rooms = gmap.rooms
    out = []
    for f in facts:
        if isinstance(f, LocationFact):
            who = "I am" if f.agent == sender else f"Player {config.agents[f.agent]} is"
            out.append(f"{who} in Room {rooms[f.room]}.")
        elif isinstance(f, RoomFact):
            if f.bombs:
                out.append(f"Room {rooms[f.room]} contains {_bomb_list(f.bombs)}.")
            else:
                out.append(f"Room {rooms[f.room]} has no bomb.")
        elif isinstance(f, BombFact):
            if not f.remaining:
                out.append(f"Bomb {f.bomb + 1} is defused.")
            elif f.room is not None:
                out.append(
                    f"Bomb {f.bomb + 1} is in Room {rooms[f.room]} and its remaining sequence is "
                    f"{_colour_list(f.remaining, config)}."
                )
            else:
                out.append(
                    f"Bomb {f.bomb + 1} has remaining sequence {_colour_list(f.remaining, config)}."
                )
        elif isinstance(f, RequestFact):
            out.append(
                f"I need a {config.colors[f.color].capitalize()} tool in Room {rooms[f.room]}."
            )
    return " ".join(out)


_QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "`": "'"})
_SEP = r"(?:\s*(?:->|→|–|—|-|,|/|>|\band then\b|\bthen\b|\bfollowed by\b|\band\b)\s*)"
_NUM = r"\s*(?:no\.?\s*|number\s*|#\s*)?(\d+)"


class _Reader:
    """Compiled patterns for one configuration (colours and names)."""

    def __init__(self, config: BombConfig) -> None:
        col = "(?:" + "|".join(re.escape(c) for c in config.colors) + ")"
        self.col = re.compile(rf"\b{col}\b")
        seq = rf"(?P<seq>\b{col}\b(?:{_SEP}\b{col}\b)*)"
        self.seq = [
            re.compile(
                rf"\bbomb{_NUM}(?P<mid>[^.;!?]*?)\b(?:sequence|phases?|colou?rs?|order)\b"
                rf"(?:\s*(?:is|are|was|of|:|=))*\s*:?\s*{seq}"
            ),
            re.compile(rf"\bbomb{_NUM}\s*(?:is|:|=|\(|-)\s*{seq}"),
            re.compile(rf"\bbomb{_NUM}\b[^.;!?]*?{seq}\s+(?:sequence|phases?|order)\b"),
        ]
        self.bomb_room = re.compile(rf"\bbomb{_NUM}\b[^.;!?]*?\b(?:in|at)\s+room{_NUM}")
        self.defused = [
            re.compile(
                rf"\bbomb{_NUM}\s*(?:is|has been|was|got|are)?\s*(?:now\s+|already\s+|"
                r"successfully\s+|fully\s+)?(?:defused|disarmed|neutrali[sz]ed)\b"
            ),
            re.compile(rf"\b(?:defused|disarmed)\s+(?:the\s+)?bomb{_NUM}"),
        ]
        self.room_empty = [
            re.compile(
                rf"\broom{_NUM}\s*(?:is\s+|now\s+)*(?:has|contains|holds|with)?\s*(?:no|zero)"
                r"\s+(?:more\s+|other\s+|active\s+)?bombs?\b"
            ),
            re.compile(
                rf"\bno\s+(?:more\s+|other\s+|active\s+)?bombs?\s+(?:left\s+|remaining\s+)?"
                rf"in\s+room{_NUM}"
            ),
            re.compile(rf"\broom{_NUM}\s+(?:is\s+)?(?:now\s+)?(?:empty|clear(?:ed)?|bomb-free)\b"),
        ]
        self.room_has = [
            re.compile(rf"\broom{_NUM}\s+(?:has|contains|holds)\s+(?P<rest>[^.;!?]*)"),
            re.compile(rf"\bin\s+room{_NUM}\s+with\s+(?P<rest>[^.;!?]*)"),
        ]
        self.found_in = re.compile(rf"\bfound\s+(?P<rest>bombs?\b[^.;!?]*?)\s+in\s+room{_NUM}")
        self.bomb_nums = re.compile(r"\bbombs?\s*#?\s*(\d+(?:\s*(?:,|and|&)\s*#?\s*\d+)*)")
        first = r"\b(?:i|i'm|im|i'll|i've|we|we're|we'll|me)\b"
        self.first = re.compile(first)
        names = "|".join(re.escape(a) for a in config.agents)
        self.subject = re.compile(
            rf"\b(?:i|i'm|im|i'll|i've|we|we're|we'll|me|you|you're|he|she|they|it|{names})\b"
        )
        motion = (
            r"\b(?:mov\w*|go|goes|going|gone|head\w*|walk\w*|travel\w*|went|arriv\w*|way|"
            r"proceed\w*|return\w*)"
        )
        room = rf"(?:back\s+)?(?:to|towards|into|over to|for|at|in)?\s*(?:the\s+)?room{_NUM}"
        self.motion = re.compile(rf"{first}[^.;!?]{{0,40}}?{motion}\s+{room}")
        self.motion_start = re.compile(
            rf"^(?:\w+\s*[:,-]\s*)?(?:now\s+|next\s+|ok,?\s+|okay,?\s+)?"
            rf"(?:moving|going|heading|headed|on my way|returning)\s+{room}"
        )
        self.static = re.compile(
            r"\b(?:i am|i'm|im|i|we are|we're)\s+(?:now\s+|currently\s+|still\s+|already\s+|"
            rf"also\s+)*(?:in|at|inside)\s+(?:the\s+)?room{_NUM}"
        )
        self.need = re.compile(rf"\bneeds?\b[^.;!?]*?\b(?P<c>{col})\b[^.;!?]*?\broom{_NUM}")
        self.negation = re.compile(r"\bnot\b|n't\b|\bcannot\b|\bcan't\b")
        self.colors = config.colors


_READERS: dict[tuple[str, ...], _Reader] = {}  # by colours and names


def _reader(config: BombConfig) -> _Reader:
    key = (*config.colors, "|", *config.agents)
    if key not in _READERS:
        _READERS[key] = _Reader(config)
    return _READERS[key]


def extract_facts(text: str, sender: int, config: BombConfig, gmap: GameMap) -> tuple[Fact, ...]:
    """Facts a free-text message tells (see the module docstring for the phrasings read).

    Room numbers must be rooms of ``gmap`` and bomb numbers bombs of the mission; anything else is
    ignored. Never raises on any string.
    """
    if not isinstance(text, str) or not text.strip():
        return ()
    norm = text.translate(_QUOTES).lower()
    sentences = [s.strip() for s in re.split(r"(?<=[.!?;])\s+|\n+", norm) if s.strip()]
    reader = _MessageFacts(sender, config, gmap)
    for s in sentences:
        reader.read(s)
    return reader.facts()


class _MessageFacts:
    """What one message's sentences tell, gathered sentence by sentence (:func:`extract_facts`)."""

    def __init__(self, sender: int, config: BombConfig, gmap: GameMap) -> None:
        self.sender = sender
        self.rd = _reader(config)
        self.n_bombs = config.num_bombs
        self.room_ids = {r: i for i, r in enumerate(gmap.rooms)}
        self.said: list[Fact] = []  # requests and bombs, in the order they are told
        self.rooms: dict[int, set[int]] = {}
        self.empty: set[int] = set()
        self.moving_to: int | None = None  # a motion target ("I'm heading to room 8") wins ...
        self.staying_in: int | None = None  # ... over a static location ("I am in room 5")

    def room_of(self, token: str) -> int | None:
        return self.room_ids.get(int(token))

    def bomb_of(self, token: str) -> int | None:
        b = int(token) - 1
        return b if 0 <= b < self.n_bombs else None

    def read(self, s: str) -> None:
        """One sentence: a request, bombs (defused, sequences), rooms, the sender's location."""
        rd = self.rd
        m = rd.need.search(s)
        need_room = self.room_of(m.group(2)) if m else None
        if m and need_room is not None:
            self.said.append(RequestFact(self.sender, rd.colors.index(m.group("c")), need_room))
        self._bombs(s)
        self._rooms(s)
        self._location(s)

    def _bombs(self, s: str) -> None:
        rd = self.rd
        defused = set()
        for pat in rd.defused:
            for m in pat.finditer(s):
                b = self.bomb_of(m.group(1))
                if b is not None and b not in defused:
                    defused.add(b)
                    self.said.append(BombFact(b, ()))
        seen_seq: set[int] = set()
        for pat in rd.seq:
            for m in pat.finditer(s):
                b = self.bomb_of(m.group(1))
                if b is None or b in seen_seq or b in defused:
                    continue
                seq = tuple(rd.colors.index(c) for c in rd.col.findall(m.group("seq")))
                if not seq:
                    continue
                seen_seq.add(b)
                where = None
                for mm in rd.bomb_room.finditer(s):
                    if self.bomb_of(mm.group(1)) == b:
                        where = self.room_of(mm.group(2))
                        break
                self.said.append(BombFact(b, seq, where))

    def _rooms(self, s: str) -> None:
        rd = self.rd
        for pat in rd.room_empty:
            for m in pat.finditer(s):
                r = self.room_of(m.group(1))
                if r is not None:
                    self.empty.add(r)
        has = [(m.group(1), m.group("rest")) for pat in rd.room_has for m in pat.finditer(s)]
        has += [(m.group(2), m.group("rest")) for m in rd.found_in.finditer(s)]
        for room_tok, rest in has:
            r = self.room_of(room_tok)
            if r is None or r in self.empty:
                continue
            nums = [
                self.bomb_of(x) for g in rd.bomb_nums.findall(rest) for x in re.findall(r"\d+", g)
            ]
            found = {b for b in nums if b is not None}
            if found:
                self.rooms.setdefault(r, set()).update(found)

    def _location(self, s: str) -> None:
        rd = self.rd
        first_person = False
        for clause in re.split(r",|\bbut\b|\bwhile\b|\band then\b|\band\b", s):
            clause = clause.strip()
            if rd.subject.search(clause):
                first_person = bool(rd.first.search(clause))
            elif first_person and clause:  # "I am in room 3 and [I] will go to room 0"
                clause = "i " + clause
            if not clause or rd.negation.search(clause):
                continue
            m = rd.motion.search(clause) or rd.motion_start.search(clause)
            if m and self.room_of(m.group(1)) is not None:
                self.moving_to = self.room_of(m.group(1))
                continue
            m = rd.static.search(clause)
            if m and self.room_of(m.group(1)) is not None:
                self.staying_in = self.room_of(m.group(1))

    def facts(self) -> tuple[Fact, ...]:
        """The sender's location, the empty rooms, the rooms' bombs, then what was said; once
        each."""
        out: list[Fact] = []
        location = self.moving_to if self.moving_to is not None else self.staying_in
        if location is not None:
            out.append(LocationFact(self.sender, location))
        for r in sorted(self.empty):
            out.append(RoomFact(r, ()))
        for r in sorted(self.rooms):
            out.append(RoomFact(r, tuple(sorted(self.rooms[r]))))
        out.extend(self.said)
        return tuple(dict.fromkeys(out))
