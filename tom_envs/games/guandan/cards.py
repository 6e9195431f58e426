"""Cards of Guandan: two 54-card decks, the DanZero 54-kind indexing, level-aware values, names.

A *card kind* is an index ``0..53``: ``rank * 4 + suit`` for the 13 ranks ``2..A`` (rank index
``0..12``) and the suits hearts, spades, clubs, diamonds (``H S C D``, suit index ``0..3``), then
``52`` = small joker and ``53`` = big joker (specs §4.7). Two decks hold two copies of every kind,
so a hand is 54 counts in ``0..2`` (stored as ``bytes``).

The *level* is a rank index. Its two hearts (kind ``level * 4``) are the wild cards. In non-sequence
combinations ranks compare by *value*: ``2..A`` are ``2..14`` except that the level rank is ``15``;
small joker ``16``, big joker ``17``. Sequences use natural ranks (the level card sits at its
natural place) and A may be low (A2345) or high (TJQKA).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

#: Rank names by rank index (0 = "2" ... 12 = "A").
RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
#: Suit letters by suit index (DanZero order: hearts, spades, clubs, diamonds).
SUITS = ("H", "S", "C", "D")
SUIT_SYMBOLS = ("♥", "♠", "♣", "♦")
SUIT_NAMES_ZH = ("红桃", "黑桃", "梅花", "方块")
NUM_RANKS = 13
NUM_KINDS = 54
SMALL_JOKER = 52
BIG_JOKER = 53
HEARTS = 0
ACE = 12
#: Rank code of the jokers in the 15-slot rank vectors (13 ranks, small joker, big joker).
SB_CODE = 13
HR_CODE = 14
#: Rank code meaning "the level rank, made of wild cards only" (a lone wild or the wild pair).
WILD_CODE = 15

#: A hand: 54 counts as ``bytes`` (immutable, hashable, indexable like a tuple of ints, and cheap to
#: hash, copy and compare: states hold four of them).
Hand = bytes


def kind(rank: int, suit: int) -> int:
    """The card kind of ``rank`` (0..12) and ``suit`` (0..3)."""
    return rank * 4 + suit


def rank_of(card: int) -> int:
    """Rank index of a card kind (13 = small joker, 14 = big joker)."""
    if card >= SMALL_JOKER:
        return SB_CODE if card == SMALL_JOKER else HR_CODE
    return card // 4


def wild_kind(level: int) -> int:
    """The wild card of a level: the heart of the level rank."""
    return level * 4 + HEARTS


def rank_value(code: int, level: int) -> int:
    """Value of a rank code in non-sequence combinations (level = 15, jokers 16 and 17)."""
    if code in (level, WILD_CODE):
        return 15
    if code == SB_CODE:
        return 16
    if code == HR_CODE:
        return 17
    return code + 2


def card_value(card: int, level: int) -> int:
    """Value of a card kind in non-sequence combinations."""
    return rank_value(rank_of(card), level)


def full_deck() -> list[int]:
    """The 108 cards of two decks, as card kinds, in kind order."""
    return [c for c in range(NUM_KINDS) for _ in range(2)]


def hand_from_cards(cards: Iterable[int]) -> Hand:
    """Count vector of a list of card kinds."""
    counts = [0] * NUM_KINDS
    for c in cards:
        counts[c] += 1
    return bytes(counts)


def as_array(hand: Hand, dtype: type = np.int16) -> np.ndarray:
    """A hand (bytes or a sequence of counts) as a numpy vector."""
    if isinstance(hand, bytes):
        return np.frombuffer(hand, dtype=np.uint8).astype(dtype)
    return np.asarray(hand, dtype=dtype)


def cards_of(hand: Hand) -> list[int]:
    """The cards of a count vector, in kind order (each kind repeated by its count)."""
    return [c for c, n in enumerate(hand) if n for _ in range(n)]


def remove_cards(hand: Hand, cards: Iterable[int]) -> Hand:
    """``hand`` minus ``cards`` (raises ``ValueError`` if a card is missing)."""
    out = list(hand)
    for c in cards:
        if out[c] <= 0:
            raise ValueError(f"card {card_name(c)} is not in the hand")
        out[c] -= 1
    return bytes(out)


def add_cards(hand: Hand, cards: Iterable[int]) -> Hand:
    """``hand`` plus ``cards``."""
    out = list(hand)
    for c in cards:
        out[c] += 1
    return bytes(out)


def card_name(card: int, language: str = "en") -> str:
    """``"♠10"``, ``"♥Q"``, ``"SmallJoker"``/``"BigJoker"``; ``"黑桃10"``, ``"小王"`` in Chinese."""
    if card == SMALL_JOKER:
        return "小王" if language == "zh" else "SmallJoker"
    if card == BIG_JOKER:
        return "大王" if language == "zh" else "BigJoker"
    r, s = divmod(card, 4)
    if language == "zh":
        return SUIT_NAMES_ZH[s] + RANKS[r]
    return SUIT_SYMBOLS[s] + RANKS[r]


def sort_by_value(cards: Iterable[int], level: int) -> list[int]:
    """Cards sorted by (value, suit): how a player holds them."""
    return sorted(cards, key=lambda c: (card_value(c, level), c))
