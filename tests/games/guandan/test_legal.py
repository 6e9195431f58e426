"""Combinations and legal plays: table-driven cases, ranking, and the generators against the
independent brute-force enumerator (a small sample here; 10,000 positions in the report)."""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.games.guandan.bruteforce import check_position, game_positions, random_hand
from tom_envs.games.guandan.cards import HR_CODE, SB_CODE, WILD_CODE
from tom_envs.games.guandan.combos import (
    NUM_ACTIONS,
    SHAPE_BASE,
    SHAPES,
    ComboType,
    beats,
    realize,
    shape_of,
    strength,
)
from tom_envs.games.guandan.legal import (
    legal_play_actions,
    legal_plays,
    legal_plays_py,
    playable,
    playable_mask,
)

from .helpers import action, hand, rank

T = ComboType


def pos(name: str) -> int:
    """Sequence position of a rank (a sequence's key is the position of its top card)."""
    return rank(name) + 1


def plays(cards: str, level: str = "2", current: int | None = None) -> set[int]:
    cur = None if current is None else current - SHAPE_BASE
    return set(legal_play_actions(hand(cards), rank(level), cur)) - {0}


def test_catalogue_size_and_order() -> None:
    assert len(SHAPES) == 225 and NUM_ACTIONS == 280
    assert len(set(SHAPES)) == len(SHAPES)
    types = [s.type for s in SHAPES]
    assert types == sorted(types), "shapes are grouped by type in catalogue order"
    counts = {t: types.count(t) for t in T}
    assert counts == {
        T.SINGLE: 16,
        T.PAIR: 16,
        T.TRIPS: 13,
        T.FULL_HOUSE: 13,
        T.STRAIGHT: 10,
        T.TUBE: 12,
        T.PLATE: 13,
        T.STRAIGHT_FLUSH: 40,
        T.BOMB: 91,
        T.JOKER_BOMB: 1,
    }


# (hand, level, shape that must be legal when leading, shape that must not be)
LEADS = [
    # a wild card fills the gap of a straight
    ("S3 D4 C6 H7 H2", "2", action(T.STRAIGHT, pos("7")), action(T.STRAIGHT_FLUSH, pos("7"), 1)),
    # natural cards all spades: a straight flush, never a plain straight
    ("S3 S4 S6 S7 H2", "2", action(T.STRAIGHT_FLUSH, pos("7"), 1), action(T.STRAIGHT, pos("7"))),
    ("S3 S4 S5 S6 S7", "9", action(T.STRAIGHT_FLUSH, pos("7"), 1), action(T.STRAIGHT, pos("7"))),
    # ace low and ace high
    ("HA S2 D3 C4 S5", "7", action(T.STRAIGHT, 4), action(T.STRAIGHT, 13)),
    ("H10 SJ DQ CK SA", "7", action(T.STRAIGHT, 13), action(T.STRAIGHT, 4)),
    # no wrap-around: Q K A 2 3 is nothing
    ("HQ SK DA C2 S3", "7", action(T.SINGLE, rank("Q")), action(T.STRAIGHT, 4)),
    # jokers never in sequences, but a joker pair can be a full house's pair
    ("S5 H5 D5 SB SB", "2", action(T.FULL_HOUSE, rank("5")), action(T.PAIR, WILD_CODE)),
    # trips + the two wilds: a full house (wild pair) and a 5-card bomb
    ("S5 C5 D5 H2 H2", "2", action(T.FULL_HOUSE, rank("5")), action(T.TRIPS, rank("2"))),
    ("S5 C5 D5 H2 H2", "2", action(T.BOMB, rank("5"), size=5), action(T.BOMB, rank("5"), size=6)),
    # a lone wild is only the level rank
    ("H2", "2", action(T.SINGLE, WILD_CODE), action(T.SINGLE, rank("2"))),
    ("H2 H2", "2", action(T.PAIR, WILD_CODE), action(T.PAIR, rank("3"))),
    # pair from one card and a wild, trips from one card and two wilds
    ("S9 H2", "2", action(T.PAIR, rank("9")), action(T.TRIPS, rank("9"))),
    ("S9 H2 H2", "2", action(T.TRIPS, rank("9")), action(T.BOMB, rank("9"), size=4)),
    # tube and plate with a wild
    ("S3 H3 S4 D5 C5 H2", "2", action(T.TUBE, pos("5")), action(T.PLATE, pos("4"))),
    ("S3 H3 D3 S4 H4 H2", "2", action(T.PLATE, pos("4")), action(T.TUBE, pos("5"))),
    ("SA HA DA S2 C2 D2", "7", action(T.PLATE, 1), action(T.PLATE, 13)),
    # bombs up to 10 cards: eight natural 9s and two wilds
    (
        "S9 S9 H9 H9 C9 C9 D9 D9 H2 H2",
        "2",
        action(T.BOMB, rank("9"), size=10),
        action(T.BOMB, rank("10"), size=4),
    ),
    ("SB SB HR HR", "2", action(T.JOKER_BOMB, HR_CODE), action(T.PAIR, WILD_CODE)),
    # the heart of the level is wild, the other level cards are natural
    ("S7 H7 C7", "7", action(T.TRIPS, rank("7")), action(T.BOMB, rank("7"), size=4)),
]


@pytest.mark.parametrize("cards,level,legal,illegal", LEADS)
def test_leading_plays(cards: str, level: str, legal: int, illegal: int) -> None:
    got = plays(cards, level)
    assert legal in got, f"{shape_of(legal)} should be legal with {cards} at level {level}"
    assert illegal not in got, f"{shape_of(illegal)} should be illegal with {cards}"


def test_level_aware_values() -> None:
    lv = rank("5")
    single = {r: shape_of(action(T.SINGLE, r)) for r in (rank("A"), rank("5"), SB_CODE, HR_CODE)}
    assert beats(single[rank("5")], single[rank("A")], lv)  # the level card above A
    assert beats(single[SB_CODE], single[rank("5")], lv)
    assert beats(single[HR_CODE], single[SB_CODE], lv)
    assert not beats(single[rank("A")], single[rank("5")], lv)
    assert strength(shape_of(action(T.SINGLE, WILD_CODE)), lv) == 15


BOMB_ORDER = [
    action(T.BOMB, rank("A"), size=4),
    action(T.BOMB, rank("3"), size=5),
    action(T.STRAIGHT_FLUSH, pos("6"), 2),
    action(T.STRAIGHT_FLUSH, 13, 0),
    action(T.BOMB, rank("3"), size=6),
    action(T.BOMB, rank("2"), size=7),
    action(T.BOMB, rank("2"), size=8),
    action(T.BOMB, rank("2"), size=9),
    action(T.BOMB, rank("2"), size=10),
    action(T.JOKER_BOMB, HR_CODE),
]


def test_bomb_hierarchy() -> None:
    lv = rank("9")
    shapes = [shape_of(a) for a in BOMB_ORDER]
    for i, low in enumerate(shapes):
        for high in shapes[i + 1 :]:
            assert beats(high, low, lv) and not beats(low, high, lv), (high, low)
    # within a class, the level rank above A; bombs beat any non-bomb
    a4, nine4 = shape_of(action(T.BOMB, rank("A"), size=4)), shape_of(action(T.BOMB, lv, size=4))
    assert beats(nine4, a4, lv)
    assert beats(a4, shape_of(action(T.STRAIGHT, 13)), lv)


def test_following_rules() -> None:
    # a pair of 8s can be beaten by a higher pair or any bomb, never by a single or trips
    got = plays("S9 H9 SK S4 C4 D4 H4 SA", "2", action(T.PAIR, rank("8")))
    assert action(T.PAIR, rank("9")) in got
    assert action(T.BOMB, rank("4"), size=4) in got
    assert action(T.PAIR, rank("4")) not in got  # lower
    assert not any(shape_of(a).type in (T.SINGLE, T.TRIPS) for a in got)
    # a full house is compared by its trips only
    fh = plays("S9 H9 D9 S3 C3", "2", action(T.FULL_HOUSE, rank("8")))
    assert action(T.FULL_HOUSE, rank("9")) in fh
    # on a 6-card bomb, a straight flush is not enough
    on_six = plays("S3 S4 S5 S6 S7 SB SB HR HR", "2", action(T.BOMB, rank("K"), size=6))
    assert action(T.STRAIGHT_FLUSH, pos("7"), 1) not in on_six
    assert action(T.JOKER_BOMB, HR_CODE) in on_six
    # passing is always possible when following, never when leading
    assert legal_play_actions(hand("S3"), 0, action(T.SINGLE, rank("A")) - SHAPE_BASE) == (0,)
    assert 0 not in legal_play_actions(hand("S3"), 0, None)


def test_realize_spends_naturals_first_and_keeps_flush_chances() -> None:
    level = rank("2")
    # the wild only where a card is missing
    h = hand("S3 D4 C6 H7 H2 S8")
    cards = realize(shape_of(action(T.STRAIGHT, pos("7"))), h, level)
    assert sorted(cards) == sorted(hand_list("S3 D4 H2 C6 H7"))
    # a pair of 5s from 5♠ 5♠ 5♦ with 6♠ 7♠: spend the diamond and a spade... keep spades
    h2 = hand("S5 D5 C5 S6 S7")
    pair = realize(shape_of(action(T.PAIR, rank("5"))), h2, level)
    assert 4 * rank("5") + 1 not in pair  # the spade 5 stays with 6♠ 7♠
    # full-house pair: an exact natural pair before breaking trips or using a wild
    h3 = hand("S9 H9 D9 S4 H4 SK HK DK H2")
    fh = realize(shape_of(action(T.FULL_HOUSE, rank("9"))), h3, level)
    assert sorted(c // 4 for c in fh) == [rank("4")] * 2 + [rank("9")] * 3


def hand_list(text: str) -> list[int]:
    from tom_envs.games.guandan.text import parse_cards

    return parse_cards(text)


def test_numpy_and_python_generators_agree_on_game_positions() -> None:
    positions = game_positions(6, seed=3)
    assert len(positions) > 300
    for h, level, cur in positions:
        assert legal_plays(h, level, cur).tolist() == legal_plays_py(h, level, cur)


def test_against_brute_force_on_random_positions() -> None:
    """Small hands (brute force is exponential): the exact same legal set, every realised play
    is a valid play of its shape. ``python benchmarks/guandan.py legal`` runs 10,000."""
    rng = np.random.default_rng(2024)
    positions = [p for p in game_positions(3, seed=5) if sum(p[0]) <= 8][:25]
    while len(positions) < 60:
        level = int(rng.integers(13))
        h = random_hand(rng, int(rng.integers(1, 9)), level)
        cur = None
        if rng.random() < 0.6:
            options = legal_plays_py(random_hand(rng, 6, level), level, None)
            if options:
                cur = options[int(rng.integers(len(options)))]
        positions.append((h, level, cur))
    for h, level, cur in positions:
        assert check_position(h, level, cur) == [], (h.hex(), level, cur)


def test_play_actions_equal_the_numpy_generator_for_every_kind_of_play_to_beat() -> None:
    """The engine's legal actions (per-hand tables of each type, bombs answering a non-bomb
    unfiltered) equal the vectorised generator's shapes, for leads and for plays of every type."""
    rng = np.random.default_rng(7)
    positions = game_positions(4, seed=9)
    currents = [None, *range(len(SHAPES))]
    for h, level, cur in positions[:150]:
        for c in (cur, *rng.choice(currents[1:], size=6).tolist(), None):
            want = tuple(SHAPE_BASE + i for i in legal_plays(h, level, c).tolist())
            assert legal_play_actions(h, level, c) == (want if c is None else (0, *want))
            if c is not None:
                only = -1 if SHAPES[c].is_bomb else int(SHAPES[c].type)
                mask = playable_mask(h, level)
                kept = [i for i in np.flatnonzero(mask).tolist()
                        if SHAPES[i].is_bomb or int(SHAPES[i].type) == only]  # fmt: skip
                assert playable(h, level, only) == kept
