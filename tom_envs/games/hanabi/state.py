"""Hanabi's moves and state values, which the rules (:mod:`~tom_envs.games.hanabi.rules`) build
and never mutate: the kinds of move (:class:`MoveType`), the public history (:class:`HistoryItem`),
the state (:class:`HanabiState`) and the meaning of every action id (:class:`MoveSpec`,
:func:`move_catalogue`, in HLE's move uid order).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from tom_envs.games.hanabi.rules import HanabiConfig


class MoveType(enum.IntEnum):
    """Kinds of move, numbered as HLE's ``HanabiMove::Type``."""

    PLAY = 1
    DISCARD = 2
    REVEAL_COLOR = 3
    REVEAL_RANK = 4


PLAY, DISCARD, REVEAL_COLOR, REVEAL_RANK = (
    int(MoveType.PLAY),
    int(MoveType.DISCARD),
    int(MoveType.REVEAL_COLOR),
    int(MoveType.REVEAL_RANK),
)


class HistoryItem(NamedTuple):
    """One public move, after HLE's ``HanabiHistoryItem`` (players are absolute seats).

    Attributes:
        player: the seat that moved.
        action: the move's action id.
        kind: a :class:`MoveType` value.
        card_index: the hand index played or discarded (-1 for reveals).
        target: the seat that received a reveal (-1 otherwise).
        color: the revealed colour, or the colour of the played/discarded card (-1 if none).
        rank: the revealed rank, or the rank of the played/discarded card (-1 if none).
        scored: a play that continued its stack.
        information_token: a token was regained (a discard, or a play completing a stack).
        reveal_mask: bit ``i`` set when card ``i`` of the target's hand was touched by the reveal.
        newly_revealed: the touched cards whose colour (rank) had not been revealed before.
        drew: the mover drew a replacement card (the deck was not empty).
    """

    player: int
    action: int
    kind: int
    card_index: int = -1
    target: int = -1
    color: int = -1
    rank: int = -1
    scored: bool = False
    information_token: bool = False
    reveal_mask: int = 0
    newly_revealed: int = 0
    drew: bool = False


@dataclass(frozen=True, eq=True)
class HanabiState:
    """The whole game: a hashable value; the rules never mutate it.

    Attributes:
        deck: the shuffled deck of the episode (the first ``players * hand_size`` cards were
            dealt: player 0 first); shared by every state of the episode.
        deck_pos: index in ``deck`` of the next card to draw.
        hands: each seat's cards, oldest first.
        knowledge: each seat's hand knowledge in HLE's bits
            (:class:`~tom_envs.games.hanabi.cards.KnowledgeLayout`).
        fireworks: the height of each colour's stack.
        information_tokens: reveal tokens available.
        life_tokens: lives left.
        discards: the discard pile (misplays included), in order.
        discard_bits: the pile as HLE's per-card-kind thermometers (the vector's discard section).
        current: the seat to act, ``-1`` once the game is over.
        turns_to_play: moves left once the deck is empty (starts at the number of players).
        history: every move so far.
        legal: the acting seat's legal action ids (ascending; empty at the end).
    """

    deck: tuple[int, ...]
    deck_pos: int
    hands: tuple[tuple[int, ...], ...]
    knowledge: tuple[int, ...]
    fireworks: tuple[int, ...]
    information_tokens: int
    life_tokens: int
    discards: tuple[int, ...]
    discard_bits: int
    current: int
    turns_to_play: int
    history: tuple[HistoryItem, ...] = field(default=())
    legal: tuple[int, ...] = field(default=())

    @property
    def deck_size(self) -> int:
        """Cards left to draw."""
        return len(self.deck) - self.deck_pos

    @property
    def stacks(self) -> int:
        """Sum of the stacks (the score unless every life was lost)."""
        return sum(self.fireworks)


class MoveSpec(NamedTuple):
    """What an action id means: its kind, the card index (plays/discards) or the target offset and
    the colour / rank (reveals)."""

    kind: int
    card_index: int = -1
    target_offset: int = 0
    color: int = -1
    rank: int = -1


def move_catalogue(config: HanabiConfig) -> tuple[MoveSpec, ...]:
    """Every action id's meaning, in HLE's uid order."""
    h, n, c, r = config.cards_per_hand, config.players, config.colors, config.ranks
    out = [MoveSpec(DISCARD, i) for i in range(h)]
    out += [MoveSpec(PLAY, i) for i in range(h)]
    out += [MoveSpec(REVEAL_COLOR, -1, o, k) for o in range(1, n) for k in range(c)]
    out += [MoveSpec(REVEAL_RANK, -1, o, -1, k) for o in range(1, n) for k in range(r)]
    return tuple(out)
