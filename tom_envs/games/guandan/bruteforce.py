"""An independent brute-force enumerator of legal plays, to check :mod:`legal` against.

It shares no logic with the fast generator: it enumerates every sub-multiset of the hand (up to 10
cards), substitutes every wild card by every rank (and by the suit of the natural cards or by
another suit: the only suit question the rules ask is "are all five cards of one suit?"), classifies
each concrete set of cards from first principles, and compares plays with its own ranking. Plays
are returned as catalogue keys ``(type, key, need, wilds, suit)`` and mapped to shape indices at
the end, so a play missing from the catalogue is reported, not hidden. Exponential in the hand
size: meant for hands of up to about 13 cards.

:func:`check_position` compares the engine's generators with it at one position;
:func:`game_positions` and :func:`random_hand` make positions (``tests/games/guandan/test_legal.py``
checks a sample, ``benchmarks/guandan.py legal`` 10,000).
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from itertools import combinations_with_replacement, pairwise

import numpy as np

from tom_envs.games.guandan.cards import HR_CODE, SB_CODE, WILD_CODE, Hand, wild_kind
from tom_envs.games.guandan.combos import ComboType, find_shape

Play = tuple[int, int, tuple[int, ...], int, int]


def _runs(ranks: set[int]) -> list[int]:
    """Top positions of the ways ``ranks`` (non-joker rank indices) form consecutive positions."""
    out = []
    for low_ace in (False, True):
        pos = sorted(0 if (r == 12 and low_ace) else r + 1 for r in ranks)
        if all(b - a == 1 for a, b in pairwise(pos)):
            out.append(pos[-1])
    return sorted(set(out))


def classify(cards: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """Every reading of concrete cards ``(rank code, suit)`` as ``(type, key, suit)``."""
    return _classify(tuple(sorted(cards)))


@lru_cache(maxsize=1 << 16)
def _classify(cards: tuple[tuple[int, int], ...]) -> list[tuple[int, int, int]]:
    n = len(cards)
    cnt = Counter(r for r, _ in cards)
    jokers = cnt[SB_CODE] + cnt[HR_CODE]
    out: list[tuple[int, int, int]] = []
    single_rank = len(cnt) == 1
    code = next(iter(cnt))
    if n == 1:
        out.append((ComboType.SINGLE, code, -1))
    if n == 2 and single_rank:
        out.append((ComboType.PAIR, code, -1))
    if n == 3 and single_rank and code < 13:
        out.append((ComboType.TRIPS, code, -1))
    if 4 <= n <= 10 and single_rank and code < 13:
        out.append((ComboType.BOMB, code, -1))
    if n == 4 and cnt == Counter({SB_CODE: 2, HR_CODE: 2}):
        out.append((ComboType.JOKER_BOMB, HR_CODE, -1))
    if n == 5 and len(cnt) == 2:
        (a, na), (_b, nb) = sorted(cnt.items(), key=lambda kv: -kv[1])
        if na == 3 and nb == 2 and a < 13:
            out.append((ComboType.FULL_HOUSE, a, -1))
    if n == 5 and len(cnt) == 5 and not jokers:
        suits = {s for _, s in cards}
        for top in _runs(set(cnt)):
            if len(suits) == 1:
                out.append((ComboType.STRAIGHT_FLUSH, top, next(iter(suits))))
            else:
                out.append((ComboType.STRAIGHT, top, -1))
    if n == 6 and not jokers:
        if len(cnt) == 3 and all(v == 2 for v in cnt.values()):
            out += [(ComboType.TUBE, top, -1) for top in _runs(set(cnt))]
        if len(cnt) == 2 and all(v == 3 for v in cnt.values()):
            out += [(ComboType.PLATE, top, -1) for top in _runs(set(cnt))]
    return out


def _subsets(hand: Hand, max_size: int = 10) -> list[dict[int, int]]:
    kinds = [c for c in range(54) if hand[c]]
    out: list[dict[int, int]] = []

    def rec(i: int, chosen: dict[int, int], size: int) -> None:
        if i == len(kinds):
            if size:
                out.append(dict(chosen))
            return
        c = kinds[i]
        for k in range(min(hand[c], max_size - size) + 1):
            if k:
                chosen[c] = k
            rec(i + 1, chosen, size + k)
        chosen.pop(c, None)

    rec(0, {}, 0)
    return out


#: Most distinct ranks a combination of each size can hold (jokers count as ranks).
_MAX_CODES = {1: 1, 2: 1, 3: 1, 4: 2, 5: 5, 6: 3, 7: 1, 8: 1, 9: 1, 10: 1}


def enumerate_plays(hand: Hand, level: int) -> set[Play]:
    """Every distinct play ``(type, key, need, wilds, suit)`` of ``hand`` at ``level``."""
    plays: set[Play] = set()
    for sub in _subsets(hand):
        plays |= readings(sub, level)
    return plays


def readings(sub: dict[int, int], level: int) -> set[Play]:
    """Every reading of one set of cards (``kind -> count``) as a play."""
    wk = wild_kind(level)
    w = sub.get(wk, 0)
    naturals = [(c, k) for c, k in sub.items() if c != wk and k]
    size = w + sum(k for _, k in naturals)
    codes = {52 if c == 52 else 53 if c == 53 else c // 4 for c, _ in naturals}
    if not size or size > 10 or len(codes) > _MAX_CODES[size]:
        return set()  # no combination of this size has that many distinct ranks
    plays: set[Play] = set()
    need = [0] * 15
    concrete: list[tuple[int, int]] = []
    for c, k in naturals:
        code = SB_CODE if c == 52 else HR_CODE if c == 53 else c // 4
        need[code] += k
        concrete += [(code, -1 if c >= 52 else c % 4)] * k
    need_t = tuple(need)
    if not naturals:  # only wild cards: the natural reading
        for t, _, s in classify([(level, 0)] * w):
            plays.add((int(t), WILD_CODE, need_t, w, s))
        return plays
    nat_suits = {s for _, s in concrete}
    mono = len(nat_suits) == 1 and -1 not in nat_suits
    suit_choices = [next(iter(nat_suits)), 4] if mono else [4]  # 4: "some other suit"
    for ranks in combinations_with_replacement(range(13), w):
        for ws in suit_choices:
            cards = concrete + [(r, ws) for r in ranks]
            for t, key, s in classify(cards):
                if t == ComboType.STRAIGHT and mono:
                    continue  # a same-suit run is a straight flush, not a straight
                plays.add((int(t), key, need_t, w, s))
    return plays


def shapes_of_cards(cards: list[int], level: int) -> set[int]:
    """Catalogue shapes that exactly these cards can be played as (empty if none)."""
    sub: dict[int, int] = {}
    for c in cards:
        sub[c] = sub.get(c, 0) + 1
    return to_indices(readings(sub, level))[0]


def _value(code: int, level: int) -> int:
    if code in (level, WILD_CODE):
        return 15
    return {SB_CODE: 16, HR_CODE: 17}.get(code, code + 2)


def _rank(play: Play, level: int) -> tuple[int, int]:
    """``(class, value)``: class -1 for non-bombs; bombs 0..8 (4, 5, SF, 6..10, jokers)."""
    t, key, need, w, _ = play
    if t == ComboType.JOKER_BOMB:
        return (8, 0)
    if t == ComboType.STRAIGHT_FLUSH:
        return (2, key)
    if t == ComboType.BOMB:
        size = sum(need) + w
        return ({4: 0, 5: 1}.get(size, size - 3), _value(key, level))
    if t in (ComboType.STRAIGHT, ComboType.TUBE, ComboType.PLATE):
        return (-1, key)
    return (-1, _value(key, level))


def legal_plays_bruteforce(
    hand: Hand, level: int, current: Play | None, plays: set[Play] | None = None
) -> set[Play]:
    """The plays of ``hand`` legal on ``current`` (``None``: leading); ``plays``: all plays of
    ``hand`` if already enumerated."""
    plays = enumerate_plays(hand, level) if plays is None else plays
    if current is None:
        return plays
    cls, val = _rank(current, level)
    out = set()
    for p in plays:
        pc, pv = _rank(p, level)
        if cls >= 0:
            if pc >= 0 and (pc, pv) > (cls, val):
                out.add(p)
        elif pc >= 0 or (p[0] == current[0] and pv > val):
            out.add(p)
    return out


def to_indices(plays: set[Play]) -> tuple[set[int], set[Play]]:
    """Catalogue shape indices of plays (type, key, suit, bomb size), and plays it lacks."""
    found, missing = set(), set()
    for t, key, need, w, s in plays:
        i = find_shape(t, key, s, sum(need) + w)
        if i is None:
            missing.add((t, key, need, w, s))
        else:
            found.add(i)
    return found, missing


# ------------------------------------------------------------ the generator against it
def game_positions(n_deals: int, seed: int) -> list[tuple[bytes, int, int | None]]:
    """``(hand, level, shape to beat or None)`` at every play decision of random-play deals."""
    from tom_envs.games.guandan.combos import SHAPE_BASE
    from tom_envs.games.guandan.rules import PLAY, GuandanConfig, GuandanGame

    out = []
    rng = np.random.default_rng(seed)
    for d in range(n_deals):
        level = int(rng.integers(13))
        game = GuandanGame(GuandanConfig(start_levels=(level, level)))
        state = game.initial_state(np.random.default_rng([seed, d]))
        while not game.is_terminal(state):
            p = state.to_act
            legal = game.legal_actions(state, p)
            if state.phase == PLAY:
                cur = None if state.lead is None else state.lead[1] - SHAPE_BASE
                out.append((state.hands[p], state.level, cur))
            state = game.step(state, {p: legal[rng.integers(len(legal))]}, rng).state
    return out


def random_hand(rng: np.random.Generator, n: int, level: int) -> bytes:
    from tom_envs.games.guandan.cards import full_deck, hand_from_cards, wild_kind

    wk = wild_kind(level)
    wilds = int(rng.integers(0, min(2, n) + 1))
    deck = [c for c in full_deck() if c != wk]
    cards = list(rng.choice(deck, size=n - wilds, replace=False)) + [wk] * wilds
    return hand_from_cards(int(c) for c in cards)


def check_position(hand: bytes, level: int, current: int | None) -> list[str]:
    """Problems found at one position (empty when the generator is exact)."""
    from tom_envs.games.guandan.combos import SHAPES, realize
    from tom_envs.games.guandan.legal import legal_plays, legal_plays_py

    problems = []
    plays = enumerate_plays(hand, level)
    if current is not None:
        shape = SHAPES[current]
        size_vector = (shape.size,) + (0,) * 14  # the brute force reads only the size from it
        to_beat = (int(shape.type), shape.key, size_vector, 0, shape.suit)
        plays = legal_plays_bruteforce(hand, level, to_beat, plays)
    expected, missing = to_indices(plays)
    if missing:
        problems.append(f"plays missing from the catalogue: {sorted(missing)[:3]}")
    got = set(legal_plays_py(hand, level, current))
    if legal_plays(hand, level, current).tolist() != sorted(got):
        problems.append("the numpy and pure-Python generators differ")
    if got != expected:
        problems.append(
            f"generator {sorted(got - expected)[:5]} extra, {sorted(expected - got)[:5]} missing"
        )
    for i in got:
        try:
            cards = realize(SHAPES[i], hand, level)
        except ValueError as exc:
            problems.append(f"cannot realise {SHAPES[i]}: {exc}")
            continue
        if i not in shapes_of_cards(list(cards), level):
            problems.append(f"realised cards {cards} are not {SHAPES[i]}")
    return problems
