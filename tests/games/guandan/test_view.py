"""What a player sees: its own hand only, egocentric seats, and a vector with the documented
layout. Other hands never reach the vector or the text."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tom_envs.games.guandan.encode import OBS_SIZE, OFFSETS, PIECES, STATE_SIZE, wild_features
from tom_envs.games.guandan.env import make_bundle
from tom_envs.games.guandan.view import NEXT, PARTNER, PREVIOUS

from .helpers import hand, rank


def _mid_deal(seed: int = 0, moves: int = 30):
    bundle = make_bundle()
    game = bundle.game
    rng = np.random.default_rng(seed)
    s = game.initial_state(np.random.default_rng(seed))
    for _ in range(moves):
        p = s.to_act
        legal = game.legal_actions(s, p)
        s = game.step(s, {p: legal[rng.integers(len(legal))]}, rng).state
    return bundle, s


def _swap_hidden(s, keep: int):
    """Exchange equal numbers of cards between the two players the keeper cannot see."""
    a, b = [p for p in range(4) if p != keep][:2]
    ha, hb = list(s.hands[a]), list(s.hands[b])
    ca = next(c for c in range(54) if ha[c] and not hb[c])
    cb = next(c for c in range(54) if hb[c] and not ha[c])
    ha[ca] -= 1
    hb[ca] += 1
    hb[cb] -= 1
    ha[cb] += 1
    hands = list(s.hands)
    hands[a], hands[b] = bytes(ha), bytes(hb)
    return replace(s, hands=tuple(hands))


def test_other_hands_are_hidden_in_view_vector_and_text() -> None:
    bundle, s = _mid_deal()
    game, enc, text = bundle.game, bundle.encoder, bundle.text
    for keep in range(4):
        other = _swap_hidden(s, keep)
        assert other.hands != s.hands
        v1, v2 = game.observe(s, keep), game.observe(other, keep)
        assert v1 == v2, "the view changed with cards the player cannot see"
        assert np.array_equal(enc.encode(v1), enc.encode(v2))
        assert text.text_observation(v1) == text.text_observation(v2)
    # and the state vector (for centralised critics) does see them
    assert not np.array_equal(enc.encode_state(s), enc.encode_state(_swap_hidden(s, 0)))


def test_egocentric_seats() -> None:
    bundle, s = _mid_deal(1)
    for p in range(4):
        v = bundle.game.observe(s, p)
        assert v.hand == s.hands[p]
        assert v.cards_left == tuple(sum(s.hands[(p + d) % 4]) for d in range(4))
        assert v.my_level == s.levels[p % 2] and v.their_level == s.levels[1 - p % 2]
        for m_abs, m_rel in zip(s.history, v.history, strict=True):
            assert m_rel == ((m_abs[0] - p) % 4, *m_abs[1:])
        if s.lead is not None:
            assert v.lead[0] == (s.lead[0] - p) % 4
    assert (NEXT, PARTNER, PREVIOUS) == (1, 2, 3)


def test_vector_layout() -> None:
    assert sum(size for _, size in PIECES) == OBS_SIZE == 526
    assert OFFSETS["unseen"] == 66 and OFFSETS["phase"] == 513  # DanZero's 513 first
    assert STATE_SIZE == 525
    bundle, s = _mid_deal(2)
    for p in range(4):
        v = bundle.game.observe(s, p)
        x = bundle.encoder.encode(v)
        assert x.shape == (OBS_SIZE,) and x.dtype == np.float32
        assert x.min() >= 0 and x.max() <= 2
        own = x[:54]
        unseen = x[OFFSETS["unseen"] : OFFSETS["unseen"] + 54]
        others = sum(np.frombuffer(s.hands[q], np.uint8) for q in range(4) if q != p)
        assert np.array_equal(own, np.frombuffer(s.hands[p], np.uint8))
        assert np.array_equal(unseen, others), "unseen = the other three hands, summed"
        for name, rel in (("left_next", 1), ("left_partner", 2), ("left_previous", 3)):
            block = x[OFFSETS[name] : OFFSETS[name] + 28]
            assert block.sum() == 1 and block.argmax() == v.cards_left[rel]
        assert x[OFFSETS["current_level"] + v.level] == 1


def test_wild_features() -> None:
    level = rank("2")
    assert not wild_features(hand("S3 S4 S5"), level).any()
    f = wild_features(hand("S3 S4 S5 S6 H2 S9 C9 D9 H9"), level)
    assert f[0] == 1 and f[1] == 0  # one wild
    assert f[2] == 1  # ♠3-6 + wild: a straight flush
    assert f[3] == 1 and f[4] == 1 and f[5] == 0  # 9999 + wild: bombs of 4 and 5


def test_observe_caches_by_state_identity() -> None:
    bundle, s = _mid_deal(3)
    game = bundle.game
    assert game.observe(s, 0) is game.observe(s, 0)
    twin = replace(s)
    assert game.observe(twin, 0) == game.observe(s, 0)


def _reference_vector(v) -> np.ndarray:
    """The observation built entry by entry in floats, straight from the documented layout."""
    o = OFFSETS
    out = np.zeros(OBS_SIZE, dtype=np.float32)
    h = np.asarray(list(v.hand), dtype=np.float32)
    out[:54] = h
    out[o["wild_features"] : o["wild_features"] + 12] = wild_features(v.hand, v.level)
    played = np.array([list(p) for p in v.played], dtype=np.float32)
    out[o["unseen"] : o["unseen"] + 54] = 2 - h - played.sum(axis=0)
    for name, move in (("last_action", v.lead), ("partner_last_action", v.partner_last())):
        for c in () if move is None else move[2]:
            out[o[name] + c] += 1
    for rel, name in enumerate(("played_next", "played_partner", "played_previous"), start=1):
        out[o[name] : o[name] + 54] = played[rel]
    for rel, name in enumerate(("left_next", "left_partner", "left_previous"), start=1):
        out[o[name] + v.cards_left[rel]] = 1
    out[o["my_level"] + v.my_level] = out[o["their_level"] + v.their_level] = 1
    out[o["current_level"] + v.level] = 1
    if v.phase in ("tribute", "return", "play"):
        out[o["phase"] + ("tribute", "return", "play").index(v.phase)] = 1
    out[o["leading"]], out[o["level_is_mine"]] = float(v.leading), float(v.level_is_mine)
    for rel in v.finished:
        if v.cards_left[rel] == 0:
            out[o["finished"] + rel] = 1
    if v.lead is not None:
        out[o["lead_owner"] + v.lead[0]] = 1
    return out


def test_vector_equals_the_float_reference_through_whole_matches() -> None:
    """The encoder assembles the vector as bytes; every entry equals the float layout, in every
    phase (tribute and return included: a 28-card hand), for every seat."""
    bundle = make_bundle(match=True, max_deals=3)
    game, enc = bundle.game, bundle.encoder
    rng = np.random.default_rng(4)
    s = game.initial_state(np.random.default_rng(4))
    seen = set()
    while not game.is_terminal(s):
        seen.add(s.phase)
        for p in range(4):
            v = game.observe(s, p)
            assert np.array_equal(enc.encode(v), _reference_vector(v)), (s.phase, p)
        legal = game.legal_actions(s, s.to_act)
        s = game.step(s, {s.to_act: legal[rng.integers(len(legal))]}, rng).state
    assert seen == {"tribute", "return", "play"}


def test_vector_of_a_hand_made_position_with_negative_unseen_counts() -> None:
    """A view whose hand and played cards hold more than two of a kind (not a real deal) gets the
    float formula's negative ``unseen`` entries, not a wrapped byte."""
    bundle, s = _mid_deal(5)
    v = bundle.game.observe(s, 0)
    played = list(v.played)
    played[1] = bytes([2] * 54)
    odd = replace(v, played=tuple(played))
    x = bundle.encoder.encode(odd)
    assert x[OFFSETS["unseen"] : OFFSETS["unseen"] + 54].min() < 0
    assert np.array_equal(x, _reference_vector(odd))


def test_wild_flags_equal_the_numpy_definition_on_random_hands() -> None:
    from tom_envs.games.guandan.bruteforce import random_hand
    from tom_envs.games.guandan.encode import _wild_bytes

    rng = np.random.default_rng(11)
    with_wild = 0
    for _ in range(3000):
        level = int(rng.integers(13))
        h = random_hand(rng, int(rng.integers(1, 28)), level)
        want = wild_features(h, level)
        with_wild += int(want[0])
        assert _wild_bytes(h, level) == want.astype(np.uint8).tobytes(), (h.hex(), level)
    assert with_wild > 500
