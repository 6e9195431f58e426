"""Combinations of Guandan and the fixed action catalogue.

An action names a combination by its **type and key** (and the suit of a straight flush, the size
of a bomb); the engine chooses the cards: natural cards before wild cards, which suits to spend
(keeping straight-flush chances) and the pair of a full house (:func:`realize`). Every legal play of
Guandan, wild-card substitutions included, has exactly one such *shape*, and a shape is legal
exactly when some play of it is, so the catalogue is a fixed, exact and short action space:

=================  ==========================================================================
index              action
=================  ==========================================================================
0                  pass
1 .. 54            give card kind ``index - 1`` (tribute and return tribute)
55 .. 279          play shape ``index - 55`` of :data:`SHAPES` (225 shapes)
=================  ==========================================================================

Shapes, in catalogue order: singles (13 ranks, small joker, big joker, a lone wild card), pairs
(13 ranks, two small jokers, two big jokers, the two wild cards), trips (13), full houses (13, by
the trips), straights (10, by the top card: A2345 .. 10JQKA), tubes (12: AA2233 .. QQKKAA), plates
(13: AAA222 .. KKKAAA), straight flushes (4 suits x 10), bombs (13 ranks x 4..10 cards), the
joker bomb. Legal actions are always listed in this order.

Semantics (specs §4.2-4.3; choices where implementations differ are marked *choice*):

* A wild card (heart of the level) stands for any non-joker card. A combination made only of wild
  cards is read naturally (*choice*): one wild is a single of the level rank, two wilds a pair of
  the level rank; these are their own shapes (a player chooses to spend its wilds).
* Single, pair (jokers: two small or two big), trips, full house (trips + a pair of another rank;
  the pair may be natural, a joker pair, a card and a wild, or the two wilds), straight (exactly 5
  consecutive ranks), tube (3 consecutive pairs), plate (2 consecutive trips), straight flush (a
  straight of one suit), bomb (4 to 10 cards of one rank), joker bomb (all four jokers). Sequences
  use natural ranks, A low or high, no wrap-around; jokers never appear in sequences.
* A straight whose natural cards are all of one suit is a straight flush, never a plain straight
  (*choice*: a same-suit run is a bomb).
* Ranking: same type to beat, strictly higher key. Non-sequence keys compare by level-aware value
  (full houses by their trips); sequence keys by the natural top rank (A2345 lowest). Bombs beat
  every non-bomb: 4-card < 5-card < straight flush < 6 < 7 < 8 < 9 < 10-card < joker bomb;
  within a class by value (straight flushes by top rank).
* What the engine chooses (*choice*, a player cannot ask otherwise): natural cards first and wild
  cards only for missing ones; among natural cards of a rank, the suits with the fewest other
  cards within 4 ranks; the full-house pair by preference: an exact natural pair, a pair out of
  trips, a card plus a wild, a pair out of a bomb, a joker pair, the two wilds (lowest rank first).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import lru_cache

from tom_envs.games.guandan.cards import (
    BIG_JOKER,
    HR_CODE,
    NUM_RANKS,
    SB_CODE,
    SMALL_JOKER,
    WILD_CODE,
    Hand,
    kind,
    rank_value,
    wild_kind,
)


class ComboType(enum.IntEnum):
    """The types of play, in catalogue order."""

    SINGLE = 0
    PAIR = 1
    TRIPS = 2
    FULL_HOUSE = 3
    STRAIGHT = 4
    TUBE = 5
    PLATE = 6
    STRAIGHT_FLUSH = 7
    BOMB = 8
    JOKER_BOMB = 9


SEQUENCES = (ComboType.STRAIGHT, ComboType.TUBE, ComboType.PLATE, ComboType.STRAIGHT_FLUSH)
BOMBS = (ComboType.STRAIGHT_FLUSH, ComboType.BOMB, ComboType.JOKER_BOMB)

PASS = 0
GIVE_BASE = 1
SHAPE_BASE = 55

#: Sequence positions: 0 = A (low), 1..13 = ranks 2..A. A straight starting at position p
#: covers p..p+4; its key is its top position.
NUM_POSITIONS = 14


def position_rank(pos: int) -> int:
    """Rank index of a sequence position (0 and 13 are both the ace)."""
    return 12 if pos == 0 else pos - 1


def position_name(pos: int) -> str:
    """Rank name at a sequence position."""
    from tom_envs.games.guandan.cards import RANKS

    return RANKS[position_rank(pos)]


@dataclass(frozen=True)
class Shape:
    """One entry of the catalogue: a combination type and its key.

    Attributes:
        type: the combination type.
        key: non-sequences: the rank code (0..12, 13 small joker, 14 big joker, 15 = the level
            made of wild cards only); sequences: the top position (see :func:`position_rank`).
        suit: the suit of a straight flush (-1 otherwise).
        size: number of cards.
        start: sequences: the first position (-1 otherwise).
    """

    type: ComboType
    key: int
    suit: int = -1
    size: int = 1
    start: int = -1

    @property
    def is_bomb(self) -> bool:
        """Straight flushes, bombs and the joker bomb."""
        return self.type in BOMBS

    @property
    def wild_only(self) -> bool:
        """The lone wild card or the two wild cards."""
        return self.key == WILD_CODE

    @property
    def width(self) -> int:
        """Cards per rank of a sequence (1 straight, 2 tube, 3 plate)."""
        return {ComboType.TUBE: 2, ComboType.PLATE: 3}.get(self.type, 1)

    def window(self) -> tuple[int, ...]:
        """Rank indices of a sequence, low to high."""
        if self.start < 0:
            return ()
        return tuple(position_rank(p) for p in range(self.start, self.key + 1))


def _build() -> tuple[Shape, ...]:
    out: list[Shape] = []
    specials = (SB_CODE, HR_CODE, WILD_CODE)
    out += [Shape(ComboType.SINGLE, r, size=1) for r in (*range(NUM_RANKS), *specials)]
    out += [Shape(ComboType.PAIR, r, size=2) for r in (*range(NUM_RANKS), *specials)]
    out += [Shape(ComboType.TRIPS, r, size=3) for r in range(NUM_RANKS)]
    out += [Shape(ComboType.FULL_HOUSE, r, size=5) for r in range(NUM_RANKS)]
    out += [Shape(ComboType.STRAIGHT, s + 4, size=5, start=s) for s in range(10)]
    out += [Shape(ComboType.TUBE, s + 2, size=6, start=s) for s in range(12)]
    out += [Shape(ComboType.PLATE, s + 1, size=6, start=s) for s in range(13)]
    out += [
        Shape(ComboType.STRAIGHT_FLUSH, s + 4, suit=u, size=5, start=s)
        for u in range(4)
        for s in range(10)
    ]
    out += [Shape(ComboType.BOMB, r, size=n) for r in range(NUM_RANKS) for n in range(4, 11)]
    out.append(Shape(ComboType.JOKER_BOMB, HR_CODE, size=4))
    return tuple(out)


#: The play shapes; action ``SHAPE_BASE + i`` plays ``SHAPES[i]``.
SHAPES: tuple[Shape, ...] = _build()
NUM_SHAPES = len(SHAPES)
NUM_ACTIONS = SHAPE_BASE + NUM_SHAPES
SHAPE_INDEX: dict[Shape, int] = {s: i for i, s in enumerate(SHAPES)}
_BY_PARTS = {
    (int(s.type), s.key, s.suit, s.size if s.type == ComboType.BOMB else 0): i
    for i, s in enumerate(SHAPES)
}


def shape_of(action: int) -> Shape:
    """The shape an action plays (``ValueError`` for pass or give)."""
    if action < SHAPE_BASE:
        raise ValueError(f"action {action} is not a play")
    return SHAPES[action - SHAPE_BASE]


def find_shape(ctype: int, key: int, suit: int = -1, size: int = 0) -> int | None:
    """Index in :data:`SHAPES` of ``(type, key, suit)`` (and ``size`` for a bomb), or ``None``."""
    return _BY_PARTS.get((int(ctype), key, suit, size if int(ctype) == ComboType.BOMB else 0))


BOMB_CLASS = {4: 0, 5: 1, 6: 3, 7: 4, 8: 5, 9: 6, 10: 7}


def strength(shape: Shape, level: int) -> int:
    """Comparable strength within a type; bombs on one common scale above every non-bomb.

    Non-bombs: the key's value (non-sequences) or the top position (sequences); compare only
    within one type. Bombs: ``1000 + 100 * class + value`` with classes 4-card 0, 5-card 1,
    straight flush 2, 6..10-card 3..7, joker bomb 8.
    """
    if shape.type == ComboType.JOKER_BOMB:
        return 1800
    if shape.type == ComboType.STRAIGHT_FLUSH:
        return 1200 + shape.key
    if shape.type == ComboType.BOMB:
        return 1000 + 100 * BOMB_CLASS[shape.size] + rank_value(shape.key, level)
    if shape.type in SEQUENCES:
        return shape.key
    return rank_value(shape.key, level)


def beats(a: Shape, b: Shape, level: int) -> bool:
    """Whether ``a`` may be played on ``b``."""
    if a.is_bomb:
        return not b.is_bomb or strength(a, level) > strength(b, level)
    return a.type == b.type and not b.is_bomb and strength(a, level) > strength(b, level)


# ------------------------------------------------------------------------ realisation
def _neighbour_ranks(rank: int) -> tuple[int, ...]:
    """Ranks within 4 sequence places of ``rank`` (the ace is next to both 2 and K)."""
    positions = (0, 13) if rank == 12 else (rank + 1,)
    out = {position_rank(p + d) for p in positions for d in range(-4, 5) if 0 <= p + d < 14}
    out.discard(rank)
    return tuple(sorted(out))


_NEIGHBOURS = tuple(_neighbour_ranks(r) for r in range(NUM_RANKS))


def _sf_potential(hand: Hand, level: int, rank: int, suit: int) -> int:
    """How many other natural ranks of ``suit`` within 4 places of ``rank`` the hand holds."""
    wk = wild_kind(level)
    n = 0
    for r in _NEIGHBOURS[rank]:
        k = r * 4 + suit
        if k != wk and hand[k]:
            n += 1
    return n


def _take(hand: Hand, level: int, rank: int, n: int, taken: list[int]) -> list[int]:
    """Up to ``n`` natural cards of ``rank`` to spend (fewest natural cards left -> fewer)."""
    wk = wild_kind(level)
    held = []  # (sort key, kind, cards left to spend) per suit
    for s in range(4):
        k = rank * 4 + s
        if k == wk:
            continue
        m = hand[k] - taken.count(k) if taken else hand[k]
        if m > 0:
            held.append(((_sf_potential(hand, level, rank, s), -s), k, m))
    if len(held) > 1:
        held.sort()  # keys differ by suit: the order of a stable sort of the cards by key
    pool: list[int] = []
    for _key, k, m in held:
        pool += [k] * m
    return pool[:n]


def naturals(hand: Hand, level: int) -> list[int]:
    """Natural (non-wild) card counts per rank code (13 ranks, small joker, big joker)."""
    counts = [sum(hand[k : k + 4]) for k in range(0, 52, 4)]
    counts[level] -= hand[wild_kind(level)]
    counts.append(hand[SMALL_JOKER])
    counts.append(hand[BIG_JOKER])
    return counts


def _pair_for(counts: list[int], trips: int, wilds: int, level: int) -> tuple[int, int] | None:
    """The full-house pair by the documented preference: ``(rank code or -1, wilds used)``."""
    ranks = sorted((r for r in range(13) if r != trips), key=lambda r: rank_value(r, level))
    for cond, cost in (
        (lambda c: c == 2, 0),
        (lambda c: c == 3, 0),
        (lambda c: c == 1, 1),
        (lambda c: c >= 4, 0),
    ):
        if cost > wilds:
            continue
        for r in ranks:
            if cond(counts[r]):
                return r, cost
    for code in (SB_CODE, HR_CODE):
        if counts[code] == 2:
            return code, 0
    return (-1, 2) if wilds >= 2 else None


def realize(shape: Shape, hand: Hand, level: int) -> tuple[int, ...]:
    """The cards the engine plays for ``shape`` from ``hand`` (sorted card kinds).

    Natural cards first, wild cards for the missing ones; suits as in :func:`_take`; a straight
    swaps one card to another suit if all its natural cards came out of one suit; the full-house
    pair by :func:`_pair_for`. Raises ``ValueError`` if the hand cannot play the shape.
    """
    wk = wild_kind(level)
    w = hand[wk]
    t = shape.type
    cards: list[int] = []

    def fill(rank: int, n: int, min_natural: int = 1) -> None:
        got = _take(hand, level, rank, n, cards)
        if len(got) < min_natural:
            raise ValueError("not enough natural cards")
        cards.extend(got)
        cards.extend([wk] * (n - len(got)))

    if shape.wild_only:
        cards = [wk] * shape.size
    elif shape.key in (SB_CODE, HR_CODE) and t in (ComboType.SINGLE, ComboType.PAIR):
        joker = SMALL_JOKER if shape.key == SB_CODE else BIG_JOKER
        cards = [joker] * shape.size
    elif t == ComboType.JOKER_BOMB:
        cards = [SMALL_JOKER, SMALL_JOKER, BIG_JOKER, BIG_JOKER]
    elif t in (ComboType.SINGLE, ComboType.PAIR, ComboType.TRIPS, ComboType.BOMB):
        fill(shape.key, shape.size)
    elif t == ComboType.FULL_HOUSE:
        fill(shape.key, 3)
        used = cards.count(wk)
        pair = _pair_for(naturals(hand, level), shape.key, w - used, level)
        if pair is None:
            raise ValueError("no pair for the full house")
        rank, cost = pair
        if rank in (SB_CODE, HR_CODE):
            cards += [SMALL_JOKER if rank == SB_CODE else BIG_JOKER] * 2
        elif rank < 0:
            cards += [wk, wk]
        else:
            cards += _take(hand, level, rank, 2 - cost, cards) + [wk] * cost
    elif t == ComboType.STRAIGHT_FLUSH:
        for r in shape.window():
            k = kind(r, shape.suit)
            cards.append(k if k != wk and hand[k] else wk)
    else:  # straight, tube, plate
        for r in shape.window():
            fill(r, shape.width, 0)
        if t == ComboType.STRAIGHT:
            nat = [c for c in cards if c != wk]
            if len({c % 4 for c in nat}) == 1:
                fixed = _break_flush(hand, level, nat)
                cards = fixed + [wk] * (5 - len(fixed))
    if cards.count(wk) > w or any(cards.count(c) > hand[c] for c in set(cards)):
        raise ValueError(f"the hand cannot play {shape}")
    if t not in (ComboType.SINGLE, ComboType.PAIR) and cards.count(wk) == len(cards):
        raise ValueError("a combination of wild cards only is read naturally")
    return tuple(sorted(cards))


@lru_cache(maxsize=1 << 16)
def cards_for(action: int, hand: Hand, level: int) -> tuple[int, ...]:
    """:func:`realize` for a play action (cached: hands are immutable bytes)."""
    return realize(shape_of(action), hand, level)


def _break_flush(hand: Hand, level: int, naturals: list[int]) -> list[int]:
    wk = wild_kind(level)
    suit = naturals[0] % 4
    best: tuple[int, int, int] | None = None
    for i, k in enumerate(naturals):
        r = k // 4
        for s in range(4):
            alt = kind(r, s)
            if s != suit and alt != wk and hand[alt]:
                score = _sf_potential(hand, level, r, s)
                if best is None or (score, -s) < (best[0], -(best[2] % 4)):
                    best = (score, i, alt)
    if best is None:
        raise ValueError("a straight whose cards are all of one suit is a straight flush")
    out = list(naturals)
    out[best[1]] = best[2]
    return out
