"""Hanabi's moves and state values, which the rules (:mod:`~tom_envs.games.hanabi.rules`) build
and never mutate: the kinds of move (:class:`MoveType`), the public history (:class:`HistoryItem`),
the state (:class:`HanabiState`), the game's settings (:class:`HanabiConfig`) and the meaning of every action id (:class:`MoveSpec`,
:func:`move_catalogue`, in HLE's move uid order).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import NamedTuple

from tom_envs.games.hanabi.cards import cards_per_rank

BOMB_SCORES = ("zero", "stacks")


@dataclass(frozen=True)
class HanabiConfig:
    """Settings of a Hanabi game (HLE's parameters; defaults are the full game).

    Attributes:
        players: 2 to 5.
        colors: 1 to 5 (``RYGWB`` in order).
        ranks: 1 to 5.
        hand_size: cards per hand; ``None`` for the rules' 5 (2-3 players) or 4 (4-5 players).
        max_information_tokens: reveal tokens (8).
        max_life_tokens: lives (3).
        bomb_score: ``"zero"``: losing every life scores 0 (the paper, HLE, OpenSpiel);
            ``"stacks"``: the stacks reached still count.
        names: player names used by the text (seat order), after the paper's Alice and Bob.
        probes: which ToM probes to ask (:mod:`~tom_envs.games.hanabi.probes`): ``"partner"``
            (first order: what each partner knows about each of their cards), ``"all"`` (plus
            introspection and second order) or ``"none"``.
    """

    players: int = 2
    colors: int = 5
    ranks: int = 5
    hand_size: int | None = None
    max_information_tokens: int = 8
    max_life_tokens: int = 3
    bomb_score: str = "zero"
    names: tuple[str, ...] = ("Alice", "Bob", "Cathy", "Donald", "Emily")
    probes: str = "partner"

    def __post_init__(self) -> None:
        if not 2 <= self.players <= 5:
            raise ValueError(f"players must be 2 to 5, got {self.players}")
        if not 1 <= self.colors <= 5:
            raise ValueError(f"colors must be 1 to 5, got {self.colors}")
        if not 1 <= self.ranks <= 5:
            raise ValueError(f"ranks must be 1 to 5, got {self.ranks}")
        if self.hand_size is not None and not 1 <= self.hand_size <= 8:
            raise ValueError(f"hand_size must be 1 to 8 (or None), got {self.hand_size}")
        if self.max_information_tokens < 1:
            raise ValueError(
                f"max_information_tokens must be >= 1, got {self.max_information_tokens}"
            )
        if self.max_life_tokens < 1:
            raise ValueError(f"max_life_tokens must be >= 1, got {self.max_life_tokens}")
        if self.bomb_score not in BOMB_SCORES:
            raise ValueError(f"bomb_score must be one of {BOMB_SCORES}, got {self.bomb_score!r}")
        names = tuple(self.names)
        if len(names) < self.players or len(set(names[: self.players])) < self.players:
            raise ValueError(f"names must give {self.players} distinct names, got {names}")
        object.__setattr__(self, "names", names)
        if self.probes is None:  # `--kw probes=none` on the command line reads as None
            object.__setattr__(self, "probes", "none")
        if self.probes not in ("partner", "all", "none"):
            raise ValueError(f"probes must be 'partner', 'all' or 'none', got {self.probes!r}")
        if self.deck_size < self.players * self.cards_per_hand:
            raise ValueError("the deck is too small to deal every hand")

    @property
    def cards_per_hand(self) -> int:
        """The hand size (5 for 2-3 players, 4 for 4-5, unless set)."""
        if self.hand_size is not None:
            return self.hand_size
        return 5 if self.players <= 3 else 4

    @property
    def deck_size(self) -> int:
        """Cards in the deck (50 in the full game)."""
        return self.colors * sum(cards_per_rank(r, self.ranks) for r in range(self.ranks))

    @property
    def max_score(self) -> int:
        """Every stack complete: ``colors * ranks`` (25)."""
        return self.colors * self.ranks

    @property
    def num_actions(self) -> int:
        """HLE's ``MaxMoves``: ``2H + (N-1)(C+R)`` (20 for the 2-player game)."""
        return 2 * self.cards_per_hand + (self.players - 1) * (self.colors + self.ranks)


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
