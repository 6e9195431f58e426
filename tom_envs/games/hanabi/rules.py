"""Hanabi rules: a pure, fast engine with exact card-knowledge tracking (no gymnasium/pettingzoo).

The rules follow DeepMind's Hanabi Learning Environment (HLE) exactly, so that games replay move for
move in HLE and OpenSpiel (``benchmarks/peers/hanabi_peer.py``, ``tests/games/hanabi/test_parity.py``):

* 50 cards: per colour three 1s, two 2s, two 3s, two 4s and one 5 (colours R, Y, G, W, B);
  8 information (reveal) tokens, 3 life tokens; hands of 5 cards for 2-3 players, 4 for 4-5.
* A move is a play, a discard (illegal while all information tokens are in the box) or a reveal of
  one colour or one rank to another player (it costs a token and must touch at least one card).
* A played card that continues its colour's stack scores; completing a stack (a 5) regains a token;
  a misplay loses a life and goes to the discard pile. A discard regains a token.
* The played or discarded card is removed, the hand shifts left, and the drawn card goes to the end
  (the highest index). Card 0 is therefore the oldest card.
* The game ends when all lives are lost, when every stack is complete, or after one more turn per
  player once the deck is empty. The score is the sum of the stacks, and 0 when all lives are lost
  (the paper's and HLE's rule; ``bomb_score="stacks"`` keeps the stacks instead).

Card knowledge is what each player can infer from the reveals alone (HLE's ``CardKnowledge``): per
card the plausible colours, the plausible ranks, and whether its colour / rank was revealed
directly. It is public: every player knows exactly what every other player knows about their own
cards. See :mod:`tom_envs.games.hanabi.probes` for the ToM questions built on it.

Representation, chosen for speed (the engine steps every move of every RL and bot episode):

* a card is an int ``colour * ranks + rank`` (0-based rank);
* a hand's knowledge is **one int in HLE's encoding**: card ``i`` owns the ``K = C*R + C + R``
  bits from ``i*K`` (35 in the full game): the plausible cards (bit ``c*R + r``), then the revealed
  colour one-hot, then the revealed rank one-hot. A reveal updates a whole hand with one AND and
  one OR (tables by colour/rank and touched cards); a play shifts the later cards down. The
  encoder copies these ints into the observation as they are (incremental encoding), and
  :class:`~tom_envs.games.hanabi.cards.KnowledgeLayout` decodes one card for text, probes and bots;
* the discard pile is kept in order (for the text) and as HLE's thermometer bits (for the vector);
* hands, stacks and the pile are tuples of ints; the shuffled deck is one tuple shared (never
  copied) by every state of the episode, with a draw pointer; a hand or pile that a move does not
  touch is the same object in the next state;
* the state caches the acting player's legal moves, computed once per move.

Action ids are HLE's / OpenSpiel's move uids: discards ``0..H-1``, plays ``H..2H-1``, then reveal
colour ``c`` to the player at offset ``o``: ``2H + (o-1)*C + c``, then reveal rank ``r`` to offset
``o``: ``2H + (N-1)*C + (o-1)*R + r`` (H hand size, N players, C colours, R ranks).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tom_envs.core.game import SEQUENTIAL, Game, GameTags, StepResult
from tom_envs.games.hanabi.cards import (
    KnowledgeLayout,
    bits_of,
    card_of,
    cards_per_rank,
)
from tom_envs.games.hanabi.state import (
    DISCARD,
    PLAY,
    REVEAL_COLOR,
    REVEAL_RANK,
    HanabiConfig,
    HanabiState,
    HistoryItem,
    move_catalogue,
)
from tom_envs.games.hanabi.view import HanabiView, observe

_new = object.__new__
_tuple_new = tuple.__new__  # builds a NamedTuple without its Python-level __new__
#: Sets a frozen instance's ``__dict__`` in one call (the descriptor bypasses the frozen
#: ``__setattr__``); the instance is then exactly as its ``__init__`` would leave it.
_set_dict = HanabiState.__dict__["__dict__"].__set__
#: Events of a move, by kind of outcome, without and with the end of the game.
_EVENTS = {e: ((e,), (e, "game_over")) for e in ("play", "misplay", "discard", "reveal")}
#: Entries of the per-hands feature cache before it is cleared (a hands tuple lives a few
#: moves in play; a search that revisits older states recomputes what was dropped).
_FEAT_CACHE_LIMIT = 128
#: The same for the per-hand cache (:meth:`HanabiGame.hand_info`), which the encoder shares.
_HAND_CACHE_LIMIT = 256
_PLAY_EVENTS, _MISPLAY_EVENTS, _DISCARD_EVENTS, _REVEAL_EVENTS = _EVENTS.values()


def make_state(
    deck: tuple[int, ...],
    deck_pos: int,
    hands: tuple[tuple[int, ...], ...],
    knowledge: tuple[int, ...],
    fireworks: tuple[int, ...],
    information_tokens: int,
    life_tokens: int,
    discards: tuple[int, ...],
    discard_bits: int,
    current: int,
    turns_to_play: int,
    history: tuple[HistoryItem, ...],
    legal: tuple[int, ...],
) -> HanabiState:
    """Build a :class:`HanabiState` without the frozen-dataclass ``__init__`` (several times faster).

    A frozen dataclass sets each field through ``object.__setattr__``; the engine creates one
    state per move, so it sets the instance dict in one call. The result is identical to
    ``HanabiState(...)`` (same fields, equality and hash).
    """
    s = _new(HanabiState)
    _set_dict(
        s,
        {
            "deck": deck,
            "deck_pos": deck_pos,
            "hands": hands,
            "knowledge": knowledge,
            "fireworks": fireworks,
            "information_tokens": information_tokens,
            "life_tokens": life_tokens,
            "discards": discards,
            "discard_bits": discard_bits,
            "current": current,
            "turns_to_play": turns_to_play,
            "history": history,
            "legal": legal,
        },
    )
    return s


class HanabiGame(Game[HanabiState, HanabiView]):
    """The Hanabi rules for one configuration."""

    name = "hanabi"

    def __init__(self, config: HanabiConfig | None = None) -> None:
        cfg = config or HanabiConfig()
        self.config = cfg
        self.n = cfg.players
        self.hand_size = h = cfg.cards_per_hand
        self.colors = cfg.colors
        self.ranks = r = cfg.ranks
        self.max_info = cfg.max_information_tokens
        self.max_life = cfg.max_life_tokens
        self.max_score = cfg.max_score
        self.zero_on_bomb = cfg.bomb_score == "zero"
        self._num_actions = cfg.num_actions
        self.moves = move_catalogue(cfg)
        n_cards = cfg.colors * r
        self.card_color = tuple(card // r for card in range(n_cards))
        self.card_rank = tuple(card % r for card in range(n_cards))
        self.color_bit = tuple(1 << (card // r) for card in range(n_cards))
        self.rank_bit = tuple(1 << (card % r) for card in range(n_cards))
        self.full_deck = tuple(
            card_of(c, k, r)
            for c in range(cfg.colors)
            for k in range(r)
            for _ in range(cards_per_rank(k, r))
        )
        self._knowledge_tables(cfg)
        self._move_tables(cfg)
        self._onehot_rows = tuple(
            tuple(1 << (i * n_cards + card) for card in range(n_cards)) for i in range(max(h, 5))
        )
        # What a hand allows, cached by the tuple's identity (a hand no move touches is the same
        # tuple in the next state): see :meth:`hand_info`.
        self._hand_cache: dict[int, list] = {}
        # With 3-5 players: every seat's hand feature, cached by the identity of the hands tuple
        # (a reveal leaves the tuple as it is; a play or discard derives the next entry from
        # this one): see :meth:`features`.
        self._feat_cache: dict[int, tuple] = {}
        # Per action id, what :meth:`apply` needs (no tuple-keyed lookup on the hot path).
        self._act = tuple(self._action_entry(a) for a in range(self._num_actions))
        # The hand indices a play or discard keeps, by hand size and the index played.
        self._kept = tuple(
            tuple(tuple(j for j in range(size) if j != i) for i in range(size)) for size in range(6)
        )
        # current_players by seat to act; index -1 (the end) is the last entry, ().
        self._actors = (*((p,) for p in range(self.n)), ())
        self._rewards0 = (0.0,) * self.n
        self._rewards1 = (1.0,) * self.n
        self._deck_len = len(self.full_deck)
        self._start_fields = make_state(
            (), self.n * h, (), (self._full_hand,) * self.n, (0,) * cfg.colors, self.max_info,
            self.max_life, (), 0, 0, self.n, (), (),
        ).__dict__  # fmt: skip

    def _knowledge_tables(self, cfg: HanabiConfig) -> None:
        """The card-knowledge bit tables (HLE's layout), the reveal tables and the discard
        thermometers (part of ``__init__``)."""
        h, r = cfg.cards_per_hand, cfg.ranks
        n_cards = cfg.colors * r
        # Knowledge bits (HLE's layout): tables for a whole-hand reveal and for removing a card.
        self.layout = lay = KnowledgeLayout(cfg.colors, r)
        kw = lay.width
        self._kw = kw
        self._full_hand = sum(lay.full_slot << (i * kw) for i in range(h))
        self._low = tuple((1 << (i * kw)) - 1 for i in range(h + 1))
        self._new_slot = tuple(lay.full_slot << (i * kw) for i in range(h + 1))
        keep_flags = ((1 << (cfg.colors + r)) - 1) << lay.cr
        # For a reveal of (kind, value): bits kept on touched cards, on the other cards, the
        # revealed flag to set, and the revealed field (to tell newly revealed cards).
        self._reveal_tables: dict[tuple[int, int], tuple[int, int, int, int]] = {}
        for kind, values in ((REVEAL_COLOR, range(cfg.colors)), (REVEAL_RANK, range(r))):
            for v in values:
                if kind == REVEAL_COLOR:
                    plaus, flag = lay.color_rows[v], 1 << (lay.cr + v)
                    field_mask = ((1 << cfg.colors) - 1) << lay.cr
                else:
                    plaus, flag = lay.rank_cols[v], 1 << (lay.cr + cfg.colors + v)
                    field_mask = ((1 << r) - 1) << (lay.cr + cfg.colors)
                self._reveal_tables[kind, v] = (
                    sum((plaus | keep_flags) << (i * kw) for i in range(h)),
                    sum(((lay.full_slot & ~plaus) | keep_flags) << (i * kw) for i in range(h)),
                    flag,
                    field_mask,
                )
        # spread[m]: every bit of the slots in card mask m; ones[m]: bit 0 of those slots.
        self._spread = tuple(
            sum(lay.slot_mask << (i * kw) for i in bits_of(m)) for m in range(1 << h)
        )
        self._ones = tuple(sum(1 << (i * kw) for i in bits_of(m)) for m in range(1 << h))
        self._slot_shift = tuple(i * kw for i in range(h))
        # Discard thermometers: where each card kind's run of bits starts.
        starts = []
        pos = 0
        for card in range(n_cards):
            starts.append(pos)
            pos += cards_per_rank(card % r, r)
        self._disc_start = tuple(starts)
        self._disc_run = tuple(
            ((1 << cards_per_rank(card % r, r)) - 1) << starts[card] for card in range(n_cards)
        )

    def _move_tables(self, cfg: HanabiConfig) -> None:
        """The legal-move tables: own plays and discards, the reveals per hand feature and the
        per-seat reveal plan (part of ``__init__``)."""
        h, r = cfg.cards_per_hand, cfg.ranks
        n_cards = cfg.colors * r
        # Legal plays/discards, indexed by 2 * hand length + (discarding allowed).
        self._own_moves = tuple(
            (tuple(range(k)) if can else ()) + tuple(range(h, h + k))
            for k in range(h + 1)
            for can in (False, True)
        )
        # Reveal moves to offset o for a hand whose colour (rank) mask is m.
        base_c = 2 * h
        base_r = 2 * h + (self.n - 1) * cfg.colors
        self._color_moves = [
            [tuple(base_c + (o - 1) * cfg.colors + k for k in bits_of(m)) for m in range(32)]
            for o in range(self.n)
        ]
        self._rank_moves = [
            [tuple(base_r + (o - 1) * r + k for k in bits_of(m)) for m in range(32)]
            for o in range(self.n)
        ]
        self._others = tuple(
            tuple((p + o) % self.n for o in range(1, self.n)) for p in range(self.n)
        )
        # Per offset o and hand feature m (below): the (colour, rank) reveals to that hand.
        reveal_pairs = [
            tuple((self._color_moves[o][m & 31], self._rank_moves[o][m >> 5]) for m in range(1024))
            for o in range(self.n)
        ]
        # Per seat to act: (seat, its reveal pairs) of each other seat, offset 1 first, flat:
        # (seat1, pairs1, seat2, pairs2, ...) (what _legal walks).
        self._reveal_plan: tuple[tuple[Any, ...], ...] = tuple(
            tuple(x for o, seat in enumerate(self._others[p], 1) for x in (seat, reveal_pairs[o]))
            for p in range(self.n)
        )
        # Per card: its colour's bit and its rank's bit above the 5 colour bits (a hand's ORed
        # features give the colours and ranks it holds); per such mask, the reveals at offset 1.
        self._card_feat = tuple(
            (1 << (card // r)) | (1 << (5 + card % r)) for card in range(n_cards)
        )
        self._reveals1 = tuple(
            self._color_moves[1][m & 31] + self._rank_moves[1][m >> 5] for m in range(1 << 10)
        )

    # ------------------------------------------------------------------ Game API
    @property
    def num_players(self) -> int:
        """Seats (2-5)."""
        return self.n

    @property
    def num_actions(self) -> int:
        """HLE's move count (20 for two players)."""
        return self._num_actions

    @property
    def tags(self) -> GameTags:
        """Sequential, stochastic (the shuffle), imperfect information, fully cooperative."""
        return GameTags(
            dynamics=SEQUENTIAL, chance="stochastic", information="imperfect", utility="identical"
        )

    @property
    def reward_range(self) -> tuple[float, float]:
        """A move scores at most 1; losing the last life can take back every point scored."""
        low = -float(self.max_score - 1) if self.zero_on_bomb else 0.0
        return (low, 1.0)

    @property
    def max_steps(self) -> int:
        """An upper bound on moves: every card played or discarded once, plus every reveal paid
        for by the initial tokens, the discards and the completed stacks."""
        deck = len(self.full_deck)
        return 2 * deck + self.max_info + self.colors

    def initial_state(self, rng: np.random.Generator) -> HanabiState:
        """Shuffle the deck with ``rng`` and deal (player 0 first; player 0 starts, as in HLE).

        ``rng.shuffle`` of a list draws exactly what ``rng.permutation`` of the deck array draws
        and puts the cards in the same order (tested), at half the cost of the array's round trip.
        """
        deck = list(self.full_deck)
        rng.shuffle(deck)
        return self._deal(tuple(deck))

    def state_from_deck(self, deck: Sequence[int]) -> HanabiState:
        """The start state for a given deck order (injected chance, for tests and replays).

        ``deck`` must be a permutation of the full deck; hands are dealt from its front, player 0
        first, and later draws follow it in order.
        """
        deck = tuple(int(c) for c in deck)
        if sorted(deck) != sorted(self.full_deck):
            raise ValueError("deck must be a permutation of the full deck")
        return self._deal(deck)

    def _deal(self, deck: tuple[int, ...]) -> HanabiState:
        h = self.hand_size
        hands = tuple([deck[p * h : (p + 1) * h] for p in range(self.n)])
        fields = self._start_fields.copy()  # every field but these three is the same at a deal
        fields["deck"] = deck
        fields["hands"] = hands
        fields["legal"] = self._legal(hands, self.max_info, 0)
        state = _new(HanabiState)
        _set_dict(state, fields)
        return state

    def current_players(self, state: HanabiState) -> tuple[int, ...]:
        """The one seat to act, or none at the end."""
        return self._actors[state.current]

    def legal_actions(self, state: HanabiState, player: int) -> tuple[int, ...]:
        """The cached legal moves of the acting seat; empty for every other seat."""
        return state.legal if player == state.current else ()

    def is_terminal(self, state: HanabiState) -> bool:
        """Out of lives, every stack complete, or the final round played."""
        return state.current < 0

    #: ``observe(state, player)``: the player's view; it *is* :func:`tom_envs.games.hanabi.view.observe`
    #: (bound as the method, saving a call per observation).
    observe = observe  # type: ignore[assignment]

    # ------------------------------------------------------------------ queries
    def score(self, state: HanabiState) -> int:
        """The score now: the stacks, or 0 once every life is lost (with ``bomb_score="zero"``)."""
        if state.life_tokens <= 0 and self.zero_on_bomb:
            return 0
        return sum(state.fireworks)

    def card_knowledge(self, state: HanabiState, seat: int) -> tuple[int, ...]:
        """``seat``'s card knowledge as per-card
        :func:`~tom_envs.games.hanabi.cards.knowledge_code` values."""
        return self.layout.codes(state.knowledge[seat], len(state.hands[seat]))

    # ------------------------------------------------------------------ moves
    def _legal(self, hands: tuple[tuple[int, ...], ...], info: int, cur: int) -> tuple[int, ...]:
        """Legal action ids of seat ``cur`` (ascending, as HLE lists them)."""
        legal = self._own_moves[2 * len(hands[cur]) + (info < self.max_info)]
        if info <= 0:
            return legal
        cache = self._hand_cache
        if self.n == 2:
            hand = hands[1 - cur]
            hit = cache.get(id(hand))
            if hit is None or hit[0] is not hand:
                hit = self.hand_info(hand)
            return legal + hit[2]
        feats = self.features(hands)
        plan = self._reveal_plan[cur]
        if len(plan) == 6:  # four players, written out: the colour reveals, then the ranks
            s1, t1, s2, t2, s3, t3 = plan
            c1, r1 = t1[feats[s1]]
            c2, r2 = t2[feats[s2]]
            c3, r3 = t3[feats[s3]]
            return (*legal, *c1, *c2, *c3, *r1, *r2, *r3)
        colors: tuple[int, ...] = ()
        ranks: tuple[int, ...] = ()
        for i in range(0, len(plan), 2):
            c, r = plan[i + 1][feats[plan[i]]]
            colors += c
            ranks += r
        return legal + colors + ranks

    def features(self, hands: tuple[tuple[int, ...], ...]) -> tuple[int, ...]:
        """Each seat's hand feature (its colours' bits, then its ranks' bits from bit 5: what the
        reveals to that hand can be), cached by the identity of ``hands``.

        A tuple never changes and the cache keeps it alive, so an ``id`` is never reused while
        its entry is there; the entry is checked by identity all the same."""
        cache = self._feat_cache
        hit = cache.get(id(hands))
        if hit is not None and hit[0] is hands:
            return hit[1]
        feats = tuple([self.hand_feature(hand) for hand in hands])
        if len(cache) >= _FEAT_CACHE_LIMIT:
            cache.clear()
        cache[id(hands)] = (hands, feats)
        return feats

    def hand_feature(self, hand: tuple[int, ...]) -> int:
        """The colours ``hand`` holds (bits 0-4), then its ranks (from bit 5): what the reveals
        to it can be."""
        feat = self._card_feat
        size = len(hand)
        if size == 5:
            a, b, c, d, e = hand
            return feat[a] | feat[b] | feat[c] | feat[d] | feat[e]
        if size == 4:  # the hand size of 4-5 players
            a, b, c, d = hand
            return feat[a] | feat[b] | feat[c] | feat[d]
        m = 0
        for card in hand:
            m |= feat[card]
        return m

    def hand_info(self, hand: tuple[int, ...], onehot: bool = False) -> list:
        """What a hand allows, cached by the tuple's identity: ``[hand, feature (its colours'
        bits, then its ranks' bits from bit 5), the reveals to this hand at offset 1, the hand's
        one-hot bits for the observation vector (``None`` until the encoder fills them in, or
        filled in at once with ``onehot=True``)]``.

        A tuple never changes and the cache keeps it alive, so an ``id`` is never reused while
        its entry is there; the entry is checked by identity all the same."""
        m = self.hand_feature(hand)
        entry = [hand, m, self._reveals1[m], None]
        if onehot:
            self.hand_onehot(entry)
        cache = self._hand_cache
        if len(cache) >= _HAND_CACHE_LIMIT:
            cache.clear()
        cache[id(hand)] = entry
        return entry

    def hand_onehot(self, entry: list) -> int:
        """The one-hot bits of a :meth:`hand_info` entry's hand (bit ``i * C*R + card`` for
        card ``i``), computed once and kept in the entry."""
        bits = entry[3]
        if bits is None:
            hand = entry[0]
            if len(hand) == 5:
                r0, r1, r2, r3, r4 = self._onehot_rows
                a, b, c, d, e = hand
                bits = r0[a] | r1[b] | r2[c] | r3[d] | r4[e]
            elif len(hand) == 4:  # the hand size of 4-5 players
                rows = self._onehot_rows
                a, b, c, d = hand
                bits = rows[0][a] | rows[1][b] | rows[2][c] | rows[3][d]
            else:
                bits = 0
                rows = self._onehot_rows
                for i, card in enumerate(hand):
                    bits |= rows[i][card]
            entry[3] = bits
        return bits

    def _action_entry(self, action: int) -> tuple:
        """What :meth:`apply` needs for ``action``, all looked up once here.

        A play or discard: ``(kind, card index, low-cards mask)``. A reveal: ``(kind, target
        offset, touch, keep, set, had, hint colour, hint rank)``, where ``touch[i][card]``
        is bit ``i`` when ``card`` at hand index ``i`` has the revealed colour (rank), and, per
        mask ``m`` of touched cards: ``keep[m]`` the knowledge bits kept, ``set[m]`` the revealed
        flags set, and ``had`` maps the flags a hand already had (``knowledge & set[m]``) back to
        the cards (a touched card whose colour (rank) was revealed before was revealed as this
        same value, so its flag is set)."""
        kind, index, offset, color, rank = self.moves[action]
        if kind <= DISCARD:
            return (kind, index, self._low[index])
        value = color if kind == REVEAL_COLOR else rank
        attribute = self.card_color if kind == REVEAL_COLOR else self.card_rank
        touched_keep, other_keep, flag, _ = self._reveal_tables[kind, value]
        touch = tuple(
            tuple((attribute[card] == value) << i for card in range(len(attribute)))
            for i in range(self.hand_size)
        )
        masks = range(1 << self.hand_size)
        keep = tuple(
            (touched_keep & self._spread[m]) | (other_keep & ~self._spread[m]) for m in masks
        )
        flags = tuple(flag * self._ones[m] for m in masks)
        had = {flags[m]: m for m in masks}
        hint_color, hint_rank = (value, -1) if kind == REVEAL_COLOR else (-1, value)
        return (kind, offset, touch, keep, flags, had, hint_color, hint_rank)

    def step(
        self,
        state: HanabiState,
        actions: Mapping[int, int],
        rng: np.random.Generator,
        messages: Mapping[int, str] | None = None,
    ) -> StepResult[HanabiState]:
        """Apply the acting seat's move; draw from the deck (no use of ``rng``: the deck order was
        fixed at the start). Every seat receives the change of the score.

        :meth:`Game.step` with a fast path: one legal ``int`` action from the seat to act, and no
        message, is applied at once; anything else goes through :meth:`Game.step`'s validation
        (and its error), which then calls :meth:`apply`. ``apply`` *is* this method: an input
        already validated takes the fast path at once, so neither entry point pays a second call.
        The move itself is :meth:`_play_or_discard` or :meth:`_reveal`; then the seat to act next
        and its legal moves.
        """
        cur = state.current
        action = actions.get(cur)
        if messages or type(action) is not int or len(actions) != 1 or action not in state.legal:
            return super().step(state, actions, rng, messages)
        spec = self._act[action]
        n = self.n
        # The next state's fields: a copy of this state's, then each field the move changes
        # (copying the dict and setting a few keys is cheaper than building all thirteen).
        fields = state.__dict__.copy()
        deck_empty = state.deck_pos >= self._deck_len
        turns = state.turns_to_play
        if deck_empty:
            turns -= 1
            fields["turns_to_play"] = turns
        if spec[0] <= DISCARD:
            item, rewards, events, over = self._play_or_discard(
                state, fields, cur, action, spec, deck_empty, turns
            )
        else:
            item, rewards, events, over = self._reveal(state, fields, cur, action, spec, turns)
        hands = fields["hands"]
        info = fields["information_tokens"]
        if over:
            nxt = -1
            legal: tuple[int, ...] = ()
        elif n == 2:  # what _legal does, inlined: the seat to act sees the mover's hand
            nxt = 1 - cur
            legal = self._own_moves[2 * len(hands[nxt]) + (info < self.max_info)]
            if info > 0:
                hand = hands[cur]
                hit = self._hand_cache.get(id(hand))
                if hit is not None and hit[0] is hand:
                    legal += hit[2]
                elif len(hand) == 5:  # a new hand (a play or discard): its reveals, uncached
                    f = self._card_feat  # (the encoder caches the hand when it first shows it)
                    c0, c1, c2, c3, c4 = hand
                    legal += self._reveals1[f[c0] | f[c1] | f[c2] | f[c3] | f[c4]]
                else:
                    legal += self.hand_info(hand)[2]
        else:  # what _legal does, inlined
            nxt = cur + 1 if cur + 1 < n else 0
            legal = self._own_moves[2 * len(hands[nxt]) + (info < self.max_info)]
            if info > 0:
                hit = self._feat_cache.get(id(hands))
                feats = hit[1] if hit is not None and hit[0] is hands else self.features(hands)
                plan = self._reveal_plan[nxt]
                if n == 4:
                    s1, t1, s2, t2, s3, t3 = plan
                    c1, r1 = t1[feats[s1]]
                    c2, r2 = t2[feats[s2]]
                    c3, r3 = t3[feats[s3]]
                    legal = (*legal, *c1, *c2, *c3, *r1, *r2, *r3)  # one tuple built
                else:
                    legal = self._legal(hands, info, nxt)
        fields["current"] = nxt
        fields["history"] = (*state.history, item)
        fields["legal"] = legal
        new = _new(HanabiState)
        _set_dict(new, fields)  # what make_state does, inlined: one state per move
        return _tuple_new(StepResult, (new, rewards, events[over]))

    def _play_or_discard(
        self,
        state: HanabiState,
        fields: dict[str, Any],
        cur: int,
        action: int,
        spec: tuple[int, int, int],
        deck_empty: bool,
        turns: int,
    ) -> tuple[HistoryItem, tuple[float, ...], tuple[Any, ...], bool]:
        """Play or discard card ``index`` of the mover's hand (``spec``), then draw: sets the
        changed ``fields``; returns the history item, rewards, events (by game over) and whether
        the game is over."""
        kind, index, low = spec
        hands = state.hands
        knowledge = state.knowledge
        info = state.information_tokens
        hand = hands[cur]
        card = hand[index]
        color = self.card_color[card]
        rank = self.card_rank[card]
        fireworks = state.fireworks
        life = state.life_tokens
        rewards = self._rewards0
        token = scored = False
        if kind == PLAY and fireworks[color] == rank:
            scored = True
            rewards = self._rewards1
            fireworks = fields["fireworks"] = (
                *fireworks[:color],
                rank + 1,
                *fireworks[color + 1 :],
            )
            if rank == self.ranks - 1 and info < self.max_info:
                fields["information_tokens"] = info + 1
                token = True
            events = _PLAY_EVENTS
        else:
            fields["discards"] = (*state.discards, card)
            disc_bits = state.discard_bits
            run = disc_bits & self._disc_run[card]
            fields["discard_bits"] = disc_bits | (run << 1) | (1 << self._disc_start[card])
            if kind == PLAY:
                life = fields["life_tokens"] = life - 1
                events = _MISPLAY_EVENTS
                if life <= 0 and self.zero_on_bomb:
                    rewards = (-float(sum(fireworks)),) * self.n  # the last life: the score is 0
            else:  # discarding is illegal with every token in the box
                fields["information_tokens"] = info + 1
                token = True
                events = _DISCARD_EVENTS
        kb = knowledge[cur]
        kb = (kb & low) | ((kb >> self._kw) & ~low)
        size = len(hand)
        if deck_empty:
            new_hand = hand[:index] + hand[index + 1 :]
        else:
            pos = state.deck_pos
            if size == 4:  # the cards kept, then the drawn card, in one tuple
                i, j, k = self._kept[4][index]
                new_hand = (hand[i], hand[j], hand[k], state.deck[pos])
            elif size == 5:
                i, j, k, m = self._kept[5][index]
                new_hand = (hand[i], hand[j], hand[k], hand[m], state.deck[pos])
            else:
                new_hand = (*hand[:index], *hand[index + 1 :], state.deck[pos])
            kb |= self._new_slot[size - 1]
            fields["deck_pos"] = pos + 1
        if self.n == 2:
            fields["hands"] = (hands[0], new_hand) if cur else (new_hand, hands[1])
            fields["knowledge"] = (knowledge[0], kb) if cur else (kb, knowledge[1])
        else:
            self._replace_hand(fields, hands, cur, new_hand, kb)
        item = _tuple_new(
            HistoryItem,
            (cur, action, kind, index, -1, color, rank, scored, token, 0, 0, not deck_empty),
        )
        over = life <= 0 or turns <= 0 or (scored and sum(fireworks) >= self.max_score)
        return item, rewards, events, over

    def _replace_hand(
        self,
        fields: dict[str, Any],
        hands: tuple[tuple[int, ...], ...],
        cur: int,
        new_hand: tuple[int, ...],
        kb: int,
    ) -> None:
        """Three or more seats: the mover's new hand and knowledge into ``fields``, and the next
        hands' features (this state's, with the mover's new hand) into the feature cache."""
        hands_list = list(hands)
        hands_list[cur] = new_hand
        new_hands = tuple(hands_list)
        fcache = self._feat_cache
        hit = fcache.get(id(hands))
        if hit is not None and hit[0] is hands:
            feats_list = list(hit[1])
            feats_list[cur] = self.hand_feature(new_hand)
            if len(fcache) >= _FEAT_CACHE_LIMIT:
                fcache.clear()
            fcache[id(new_hands)] = (new_hands, tuple(feats_list))
        fields["hands"] = new_hands
        knowledge_list = list(fields["knowledge"])
        knowledge_list[cur] = kb
        fields["knowledge"] = tuple(knowledge_list)

    def _reveal(
        self,
        state: HanabiState,
        fields: dict[str, Any],
        cur: int,
        action: int,
        spec: tuple[Any, ...],
        turns: int,
    ) -> tuple[HistoryItem, tuple[float, ...], tuple[Any, ...], bool]:
        """Reveal a colour or rank to a seat (``spec``): sets the changed ``fields``; returns the
        history item, rewards, events (by game over) and whether the game is over."""
        kind, offset, touch, keep, flags, had, hint_color, hint_rank = spec
        n = self.n
        target = cur + offset
        if target >= n:
            target -= n
        hand = state.hands[target]
        size = len(hand)
        if size == 4:  # the cards the reveal touches
            c0, c1, c2, c3 = hand
            mask = touch[0][c0] | touch[1][c1] | touch[2][c2] | touch[3][c3]
        elif size == 5:
            c0, c1, c2, c3, c4 = hand
            mask = touch[0][c0] | touch[1][c1] | touch[2][c2] | touch[3][c3] | touch[4][c4]
        else:
            mask = 0
            for i, c0 in enumerate(hand):
                mask |= touch[i][c0]
        fields["information_tokens"] = state.information_tokens - 1
        knowledge = state.knowledge
        kb = knowledge[target]
        set_bits = flags[mask]
        newly = mask ^ had[kb & set_bits]  # the touched cards not revealed this way before
        kb = (kb & keep[mask]) | set_bits
        if n == 2:
            fields["knowledge"] = (knowledge[0], kb) if target else (kb, knowledge[1])
        else:
            knowledge_list = list(knowledge)
            knowledge_list[target] = kb
            fields["knowledge"] = tuple(knowledge_list)
        item = _tuple_new(
            HistoryItem,
            (cur, action, kind, -1, target, hint_color, hint_rank, False, False, mask, newly,
             False),
        )  # fmt: skip
        return item, self._rewards0, _REVEAL_EVENTS, turns <= 0  # no score, no life lost

    apply = step  # the validated entry point: see :meth:`step`
