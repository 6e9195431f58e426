"""The vector: HLE's canonical encoding, checked against games recorded in OpenSpiel (the reference
engine), and its layout, sizes and state vector."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tom_envs.games.hanabi.encode import HanabiEncoder, pieces
from tom_envs.games.hanabi.env import make_bundle
from tom_envs.games.hanabi.parity import compare_record, read_records
from tom_envs.games.hanabi.rules import HanabiConfig

from .decks import act, card, play, reveal_color, start

HERE = Path(__file__).parent


@pytest.mark.parametrize(("players", "size"), [(2, 658), (3, 956), (4, 1041), (5, 1280)])
def test_sizes(players: int, size: int) -> None:
    cfg = HanabiConfig(players=players)
    enc = HanabiEncoder(cfg)
    assert sum(n for _, n in pieces(cfg)) == size == enc.observation_shape[0]
    h = cfg.cards_per_hand
    assert enc.state_shape == (size + h * 25 + players,)


@pytest.mark.parametrize("name", ["openspiel_games.jsonl.gz", "openspiel_games_3p.jsonl.gz"])
def test_recorded_openspiel_games_replay_identically(name: str) -> None:
    """Known values from the reference engine (recorded by benchmarks/peers/hanabi_peer.py): the
    same deck and moves give the same legal moves, vectors (card knowledge included), rewards
    and scores at every step."""
    records = read_records(HERE / name)
    assert {r["policy"] for r in records} == {"random", "careful", "mixed"}
    for rec in records:
        assert compare_record(rec) == []


def test_start_vector_known_bits() -> None:
    b = make_bundle()
    game, s = start(["R1 R2 R3 R4 R5", "Y1 G2 W3 B4 B5"])
    vec = b.encoder.encode(game.observe(s, 0))
    sections = {}
    pos = 0
    for name, n in pieces(game.config):
        sections[name] = vec[pos : pos + n]
        pos += n
    hands = sections["hands"]
    assert [int(np.flatnonzero(hands[i * 25 : (i + 1) * 25])[0]) for i in range(5)] == [
        card("Y1"),
        card("G2"),
        card("W3"),
        card("B4"),
        card("B5"),
    ]
    assert hands[125:].tolist() == [0, 0]  # nobody is short of cards
    board = sections["board"]
    assert board[:40].sum() == 40 and board[40:65].sum() == 0  # deck 40; empty stacks
    assert board[65:73].sum() == 8 and board[73:76].sum() == 3  # tokens, lives
    assert sections["discards"].sum() == 0 and sections["last_action"].sum() == 0
    assert sections["card_knowledge"].sum() == 10 * 25  # everything plausible, nothing revealed
    assert vec.dtype == np.float32 and vec.sum() == 5 + 40 + 8 + 3 + 250


def test_last_action_and_knowledge_sections_after_a_reveal() -> None:
    b = make_bundle()
    game, s = start(["R1 R2 R3 R4 R5", "Y1 G2 Y3 B4 B5"])
    s = act(game, s, reveal_color(game, "Y"))
    off = dict(
        zip(
            [n for n, _ in pieces(game.config)],
            np.cumsum([0] + [n for _, n in pieces(game.config)]),
            strict=False,
        )
    )
    vec = b.encoder.encode(game.observe(s, 1))  # Bob's view: Alice acted (offset 1), to him (0)
    la = vec[off["last_action"] : off["card_knowledge"]]
    assert np.flatnonzero(la).tolist() == [
        1,  # acting player: offset 1
        2 + 2,  # reveal colour
        6 + 0,  # target: offset 0 (me)
        8 + 1,  # yellow
        8 + 5 + 5 + 0,
        8 + 5 + 5 + 2,  # cards 0 and 2 touched
    ]
    kn = vec[off["card_knowledge"] :]
    mine_card0 = kn[:35]
    assert np.flatnonzero(mine_card0[:25]).tolist() == list(range(5, 10))  # only yellow
    assert mine_card0[25:30].tolist() == [0, 1, 0, 0, 0] and mine_card0[30:].sum() == 0


def test_encode_is_a_pure_function_of_the_view() -> None:
    b = make_bundle()
    game = b.game
    s = game.initial_state(np.random.default_rng(3))
    s = act(game, s, s.legal[-1])
    v = game.observe(s, 0)
    copy = type(v)(**{k: (tuple(x) if isinstance(x, tuple) else x) for k, x in vars(v).items()})
    twin = type(v)(**{**vars(v), "hands": tuple(tuple(list(h)) for h in v.hands)})
    assert np.array_equal(b.encoder.encode(v), b.encoder.encode(copy))
    assert np.array_equal(b.encoder.encode(v), b.encoder.encode(twin))
    out = b.encoder.encode(v)
    out[:] = 7  # the caller owns the array
    assert b.encoder.encode(v).max() == 1


def test_state_vector_adds_player_0s_hand_and_the_seat_to_act() -> None:
    b = make_bundle()
    game, s = start(["R1 R2 R3 R4 R5", "Y1 G2 Y3 B4 B5"])
    st = b.encoder.encode_state(s)
    size = b.encoder.observation_shape[0]
    assert np.array_equal(st[:size], b.encoder.encode(game.observe(s, 0)))
    own = st[size : size + 125]
    assert [int(np.flatnonzero(own[i * 25 : (i + 1) * 25])[0]) for i in range(5)] == list(range(5))
    assert st[-2:].tolist() == [1, 0]
    s = act(game, s, play(game, 0))
    assert b.encoder.encode_state(s)[-2:].tolist() == [0, 1]


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"players": 3}, {"players": 4}, {"players": 5},
     {"colors": 3, "ranks": 4, "hand_size": 3, "max_information_tokens": 3}],
)  # fmt: skip
def test_encode_player_is_encode_of_the_view(kwargs: dict) -> None:
    """The AEC env's fast path (the observation read from the state, without the view) gives
    every seat's vector and legal actions exactly as ``encode(observe(state, seat))`` does, at
    every step of 40 random games (short hands at the deck's end, reveals, misplays)."""
    b = make_bundle(**kwargs)
    game, enc = b.game, b.encoder
    rng = np.random.default_rng(11)
    steps = ends = 0
    for ep in range(40):
        s = game.initial_state(np.random.default_rng(ep))
        while True:
            for seat in range(game.num_players):
                view = game.observe(s, seat)
                vec, legal = enc.encode_player(s, seat)
                assert vec.dtype == np.float32 and vec.shape == enc.observation_shape
                assert np.array_equal(vec, enc.encode(view)) and legal == view.legal_actions
                vec[:] = 7  # the caller owns the array: the next one is unaffected
                assert np.array_equal(enc.encode_player(s, seat)[0], enc.encode(view))
            ends += s.deck_size == 0
            if game.is_terminal(s):
                break
            # odd episodes mostly avoid plays (no lost lives), so that games reach the deck's end
            safe = [a for a in s.legal if not game.hand_size <= a < 2 * game.hand_size]
            pool = safe if ep % 2 and safe and rng.random() < 0.9 else s.legal
            s = act(game, s, pool[int(rng.integers(len(pool)))])
            steps += 1
    assert steps > 400 and ends > 0  # some games played out the deck (short hands)
