"""What one Hanabi player sees: the only place that decides it.

A player sees every other player's cards but not their own, and nothing of the deck's order. Card
knowledge (what each player can infer from the reveals) is public, so a player sees everyone's,
their own included: that is how "my cards based on my knowledge" and "Bob believes his card 0 could
be ..." of the paper's state description are both computed from the view. The move history is
public (a played or discarded card is shown face up).

The view is egocentric: ``hands[o - 1]`` and ``knowledge[o]`` belong to the player ``o`` seats
after me (``knowledge[0]`` is mine). History items keep absolute seats; ``player`` converts them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tom_envs.games.hanabi.rules import HanabiGame
    from tom_envs.games.hanabi.state import HanabiState, HistoryItem


@dataclass(frozen=True)
class HanabiView:
    """One player's view.

    Attributes:
        player: my seat.
        num_players: seats at the table.
        current_offset: how many seats after me the player to act sits (0: me; -1: game over).
        hands: the other players' cards, by offset 1 .. N-1, oldest card first.
        my_hand_size: how many cards I hold (I cannot see them).
        knowledge: each hand's card knowledge by offset 0 .. N-1 (mine first), as HLE's bits
            (:class:`~tom_envs.games.hanabi.cards.KnowledgeLayout` decodes a card).
        fireworks: stack height per colour.
        information_tokens: reveal tokens available.
        life_tokens: lives left.
        deck_size: cards left to draw.
        discards: the discard pile, in order.
        discard_bits: the same pile as HLE's per-card-kind thermometers.
        history: every move so far (absolute seats).
        turns_to_play: moves left once the deck is empty.
        score: the score now (0 once every life is lost, unless ``bomb_score="stacks"``).
        legal_actions: my legal action ids (empty unless it is my turn).
    """

    player: int
    num_players: int
    current_offset: int
    hands: tuple[tuple[int, ...], ...]
    my_hand_size: int
    knowledge: tuple[int, ...]
    fireworks: tuple[int, ...]
    information_tokens: int
    life_tokens: int
    deck_size: int
    discards: tuple[int, ...]
    discard_bits: int
    history: tuple[HistoryItem, ...]
    turns_to_play: int
    score: int
    legal_actions: tuple[int, ...]

    def hand_size(self, offset: int) -> int:
        """Cards held by the player ``offset`` places after me (0: me)."""
        return self.my_hand_size if offset == 0 else len(self.hands[offset - 1])

    def seat(self, offset: int) -> int:
        """The absolute seat ``offset`` places after me."""
        return (self.player + offset) % self.num_players

    def offset(self, seat: int) -> int:
        """How many places after me ``seat`` sits."""
        return (seat - self.player) % self.num_players

    @property
    def my_turn(self) -> bool:
        """Whether I act now."""
        return self.current_offset == 0


_new = object.__new__
#: Sets a frozen view's ``__dict__`` in one call (the descriptor bypasses the frozen ``__setattr__``).
_set_dict = HanabiView.__dict__["__dict__"].__set__


def observe(game: HanabiGame, state: HanabiState, player: int) -> HanabiView:
    """Build ``player``'s view of ``state`` (hot path: filled without the frozen ``__init__``)."""
    n = game.n
    if not 0 <= player < n:
        raise ValueError(f"player must be in [0, {n}), got {player}")
    hs = state.hands
    ks = state.knowledge
    cur = state.current
    life = state.life_tokens
    fireworks = state.fireworks
    if n == 2:
        other = 1 - player
        hands: tuple[tuple[int, ...], ...] = (hs[other],)
        knowledge = (ks[player], ks[other])
    else:
        others = game._others[player]
        hands = tuple([hs[s] for s in others])
        knowledge = (ks[player], *[ks[s] for s in others])
    v = _new(HanabiView)
    _set_dict(
        v,
        {
            "player": player,
            "num_players": n,
            "current_offset": -1 if cur < 0 else (cur - player) % n,
            "hands": hands,
            "my_hand_size": len(hs[player]),
            "knowledge": knowledge,
            "fireworks": fireworks,
            "information_tokens": state.information_tokens,
            "life_tokens": life,
            "deck_size": len(state.deck) - state.deck_pos,
            "discards": state.discards,
            "discard_bits": state.discard_bits,
            "history": state.history,
            "turns_to_play": state.turns_to_play,
            "score": 0 if (life <= 0 and game.zero_on_bomb) else sum(fireworks),
            "legal_actions": state.legal if cur == player else (),
        },
    )
    return v
