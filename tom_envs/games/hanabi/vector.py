"""Many Hanabi games stepped at once with numpy: the batched engine.

:class:`HanabiVectorEnv` plays ``num_envs`` copies of one configured game (2-5 players, any
:class:`~tom_envs.games.hanabi.rules.HanabiConfig`) under the batched-engine contract of
:mod:`tom_envs.core.vector`, with the rules of :class:`~tom_envs.games.hanabi.rules.HanabiGame`
(HLE's) on arrays: hands, card knowledge (HLE's plausible cards and revealed colour / rank, per
card), stacks, tokens, the discard thermometers and the last move. Observations are exactly
:class:`~tom_envs.games.hanabi.encode.HanabiEncoder`'s (HLE's canonical encoding, 658 floats for
two players), for every seat every step; rewards are the change of the score, as the single env
gives them (a misplay losing the last life takes back the stacks under ``bomb_score="zero"``).

Hanabi is turn-based: ``current_player`` ``(B,)`` holds the seat to act in each env; the action
space is the game's ``2H + (N-1)(C+R)`` moves (HLE's uids) plus a trailing **no-op**, the only
legal action of a waiting seat (see :mod:`tom_envs.core.vector`).

Chance: each episode's deck is a uniformly random permutation drawn from the engine's generator;
``deck`` holds it, so :meth:`HanabiGame.state_from_deck
<tom_envs.games.hanabi.rules.HanabiGame.state_from_deck>` rebuilds env ``i``'s start in the rules
engine. ``tests/games/hanabi/test_vector.py`` does exactly that and compares every step
(observations of every seat, masks, rewards, ends) with the PettingZoo env on random and bot play.
Episodes end as the rules end them (``terminated``) and restart in the same step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tom_envs.core.game import agent_names
from tom_envs.core.vector import NamedPartner, VectorGame
from tom_envs.games.hanabi.encode import HanabiEncoder
from tom_envs.games.hanabi.rules import HanabiConfig, HanabiGame
from tom_envs.games.hanabi.state import DISCARD, PLAY, REVEAL_COLOR

_KIND_BIT = {PLAY: 0, DISCARD: 1, REVEAL_COLOR: 2}  # REVEAL_RANK: 3


class HanabiVectorEnv(VectorGame):
    """``num_envs`` Hanabi games of one configuration, stepped with numpy.

    Args:
        num_envs: batch size B.
        **kwargs: the engine's options (``autoreset``, ``max_cycles``, ``keep_final_obs``,
            ``observations``, ``check_actions``: see :class:`~tom_envs.core.vector.VectorGame`)
            and the keyword arguments of :class:`HanabiConfig` (``players``, ``colors``, ...).
    """

    turn_based = True
    current_player: np.ndarray  # (B,): the seat to act in each env
    encoder: HanabiEncoder

    def __init__(self, num_envs: int, **kwargs: Any) -> None:
        cfg = self.config = HanabiConfig(**self._init_engine(num_envs, kwargs))
        game = self.game = HanabiGame(cfg)
        enc = self.encoder = HanabiEncoder(cfg)
        N, H, C, R = cfg.players, cfg.cards_per_hand, cfg.colors, cfg.ranks
        self.N, self.H, self.C, self.R = N, H, C, R
        self.CR = CR = C * R
        self.K = CR + C + R  # knowledge bits per card
        self.D = len(game.full_deck)
        self.agents = tuple(agent_names(N))
        self.num_agents = N
        self.num_game_actions = A = cfg.num_actions
        self.num_actions = A + 1
        self.noop = A
        self._take_layout(enc)
        # Moves, by action id.
        self._kind = np.array([m.kind for m in game.moves])
        self._index = np.array([m.card_index for m in game.moves])
        self._offset = np.array([m.target_offset for m in game.moves])
        self._value = np.array([m.color if m.kind == REVEAL_COLOR else m.rank for m in game.moves])
        # Cards: colour and rank by card id + 1 (row 0: no card, -1).
        self._color = np.array([-1, *game.card_color])
        self._rank = np.array([-1, *game.card_rank])
        self._full_deck = np.array(game.full_deck, dtype=np.int64)
        self._cbit = np.where(self._color >= 0, 1 << np.maximum(self._color, 0), 0)
        self._rbit = np.where(self._rank >= 0, 1 << np.maximum(self._rank, 0), 0)
        self._bits5 = np.array([[m >> k & 1 for k in range(5)] for m in range(32)], dtype=bool)
        starts, pos = [], 0
        for card in range(CR):
            starts.append(pos)
            pos += sum(1 for c in game.full_deck if c == card)
        self._disc_start = np.array(starts)
        # Plausible-card masks of a colour (a rank) reveal, and where its revealed flag is.
        self._color_row = np.array([[c // R == v for c in range(CR)] for v in range(C)])
        self._rank_col = np.array([[c % R == v for c in range(CR)] for v in range(R)])
        self._new_slot = np.zeros(self.K, dtype=bool)
        self._new_slot[:CR] = True
        # Observation offsets (the encoder's).
        self._hand_off = enc.hand_offsets
        self._missing = enc.missing
        self._deck_off, self._fw_off = enc.deck_off, enc.fw_off
        self._info_off, self._life_off = enc.info_off, enc.life_off
        self._disc_off, self._know_off = enc.disc_off, enc.know_offsets
        self._la = enc.last_action_offsets
        self._deck_len = cfg.deck_size - N * H
        self._kind_bit = np.array([0, 0, 1, 2, 3])  # by MoveType: PLAY, DISCARD, colour, rank
        self._order = np.array([[(p + o) % N for o in range(N)] for p in range(N)])
        self._seats = np.arange(N)
        self._offsets = np.arange(N)
        if enc.know_offsets[0] + N * H * self.K != enc.size or any(
            enc.know_offsets[o] != enc.know_offsets[0] + o * H * self.K for o in range(N)
        ):  # pragma: no cover - the encoder's layout
            raise RuntimeError("the knowledge section must be last, seat after seat")
        self._therm_deck = np.arange(self._deck_len)
        self._therm_info = np.arange(cfg.max_information_tokens)
        self._therm_life = np.arange(cfg.max_life_tokens)
        B = self.num_envs
        self._rows = np.arange(B)
        self._obs_rows = np.arange(B * N, dtype=np.int64).reshape(B, N) * self.obs_size
        # Where observer p's view of the hand at offset o >= 1 starts, card i: (B, N, N-1, H).
        self._hand_base = (
            self._obs_rows[:, :, None, None]
            + np.array(self._hand_off[1:])[None, None, :, None]
            + (np.arange(H) * CR)[None, None, None, :]
        )
        self._alloc()
        self.reset()

    def _alloc(self) -> None:
        B, N, H, K, C = self.num_envs, self.N, self.H, self.K, self.C
        self.deck = np.zeros((B, self.D), dtype=np.int64)
        self.deck_pos = np.zeros(B, dtype=np.int64)
        self.hands = np.full((B, N, H), -1, dtype=np.int64)
        self.knowledge = np.zeros((B, N, H, K), dtype=bool)
        self.fireworks = np.zeros((B, C), dtype=np.int64)
        self.info = np.zeros(B, dtype=np.int64)
        self.life = np.zeros(B, dtype=np.int64)
        self.discard_bits = np.zeros((B, self.D), dtype=bool)
        self.discard_count = np.zeros((B, self.CR), dtype=np.int64)
        self.current_player = np.zeros(B, dtype=np.int64)
        self.turns_to_play = np.zeros(B, dtype=np.int64)
        # The last move (absolute seats): kind 0 = none yet.
        self.last_kind = np.zeros(B, dtype=np.int64)
        self.last_player = np.zeros(B, dtype=np.int64)
        self.last_target = np.full(B, -1, dtype=np.int64)
        self.last_value = np.zeros(B, dtype=np.int64)
        self.last_mask = np.zeros((B, H), dtype=bool)
        self.last_index = np.zeros(B, dtype=np.int64)
        self.last_card = np.zeros(B, dtype=np.int64)
        self.last_scored = np.zeros(B, dtype=bool)
        self.last_token = np.zeros(B, dtype=bool)

    # ------------------------------------------------------------------ episodes
    def _start(self, rows: np.ndarray) -> None:
        n, N, H = len(rows), self.N, self.H
        perm = self.rng.random((n, self.D)).argsort(axis=1)
        deck = self._full_deck[perm]
        self.deck[rows] = deck
        self.deck_pos[rows] = N * H
        self.hands[rows] = deck[:, : N * H].reshape(n, N, H)
        self.knowledge[rows] = self._new_slot
        self.fireworks[rows] = 0
        self.info[rows] = self.config.max_information_tokens
        self.life[rows] = self.config.max_life_tokens
        self.discard_bits[rows] = False
        self.discard_count[rows] = 0
        self.current_player[rows] = 0
        self.turns_to_play[rows] = N
        self.last_kind[rows] = 0

    def start_state(self, i: int) -> Any:
        """Env ``i``'s deal in the rules engine (``HanabiGame.state_from_deck(deck[i])``)."""
        return self.game.state_from_deck(self.deck[i])

    def _advance(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        B, N = self.num_envs, self.N
        rows, cur = self._rows, self.current_player
        a = actions[rows, cur]
        kind = self._kind[a]
        deck_empty = self.deck_pos >= self.D
        self.turns_to_play -= deck_empty
        rewards = np.zeros(B)
        scored = np.zeros(B, dtype=bool)
        own = kind <= DISCARD
        self.last_kind = kind
        self.last_player = cur.copy()
        if own.any():
            self._own_move(rows[own], cur[own], a[own], kind[own], deck_empty[own], rewards, scored)
        rev = ~own
        if rev.any():
            self._reveal(rows[rev], cur[rev], a[rev], kind[rev])
        over = (self.life <= 0) | (self.turns_to_play <= 0)
        over |= scored & (self.fireworks.sum(axis=1) >= self.game.max_score)
        self.current_player = np.where(over, cur, (cur + 1) % N)
        return np.repeat(rewards[:, None], N, axis=1), over

    def _own_move(
        self,
        r: np.ndarray,
        p: np.ndarray,
        a: np.ndarray,
        kind: np.ndarray,
        empty: np.ndarray,
        rewards: np.ndarray,
        scored: np.ndarray,
    ) -> None:
        """Plays and discards in envs ``r`` by seats ``p``."""
        H, R = self.H, self.R
        i = self._index[a]
        hand = self.hands[r, p]  # (n, H)
        card = hand[np.arange(len(r)), i]
        color, rank = self._color[card + 1], self._rank[card + 1]
        fw = self.fireworks[r, color]
        play = kind == PLAY
        good = play & (fw == rank)
        token = np.zeros(len(r), dtype=bool)
        if good.any():
            rg = r[good]
            self.fireworks[rg, color[good]] += 1
            rewards[rg] = 1.0
            scored[rg] = True
            five = good & (rank == R - 1) & (self.info[r] < self.config.max_information_tokens)
            self.info[r[five]] += 1
            token |= five
        bad = ~good
        if bad.any():
            rb, cb = r[bad], card[bad]
            count = self.discard_count[rb, cb]
            self.discard_bits[rb, self._disc_start[cb] + count] = True
            self.discard_count[rb, cb] = count + 1
            mis = bad & play
            if mis.any():
                rm = r[mis]
                self.life[rm] -= 1
                if self.game.zero_on_bomb:
                    dead = self.life[rm] <= 0
                    rewards[rm[dead]] = -self.fireworks[rm[dead]].sum(axis=1)
            dis = bad & ~play
            self.info[r[dis]] += 1
            token |= dis
        # Remove card i, shift the later cards down, draw into the last place (deck permitting).
        drew = ~empty
        j = np.arange(H)
        src = j[None, :] + (j[None, :] >= i[:, None])  # (n, H), H = the appended slot
        nxt = self.deck[r, np.minimum(self.deck_pos[r], self.D - 1)]
        ext = np.concatenate([hand, np.where(drew, nxt, -1)[:, None]], axis=1)
        self.hands[r, p] = np.take_along_axis(ext, src, axis=1)
        n, K = len(r), self.K
        kext = np.empty((n, H + 1, K), dtype=bool)
        kext[:, :H] = self.knowledge[r, p]
        kext[:, H] = drew[:, None] & self._new_slot[None, :]
        rows = (np.arange(n)[:, None] * (H + 1) + src).reshape(-1)
        self.knowledge[r, p] = kext.reshape(n * (H + 1), K)[rows].reshape(n, H, K)
        self.deck_pos[r] += drew
        self.last_target[r] = -1
        self.last_index[r] = i
        self.last_card[r] = card
        self.last_scored[r] = good
        self.last_token[r] = token

    def _reveal(self, r: np.ndarray, p: np.ndarray, a: np.ndarray, kind: np.ndarray) -> None:
        """Colour and rank reveals in envs ``r`` by seats ``p``."""
        CR = self.CR
        target = (p + self._offset[a]) % self.N
        value = self._value[a]
        hand = self.hands[r, target]  # (n, H)
        is_color = kind == REVEAL_COLOR
        attr = np.where(is_color[:, None], self._color[hand + 1], self._rank[hand + 1])
        touched = attr == value[:, None]  # empty slots hold -1: never touched
        plaus = np.where(
            is_color[:, None],
            self._color_row[np.where(is_color, value, 0)],
            self._rank_col[np.where(is_color, 0, value)],
        )  # fmt: skip  (n, CR)
        keep = np.where(touched[:, :, None], plaus[:, None, :], ~plaus[:, None, :])
        know = self.knowledge[r, target]  # (n, H, K)
        know[:, :, :CR] &= keep
        flag = np.where(is_color, CR + value, CR + self.C + value)
        ii, hh = np.nonzero(touched)
        know[ii, hh, flag[ii]] = True
        self.knowledge[r, target] = know
        self.info[r] -= 1
        self.last_target[r] = target
        self.last_value[r] = value
        self.last_mask[r] = touched

    # ------------------------------------------------------------------ masks
    def _masks(self) -> np.ndarray:
        B, N, H, C, R, A = self.num_envs, self.N, self.H, self.C, self.R, self.num_game_actions
        out = np.zeros((B, N, A + 1), dtype=bool)
        out[:, :, self.noop] = True
        rows, cur = self._rows, self.current_player
        legal = np.zeros((B, A), dtype=bool)
        hand_len = (self.hands[rows, cur] >= 0).sum(axis=1)
        j = np.arange(H)
        has = j[None, :] < hand_len[:, None]
        legal[:, :H] = has & (self.info < self.config.max_information_tokens)[:, None]
        legal[:, H : 2 * H] = has
        can = (self.info > 0)[:, None]
        hands = self.hands
        cm = np.bitwise_or.reduce(self._cbit[hands + 1], axis=2)  # (B, N): colours held
        rm = np.bitwise_or.reduce(self._rbit[hands + 1], axis=2)
        base_c, base_r = 2 * H, 2 * H + (N - 1) * C
        for o in range(1, N):
            seat = (cur + o) % N
            legal[:, base_c + (o - 1) * C : base_c + o * C] = self._bits5[cm[rows, seat], :C] & can
            legal[:, base_r + (o - 1) * R : base_r + o * R] = self._bits5[rm[rows, seat], :R] & can
        out[rows, cur, :A] = legal
        out[rows, cur, self.noop] = False
        return out

    # ------------------------------------------------------------------ observations
    def _observe(self) -> np.ndarray:
        B, N, H, K = self.num_envs, self.N, self.H, self.K
        D = self.obs_size
        obs = np.empty((B, N, D), dtype=np.float32)
        flat = obs.reshape(-1)
        hands = self.hands
        order = self._order  # order[p, o] = (p + o) % N: observer p's seat at offset o
        # The other hands, one-hot (observer p, offset o >= 1, card i), and the short hands.
        seen = hands[:, order[:, 1:]]  # (B, N, N-1, H)
        pos = self._hand_base + seen
        idx = [pos[seen >= 0]]
        short = np.any(hands < 0, axis=2)[:, order]  # (B, N, N): observer p's offset o is short
        idx.append((self._obs_rows[:, :, None] + self._missing + self._offsets)[short])
        # Everything before the knowledge section but the hands, the same for every observer.
        ks = self._know_off[0]  # the knowledge section is last
        common = np.zeros((B, ks), dtype=bool)
        deck_size = self.D - self.deck_pos
        common[:, self._deck_off : self._deck_off + self._deck_len] = (
            self._therm_deck[None, :] < deck_size[:, None]
        )
        fw = self.fireworks
        lit = fw > 0
        ci = np.nonzero(lit)
        common[ci[0], self._fw_off + ci[1] * self.R + fw[lit] - 1] = True
        m = self.config.max_information_tokens
        common[:, self._info_off : self._info_off + m] = (
            self._therm_info[None, :] < self.info[:, None]
        )
        m = self.config.max_life_tokens
        common[:, self._life_off : self._life_off + m] = (
            self._therm_life[None, :] < self.life[:, None]
        )
        common[:, self._disc_off : self._disc_off + self.D] = self.discard_bits
        # Last move: everything but the seat offsets.
        la = self._la
        has = self.last_kind > 0
        kb = self._kind_bit[self.last_kind]
        hr = np.flatnonzero(has)
        common[hr, la["kind"] + kb[hr]] = True
        own = has & (self.last_target < 0)
        ro = np.flatnonzero(own)
        common[ro, la["pos"] + self.last_index[ro]] = True
        common[ro, la["card"] + self.last_card[ro]] = True
        play = own & (self.last_kind == PLAY)
        common[:, la["flags"]] |= play & self.last_scored
        common[:, la["flags"] + 1] |= play & self.last_token
        rv = has & (self.last_target >= 0)
        rr = np.flatnonzero(rv)
        col = self.last_kind[rr] == REVEAL_COLOR
        common[rr, np.where(col, la["color"], la["rank"]) + self.last_value[rr]] = True
        common[:, la["mask"] : la["mask"] + H] |= rv[:, None] & self.last_mask
        obs[:, :, :ks] = common[:, None, :]
        # Every hand's knowledge, in observer p's order (seats p, p+1, ...).
        obs[:, :, ks:] = self.knowledge.reshape(B, N, H * K)[:, order].reshape(B, N, N * H * K)
        rows = self._obs_rows
        idx.append(
            (rows[hr] + la["player"] + (self.last_player[hr, None] - self._seats) % N).ravel()
        )
        idx.append(
            (rows[rr] + la["target"] + (self.last_target[rr, None] - self._seats) % N).ravel()
        )
        flat[np.concatenate(idx)] = 1.0
        return obs

    # ------------------------------------------------------------------ inspection
    def hand(self, i: int, seat: int) -> tuple[int, ...]:
        """Seat ``seat``'s cards in env ``i``, oldest first."""
        return tuple(int(c) for c in self.hands[i, seat] if c >= 0)


class HanabiPartner(NamedPartner):
    """The ``simple`` bot (:class:`~tom_envs.games.hanabi.bots.SimpleBot`) for seats of every env.

    A :data:`~tom_envs.core.vector.Partner` for :class:`~tom_envs.core.vector.GymVectorEnv`: where
    one of ``seats`` is to act it plays the bot's move, computed on arrays from what the seat's
    view shows (its own card knowledge, the other hands and their knowledge, stacks, tokens):
    a card its knowledge proves playable (the oldest first); else, with a token, a reveal of a
    playable card its holder does not know to be playable (offsets in order, oldest card first;
    the rank unless known, else the colour); else, with a token out of the box, a discard of its
    oldest card without a revealed colour or rank (card 0 if none); else the lowest reveal. Every
    other seat gets the no-op. (``convention`` is not vectorised.)
    """

    GAME = "Hanabi"
    NAMES = ("simple",)
    engine: HanabiVectorEnv

    def __call__(self, obs: np.ndarray | None, masks: np.ndarray) -> np.ndarray:
        """``(B, N)``: the bot's move for its acting seats, the no-op elsewhere."""
        e = self.engine
        B, N, H, C, R, CR = e.num_envs, e.N, e.H, e.C, e.R, e.CR
        rows, cur = e._rows, e.current_player
        out = np.full((B, N), e.noop, dtype=np.int64)
        act = np.isin(cur, self.seats)
        if not act.any():
            return out
        # playable[b, c*R + r]: card (c, r) would continue its stack now.
        playable = np.zeros((B, CR), dtype=bool)
        playable.reshape(B, C, R)[:] = e.fireworks[:, :, None] == np.arange(R)
        plaus = e.knowledge[:, :, :, :CR]  # (B, N, H, CR)
        # knows_playable: some card is plausible and every plausible card is playable
        proven = np.any(plaus, axis=3) & ~np.any(plaus & ~playable[:, None, None, :], axis=3)
        move = np.full(B, -1, dtype=np.int64)
        mine = proven[rows, cur]  # (B, H)
        has = mine.any(axis=1)
        move[has] = H + mine.argmax(axis=1)[has]
        # Reveal a playable card its holder does not know to be playable.
        hands = e.hands
        card_ok = hands >= 0
        color, rank = e._color[hands + 1], e._rank[hands + 1]
        now = card_ok & playable[rows[:, None, None], np.maximum(hands, 0)]  # (B, N, H)
        ranks = plaus.reshape(B, N, H, C, R).any(axis=3)
        rank_known = ranks.sum(axis=3) == 1  # then it is the card's rank
        base_c, base_r = 2 * H, 2 * H + (N - 1) * C
        token = e.info > 0
        for o in range(1, N):
            seat = (cur + o) % N
            cand = now[rows, seat] & ~proven[rows, seat]
            todo = (move < 0) & token & cand.any(axis=1)
            if not todo.any():
                continue
            i = cand.argmax(axis=1)
            rk = rank_known[rows, seat, i]
            reveal_rank = base_r + (o - 1) * R + rank[rows, seat, i]
            reveal_color = base_c + (o - 1) * C + color[rows, seat, i]
            move[todo] = np.where(rk, reveal_color, reveal_rank)[todo]
        # Discard the oldest card with nothing revealed (card 0 if none), tokens permitting.
        flags = e.knowledge[rows, cur, :, CR:].any(axis=2)  # (B, H): colour or rank revealed
        bare = ~flags & card_ok[rows, cur]
        can = (move < 0) & (e.info < e.config.max_information_tokens)
        move[can] = np.where(bare.any(axis=1), bare.argmax(axis=1), 0)[can]
        # Every token in the box and nothing else: the lowest legal reveal (or the lowest move).
        rest = move < 0
        if rest.any():
            legal = masks[rows, cur, : e.num_game_actions]
            reveals = legal.copy()
            reveals[:, : 2 * H] = False
            move[rest] = np.where(
                reveals.any(axis=1), reveals.argmax(axis=1), legal.argmax(axis=1)
            )[rest]
        out[rows[act], cur[act]] = move[act]
        return out
