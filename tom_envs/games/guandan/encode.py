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
from tom_envs.games.guandan.cards import NUM_KINDS, as_array, wild_kind
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


_WILD: dict[tuple[bytes, int], np.ndarray] = {}


def _wild_cached(hand: bytes, level: int) -> np.ndarray:
    """:func:`wild_features`, kept per (hand, level): a hand is unchanged until its owner plays.
    The array is only read (copied into the vector), never handed out."""
    if type(hand) is not bytes:  # only immutable hands are kept
        return wild_features(hand, level)
    key = (hand, level)
    hit = _WILD.get(key)
    if hit is None:
        hit = wild_features(hand, level)
        if len(_WILD) >= 16384:
            _WILD.clear()
        _WILD[key] = hit
    return hit


class GuandanEncoder(Encoder[GuandanView, GuandanState]):
    """The DanZero state (513) plus context (13): 526 floats in [0, 2]."""

    def __init__(self, config: GuandanConfig) -> None:
        self.config = config
        self._cache: dict[int, tuple[GuandanView, np.ndarray]] = {}

    @property
    def observation_shape(self) -> tuple[int, ...]:
        """``(526,)``."""
        return (OBS_SIZE,)

    @property
    def state_shape(self) -> tuple[int, ...]:
        """``(525,)``."""
        return (STATE_SIZE,)

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
        out = np.zeros(OBS_SIZE, dtype=np.float32)
        o = OFFSETS
        hand = as_array(view.hand, np.float32)
        out[o["own_hand"] : o["own_hand"] + 54] = hand
        out[o["wild_features"] : o["wild_features"] + 12] = _wild_cached(view.hand, view.level)
        played = _stack(view.played)  # (4, 54)
        out[o["unseen"] : o["unseen"] + 54] = _FULL - hand - played.sum(axis=0)
        if view.lead is not None:
            a = o["last_action"]
            for c in view.lead[2]:
                out[a + c] += 1.0
        last = view.partner_last()
        if last is not None:
            a = o["partner_last_action"]
            for c in last[2]:
                out[a + c] += 1.0
        for name, rel in (("played_next", 1), ("played_partner", 2), ("played_previous", 3)):
            out[o[name] : o[name] + 54] = played[rel]
        for name, rel in (("left_next", 1), ("left_partner", 2), ("left_previous", 3)):
            out[o[name] + view.cards_left[rel]] = 1.0
        out[o["my_level"] + view.my_level] = 1.0
        out[o["their_level"] + view.their_level] = 1.0
        out[o["current_level"] + view.level] = 1.0
        if view.phase in PHASES:
            out[o["phase"] + PHASES.index(view.phase)] = 1.0
        out[o["leading"]] = float(view.leading)
        out[o["level_is_mine"]] = float(view.level_is_mine)
        for rel in view.finished:
            if view.cards_left[rel] == 0:
                out[o["finished"] + rel] = 1.0
        if view.lead is not None:
            out[o["lead_owner"] + view.lead[0]] = 1.0
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
