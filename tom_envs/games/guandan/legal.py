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

import struct
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


#: One rank's four suit counts (a little-endian int, hearts in the low byte) -> (cards held, bit
#: mask of the suits held): every count 0..255 would be 2^32 entries, so the table covers the
#: counts a deal can hold (0..2 per suit) and :class:`_SegmentTable` computes any other.
class _SegmentTable(dict):
    def __missing__(self, key: int) -> tuple[int, int]:
        seg = key.to_bytes(4, "little")
        return (sum(seg), sum(1 << s for s in range(4) if seg[s]))


_SEGMENTS = _SegmentTable()
for _key in range(3**4):
    _counts = [(_key // 3**s) % 3 for s in range(4)]
    _SEGMENTS[int.from_bytes(bytes(_counts), "little")] = (
        sum(_counts),
        sum(1 << s for s in range(4) if _counts[s]),
    )
_RANKS4 = struct.Struct("<13I")  # the 13 ranks' four suit counts, from the first 52 bytes


class _HandInfo:
    """What the generator knows about one ``(hand, level)``: the natural counts and suits per rank,
    the wild cards and jokers, and the playable shapes of each type, each computed on first use
    (a seat that passes keeps its hand, so its next turn reads them back)."""

    __slots__ = ("bombs", "c", "every", "hr", "sb", "suits", "types", "w", "wild")

    def __init__(self, hand: bytes, level: int) -> None:
        # each rank's four suit counts as one little-endian int (hearts in the low byte); the
        # level rank's heart is the wild card, not a natural card of its rank
        segs = list(_RANKS4.unpack_from(hand))
        if 0 <= level < 13:
            segs[level] &= 0xFFFFFF00
        table = _SEGMENTS
        got = [table[x] for x in segs]
        self.c = [n for n, _ in got]
        self.suits = [bits for _, bits in got]  # bit mask of the suits held per rank
        self.w = hand[level * 4]
        self.sb = hand[52]
        self.hr = hand[53]
        self.types: list[list[int] | None] = [None] * 7  # SINGLE .. PLATE
        self.bombs: list[int] | None = None  # straight flushes, bombs, the joker bomb
        self.every: tuple[int, ...] | None = None
        self.wild: bytes | None = None  # the encoder's wild-card flags (encode.py)

    def suit_positions(self) -> tuple[int, int, int, int]:
        """Per suit, the 14-bit mask of the sequence positions (A low .. A high) held."""
        acc = 0
        suits = self.suits
        for r in range(13):
            acc |= _SPREAD[suits[r]] << r
        out = []
        for s in range(4):
            ranks = (acc >> (16 * s)) & 0x1FFF
            out.append(((ranks << 1) | (ranks >> 12)) & 0x3FFF)  # position 0 is the ace (rank 12)
        return out[0], out[1], out[2], out[3]

    def of_type(self, t: int) -> list[int]:
        """Playable shapes of the non-bomb type ``t`` (ascending)."""
        got = self.types[t]
        if got is None:
            got = self.types[t] = _TYPE_FNS[t](self)
        return got

    def bomb_shapes(self) -> list[int]:
        """Playable straight flushes, bombs and joker bomb (ascending)."""
        got = self.bombs
        if got is None:
            got = self.bombs = _bombs(self)
        return got

    def all_shapes(self) -> tuple[int, ...]:
        """Every playable shape (ascending: types are in catalogue order, bombs last)."""
        got = self.every
        if got is None:
            out: list[int] = []
            for t in range(7):
                out += self.of_type(t)
            out += self.bomb_shapes()
            got = self.every = tuple(out)
        return got


def _singles(h: _HandInfo) -> list[int]:
    c = h.c
    out = [_SINGLE + r for r in range(13) if c[r]]
    if h.sb:
        out.append(_SINGLE + 13)
    if h.hr:
        out.append(_SINGLE + 14)
    if h.w:
        out.append(_SINGLE + 15)
    return out


def _pairs(h: _HandInfo) -> list[int]:
    c, w = h.c, h.w
    out = [_PAIR + r for r in range(13) if c[r] >= 2 or (c[r] and w)]
    if h.sb == 2:
        out.append(_PAIR + 13)
    if h.hr == 2:
        out.append(_PAIR + 14)
    if w == 2:
        out.append(_PAIR + 15)
    return out


def _trips(h: _HandInfo) -> list[int]:
    c, w = h.c, h.w
    return [_TRIPS + r for r in range(13) if c[r] and c[r] + w >= 3]


def _full_houses(h: _HandInfo) -> list[int]:
    # the trips part, then the cheapest pair of another rank
    c, w = h.c, h.w
    twos = sum(1 for x in c if x >= 2)
    ones = sum(1 for x in c if x == 1)
    jp = h.sb == 2 or h.hr == 2
    out = []
    for r in range(13):
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
            out.append(_FH + r)
    return out


def _straights(h: _HandInfo) -> list[int]:
    # not forced into one suit
    c, suits, w = h.c, h.suits, h.w
    out = []
    for start in range(10):
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
            out.append(_STRAIGHT + start)
    return out


def _tubes(h: _HandInfo) -> list[int]:
    c, w = h.c, h.w
    need = [2 - c[r] if c[r] < 2 else 0 for r in _POS]  # cards missing for a pair, by position
    return [_TUBE + p for p in range(12) if need[p] + need[p + 1] + need[p + 2] <= w]


def _plates(h: _HandInfo) -> list[int]:
    c, w = h.c, h.w
    need = [3 - c[r] if c[r] < 3 else 0 for r in _POS]  # cards missing for trips, by position
    return [_PLATE + p for p in range(13) if need[p] + need[p + 1] <= w]


#: Per suit held bits (0..15): the suits spread 16 bits apart, to gather each suit's ranks.
_SPREAD = tuple(sum(1 << (16 * s) for s in range(4) if b >> s & 1) for b in range(16))
_WINDOWS = tuple(0x1F << start for start in range(10))  # five positions from each start
_RUNS: dict[int, tuple[tuple[int, ...], bool]] = {}


def runs(mask: int, w: int) -> tuple[tuple[int, ...], bool]:
    """For a 14-bit mask of held sequence positions and ``w`` wild cards: the starts of the
    five-position windows the wilds complete (held + ``w`` >= 5), and whether some window needs
    them (``5 - w`` <= held < 5). Kept per (mask, w)."""
    key = mask | (w << 14)
    hit = _RUNS.get(key)
    if hit is None:
        held = [(mask & m).bit_count() for m in _WINDOWS]
        hit = (
            tuple(i for i, n in enumerate(held) if n + w >= 5),
            any(5 - w <= n < 5 for n in held),
        )
        _RUNS[key] = hit
    return hit


def _bombs(h: _HandInfo) -> list[int]:
    c, w = h.c, h.w
    out: list[int] = []
    for s, mask in enumerate(h.suit_positions()):
        out += [_SF + s * 10 + start for start in runs(mask, w)[0]]
    runs_of = _BOMB_RUNS
    for r in range(13):
        if c[r]:
            out += runs_of[r][min(c[r] + w, 10)]
    if h.sb == 2 and h.hr == 2:
        out.append(_JOKERS)
    return out


#: The bombs of rank ``r`` with at most ``top`` cards: ``_BOMB_RUNS[r][top]`` (4..top cards).
_BOMB_RUNS = tuple(
    tuple(tuple(_BOMB + r * 7 + n - 4 for n in range(4, top + 1)) for top in range(11))
    for r in range(13)
)


_TYPE_FNS = (_singles, _pairs, _trips, _full_houses, _straights, _tubes, _plates)
_INFO: dict[tuple[bytes, int], _HandInfo] = {}


def hand_info(hand: Hand, level: int) -> _HandInfo:
    """The (kept) :class:`_HandInfo` of ``hand`` at ``level``: hands are immutable bytes."""
    if type(hand) is not bytes:
        hand = bytes(hand)
    key = (hand, level)
    info = _INFO.get(key)
    if info is None:
        info = _HandInfo(hand, level)
        if len(_INFO) >= 16384:
            _INFO.clear()
        _INFO[key] = info
    return info


def playable(hand: Hand, level: int, only: int | None = None) -> list[int]:
    """Indices into :data:`SHAPES` (ascending) that ``hand`` can play: pure Python, the same
    semantics as :func:`playable_mask` (the tests check the two against each other).
    ``only``: a non-bomb type; other non-bomb types are skipped (bombs are always listed)."""
    info = hand_info(hand, level)
    if only is None:
        return list(info.all_shapes())
    if 0 <= only < 7:
        return info.of_type(only) + info.bomb_shapes()
    return list(info.bomb_shapes())


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


#: The type a play on each shape must have (-1: a bomb, only bombs answer it).
_ANSWER_TYPE = tuple(-1 if s.is_bomb else int(s.type) for s in SHAPES)
_PLAY_ACTIONS: dict[tuple[Hand, int, int | None], tuple[int, ...]] = {}


def legal_play_actions(hand: Hand, level: int, current: int | None) -> tuple[int, ...]:
    """Legal actions of the play phase: pass (when following) then the shape actions.

    A pure function of its (immutable) arguments, so results are kept in a bounded table: a seat
    that passed holds the same hand at its next turn, often against the same play."""
    key = (hand, level, current)
    hit = _PLAY_ACTIONS.get(key)
    if hit is not None:
        return hit
    info = hand_info(hand, level)
    if current is None:
        legal = tuple([SHAPE_BASE + i for i in info.all_shapes()])
    else:
        ok = _beater_set(level, current)
        t = _ANSWER_TYPE[current]
        if t < 0:
            legal = (0, *[SHAPE_BASE + i for i in info.bomb_shapes() if i in ok])
        else:  # every bomb beats a non-bomb (see _beaters)
            legal = (
                0,
                *[SHAPE_BASE + i for i in info.of_type(t) if i in ok],
                *[SHAPE_BASE + i for i in info.bomb_shapes()],
            )
    if len(_PLAY_ACTIONS) >= 65536:
        _PLAY_ACTIONS.clear()
    _PLAY_ACTIONS[key] = legal
    return legal
