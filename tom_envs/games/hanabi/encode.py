"""Vector rendering of a Hanabi view: HLE's canonical encoding, bit for bit (no game logic).

The layout is DeepMind's ``CanonicalObservationEncoder`` (658 floats for two players), so policies
and tooling built for HLE/OpenSpiel read it unchanged, and the parity test compares our vectors to
OpenSpiel's ``observation_tensor`` at every step. Sections (:func:`pieces`), egocentric:

    hands           (N-1)*H*25 + N   other players' cards one-hot (offset 1 first), then one bit
                                     per player (me first) whose hand is short of H cards
    board           (D - N*H) + 25 + 8 + 3   deck size (thermometer), each stack's top card
                                     (one-hot per colour), information and life tokens (thermometers)
    discards        D                per card kind, a thermometer of copies discarded
    last_action     N + 4 + N + C + R + H + H + 25 + 2   the last move: its player (offset), kind,
                                     target (offset), colour, rank, cards touched, hand index,
                                     card played/discarded, scored, token regained
    card_knowledge  N*H*(25 + C + R)  per card of every hand (mine first): plausible cards from
                                     the reveals, colour revealed, rank revealed

(D deck size, N players, H hand size, C colours, R ranks, 25 = C*R.)

Speed: the vector is assembled as one Python int of bits and unpacked by numpy once. The rules keep
card knowledge and the discard pile in exactly these bits, updated incrementally move by move, so
those sections are copied, not computed. Hands and stacks are tuples that the rules share between
states while unchanged, so their bits are computed once per change (an identity cache, which is
pure: a tuple never changes).
"""

from __future__ import annotations

from operator import itemgetter

import numpy as np

from tom_envs.core.game import Encoder
from tom_envs.games.hanabi.rules import HanabiConfig, HanabiGame
from tom_envs.games.hanabi.state import (
    DISCARD,
    PLAY,
    REVEAL_COLOR,
    REVEAL_RANK,
    HanabiState,
    HistoryItem,
)
from tom_envs.games.hanabi.view import HanabiView

_CACHE_LIMIT = 1024
_frombuffer, _unpackbits, _uint8, _float32 = np.frombuffer, np.unpackbits, np.uint8, np.float32
_ndarray = np.ndarray
#: Row ``b`` holds byte ``b``'s eight bits (little-endian) as floats: one ``take`` unpacks a vector.
_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little").astype(
    np.float32
)


def pieces(config: HanabiConfig) -> tuple[tuple[str, int], ...]:
    """The named sections of the observation vector and their lengths, in order."""
    n, c, r, h = config.players, config.colors, config.ranks, config.cards_per_hand
    cr = c * r
    d = config.deck_size
    return (
        ("hands", (n - 1) * h * cr + n),
        ("board", (d - n * h) + cr + config.max_information_tokens + config.max_life_tokens),
        ("discards", d),
        ("last_action", n + 4 + n + c + r + h + h + cr + 2),
        ("card_knowledge", n * h * (cr + c + r)),
    )


class HanabiEncoder(Encoder[HanabiView, HanabiState]):
    """HLE's canonical observation; the state adds player 0's own hand and the seat to act."""

    def __init__(self, config: HanabiConfig, game: HanabiGame | None = None) -> None:
        self.config = config
        if game is not None and game.config != config:
            raise ValueError("game must be a HanabiGame of the same config")
        #: The rules (shared with the bundle's game when given: the hands' one-hot bits come from
        #: its per-hand cache, filled when the acting seat's legal moves were listed).
        self.game = game if game is not None else HanabiGame(config)
        n, c, r, h = config.players, config.colors, config.ranks, config.cards_per_hand
        self.n, self.c, self.r, self.h = n, c, r, h
        cr = self.cr = c * r
        self.pieces = pieces(config)
        starts = {}
        pos = 0
        for name, length in self.pieces:
            starts[name] = pos
            pos += length
        self.size = self.obs_size = pos
        self.state_size = pos + h * cr + n
        self.nbytes = (self.state_size + 7) // 8
        self._obs_nbytes = (self.size + 7) // 8
        self._shape = (self.size,)
        # hands section
        self.hand_width = h * cr
        self.hand_offsets = [0] + [(o - 1) * h * cr for o in range(1, n)]
        self.missing = (n - 1) * h * cr
        # board section
        b = starts["board"]
        self.deck_off = b
        self.fw_off = b + config.deck_size - n * h
        self.info_off = self.fw_off + cr
        self.life_off = self.info_off + config.max_information_tokens
        self.disc_off = starts["discards"]
        self.last_off = starts["last_action"]
        #: Where each part of the last-action section starts, in order: the mover (offset from
        #: me), the kind (play, discard, colour, rank), the target (offset), the revealed colour,
        #: the revealed rank, the cards touched, the hand index played or discarded, the card
        #: played or discarded, then two flags (scored, gave a token).
        self.last_action_offsets: dict[str, int] = {}
        at = self.last_off
        for name, length in (("player", n), ("kind", 4), ("target", n), ("color", c), ("rank", r),
                             ("mask", h), ("pos", h), ("card", cr), ("flags", 2)):  # fmt: skip
            self.last_action_offsets[name] = at
            at += length
        self.know_width = cr + c + r
        self.know_offsets = [starts["card_knowledge"] + o * h * self.know_width for o in range(n)]
        self._hand_cache = self.game._hand_cache  # the game's, read only here (see _hand)
        self._others_of = tuple(
            itemgetter(*seats) if len(seats) > 1 else (lambda xs, s=seats[0]: (xs[s],))
            for seats in self.game._others
        )
        self._fw_cache: dict[int, tuple[tuple[int, ...], int]] = {}
        # player_bits, bound once (two players: the straight-line version, one call less)
        self._player_bits = self._bits2 if n == 2 else self.player_bits
        self._last_action_tables()
        # Thermometers of the board, by value, already in place.
        self._deck_bits = tuple(
            ((1 << k) - 1) << self.deck_off for k in range(config.deck_size + 1)
        )
        self._info_bits = tuple(
            ((1 << k) - 1) << self.info_off for k in range(config.max_information_tokens + 1)
        )
        self._life_bits = tuple(
            ((1 << k) - 1) << self.life_off for k in range(config.max_life_tokens + 1)
        )
        self._missing_bits = tuple(1 << (self.missing + o) for o in range(n))
        # Both token thermometers at once, by information tokens * (lives + 1) + lives.
        self._lives1 = config.max_life_tokens + 1
        self._token_bits = tuple(i | k for i in self._info_bits for k in self._life_bits)

    # ------------------------------------------------------------------ shapes

    # ------------------------------------------------------------------ sections
    def _hand(self, hand: tuple[int, ...]) -> int:
        """A hand's one-hot bits (from the game's cache by the tuple's identity)."""
        hit = self._hand_cache.get(id(hand))
        if hit is None or hit[0] is not hand:
            hit = self.game.hand_info(hand)
        return hit[3] if hit[3] is not None else self.game.hand_onehot(hit)

    def _fireworks(self, fw: tuple[int, ...]) -> int:
        """The stacks' one-hot bits, in place in the vector (cached by the tuple's identity)."""
        hit = self._fw_cache.get(id(fw))
        if hit is not None and hit[0] is fw:
            return hit[1]
        bits = 0
        r = self.r
        for color, height in enumerate(fw):
            if height:
                bits |= 1 << (color * r + height - 1)
        bits <<= self.fw_off
        self._remember(self._fw_cache, fw, bits)
        return bits

    @staticmethod
    def _remember(cache: dict, key: tuple[int, ...], bits: int) -> None:
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        cache[id(key)] = (key, bits)

    def _last_action_tables(self) -> None:
        """Precomputed bits of the last-action section (absolute positions in the vector)."""
        n, c, r, h, cr = self.n, self.c, self.r, self.h, self.cr
        la = self.last_action_offsets
        self._la_player = tuple(1 << (la["player"] + k) for k in range(n))
        kind_off, target_off, color_off = la["kind"], la["target"], la["color"]
        rank_off, mask_off, pos_off = la["rank"], la["mask"], la["pos"]
        card_off, flag_off = la["card"], la["flags"]
        self._la_target = tuple(1 << (target_off + k) for k in range(n))
        kind_bit = {PLAY: 0, DISCARD: 1, REVEAL_COLOR: 2, REVEAL_RANK: 3}
        # play/discard, flat: [(kind - PLAY) * h + index][card][scored][token]
        self._la_own = tuple(
            (1 << (kind_off + kind_bit[kind]))
            | (1 << (pos_off + i))
            | (1 << (card_off + card))
            | ((1 << flag_off) if kind == PLAY and sc else 0)
            | ((1 << (flag_off + 1)) if kind == PLAY and tok else 0)
            for kind in (PLAY, DISCARD)
            for i in range(h)
            for card in range(cr)
            for sc in (False, True)
            for tok in (False, True)
        )
        # reveals, flat: [colour c | colours + rank r][touched mask]
        self._la_reveal = tuple(
            (1 << (kind_off + kind_bit[kind]))
            | (1 << ((color_off if kind == REVEAL_COLOR else rank_off) + v))
            | (m << mask_off)
            for kind, values in ((REVEAL_COLOR, range(c)), (REVEAL_RANK, range(r)))
            for v in values
            for m in range(1 << h)
        )

    def _last_action(self, item: HistoryItem, me: int) -> int:
        """The last-action section for seat ``me`` when ``item`` was the last move."""
        (player, _, kind, index, target, color, rank, scored, token, reveal_mask, _, _) = item
        n = self.n
        bits = self._la_player[(player - me) % n]
        if target < 0:
            return (
                bits
                | self._la_own[
                    (
                        (((kind - PLAY) * self.h + index) * self.cr + color * self.r + rank) * 2
                        + scored
                    )
                    * 2
                    + token
                ]
            )
        row = color if kind == REVEAL_COLOR else self.c + rank
        return (
            bits
            | self._la_target[(target - me) % n]
            | self._la_reveal[(row << self.h) + reveal_mask]
        )

    def _bits(
        self,
        me: int,
        deck_size: int,
        info: int,
        life: int,
        discard_bits: int,
        my_hand_size: int,
        hands: tuple[tuple[int, ...], ...],
        knowledge: tuple[int, ...],
        fw: tuple[int, ...],
        history: tuple[HistoryItem, ...],
    ) -> int:
        """The observation of seat ``me`` as one int; ``hands`` (offset 1 first) and
        ``knowledge`` (mine first) are egocentric, as in :class:`HanabiView`."""
        bits = (
            self._deck_bits[deck_size]
            | self._token_bits[info * self._lives1 + life]
            | (discard_bits << self.disc_off)
        )
        h = self.h
        if my_hand_size < h:
            bits |= self._missing_bits[0]
        cache = self._hand_cache
        offsets = self.hand_offsets
        for o, hand in enumerate(hands, 1):
            hit = cache.get(id(hand))
            if hit is None or hit[0] is not hand:
                hit = self.game.hand_info(hand, True)  # a new hand: its entry, one-hot included
            oh = hit[3]
            if oh is None:
                oh = self.game.hand_onehot(hit)
            bits |= oh << offsets[o]
            if len(hand) < h:
                bits |= self._missing_bits[o]
        hit = self._fw_cache.get(id(fw))
        bits |= hit[1] if hit is not None and hit[0] is fw else self._fireworks(fw)
        if history:
            bits |= self._last_action(history[-1], me)
        offs = self.know_offsets
        for o, kn in enumerate(knowledge):
            bits |= kn << offs[o]
        return bits

    def view_bits(self, view: HanabiView) -> int:
        """The observation as one int (bit ``i`` is entry ``i`` of the vector)."""
        return self._bits(
            view.player,
            view.deck_size,
            view.information_tokens,
            view.life_tokens,
            view.discard_bits,
            view.my_hand_size,
            view.hands,
            view.knowledge,
            view.fireworks,
            view.history,
        )

    def player_bits(self, state: HanabiState, player: int) -> int:
        """``view_bits(game.observe(state, player))``, read from the state without the view."""
        if self.n == 2:  # the same, written out for two players (the common case)
            return self._bits2(state, player)
        hs = state.hands
        ks = state.knowledge
        others = self._others_of[player]  # the other seats' items, offset 1 first, as a tuple
        hands = others(hs)
        knowledge = (ks[player], *others(ks))
        return self._bits(
            player,
            len(state.deck) - state.deck_pos,
            state.information_tokens,
            state.life_tokens,
            state.discard_bits,
            len(hs[player]),
            hands,
            knowledge,
            state.fireworks,
            state.history,
        )

    def _bits2(self, state: HanabiState, player: int) -> int:
        """:meth:`player_bits` of a two-player game: :meth:`_bits`, straight-line (the other
        hand sits at offset 0 of the vector)."""
        other = 1 - player
        hs = state.hands
        ks = state.knowledge
        hand = hs[other]
        hit = self._hand_cache.get(id(hand))
        if hit is None or hit[0] is not hand:
            hit = self.game.hand_info(hand, True)  # a new hand: its entry, one-hot included
        onehot = hit[3]
        if onehot is None:
            onehot = self.game.hand_onehot(hit)
        offs = self.know_offsets
        fw = state.fireworks
        fits = self._fw_cache.get(id(fw))
        bits = (
            self._deck_bits[len(state.deck) - state.deck_pos]
            | self._token_bits[state.information_tokens * self._lives1 + state.life_tokens]
            | (state.discard_bits << self.disc_off)
            | onehot
            | (ks[player] << offs[0])
            | (ks[other] << offs[1])
            | (fits[1] if fits is not None and fits[0] is fw else self._fireworks(fw))
        )
        h = self.h
        if len(hand) < h:
            bits |= self._missing_bits[1]
        if len(hs[player]) < h:
            bits |= self._missing_bits[0]
        history = state.history
        if history:
            bits |= self._last_action(history[-1], player)
        return bits

    # ------------------------------------------------------------------ API
    def encode(self, view: HanabiView) -> np.ndarray:
        """The view as HLE's canonical float32 vector."""
        raw = _frombuffer(self.view_bits(view).to_bytes(self._obs_nbytes, "little"), _uint8)
        return _ndarray(self._shape, _float32, _BITS.take(raw, axis=0))

    def encode_player(self, state: HanabiState, player: int) -> tuple[np.ndarray, tuple[int, ...]]:
        """``(encode(view), view.legal_actions)`` of ``view = game.observe(state, player)``,
        without building the view (the AEC env's fast path; ``player`` must be a valid seat)."""
        raw = _frombuffer(
            self._player_bits(state, player).to_bytes(self._obs_nbytes, "little"), _uint8
        )
        legal = state.legal if state.current == player else ()
        return _ndarray(self._shape, _float32, _BITS.take(raw, axis=0)), legal

    def encode_state(self, state: HanabiState) -> np.ndarray:
        """Player 0's observation + player 0's hand one-hot + the seat to act (one-hot)."""
        view = self.game.observe(state, 0)
        bits = self.view_bits(view)
        bits |= self._hand(state.hands[0]) << self.size
        if state.current >= 0:
            bits |= 1 << (self.size + self.hand_width + state.current)
        raw = _frombuffer(bits.to_bytes(self.nbytes, "little"), dtype=_uint8)
        return _unpackbits(raw, count=self.state_size, bitorder="little").astype(_float32)
