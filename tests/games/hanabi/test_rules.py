"""Hanabi rules: table-driven move sequences, edge cases and known values (HLE's rules)."""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.core.game import IllegalActionError
from tom_envs.games.hanabi.cards import knowledge_code
from tom_envs.games.hanabi.rules import HanabiConfig, HanabiGame
from tom_envs.games.hanabi.state import DISCARD, PLAY, REVEAL_COLOR, REVEAL_RANK

from .decks import act, card, cards, deck_with, discard, play, reveal_color, reveal_rank, start


# ------------------------------------------------------------------ configuration
@pytest.mark.parametrize(
    ("players", "hand", "actions"),
    [(2, 5, 20), (3, 5, 30), (4, 4, 38), (5, 4, 48)],
)
def test_sizes_by_player_count(players: int, hand: int, actions: int) -> None:
    game = HanabiGame(HanabiConfig(players=players))
    assert game.hand_size == hand
    assert game.num_actions == actions  # HLE's MaxMoves: 2H + (N-1)(C+R)
    assert game.num_players == players
    s = game.initial_state(np.random.default_rng(0))
    assert [len(h) for h in s.hands] == [hand] * players
    assert s.deck_size == 50 - players * hand


def test_full_deck_composition() -> None:
    game = HanabiGame()
    deck = game.full_deck
    assert len(deck) == 50
    for color in "RYGWB":
        counts = [deck.count(card(f"{color}{r}")) for r in range(1, 6)]
        assert counts == [3, 2, 2, 2, 1]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"players": 1},
        {"players": 6},
        {"colors": 0},
        {"ranks": 6},
        {"hand_size": 0},
        {"max_information_tokens": 0},
        {"max_life_tokens": 0},
        {"bomb_score": "half"},
        {"probes": "some"},
        {"names": ("Al", "Al")},
        {"players": 5, "colors": 1, "ranks": 2},  # 5 cards cannot deal five hands
    ],
)
def test_config_validation(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        HanabiConfig(**kwargs)


def test_tags_and_bounds() -> None:
    game = HanabiGame()
    assert (game.tags.dynamics, game.tags.chance, game.tags.utility) == (
        "sequential",
        "stochastic",
        "identical",
    )
    assert game.reward_range == (-24.0, 1.0)
    assert HanabiGame(HanabiConfig(bomb_score="stacks")).reward_range == (0.0, 1.0)
    assert game.max_steps == 2 * 50 + 8 + 5


# ------------------------------------------------------------------ start
def test_start_state_deals_from_the_front_player_0_first() -> None:
    game, s = start(["R1 R2 R3 R4 R5", "Y1 Y2 Y3 Y4 Y5"], draws="G1")
    assert s.hands == (tuple(cards("R1 R2 R3 R4 R5")), tuple(cards("Y1 Y2 Y3 Y4 Y5")))
    assert (s.current, s.information_tokens, s.life_tokens, s.fireworks) == (0, 8, 3, (0,) * 5)
    assert s.deck[s.deck_pos] == card("G1")
    assert s.turns_to_play == 2 and s.history == () and s.discards == ()
    # all tokens in the box: no discard; every play; the reveals that touch Y cards
    assert s.legal == (
        5,
        6,
        7,
        8,
        9,
        reveal_color(game, "Y"),
        *(reveal_rank(game, r) for r in range(1, 6)),
    )
    assert game.legal_actions(s, 1) == ()
    assert game.current_players(s) == (0,)


def test_state_from_deck_validates() -> None:
    game = HanabiGame()
    with pytest.raises(ValueError, match="permutation"):
        game.state_from_deck([0] * 50)
    with pytest.raises(ValueError, match="permutation"):
        game.state_from_deck(game.full_deck[:-1])


def test_initial_state_is_seeded() -> None:
    game = HanabiGame()
    a = game.initial_state(np.random.default_rng(5))
    b = game.initial_state(np.random.default_rng(5))
    c = game.initial_state(np.random.default_rng(6))
    assert a == b and hash(a) == hash(b)
    assert a.deck != c.deck
    assert sorted(a.deck) == sorted(game.full_deck)


# ------------------------------------------------------------------ plays and discards
def test_successful_play_scores_and_draws_to_the_end() -> None:
    game, s = start(["R1 Y3 G2 B4 W5", "Y1 Y2 R2 R3 R4"], draws="B1 B2")
    r = game.step(s, {0: play(game, 0)}, None)  # type: ignore[arg-type]
    t = r.state
    assert r.rewards == (1.0, 1.0) and r.events == ("play",)
    assert t.fireworks == (1, 0, 0, 0, 0)
    assert t.hands[0] == tuple(cards("Y3 G2 B4 W5 B1"))  # shifted left, new card last
    assert t.deck_size == s.deck_size - 1 and t.current == 1
    item = t.history[-1]
    assert (item.kind, item.card_index, item.color, item.rank, item.scored, item.drew) == (
        PLAY,
        0,
        0,
        0,
        True,
        True,
    )
    assert t.discards == () and t.life_tokens == 3


def test_misplay_loses_a_life_and_discards() -> None:
    game, s = start(["R2 Y3 G2 B4 W5", "Y1 Y2 R1 R3 R4"])
    r = game.step(s, {0: play(game, 0)}, None)  # type: ignore[arg-type]
    t = r.state
    assert r.rewards == (0.0, 0.0) and r.events == ("misplay",)
    assert (t.life_tokens, t.fireworks, t.discards) == (2, (0,) * 5, (card("R2"),))
    assert not t.history[-1].scored
    assert t.information_tokens == 8


def test_third_misplay_ends_with_score_zero() -> None:
    game, s = start(["R1 Y3 Y4 Y5 G3", "B3 B4 B5 W2 W3"])
    s = act(game, s, play(game, 0))  # R1 scores
    assert game.score(s) == 1
    for _ in range(3):  # Y3 (p1: B3), Y4 (p1: B4)... every misplay
        s = act(game, s, play(game, 0))
        if game.is_terminal(s):
            break
    # lives: p1 B3 (-1), p0 Y3 (-1), p1 B4 (-1) -> over
    assert s.life_tokens == 0 and game.is_terminal(s)
    assert game.score(s) == 0
    assert sum(h.kind == PLAY and not h.scored for h in s.history) == 3
    assert s.current == -1 and s.legal == ()


def test_bomb_out_reward_takes_back_the_score() -> None:
    rewards = {}
    for bomb in ("zero", "stacks"):
        game, s = start(["R1 R2 R3 Y3 Y4", "G3 G4 G5 B3 B4"], max_life_tokens=1, bomb_score=bomb)
        total = 0.0
        for a in (play(game, 0), reveal_rank(game, 3), play(game, 0), reveal_rank(game, 3)):
            total += game.step(s, {s.current: a}, None).rewards[0]  # type: ignore[arg-type]
            s = act(game, s, a)
        r = game.step(s, {0: play(game, 2)}, None)  # type: ignore[arg-type]  # Y3: misplay
        rewards[bomb] = (total, r.rewards[0], game.score(r.state), r.events)
    assert rewards["zero"] == (2.0, -2.0, 0, ("misplay", "game_over"))
    assert rewards["stacks"] == (2.0, 0.0, 2, ("misplay", "game_over"))


def test_discard_is_illegal_with_every_token_and_regains_one() -> None:
    game, s = start(["R1 R2 R3 R4 R5", "Y1 Y2 Y3 Y4 Y5"])
    with pytest.raises(IllegalActionError, match="illegal"):
        game.step(s, {0: discard(game, 0)}, None)  # type: ignore[arg-type]
    s = act(game, s, reveal_color(game, "Y"))
    assert s.information_tokens == 7
    assert discard(game, 0) in s.legal
    s = act(game, s, discard(game, 4))
    assert s.information_tokens == 8 and s.discards == (card("Y5"),)
    item = s.history[-1]
    assert (item.kind, item.card_index, item.information_token) == (DISCARD, 4, True)
    assert discard(game, 0) not in s.legal


def test_completing_a_stack_regains_a_token_unless_full() -> None:
    game, s = start(["R1 R2 R3 R4 R5", "Y1 Y2 Y3 Y4 Y5"])
    s = act(game, s, play(game, 0))  # R1
    s = act(game, s, reveal_color(game, "R"))  # p1 spends a token: 7
    for _ in range(3):  # R2, R3, R4 with p1 revealing in between
        s = act(game, s, play(game, 0))
        s = act(game, s, reveal_color(game, "R"))
    assert s.information_tokens == 4
    s = act(game, s, play(game, 0))  # R5 completes red
    assert s.fireworks[0] == 5 and s.information_tokens == 5
    assert s.history[-1].information_token
    # at the maximum, a completed stack gives nothing
    game, s = start(["Y1 Y2 Y3 Y4 Y5", "R1 R2 R3 R4 R5"])
    s = act(game, s, play(game, 0))
    for _ in range(4):
        s = act(game, s, play(game, 0))  # p1: R1 .. R4
        s = act(game, s, play(game, 0))  # p0: Y2 .. Y5
    s = act(game, s, play(game, 0))  # p1: R5
    assert s.fireworks[:2] == (5, 5) and s.information_tokens == 8
    assert not [h for h in s.history if h.information_token]


# ------------------------------------------------------------------ reveals and knowledge
def test_reveal_updates_knowledge_positively_and_negatively() -> None:
    game, s = start(["B1 B2 B3 B4 B5", "R2 Y2 R3 W1 R5"])
    lay = game.layout
    s = act(game, s, reveal_color(game, "R"))
    item = s.history[-1]
    assert (item.kind, item.target, item.color, item.reveal_mask, item.newly_revealed) == (
        REVEAL_COLOR,
        1,
        0,
        0b10101,
        0b10101,
    )
    assert s.information_tokens == 7
    red_only = knowledge_code(0b00001, 0b11111, True, False)
    not_red = knowledge_code(0b11110, 0b11111, False, False)
    assert game.card_knowledge(s, 1) == (red_only, not_red, red_only, not_red, red_only)
    assert game.card_knowledge(s, 0) == (knowledge_code(0b11111, 0b11111, False, False),) * 5
    s = act(game, s, reveal_rank(game, 1))  # p1 reveals p0's... p0 has B1: touches card 0
    assert s.history[-1].reveal_mask == 0b00001 and s.history[-1].target == 0
    s = act(game, s, reveal_rank(game, 2))  # p0 reveals 2s to p1: R2 and Y2
    item = s.history[-1]
    assert (item.kind, item.rank, item.reveal_mask, item.newly_revealed) == (
        REVEAL_RANK,
        1,
        0b00011,
        0b00011,
    )
    assert game.card_knowledge(s, 1)[:3] == (
        knowledge_code(0b00001, 0b00010, True, True),  # R2: fully known
        knowledge_code(0b11110, 0b00010, False, True),  # Y2: a 2, not red
        knowledge_code(0b00001, 0b11101, True, False),  # R3: red, not a 2
    )
    s = act(game, s, reveal_rank(game, 2, 1))  # p1 -> p0: 2s (B2 at index 1)
    s = act(game, s, reveal_rank(game, 2))  # again 2s to p1: nothing new
    assert s.history[-1].newly_revealed == 0 and s.history[-1].reveal_mask == 0b00011
    assert lay.width == 35


def test_knowledge_follows_the_cards_when_a_card_leaves() -> None:
    game, s = start(["R1 G1 Y1 W1 B1", "R2 Y2 G2 W2 B2"])
    s = act(game, s, play(game, 0))  # R1
    s = act(game, s, reveal_color(game, "G"))  # p1 reveals green: p0's G1 is now card 0
    k = game.card_knowledge(s, 0)
    assert k[0] == knowledge_code(0b00100, 0b11111, True, False)
    s = act(game, s, play(game, 0))  # p0 plays G1 (card 0): knowledge shifts left
    k = game.card_knowledge(s, 0)
    assert k[0] == knowledge_code(0b11011, 0b11111, False, False)  # Y1: not green
    assert k[-1] == knowledge_code(0b11111, 0b11111, False, False)  # the new card


def test_a_reveal_needs_a_token_and_a_touched_card() -> None:
    game, s = start(["R1 R2 R3 R4 R5", "Y1 Y2 Y3 Y4 Y5"], max_information_tokens=1)
    assert reveal_color(game, "G") not in s.legal  # Bob has no green card
    with pytest.raises(IllegalActionError):
        game.step(s, {0: reveal_color(game, "G")}, None)  # type: ignore[arg-type]
    s = act(game, s, reveal_color(game, "Y"))
    assert s.information_tokens == 0
    assert all(a < 2 * game.hand_size for a in s.legal)  # only plays and discards


# ------------------------------------------------------------------ the end of the game
def test_final_round_after_the_last_card() -> None:
    """Once the last card is drawn, every player moves exactly once more."""
    game = HanabiGame(HanabiConfig(colors=2))  # a 20-card deck: 10 dealt, 10 to draw
    s = game.initial_state(np.random.default_rng(0))
    moves = 0
    while s.deck_size > 0:
        a = (
            discard(game, 0)
            if discard(game, 0) in s.legal
            else reveal_rank(game, 1 + game.card_rank[game.observe(s, s.current).hands[0][0]])
        )
        s = act(game, s, a)
        moves += 1
    assert not game.is_terminal(s) and s.turns_to_play == 2
    s = act(game, s, discard(game, 0) if discard(game, 0) in s.legal else play(game, 0))
    assert not game.is_terminal(s) and s.turns_to_play == 1
    assert len(s.hands[s.history[-1].player]) == 4  # no card to draw
    assert not s.history[-1].drew
    s = act(game, s, s.legal[0])
    assert game.is_terminal(s) and s.turns_to_play == 0


def test_empty_deck_from_the_start() -> None:
    game = HanabiGame(HanabiConfig(colors=1))  # 10 cards: both hands, nothing to draw
    s = game.initial_state(np.random.default_rng(0))
    assert s.deck_size == 0
    s = act(game, s, s.legal[0])
    assert not game.is_terminal(s)
    s = act(game, s, s.legal[0])
    assert game.is_terminal(s)


def test_a_perfect_game_ends_at_25() -> None:
    game = HanabiGame()
    order = [f"{c}{r}" for c in "RYGWB" for r in range(1, 6)]
    p0, p1 = order[0::2], order[1::2]
    draws = [x for pair in zip(p0[5:], p1[5:], strict=False) for x in pair] + p0[len(p1) :][-1:]
    deck = deck_with(game, [" ".join(p0[:5]), " ".join(p1[:5])], " ".join(draws))
    s = game.state_from_deck(deck)
    total = 0.0
    for _ in range(25):
        r = game.step(s, {s.current: play(game, 0)}, None)  # type: ignore[arg-type]
        total += r.rewards[0]
        s = r.state
    assert game.is_terminal(s) and game.score(s) == 25 and total == 25.0
    assert s.history[-1].scored and r.events == ("play", "game_over")
    assert s.deck_size > 0  # ended by the stacks, not by the deck


# ------------------------------------------------------------------ values
def test_states_are_hashable_values_and_steps_are_pure() -> None:
    game, s = start(["R1 R2 R3 R4 R5", "Y1 Y2 Y3 Y4 Y5"])
    before = (s.hands, s.knowledge, s.fireworks, s.information_tokens, s.history)
    t1 = act(game, s, reveal_color(game, "Y"))
    t2 = act(game, s, reveal_color(game, "Y"))
    assert (s.hands, s.knowledge, s.fireworks, s.information_tokens, s.history) == before
    assert t1 == t2 and hash(t1) == hash(t2) and t1 is not t2
    assert {t1, t2, s} == {s, t1}
    assert t1.deck is s.deck  # the shuffled deck is shared, never copied


def test_hle_move_ids() -> None:
    game = HanabiGame(HanabiConfig(players=3))
    kinds = [(m.kind, m.card_index, m.target_offset, m.color, m.rank) for m in game.moves]
    assert kinds[0] == (DISCARD, 0, 0, -1, -1)
    assert kinds[5] == (PLAY, 0, 0, -1, -1)
    assert kinds[10] == (REVEAL_COLOR, -1, 1, 0, -1)
    assert kinds[15] == (REVEAL_COLOR, -1, 2, 0, -1)
    assert kinds[20] == (REVEAL_RANK, -1, 1, -1, 0)
    assert kinds[29] == (REVEAL_RANK, -1, 2, -1, 4)
    assert len(kinds) == 30


def test_the_deal_shuffles_as_generator_permutation_does() -> None:
    """``initial_state`` shuffles a list with ``rng.shuffle``; the deck and the stream after it
    are exactly those of ``rng.permutation`` of the deck array (the order every golden game and
    the peers' replays were recorded with)."""
    game = HanabiGame(HanabiConfig())
    for seed in range(50):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        state = game.initial_state(a)
        assert state.deck == tuple(b.permutation(np.array(game.full_deck)).tolist())
        assert a.random() == b.random()


# ------------------------------------------------------------------ the fast paths against a plain model
class _PlainHanabi:
    """The rules' derived values (legal moves, card knowledge, a reveal's touched and newly
    revealed cards) from sets and lists, with none of the engine's tables or caches."""

    def __init__(self, game: HanabiGame) -> None:
        self.game = game
        cfg = game.config
        self.n, self.h, self.c, self.r = cfg.players, cfg.cards_per_hand, cfg.colors, cfg.ranks
        every = {(c, r) for c in range(self.c) for r in range(self.r)}
        self.fresh = lambda: [set(every), None, None]  # plausible (colour, rank), revealed c, r

    def deal(self, state) -> None:
        self.cards = [[self.fresh() for _ in hand] for hand in state.hands]

    def legal(self, state) -> tuple[int, ...]:
        cur, h, n, c, r = state.current, self.h, self.n, self.c, self.r
        if cur < 0:
            return ()
        hand = state.hands[cur]
        out = list(range(h, h + len(hand)))  # plays
        if state.information_tokens < self.game.max_info:
            out += range(len(hand))  # discards
        if state.information_tokens > 0:
            for o in range(1, n):
                other = state.hands[(cur + o) % n]
                colors = {card // r for card in other}
                ranks = {card % r for card in other}
                out += [2 * h + (o - 1) * c + k for k in sorted(colors)]
                out += [2 * h + (n - 1) * c + (o - 1) * r + k for k in sorted(ranks)]
        return tuple(sorted(out))

    def move(self, before, after) -> tuple[int, int]:
        """Update the model by ``after``'s last move; the reveal's (touched, newly) masks."""
        item = after.history[-1]
        if item.kind in (PLAY, DISCARD):
            seat = self.cards[item.player]
            del seat[item.card_index]
            if item.drew:
                seat.append(self.fresh())
            return 0, 0
        colour = item.kind == REVEAL_COLOR
        value = item.color if colour else item.rank
        touched = newly = 0
        target = zip(before.hands[item.target], self.cards[item.target], strict=True)
        for i, (cd, know) in enumerate(target):
            hit = (cd // self.r if colour else cd % self.r) == value
            keep = {cr for cr in know[0] if (cr[0 if colour else 1] == value) == hit}
            know[0] = keep
            if hit:
                touched |= 1 << i
                if know[1 if colour else 2] is None:
                    newly |= 1 << i
                know[1 if colour else 2] = value
        return touched, newly

    def knowledge_bits(self, seat: int) -> int:
        lay = self.game.layout
        bits = 0
        for i, (plaus, col, rank) in enumerate(self.cards[seat]):
            slot = sum(1 << (c * self.r + r) for c, r in plaus)
            if col is not None:
                slot |= 1 << (lay.cr + col)
            if rank is not None:
                slot |= 1 << (lay.cr + self.c + rank)
            bits |= slot << (i * lay.width)
        return bits


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_fast_paths_match_a_plain_model(players: int) -> None:
    """Every state of 40 seeded games per player count (a policy that mostly reveals and
    discards, so decks run out and hands shrink), and of side branches stepped from earlier
    states with the engine's caches cleared: the legal moves, the knowledge bits and each
    reveal's touched / newly revealed cards are those of :class:`_PlainHanabi`."""
    game = HanabiGame(HanabiConfig(players=players))
    plain = _PlainHanabi(game)
    branches = shrunk = 0
    for seed in range(40):
        rng = np.random.default_rng([players, seed])
        state = game.initial_state(rng)
        plain.deal(state)
        states = [state]
        while not game.is_terminal(state):
            assert state.legal == plain.legal(state)
            for seat in range(players):
                assert state.knowledge[seat] == plain.knowledge_bits(seat), (seed, seat)
            legal = state.legal
            h = game.hand_size
            discards = [a for a in legal if a < h]
            plays = [a for a in legal if h <= a < 2 * h]
            reveals = [a for a in legal if a >= 2 * h]
            u = rng.random()
            order = (reveals, discards, plays) if u < 0.6 else (discards, reveals, plays)
            if u > 0.93:
                order = (plays,)
            pool = next(p for p in order if p)
            action = int(pool[int(rng.integers(len(pool)))])
            nxt = game.step(state, {state.current: action}, rng).state
            item = nxt.history[-1]
            touched, newly = plain.move(state, nxt)
            if item.kind in (REVEAL_COLOR, REVEAL_RANK):
                assert (item.reveal_mask, item.newly_revealed) == (touched, newly)
            if rng.random() < 0.1:  # a side branch from an earlier state, caches dropped
                game._feat_cache.clear()
                game._hand_cache.clear()
                old = states[int(rng.integers(len(states)))]
                for a in old.legal[:3]:
                    side = game.step(old, {old.current: a}, rng).state
                    assert side.legal == plain.legal(side)
                    branches += 1
            state = nxt
            states.append(state)
        assert state.legal == ()
        shrunk += min(len(hand) for hand in state.hands) < game.hand_size
    assert branches > 50 and shrunk >= 5  # side branches taken; decks run out
