"""Helpers for Hanabi tests: cards by name and decks arranged to deal given hands and draws."""

from __future__ import annotations

from collections.abc import Sequence

from tom_envs.games.hanabi.cards import COLOR_CHARS
from tom_envs.games.hanabi.rules import HanabiConfig, HanabiGame
from tom_envs.games.hanabi.state import HanabiState


def card(name: str, ranks: int = 5) -> int:
    """``"R1"`` -> 0, ``"B5"`` -> 24 (colour letter, 1-based rank)."""
    return COLOR_CHARS.index(name[0]) * ranks + int(name[1:]) - 1


def cards(names: str, ranks: int = 5) -> list[int]:
    """``"R1 R2 Y3"`` -> card ints."""
    return [card(n, ranks) for n in names.split()]


def deck_with(game: HanabiGame, hands: Sequence[str], draws: str = "") -> tuple[int, ...]:
    """A full deck that deals ``hands`` (one string per seat) and then draws ``draws`` in order;
    the other cards follow in a fixed order."""
    r = game.ranks
    front = [c for h in hands for c in cards(h, r)] + cards(draws, r)
    rest = list(game.full_deck)
    for c in front:
        rest.remove(c)
    return (*front, *rest)


def start(hands: Sequence[str], draws: str = "", **config) -> tuple[HanabiGame, HanabiState]:
    """A game and its start state dealing ``hands``."""
    game = HanabiGame(HanabiConfig(players=len(hands), **config))
    return game, game.state_from_deck(deck_with(game, hands, draws))


def act(game: HanabiGame, state: HanabiState, action: int) -> HanabiState:
    """Apply the acting seat's ``action`` (validated)."""
    return game.step(state, {state.current: action}, None).state  # type: ignore[arg-type]


def play(game: HanabiGame, i: int) -> int:
    """The action id of playing card ``i``."""
    return game.hand_size + i


def discard(game: HanabiGame, i: int) -> int:
    """The action id of discarding card ``i``."""
    return i


def reveal_color(game: HanabiGame, color: str, offset: int = 1) -> int:
    """The action id of revealing ``color`` (a letter) to the player ``offset`` seats on."""
    return 2 * game.hand_size + (offset - 1) * game.colors + COLOR_CHARS.index(color)


def reveal_rank(game: HanabiGame, rank: int, offset: int = 1) -> int:
    """The action id of revealing ``rank`` (1-based) to the player ``offset`` seats on."""
    base = 2 * game.hand_size + (game.n - 1) * game.colors
    return base + (offset - 1) * game.ranks + rank - 1
