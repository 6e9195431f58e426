"""The truth of Hanabi's "does Bob know that his Card i can be played now?" probe, on hand-made
knowledge and a hand-played game: yes exactly when every colour and rank Bob still finds
plausible for the card would continue its stack now (rank = the stack's height), so a card known
to be too high, or already played, is "no"."""

from __future__ import annotations

import pytest

from tom_envs.games.hanabi.cards import knowledge_code
from tom_envs.games.hanabi.env import make_bundle
from tom_envs.games.hanabi.probes import knows_playable

from .decks import act, deck_with, discard, play, reveal_color, reveal_rank

R, Y, G, W, B = (1 << c for c in range(5))  # colour masks (R Y G W B)
ALL = 0b11111


def _rank(r: int) -> int:
    return 1 << (r - 1)


@pytest.mark.parametrize(
    ("colors", "ranks", "fireworks", "truth"),
    [
        (R, _rank(2), (1, 0, 0, 0, 0), True),  # a known R2 on red 1
        (R, _rank(3), (1, 0, 0, 0, 0), False),  # too high
        (R, _rank(1), (1, 0, 0, 0, 0), False),  # already played
        (R, _rank(1), (0, 0, 0, 0, 0), True),
        (ALL, _rank(1), (0, 0, 0, 0, 0), True),  # any 1 on empty stacks
        (ALL, _rank(1), (0, 0, 1, 0, 0), False),  # a green 1 would be dead
        (ALL, _rank(2), (1, 1, 1, 1, 1), True),  # any 2 on stacks all at 1
        (ALL, _rank(2), (1, 1, 1, 1, 2), False),
        (R | Y, _rank(3), (2, 2, 0, 0, 0), True),  # red or yellow, both at 2
        (R | Y, _rank(3), (2, 3, 0, 0, 0), False),
        (R, _rank(2) | _rank(3), (1, 0, 0, 0, 0), False),  # the rank is not known
        (R, ALL, (0, 0, 0, 0, 0), False),  # only the colour is known
        (B, _rank(5), (0, 0, 0, 0, 4), True),
        (B, _rank(5), (0, 0, 0, 0, 5), False),  # a finished stack takes nothing
    ],
)
def test_knows_playable_table(colors: int, ranks: int, fireworks, truth: bool) -> None:
    code = knowledge_code(colors, ranks, colors.bit_count() == 1, ranks.bit_count() == 1)
    assert knows_playable(code, fireworks) is truth


def test_the_probe_follows_the_stacks_in_a_played_game() -> None:
    bundle = make_bundle()
    game = bundle.game
    s = game.state_from_deck(deck_with(game, ["R1 Y4 Y4 W3 W3", "R2 R3 R1 G4 G4"]))
    for move in (
        play(game, 0),  # Alice plays R1: red stands at 1
        reveal_rank(game, 4),  # Bob tells Alice her 4s
        reveal_color(game, "R"),  # Alice: Bob's red cards (0, 1, 2)
        reveal_rank(game, 3),
        reveal_rank(game, 2),  # Alice: Bob's card 0 is a 2 (R2)
        reveal_rank(game, 4),
        reveal_rank(game, 3),  # Alice: card 1 is a 3 (R3)
        reveal_rank(game, 3),
        reveal_rank(game, 1),  # Alice: card 2 is a 1 (R1, already played)
        discard(game, 4),  # Bob discards G4 (no token left to reveal)
    ):
        s = act(game, s, move)
    assert s.current == 0 and s.fireworks[0] == 1
    truth = {p.id: p.answer for p in bundle.probes(s, 0) if p.kind == "partner_playable"}
    assert truth == {
        "p1.card0.playable": "yes",  # known R2 on red 1
        "p1.card1.playable": "no",  # known R3: too high
        "p1.card2.playable": "no",  # known R1: red is past it
        "p1.card3.playable": "no",  # G4: nothing known
        "p1.card4.playable": "no",  # just drawn
    }
