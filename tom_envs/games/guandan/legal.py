"""Fast legal-play generation over the shape catalogue: a numpy and a pure-Python generator.

A hand is summarised as natural counts per rank code (15), the number of wild cards and the natural
cards held per kind. A shape is playable when its missing cards can be filled with the wild cards
it may use (none for a single, one for a pair, ...; never all of a combination), a full house finds
a pair (natural, joker, a card plus a wild, or the two wilds), a straight flush finds its suit's
cards, and a straight can be laid out with at least two suits. Playable shapes that beat the
combination on the table (every shape when leading) are legal. The engine uses the pure-Python
:func:`legal_plays_py` (faster on one position); :func:`legal_plays` vectorises the same rules over
the catalogue. Both are checked against each other and against the independent enumerator of
:mod:`tom_envs.games.guandan.bruteforce` checks this (tests and
``python benchmarks/guandan.py legal``).
"""

from __future__ import annotations

from functools import cache

import numpy as np

from tom_envs.games.guandan.cards import HR_CODE, NUM_RANKS, SB_CODE, Hand, as_array, wild_kind
from tom_envs.games.guandan.combos import SHAPE_BASE, SHAPES, ComboType, strength


class _Table:
    """The catalogue as arrays (built once)."""

    def __init__(self) -> None:
        n = len(SHAPES)
        self.type = np.array([int(s.type) for s in SHAPES], dtype=np.int8)
        self.is_bomb = np.array([s.is_bomb for s in SHAPES], dtype=bool)
        self.strength = np.array(
            [[strength(s, lv) for s in SHAPES] for lv in range(NUM_RANKS)], dtype=np.int16
        )
        demand = np.zeros((n, 15), dtype=np.int8)
        wcap = np.zeros(n, dtype=np.int8)  # wilds a shape may use in place of natural cards
        wneed = np.zeros(n, dtype=np.int8)  # wilds a shape must hold (lone wild, wild pair)
        keyrank = np.full(n, 15, dtype=np.int8)  # rank that needs >= 1 natural card (15: none)
        for i, s in enumerate(SHAPES):
            t = s.type
            if s.wild_only:
                wneed[i] = s.size
            elif t == ComboType.JOKER_BOMB:
                demand[i, SB_CODE] = demand[i, HR_CODE] = 2
            elif s.key in (SB_CODE, HR_CODE) and t in (ComboType.SINGLE, ComboType.PAIR):
                demand[i, s.key] = s.size
            elif t in (ComboType.SINGLE, ComboType.PAIR, ComboType.TRIPS, ComboType.BOMB):
                demand[i, s.key] = s.size
                wcap[i] = s.size - 1
                keyrank[i] = s.key
            elif t == ComboType.FULL_HOUSE:
                demand[i, s.key] = 3
                wcap[i] = 2
                keyrank[i] = s.key
            elif t in (ComboType.STRAIGHT, ComboType.TUBE, ComboType.PLATE):
                for r in s.window():
                    demand[i, r] = s.width
                wcap[i] = 2
        self.demand = demand.astype(np.int16)
        self.wcap = wcap.astype(np.int16)
        self.wneed = wneed.astype(np.int16)
        self.keyrank = keyrank.astype(np.intp)
        self.keymin = (keyrank < 15).astype(np.int16)
        self.general = np.flatnonzero(self.type != ComboType.STRAIGHT_FLUSH)
        self.fh = np.array([i for i, s in enumerate(SHAPES) if s.type == ComboType.FULL_HOUSE])
        self.st = np.array([i for i, s in enumerate(SHAPES) if s.type == ComboType.STRAIGHT])
        self.st_ranks = np.array([SHAPES[i].window() for i in self.st], dtype=np.int16)
        self.sf = np.array([i for i, s in enumerate(SHAPES) if s.type == ComboType.STRAIGHT_FLUSH])
        self.sf_kinds = np.array(
            [[r * 4 + SHAPES[i].suit for r in SHAPES[i].window()] for i in self.sf], dtype=np.int16
        )
        self.all = np.arange(n)


@cache
def table() -> _Table:
    """The shared catalogue arrays."""
    return _Table()


_POP1 = np.array([0, 1, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0], dtype=bool)
_BITS = np.array([1, 2, 4, 8], dtype=np.int16)


def summarize(hand: Hand, level: int) -> tuple[np.ndarray, int, np.ndarray]:
    """``(natural counts per rank code (16, the last 0), wild count, natural counts per kind)``."""
    h = as_array(hand, np.int16)
    nat = h[:52].copy()
    wk = wild_kind(level)
    w = int(nat[wk])
    nat[wk] = 0
    counts = np.zeros(16, dtype=np.int16)
    counts[:13] = nat.reshape(13, 4).sum(axis=1)
    counts[13] = h[52]
    counts[14] = h[53]
    return counts, w, nat


def playable_mask(hand: Hand, level: int) -> np.ndarray:
    """Boolean mask over :data:`SHAPES`: what ``hand`` can play at ``level``."""
    t = table()
    counts, w, nat = summarize(hand, level)
    deficit = np.maximum(t.demand - counts[:15], 0).sum(axis=1)
    ok = (deficit <= np.minimum(t.wcap, w)) & (counts[t.keyrank] >= t.keymin) & (t.wneed <= w)
    # full houses: the trips part above, plus the cheapest pair of another rank
    c = counts[:13]
    two, one = c >= 2, c == 1
    joker_pair = counts[SB_CODE] == 2 or counts[HR_CODE] == 2
    pair0 = (two.sum() - two > 0) | joker_pair
    pair1 = one.sum() - one > 0
    pair_cost = np.where(pair0, 0, np.where(pair1, 1, 2))
    fh_deficit = np.maximum(3 - c, 0)
    ok[t.fh] &= fh_deficit + pair_cost <= w
    # straights: not forced into one suit (present ranks each held in one same suit only)
    bits = (nat.reshape(13, 4) > 0) @ _BITS
    rows = bits[t.st_ranks]
    ors = np.bitwise_or.reduce(rows, axis=1)
    ands = np.bitwise_and.reduce(np.where(rows > 0, rows, 15), axis=1)
    ok[t.st] &= ~((ors == ands) & _POP1[ors])
    # straight flushes: the suit's cards, wilds for the missing ones
    held = nat[t.sf_kinds] > 0
    ok[t.sf] = (5 - held.sum(axis=1)) <= w
    return ok


@cache
def _beaters(level: int, current: int) -> np.ndarray:
    """Boolean mask of the shapes that may be played on shape ``current`` at ``level``."""
    t = table()
    s = t.strength[level]
    if t.is_bomb[current]:
        return t.is_bomb & (s > s[current])
    return t.is_bomb | ((t.type == t.type[current]) & (s > s[current]))


def legal_plays(hand: Hand, level: int, current: int | None) -> np.ndarray:
    """Shape indices ``hand`` may play on shape ``current`` (``None``: leading), ascending."""
    ok = playable_mask(hand, level)
    if current is not None:
        ok &= _beaters(level, current)
    return np.flatnonzero(ok)


# --------------------------------------------------------------- pure-Python generator
def _bases() -> dict[str, int]:
    first: dict[str, int] = {}
    for i, s in enumerate(SHAPES):
        first.setdefault(s.type.name, i)
    return first


_B = _bases()
_SINGLE, _PAIR, _TRIPS, _FH = _B["SINGLE"], _B["PAIR"], _B["TRIPS"], _B["FULL_HOUSE"]
_STRAIGHT, _TUBE, _PLATE, _SF = _B["STRAIGHT"], _B["TUBE"], _B["PLATE"], _B["STRAIGHT_FLUSH"]
_BOMB, _JOKERS = _B["BOMB"], _B["JOKER_BOMB"]
#: rank index of each sequence position (0 = low ace .. 13 = high ace)
_POS = (12, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)


#: One rank's four suit counts (bytes) -> (cards held, bit mask of the suits held).
_SEGMENTS: dict[bytes, tuple[int, int]] = {}


def _segment(seg: bytes) -> tuple[int, int]:
    out = (sum(seg), sum(1 << s for s in range(4) if seg[s]))
    if len(_SEGMENTS) < 4096:
        _SEGMENTS[seg] = out
    return out


def playable(hand: Hand, level: int, only: int | None = None) -> list[int]:
    """Indices into :data:`SHAPES` (ascending) that ``hand`` can play: pure Python, the same
    semantics as :func:`playable_mask` (the tests check the two against each other).
    ``only``: a non-bomb type; other non-bomb types are skipped (bombs are always listed)."""
    if type(hand) is not bytes:
        hand = bytes(hand)
    wk = level * 4
    w = hand[wk]
    c = [0] * 13
    suits = [0] * 13  # bit mask of the suits held per rank (natural cards)
    segments = _SEGMENTS
    for r in range(13):
        k = r * 4
        # the level rank's heart is the wild card, not a natural card of its rank
        seg = hand[k : k + 4] if r != level else b"\0" + hand[k + 1 : k + 4]
        hit = segments.get(seg)
        if hit is None:
            hit = _segment(seg)
        c[r], suits[r] = hit
    sb, hr = hand[52], hand[53]
    out: list[int] = []
    add = out.append
    every = only is None
    # singles, pairs (natural, jokers, wild only)
    if every or only == ComboType.SINGLE:
        for r in range(13):
            if c[r]:
                add(_SINGLE + r)
        if sb:
            add(_SINGLE + 13)
        if hr:
            add(_SINGLE + 14)
        if w:
            add(_SINGLE + 15)
    if every or only == ComboType.PAIR:
        for r in range(13):
            if c[r] >= 2 or (c[r] and w):
                add(_PAIR + r)
        if sb == 2:
            add(_PAIR + 13)
        if hr == 2:
            add(_PAIR + 14)
        if w == 2:
            add(_PAIR + 15)
    if every or only == ComboType.TRIPS:
        for r in range(13):
            if c[r] and c[r] + w >= 3:
                add(_TRIPS + r)
    # full houses: trips part, then the cheapest pair of another rank
    twos = sum(1 for x in c if x >= 2)
    ones = sum(1 for x in c if x == 1)
    jp = sb == 2 or hr == 2
    for r in range(13 if every or only == ComboType.FULL_HOUSE else 0):
        if not c[r]:
            continue
        need = max(0, 3 - c[r])
        if need > w:
            continue
        if jp or twos - (c[r] >= 2) > 0:
            cost = 0
        elif ones - (c[r] == 1) > 0:
            cost = 1
        else:
            cost = 2
        if need + cost <= w:
            add(_FH + r)
    # straights (not forced into one suit), tubes, plates
    for start in range(10 if every or only == ComboType.STRAIGHT else 0):
        miss = 0
        any_bits = 0
        all_bits = 15
        for p in range(start, start + 5):
            r = _POS[p]
            if c[r]:
                any_bits |= suits[r]
                all_bits &= suits[r]
            else:
                miss += 1
        if miss <= w and not (any_bits == all_bits and any_bits in (1, 2, 4, 8)):
            add(_STRAIGHT + start)
    for start in range(12 if every or only == ComboType.TUBE else 0):
        miss = sum(max(0, 2 - c[_POS[p]]) for p in range(start, start + 3))
        if miss <= w:
            add(_TUBE + start)
    for start in range(13 if every or only == ComboType.PLATE else 0):
        miss = sum(max(0, 3 - c[_POS[p]]) for p in range(start, start + 2))
        if miss <= w:
            add(_PLATE + start)
    for s in range(4):
        bit = 1 << s
        held = [1 if suits[r] & bit else 0 for r in _POS]
        if sum(held) + w < 5:
            continue
        window = sum(held[:5])
        for start in range(10):
            if start:
                window += held[start + 4] - held[start - 1]
            if window + w >= 5:
                add(_SF + s * 10 + start)
    for r in range(13):
        if c[r]:
            top = min(c[r] + w, 10)
            for n in range(4, top + 1):
                add(_BOMB + r * 7 + n - 4)
    if sb == 2 and hr == 2:
        add(_JOKERS)
    return out


@cache
def _beater_set(level: int, current: int) -> frozenset[int]:
    return frozenset(np.flatnonzero(_beaters(level, current)).tolist())


def legal_plays_py(hand: Hand, level: int, current: int | None) -> list[int]:
    """:func:`legal_plays` in pure Python (faster for one position; same result)."""
    if current is None:
        return playable(hand, level)
    shape = SHAPES[current]
    plays = playable(hand, level, -1 if shape.is_bomb else int(shape.type))
    ok = _beater_set(level, current)
    return [i for i in plays if i in ok]


_PLAY_ACTIONS: dict[tuple[Hand, int, int | None], tuple[int, ...]] = {}


def legal_play_actions(hand: Hand, level: int, current: int | None) -> tuple[int, ...]:
    """Legal actions of the play phase: pass (when following) then the shape actions.

    A pure function of its (immutable) arguments, so results are kept in a bounded table: a seat
    that passed holds the same hand at its next turn, often against the same play."""
    key = (hand, level, current)
    hit = _PLAY_ACTIONS.get(key)
    if hit is not None:
        return hit
    out = [SHAPE_BASE + i for i in legal_plays_py(hand, level, current)]
    legal = tuple(out) if current is None else (0, *out)
    if len(_PLAY_ACTIONS) >= 65536:
        _PLAY_ACTIONS.clear()
    _PLAY_ACTIONS[key] = legal
    return legal
