"""Small builders for the Guandan tests: hands from card strings, states from hands."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tom_envs.core.agents import Turn
from tom_envs.games.guandan.cards import RANKS, hand_from_cards
from tom_envs.games.guandan.combos import SHAPE_BASE, SHAPES, ComboType, find_shape
from tom_envs.games.guandan.rules import GuandanGame
from tom_envs.games.guandan.state import GuandanConfig, GuandanState
from tom_envs.games.guandan.text import parse_cards


def hand(text: str) -> bytes:
    """``hand("S3 D4 H2 SJ")``: a 54-count hand from card names (S/H/C/D + rank, SJ/BJ)."""
    cards = parse_cards(text)
    assert len(cards) == len(text.split()), f"could not read every card of {text!r}"
    return hand_from_cards(cards)


def rank(name: str) -> int:
    """Rank index of a rank name (``"2"`` -> 0, ``"A"`` -> 12)."""
    return RANKS.index(name)


def action(ctype: ComboType, key: int, suit: int = -1, size: int = 0) -> int:
    """Catalogue action of a shape."""
    i = find_shape(ctype, key, suit, size)
    assert i is not None, (ctype, key, suit, size)
    return SHAPE_BASE + i


def shape_action(index: int) -> int:
    """Action of ``SHAPES[index]``."""
    assert 0 <= index < len(SHAPES)
    return SHAPE_BASE + index


def table_state(
    hands: list[str], leader: int = 0, level: str = "2", **config: object
) -> tuple[GuandanGame, GuandanState]:
    """A play-phase state with the given (small) hands; ``leader`` to act with nothing to beat."""
    lv = rank(level)
    game = GuandanGame(GuandanConfig(start_levels=(lv, lv), **config))  # type: ignore[arg-type]
    base = game.initial_state(np.random.default_rng(0))
    state = replace(base, hands=tuple(hand(h) for h in hands), to_act=leader, lead=None)
    return game, state


def step(game: GuandanGame, state: GuandanState, act: int) -> GuandanState:
    """Apply ``act`` for the seat to act (validated)."""
    return game.step(state, {state.to_act: act}, np.random.default_rng(0)).state


def turn_at(hands: list[str], leader: int, moves: tuple[int, ...] = ()) -> Turn:
    """The turn of the seat to act after ``moves`` on a table of ``hands`` (``leader`` first)."""
    game, s = table_state(hands, leader=leader)
    for a in moves:
        s = step(game, s, a)
    p = s.to_act
    return Turn(f"player_{p}", p, game.observe(s, p), None, None, 0.0, 0)  # type: ignore[arg-type]


def choice(agent_cls: type, turn: Turn) -> int:
    """What a fresh ``agent_cls`` plays on ``turn``."""
    return int(agent_cls().act(turn))
