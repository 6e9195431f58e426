"""Vector rendering of a Guandan view: the DanZero state (specs §4.7) plus a small context block.

Card vectors have 54 entries, index ``rank * 4 + suit`` (suits H, S, C, D), then small and big
joker, each the count 0..2. Relative seats: next (opponent), partner, previous (opponent).

=====================  ====  ==================================================================
piece                  size  content
=====================  ====  ==================================================================
own_hand                 54  my cards
wild_features            12  all 0 without a wild; else: holds a wild; holds two; a straight
                             flush needs my wilds to complete; a bomb of 4, 5, ..., 10 cards is
                             reachable with my wilds (7 flags); a straight, a tube need them
unseen                   54  cards in the other three hands (deck - mine - played)
last_action              54  the play to beat (0 when nothing is to beat)
partner_last_action      54  my partner's last move this deal (0 for a pass or none)
played_next              54  cards played this deal by the next player
played_partner           54  ... by my partner
played_previous          54  ... by the previous player
left_next                28  one-hot of the next player's card count (0..27)
left_partner             28  one-hot of my partner's card count
left_previous            28  one-hot of the previous player's card count
my_level                 13  one-hot of my team's level
their_level              13  one-hot of the opponents' level
current_level            13  one-hot of this deal's level
phase                     3  one-hot: tribute, return, play
leading                   1  I act with nothing to beat
level_is_mine             1  this deal is played at my team's level
finished                  4  out of cards: me, next, partner, previous
lead_owner                4  one-hot: who played the card on the table (me, next, ...)
=====================  ====  ==================================================================

The first 513 entries are DanZero's state layout (its 12 wild-card flags are our own, documented
above). ``state()`` is the whole table: the four hands and played cards by seat, the play to beat
and its owner, the seat to act, both levels, the level team and the phase.
"""

from __future__ import annotations

import numpy as np

from tom_envs.core.game import Encoder
from tom_envs.games.guandan.cards import NUM_KINDS, as_array, hand_from_cards, wild_kind
from tom_envs.games.guandan.legal import hand_info, runs
from tom_envs.games.guandan.state import GuandanConfig, GuandanState
from tom_envs.games.guandan.view import GuandanView

PIECES: tuple[tuple[str, int], ...] = (
    ("own_hand", 54),
    ("wild_features", 12),
    ("unseen", 54),
    ("last_action", 54),
    ("partner_last_action", 54),
    ("played_next", 54),
    ("played_partner", 54),
    ("played_previous", 54),
    ("left_next", 28),
    ("left_partner", 28),
    ("left_previous", 28),
    ("my_level", 13),
    ("their_level", 13),
    ("current_level", 13),
    ("phase", 3),
    ("leading", 1),
    ("level_is_mine", 1),
    ("finished", 4),
    ("lead_owner", 4),
)
OFFSETS = {}
_o = 0
for _name, _size in PIECES:
    OFFSETS[_name] = _o
    _o += _size
OBS_SIZE = _o
STATE_SIZE = 4 * 54 + 4 * 54 + 54 + 4 + 4 + 13 + 13 + 2 + 3
PHASES = ("tribute", "return", "play")
_FULL = np.full(NUM_KINDS, 2, dtype=np.float32)
# positions 0..13 (A low .. A high) -> rank index
_POS_RANK = np.array([12, *range(13)])


def _stack(hands: tuple[bytes, ...]) -> np.ndarray:
    """Four 54-count hands as a (4, 54) float32 array."""
    return (
        np.frombuffer(b"".join(bytes(h) for h in hands), dtype=np.uint8)
        .reshape(len(hands), 54)
        .astype(np.float32)
    )


def wild_features(hand: bytes, level: int) -> np.ndarray:
    """The 12 wild-card flags of a hand (see the module table)."""
    out = np.zeros(12, dtype=np.float32)
    h = as_array(hand, np.int16)
    wk = wild_kind(level)
    w = int(h[wk])
    if not w:
        return out
    nat = h[:52].copy()
    nat[wk] = 0
    by_rs = nat.reshape(13, 4) > 0
    counts = nat.reshape(13, 4).sum(axis=1)
    out[0] = 1.0
    out[1] = float(w >= 2)
    pos_suit = by_rs[_POS_RANK]  # (14, 4)
    windows = np.lib.stride_tricks.sliding_window_view(pos_suit, 5, axis=0).sum(axis=2)
    out[2] = float(((windows >= 5 - w) & (windows < 5)).any())
    top = int(counts.max())
    for j, n in enumerate(range(4, 11)):
        out[3 + j] = float(top + w >= n)
    present = (counts > 0)[_POS_RANK]
    run = np.lib.stride_tricks.sliding_window_view(present, 5).sum(axis=1)
    out[10] = float(((run >= 5 - w) & (run < 5)).any())
    pairs = np.minimum(counts, 2)[_POS_RANK]
    tube = np.lib.stride_tricks.sliding_window_view(pairs, 3).sum(axis=1)
    out[11] = float(((tube >= 6 - w) & (tube < 6) & (tube >= 4)).any())
    return out


def _wild_bytes(hand: bytes, level: int) -> bytes:
    """:func:`wild_features` as 12 bytes (0 or 1), from the legal-move generator's summary of the
    hand (natural counts and suits per rank), kept with it per (hand, level)."""
    info = hand_info(hand, level)
    got = info.wild
    if got is not None:
        return got
    w = info.w
    if not w:
        got = info.wild = _NO_WILD
        return got
    c = info.c
    out = bytearray(12)
    out[0] = 1
    out[1] = w >= 2
    out[2] = any(runs(mask, w)[1] for mask in info.suit_positions())
    top = max(c) + w
    for j in range(7):
        out[3 + j] = top >= 4 + j
    present = 0
    for p, r in enumerate(_POS_RANKS):
        if c[r]:
            present |= 1 << p
    out[10] = runs(present, w)[1]
    pairs = [min(c[r], 2) for r in _POS_RANKS]
    low = max(4, 6 - w)
    out[11] = any(low <= pairs[p] + pairs[p + 1] + pairs[p + 2] < 6 for p in range(12))
    got = info.wild = bytes(out)
    return got


_NO_WILD = bytes(12)
_POS_RANKS = tuple(_POS_RANK.tolist())


_COUNTS: dict[tuple[int, ...], bytes] = {}
_NO_CARDS = bytes(NUM_KINDS)


def _card_counts(cards: tuple[int, ...]) -> bytes:
    """The 54 counts of a tuple of played cards (kept per tuple)."""
    hit = _COUNTS.get(cards)
    if hit is None:
        hit = hand_from_cards(cards)
        if len(_COUNTS) >= 16384:
            _COUNTS.clear()
        _COUNTS[cards] = hit
    return hit


_FULL_COUNTS = int.from_bytes(bytes([2]) * NUM_KINDS, "big")


def _unseen(hand: bytes, played: tuple[bytes, ...]) -> bytes | None:
    """``2 - hand - played`` per card kind as 54 bytes, computed on the hands read as base-256
    numbers (no count borrows from the next one while every difference is >= 0); ``None`` when
    some difference is negative (a hand-made position), which the caller computes in floats."""
    v = _FULL_COUNTS - int.from_bytes(hand, "big")
    for p in played:
        v -= int.from_bytes(p, "big")
    if v < 0:
        return None
    out = v.to_bytes(NUM_KINDS, "big")
    return out if max(out) <= 2 else None  # a borrow leaves a byte >= 254


_LEFT = (0, OFFSETS["left_next"], OFFSETS["left_partner"], OFFSETS["left_previous"])
_MY_LEVEL, _THEIR_LEVEL = OFFSETS["my_level"], OFFSETS["their_level"]
_CURRENT_LEVEL, _LEADING = OFFSETS["current_level"], OFFSETS["leading"]
_LEVEL_IS_MINE, _FINISHED = OFFSETS["level_is_mine"], OFFSETS["finished"]
_LEAD_OWNER, _UNSEEN = OFFSETS["lead_owner"], OFFSETS["unseen"]
_PHASE_AT = {name: OFFSETS["phase"] + i for i, name in enumerate(PHASES)}
_TAIL = bytes(OBS_SIZE - OFFSETS["left_next"])  # the one-hot pieces, zero before they are set
assert OFFSETS["left_next"] == OFFSETS["played_previous"] + 54  # the bytes pieces come first


class GuandanEncoder(Encoder[GuandanView, GuandanState]):
    """The DanZero state (513) plus context (13): 526 floats in [0, 2]."""

    obs_size, state_size = OBS_SIZE, STATE_SIZE  # 526, 525

    def __init__(self, config: GuandanConfig) -> None:
        self.config = config
        self._cache: dict[int, tuple[GuandanView, np.ndarray]] = {}

    @property
    def high(self) -> float:
        """Card counts go up to 2."""
        return 2.0

    def encode(self, view: GuandanView) -> np.ndarray:
        """The view as a float32 vector (layout in the module docstring).

        Views are immutable: the vector of the same view object is computed once (a copy is
        returned each time).
        """
        cached = self._cache.get(view.player)
        if cached is not None and cached[0] is view:
            return cached[1].copy()
        out = self._encode(view)
        self._cache[view.player] = (view, out)
        return out.copy()

    def _encode(self, view: GuandanView) -> np.ndarray:
        # Every entry is a small count (0..2) or a flag, so the vector is assembled as bytes, one
        # entry a byte, in the layout's order, and converted to float32 in one numpy call.
        hand = view.hand if type(view.hand) is bytes else bytes(view.hand)
        played = view.played
        if not all(type(p) is bytes for p in played):
            played = tuple(bytes(p) for p in played)
        unseen = _unseen(hand, played)
        lead = view.lead
        last = view.partner_last()
        buf = bytearray().join(
            (
                hand,
                _wild_bytes(hand, view.level),
                _NO_CARDS if unseen is None else unseen,
                _NO_CARDS if lead is None else _card_counts(lead[2]),
                _NO_CARDS if last is None else _card_counts(last[2]),
                played[1],
                played[2],
                played[3],
                _TAIL,
            )
        )
        left = view.cards_left
        buf[_LEFT[1] + left[1]] = 1
        buf[_LEFT[2] + left[2]] = 1
        buf[_LEFT[3] + left[3]] = 1
        buf[_MY_LEVEL + view.my_level] = 1
        buf[_THEIR_LEVEL + view.their_level] = 1
        buf[_CURRENT_LEVEL + view.level] = 1
        at = _PHASE_AT.get(view.phase)
        if at is not None:
            buf[at] = 1
        if view.leading:
            buf[_LEADING] = 1
        if view.level_is_mine:
            buf[_LEVEL_IS_MINE] = 1
        for rel in view.finished:
            if left[rel] == 0:
                buf[_FINISHED + rel] = 1
        if lead is not None:
            buf[_LEAD_OWNER + lead[0]] = 1
        out = np.frombuffer(buf, dtype=np.uint8).astype(np.float32)
        if unseen is None:
            out[_UNSEEN : _UNSEEN + 54] = _FULL - as_array(hand, np.float32) - _stack(played).sum(0)
        return out

    def encode_state(self, state: GuandanState) -> np.ndarray:
        """The whole table (layout in the module docstring)."""
        out = np.zeros(STATE_SIZE, dtype=np.float32)
        out[:216] = _stack(state.hands).reshape(-1)
        out[216:432] = _stack(state.played).reshape(-1)
        if state.lead is not None:
            for c in state.lead[2]:
                out[432 + c] += 1.0
            out[486 + state.lead[0]] = 1.0
        if state.to_act >= 0:
            out[490 + state.to_act] = 1.0
        out[494 + state.levels[0]] = 1.0
        out[507 + state.levels[1]] = 1.0
        out[520 + state.level_team] = 1.0
        if state.phase in PHASES:
            out[522 + PHASES.index(state.phase)] = 1.0
        return out
