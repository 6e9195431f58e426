"""What a Hanabi player sees: never their own cards or the deck; everyone's knowledge; egocentric."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tom_envs.games.hanabi.env import make_bundle
from tom_envs.games.hanabi.rules import HanabiConfig, HanabiGame
from tom_envs.games.hanabi.view import HanabiView

from .decks import act, cards, deck_with, play, reveal_color, reveal_rank, start

VIEW_FIELDS = {
    "player",
    "num_players",
    "current_offset",
    "hands",
    "my_hand_size",
    "knowledge",
    "fireworks",
    "information_tokens",
    "life_tokens",
    "deck_size",
    "discards",
    "discard_bits",
    "history",
    "turns_to_play",
    "score",
    "legal_actions",
}


def renderings(bundle, view: HanabiView) -> tuple:
    return (
        bundle.encoder.encode(view).tobytes(),
        bundle.text.observation_text(view),
        tuple(bundle.text.legal_actions_text(view).items()),
    )


def test_the_view_has_exactly_these_fields() -> None:
    """A new field must be reviewed for hidden information: extend this set deliberately."""
    assert {f.name for f in dataclasses.fields(HanabiView)} == VIEW_FIELDS


def test_my_own_cards_are_hidden() -> None:
    """Two deals that differ only in player 0's cards (swapped with undrawn cards) look the same to
    player 0, in the view, the vector and the text; player 1 sees the difference."""
    b = make_bundle()
    game = b.game
    hands_a = ["R1 R2 R3 Y4 Y5", "G1 G2 G3 B4 B5"]
    hands_b = ["W1 W2 B1 B2 B3", "G1 G2 G3 B4 B5"]
    sa = game.state_from_deck(deck_with(game, hands_a, "W3 W4"))
    sb = game.state_from_deck(deck_with(game, hands_b, "W3 W4"))
    for a, z in (
        (sa, sb),
        (act(game, sa, reveal_rank(game, 1)), act(game, sb, reveal_rank(game, 1))),
    ):
        assert game.observe(a, 0) == game.observe(z, 0)
        assert renderings(b, game.observe(a, 0)) == renderings(b, game.observe(z, 0))
        assert game.observe(a, 1) != game.observe(z, 1)


def test_the_deck_order_is_hidden() -> None:
    b = make_bundle()
    game = b.game
    hands = ["R1 R2 R3 Y4 Y5", "G1 G2 G3 B4 B5"]
    sa = game.state_from_deck(deck_with(game, hands, "W1 W2"))
    sb = game.state_from_deck(deck_with(game, hands, "W2 W1"))
    assert sa.deck != sb.deck
    for p in (0, 1):
        assert game.observe(sa, p) == game.observe(sb, p)
        assert renderings(b, game.observe(sa, p)) == renderings(b, game.observe(sb, p))
    # after player 0 draws, player 0 still cannot tell; player 1 sees the drawn card
    ta, tb = act(game, sa, play(game, 0)), act(game, sb, play(game, 0))
    assert game.observe(ta, 0) == game.observe(tb, 0)
    assert game.observe(ta, 1) != game.observe(tb, 1)


def test_knowledge_is_public_and_egocentric() -> None:
    game, s = start(["R1 R2 R3 R4 R5", "Y1 G1 Y2 G2 Y3"])
    s = act(game, s, reveal_color(game, "Y"))
    v0, v1 = game.observe(s, 0), game.observe(s, 1)
    assert v0.knowledge == (s.knowledge[0], s.knowledge[1])
    assert v1.knowledge == (s.knowledge[1], s.knowledge[0])  # mine first
    assert v0.hands == (s.hands[1],) and v1.hands == (s.hands[0],)
    assert (v0.my_hand_size, v1.my_hand_size) == (5, 5)
    assert (v0.current_offset, v1.current_offset) == (1, 0)
    assert v1.legal_actions == s.legal and v0.legal_actions == ()
    assert v1.my_turn and not v0.my_turn


def test_three_players_by_offset() -> None:
    game = HanabiGame(HanabiConfig(players=3))
    s = game.initial_state(np.random.default_rng(1))
    s = act(game, s, reveal_rank(game, 1 + game.card_rank[s.hands[2][0]], offset=2))
    for p in range(3):
        v = game.observe(s, p)
        assert v.hands == (s.hands[(p + 1) % 3], s.hands[(p + 2) % 3])
        assert v.knowledge == tuple(s.knowledge[(p + o) % 3] for o in range(3))
        assert v.current_offset == (1 - p) % 3
        assert [v.seat(o) for o in range(3)] == [(p + o) % 3 for o in range(3)]
        assert [v.offset(q) for q in range(3)] == [(q - p) % 3 for q in range(3)]
    item = s.history[-1]
    assert (item.player, item.target) == (0, 2)


def test_the_history_is_public_and_has_no_deals() -> None:
    game, s = start(["R1 R2 R3 R4 R5", "Y1 G1 Y2 G2 Y3"], draws="B5")
    s = act(game, s, play(game, 0))
    for p in (0, 1):
        v = game.observe(s, p)
        assert v.history == s.history and len(v.history) == 1
        assert (v.history[0].color, v.history[0].rank) == (0, 0)  # the played card is public
    assert cards("B5")[0] in game.observe(s, 1).hands[0]
    assert cards("B5")[0] not in [c for h in game.observe(s, 0).hands for c in h]


def test_final_view_and_bad_seats() -> None:
    game, s = start(["R2 R3 R4 R5 Y2", "Y3 Y4 Y5 G2 G3"], max_life_tokens=1)
    s = act(game, s, play(game, 0))
    v = game.observe(s, 1)
    assert v.current_offset == -1 and v.legal_actions == () and v.score == 0
    with pytest.raises(ValueError):
        game.observe(s, 2)
