"""The paper's text (App. B): rules, state description, lettered actions, and a tolerant parser."""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.games.hanabi.env import make_bundle
from tom_envs.games.hanabi.rules import HanabiConfig

from .decks import act, deck_with, discard, play, reveal_color, reveal_rank

#: App. B.1 of paper 002, word for word (its typographic apostrophes written as ASCII).
PAPER_RULES = """The card game Hanabi has the following rules:
- The game uses a 50-card deck, divided into five colours (red (R), green (G), blue (B), yellow (Y), white (W)). Each color has cards of ranks 1 to 5. Each color has with three 1's, two 2's, two 3's, two 4's, one 5.
- Players have to create stacks of each color. Each color stack starts with a Rank 1 card and goes up one by one in ascending order up to Rank 5. (e.g. Red Stack should go from R1 -> R2 -> R3 -> R4 -> R5). A card can only be played if it is the next in the incremental sequence for its color stack.
- Players can only see the others hand, not their own.
- Players have plausible knowledge of their cards based on previously provided hints by the other player
- They can either play a card, give a reveal, or discard a card.
- Players can only chose an action from the Available Legal Actions.
***Actions:***
1. Reveal (Clue): Spend a reveal token to reveal cards with a particular color or rank. Revealing a color reveals all cards of that color in partners hand. Revealing a rank reveals all cards with that rank in partners hand. The game starts with 8 reveal tokens. If no token left, no more reveals can be given.
2. Discard: Discard a card to regain a reveal token and draw a new card.
3. Play a Card: If a card played follows sequence in its color stack, it succeeds. Success of rank 5 card in any stack gives an additional reveal token. Failure discards the card, and loses a life. Playing a card you are unsure about is risky as it costs a life and you have only 3 lives. Before playing a card make sure that its the next card in the sequence for that stack.
***The game ends when:***
- All five stacks are completed. 25 Points.
- Three lives have been lost. 0 Points no matter how many cards have been placed in the stack.
- After the last card from the deck is drawn and each player has had a final turn. Sum total of the top card ranks of each color stack.
I am Alice, playing the card game Hanabi with my partner Bob."""

ANY = "[Red, Yellow, Green, White, Blue] [1, 2, 3, 4, 5]"
#: The state of the paper's App. D.2.1 (Bob holds R3 W1 G3 W4 B4 at the start).
PAPER_D21 = "\n".join(
    [
        "It is currently My (Alice) turn.",
        "Current Stacks:",
        "Red - Red 0, Yellow - Yellow 0, Green - Green 0, White - White 0, Blue - Blue 0",
        "My cards based on my knowledge:",
        *(f"Card {i} could be: {ANY}" for i in range(5)),
        "I can see Bobs Cards are:",
        "[Card 0: Red 3]",
        "[Card 1: White 1]",
        "[Card 2: Green 3]",
        "[Card 3: White 4]",
        "[Card 4: Blue 4]",
        "Bobs Knowledge about his cards:",
        *(f"Bob believes his Card {i} could be: {ANY}" for i in range(5)),
        "Remaining Reveal Tokens: 8",
        "Remaining Lives: 3",
        "Deck Size: 40",
        "The discard pile is: []",
        "My Action History: []",
        "The next playable cards for each stack are:",
        *(
            f"Only {c} 1 can be played on {c} Stack"
            for c in ("Red", "Yellow", "Green", "White", "Blue")
        ),
    ]
)


@pytest.fixture
def d21():
    b = make_bundle()
    game = b.game
    s = game.state_from_deck(deck_with(game, ["Y1 Y2 G1 B1 B2", "R3 W1 G3 W4 B4"]))
    return b, game, s


def test_rules_prompt_is_the_papers(d21) -> None:
    b, game, s = d21
    assert b.text.rules_prompt(game.observe(s, 0)) == PAPER_RULES
    bob = b.text.rules_prompt(game.observe(s, 1))
    assert bob.endswith("I am Bob, playing the card game Hanabi with my partner Alice.")
    three = make_bundle(players=3)
    v = three.game.observe(three.game.initial_state(np.random.default_rng(0)), 1)
    assert three.text.rules_prompt(v).endswith("with my partners Cathy and Alice.")
    stacks = make_bundle(bomb_score="stacks", max_life_tokens=2)
    start = stacks.game.initial_state(np.random.default_rng(0))
    text = stacks.text.rules_prompt(stacks.game.observe(start, 0))
    assert "- Two lives have been lost. Sum total of the top card ranks" in text
    assert "you have only 2 lives" in text


def test_state_description_is_the_papers(d21) -> None:
    b, game, s = d21
    assert b.text.observation_text(game.observe(s, 0)) == PAPER_D21


def test_lettered_actions_in_the_papers_order(d21) -> None:
    b, game, s = d21
    actions = list(b.text.legal_actions_text(game.observe(s, 0)).values())
    assert actions == [
        "A. Reveal Bobs Red color cards",
        "B. Reveal Bobs Green color cards",
        "C. Reveal Bobs White color cards",
        "D. Reveal Bobs Blue color cards",
        "E. Reveal Bobs rank 1 cards",
        "F. Reveal Bobs rank 3 cards",
        "G. Reveal Bobs rank 4 cards",
        "H. Play my Card 0",
        "I. Play my Card 1",
        "J. Play my Card 2",
        "K. Play my Card 3",
        "L. Play my Card 4",
    ]
    s = act(game, s, reveal_rank(game, 1))
    s = act(game, s, reveal_rank(game, 2, 1))  # Bob reveals Alice's 2s
    actions = list(b.text.legal_actions_text(game.observe(s, 0)).values())
    assert actions[-5:] == [f"{chr(ord('M') + i)}. Discard my Card {i}" for i in range(5)]


def test_state_description_later_in_the_game(d21) -> None:
    b, game, s = d21
    s = act(game, s, reveal_color(game, "W"))  # Alice: White to Bob (cards 1 and 3)
    s = act(game, s, play(game, 1))  # Bob plays his W1
    s = act(game, s, play(game, 0))  # Alice plays Y1
    s = act(game, s, discard(game, 0))  # Bob discards R3
    text = b.text.observation_text(game.observe(s, 0))
    lines = text.splitlines()
    assert lines[0] == "It is currently My (Alice) turn."
    assert (
        lines[2]
        == "Red - Red 0, Yellow - Yellow 1, Green - Green 0, White - White 1, Blue - Blue 0"
    )
    assert "Bob believes his Card 0 could be: [Red, Yellow, Green, Blue] [1, 2, 3, 4, 5]" in lines
    assert "Bob believes his Card 1 could be: [White] [1, 2, 3, 4, 5]" in lines  # the W4
    assert "Remaining Reveal Tokens: 8" in lines and "Deck Size: 37" in lines
    assert "The discard pile is: [Red 3]" in lines
    assert "My Action History: [Reveal Bobs White Color Cards, Play Card 0]" in lines
    assert "Bobs Last Action: Discard Card 0 (it was Red 3)" in lines
    assert "Only Yellow 2 can be played on Yellow Stack" in lines
    bob = b.text.observation_text(game.observe(s, 1)).splitlines()
    assert bob[0] == "It is currently Alices turn."
    assert "Alices Last Action: Play Card 0 (it was Yellow 1, played successfully)" in bob
    assert "My Action History: [Play Card 1, Discard Card 0]" in bob


def test_end_of_game_lines() -> None:
    b = make_bundle(colors=1)
    game = b.game
    s = game.initial_state(np.random.default_rng(0))
    lines = b.text.observation_text(game.observe(s, 0)).splitlines()
    assert "The deck is empty: 2 more turns will be played in total." in lines
    s = act(game, s, s.legal[0])
    s = act(game, s, s.legal[0])
    assert b.text.observation_text(game.observe(s, 0)).startswith("The game is over. Final score:")
    assert "Red Stack" in b.text.observation_text(game.observe(s, 0))


# ------------------------------------------------------------------ parsing
def random_views(n_states: int = 40, players: int = 2):
    b = make_bundle(players=players)
    game = b.game
    rng = np.random.default_rng(11)
    out = []
    for seed in range(n_states):
        s = game.initial_state(np.random.default_rng(seed))
        for _ in range(int(rng.integers(0, 25))):
            if game.is_terminal(s):
                break
            s = act(game, s, s.legal[int(rng.integers(len(s.legal)))])
        if not game.is_terminal(s):
            out.append(game.observe(s, s.current))
    return b, out


@pytest.mark.parametrize("players", [2, 3])
def test_every_action_text_parses_back(players: int) -> None:
    b, views = random_views(players=players)
    for v in views:
        for a, text in b.text.legal_actions_text(v).items():
            bare = text.split(". ", 1)[1]
            letter = text.split(".", 1)[0]
            for form in (
                text,
                bare,
                letter,
                f"{letter}.",
                f"({letter})",
                f"Action: {letter}",
                f"Explanation: it helps.\nAction: {text}",
                bare.lower(),
                f"<action>{bare}</action>",
            ):
                r = b.text.parse_action(v, form)
                assert r.action == a, (form, r.feedback)


def test_free_forms(d21) -> None:
    b, game, s = d21
    s = act(game, s, reveal_color(game, "R"))
    s = act(game, s, reveal_rank(game, 2, 1))  # Alice to act with 6 tokens
    v = game.observe(s, 0)
    h = game.hand_size
    cases = {
        "play card 0": h + 0,
        "I will play my card 3": h + 3,
        "Play the third card": None,  # 'third' is card 2: ordinal words name card indices
        "discard card 4": 4,
        "discard my first card": 0,
        "hint Bob green": reveal_color(game, "G"),
        "Give Bob a clue about his 4s": reveal_rank(game, 4),
        "reveal rank 3": reveal_rank(game, 3),
        "tell Bob about his White cards": reveal_color(game, "W"),
        "Action: K": None,
    }
    for text, want in cases.items():
        r = b.text.parse_action(v, text)
        if want is None:
            continue
        assert r.action == want, (text, r.feedback)
    assert b.text.parse_action(v, "Play the third card").action == h + 2


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("hint Bob yellow", "Bob has no Yellow cards"),
        ("reveal rank 5", "Bob has no rank 5 cards"),
        ("play card 7", "you have no Card 7"),
        ("hint Bob red 3", "exactly one colour or one rank"),
        ("Z", "answer with the letter"),
        ("", "empty answer"),
        ("I am not sure", "could not match"),
    ],
)
def test_illegal_requests_get_reasons(d21, text: str, reason: str) -> None:
    b, game, s = d21
    r = b.text.parse_action(game.observe(s, 0), text)
    assert r.action is None and reason in r.feedback, r.feedback


def test_discard_with_every_token_and_no_tokens() -> None:
    b = make_bundle(max_information_tokens=1)
    game = b.game
    s = game.state_from_deck(deck_with(game, ["Y1 Y2 G1 B1 B2", "R3 W1 G3 W4 B4"]))
    r = b.text.parse_action(game.observe(s, 0), "discard card 0")
    assert r.action is None and "cannot discard while all 1 reveal tokens" in r.feedback
    s = act(game, s, reveal_rank(game, 3))
    r = b.text.parse_action(game.observe(s, 1), "hint Alice yellow")
    assert r.action is None and "no reveal tokens left" in r.feedback


def test_parser_never_raises_and_refuses_off_turn(d21) -> None:
    b, game, s = d21
    v = game.observe(s, 0)
    for junk in (None, 3, 4.5, b"x", ["a"], "\x00" * 10, "?" * 50_000, "🙂" * 20, "A B C"):
        r = b.text.parse_action(v, junk)  # type: ignore[arg-type]
        assert r.action is None or r.action in v.legal_actions
    off = b.text.parse_action(game.observe(s, 1), "A")
    assert off.action is None and "not your turn" in off.feedback


def test_three_players_name_the_target() -> None:
    b = make_bundle(players=3)
    game = b.game
    s = game.state_from_deck(
        deck_with(game, ["Y1 Y2 G1 B1 B2", "R3 W1 G3 W4 B4", "R1 R2 G2 G4 G5"])
    )
    v = game.observe(s, 0)
    assert b.text.parse_action(v, "hint Cathy red").action == reveal_color(game, "R", 2)
    assert b.text.parse_action(v, "hint Bob red").action == reveal_color(game, "R", 1)
    assert "whose cards" in b.text.parse_action(v, "hint red").feedback
    assert "I can see Cathys Cards are:" in b.text.observation_text(v)
    assert "Cathys Knowledge about her cards:" in b.text.observation_text(v)


def test_spectator_render() -> None:
    b = make_bundle()
    game = b.game
    s = game.state_from_deck(deck_with(game, ["Y1 Y2 G1 B1 B2", "R3 W1 G3 W4 B4"]))
    s = act(game, s, reveal_color(game, "W"))
    text = b.text.render_state(s)
    assert "Alice: Yellow 1" in text and "Bob (to act): Red 3" in text
    assert (
        "Last move: Alice: Reveal Bobs White Color Cards (touching Bobs Card 1 and Card 3)" in text
    )
    assert HanabiConfig().names[:2] == ("Alice", "Bob")


def test_a_leading_letter_label_does_not_override_the_answer_after_it() -> None:
    """"A: The action you chose is: D" once played A; the answer after a label is the answer,
    and a label followed by reasons alone is still the label."""
    b, views = random_views(players=2)
    v = views[0]
    full = b.text.legal_actions_text(v)
    by_letter = {t.split(".", 1)[0]: a for a, t in full.items()}
    first, other = sorted(by_letter)[0], sorted(by_letter)[3]
    cases = {
        f"{first}: The action you chose is: {other}": by_letter[other],
        f"{first}: {other}": by_letter[other],
        f"{first}) I pick this. Final: {other}": by_letter[other],
        f"{first}: because it is safe": by_letter[first],
        f"{first}.": by_letter[first],
    }
    for text, action in cases.items():
        assert b.text.parse_action(v, text).action == action, text
