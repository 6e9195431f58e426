"""The convention bot: a Python re-implementation of Arthur O'Dwyer's SmartBot conventions.

SmartBot (github.com/Quuxplusone/Hanabi, ``SmartBot.cc``) is the strongest two-player rule-based
player of that collection (its README: 23.09 points in two-player self-play, 29.52% perfect
games); the Hanabi Learning Environment paper (Bard et al. 2020) lists it among the reference
scripted bots. This module re-implements its strategy from that description and source, over
our player view; no code is copied. Every player runs the same conventions, so each bot keeps a
model of what *every* player can deduce from the public moves (a 25-bit mask of possible cards per
card in every hand) and reads hints as their giver meant them:

* **Play clue.** After a reveal, if no card became known-playable, the newest touched card that
  might be playable *is* playable.
* **Warning.** A rank reveal to the player after the giver that touches that player's next discard
  (its oldest card not known to be valuable) and could make it the last copy of a needed card
  means "this card is valuable: do not discard it". Any other move tells the next player that
  their next discard is *not* valuable (when a warning was possible).
* **Discard finesse.** Discarding a card known to be playable tells a partner whose newest card is
  that very card what it is.
* Each player prefers: warn the next player; discard-finesse; play the lowest known-playable card
  (one nobody else knows it knows first); give the play clue that removes the most possibilities;
  near the end of the deck, risk an unknown card with the best chance (never the last life under
  the zero-on-bomb rule); discard a known-worthless card; discard the oldest card not known to be
  valuable.

Differences from the C++ bot, for these rules: a misplay of the last life scores 0 here (HLE's and
the paper's rule), so "mystery" plays never risk it; when the discarder itself observes its discard
finesse it marks the partner's card, not its own (the C++ marks its own newest card in that case);
an inference that contradicts the reveals (possible with a partner that follows other conventions)
is dropped instead of asserting.

The bot reads only its :class:`~tom_envs.games.hanabi.view.HanabiView`: it replays the public
history it has not seen yet at each of its turns, and reconstructs the partners' hands at the time
of each move from the hands it sees now (a partner moves at most once between two of my turns).
"""

from __future__ import annotations

from tom_envs.core.agents import BaseAgent, EpisodeInfo, Turn
from tom_envs.games.hanabi.cards import cards_per_rank
from tom_envs.games.hanabi.rules import HanabiConfig
from tom_envs.games.hanabi.state import DISCARD, PLAY, REVEAL_COLOR, HistoryItem
from tom_envs.games.hanabi.view import HanabiView

YES, MAYBE, NO = 1, 0, -1


def _popcount(x: int) -> int:
    return bin(x).count("1")


class ConventionBot(BaseAgent):
    """SmartBot's conventions (see the module docstring); deterministic."""

    name = "convention"

    def __init__(self, config: HanabiConfig) -> None:
        super().__init__()
        self.game_config = config
        c, r = config.colors, config.ranks
        self.C, self.R = c, r
        self.CR = c * r
        self.H = config.cards_per_hand
        self.n = config.players
        self.max_info = config.max_information_tokens
        self.color_mask = [sum(1 << (k * r + v) for v in range(r)) for k in range(c)]
        self.rank_mask = [sum(1 << (k * r + v) for k in range(c)) for v in range(r)]
        self.total = [cards_per_rank(t % r, r) for t in range(self.CR)]
        self.full = (1 << self.CR) - 1
        # Reveal action ids, to build moves.
        h, n = self.H, self.n
        self._color_base = 2 * h
        self._rank_base = 2 * h + (n - 1) * c
        # Quux's mystery-play table (deck size at most ... by lives left).
        zero = config.bomb_score == "zero"
        self.mystery = {0: -99, 1: -99 if zero else 1, 2: 1, 3: 3}
        self._reset_public()

    # ------------------------------------------------------------------ lifecycle
    def reset(self, info: EpisodeInfo) -> None:
        """Start an episode from the initial public state."""
        super().reset(info)
        self._reset_public()

    def _reset_public(self) -> None:
        cfg = self.game_config
        self.me = -1
        self.seen = 0
        self.fw = [0] * self.C
        self.played = [0] * self.CR  # played or discarded, per card kind
        self.tokens = cfg.max_information_tokens
        self.lives = cfg.max_life_tokens
        self.deck = cfg.deck_size - self.n * self.H
        self.kn: list[list[int]] = [[self.full] * self.H for _ in range(self.n)]
        self._recompute_masks()

    # ------------------------------------------------------------------ masks
    def _recompute_masks(self) -> None:
        """Playable, worthless and valuable card kinds under the current stacks and counts."""
        r = self.R
        pm = wm = vm = 0
        for k in range(self.C):
            top = self.fw[k]
            if top < r:
                pm |= 1 << (k * r + top)
            dead = False
            for v in range(r):
                t = k * r + v
                if v < top or dead:
                    wm |= 1 << t
                elif self.played[t] >= self.total[t]:
                    dead = True  # every copy is gone: the higher ranks can never be played
            for v in range(r):
                t = k * r + v
                if not wm >> t & 1 and self.played[t] == self.total[t] - 1:
                    vm |= 1 << t
        self.PM, self.WM, self.VM = pm, wm, vm

    @staticmethod
    def _tri(poss: int, mask: int) -> int:
        inter = poss & mask
        if inter == poss:
            return YES
        return NO if inter == 0 else MAYBE

    @staticmethod
    def _prob(poss: int, mask: int) -> float:
        total = _popcount(poss)
        return _popcount(poss & mask) / total if total else 0.0

    @staticmethod
    def _known(poss: int) -> bool:
        return poss != 0 and poss & (poss - 1) == 0

    def _value(self, poss: int) -> int:
        """The card's rank (1-based) if every possibility shares it, else -1."""
        found = -1
        for v in range(self.R):
            if poss & self.rank_mask[v]:
                if found != -1:
                    return -1
                found = v + 1
        return found

    @staticmethod
    def _narrow(poss: int, mask: int) -> int:
        """A convention's inference; dropped if it contradicts what is known."""
        new = poss & mask
        return new if new else poss

    @staticmethod
    def _truth(poss: int, mask: int) -> int:
        """A reveal's information: always true, so it wins over a contradicting inference."""
        new = poss & mask
        return new if new else mask

    # ------------------------------------------------------------------ knowledge updates
    def _update_located(self) -> None:
        """Rule out card kinds whose every copy is played, discarded or identified in a hand."""
        located = None
        while True:
            counts = [0] * self.CR
            for hand in self.kn:
                for k in hand:
                    if k & (k - 1) == 0 and k:
                        counts[k.bit_length() - 1] += 1
            if counts == located:
                return
            located = counts
            gone = 0
            for t in range(self.CR):
                if self.played[t] + counts[t] >= self.total[t]:
                    gone |= 1 << t
            for hand in self.kn:
                for i, k in enumerate(hand):
                    if k & (k - 1):
                        hand[i] = self._narrow(k, ~gone)

    def _eyesight_gone(self, view: HanabiView) -> int:
        """Card kinds I can rule out for my unknown cards: played, discarded, seen or known."""
        counts = list(self.played)
        for k in self.kn[self.me]:
            if self._known(k):
                counts[k.bit_length() - 1] += 1
        for hand in view.hands:
            for card in hand:
                counts[card] += 1
        gone = 0
        for t in range(self.CR):
            if counts[t] >= self.total[t]:
                gone |= 1 << t
        return gone

    def _next_discard(self, seat: int) -> int:
        """SmartBot's next discard of ``seat``: -1 if it holds a known playable or worthless card,
        else its card most likely worthless among those not known valuable (oldest first)."""
        best, best_fit = -1, 0.0
        for i, k in enumerate(self.kn[seat]):
            if self._tri(k, self.PM) == YES or self._tri(k, self.WM) == YES:
                return -1
            if self._tri(k, self.VM) == YES:
                continue
            fit = 100 + self._prob(k, self.WM)
            if fit > best_fit:
                best, best_fit = i, fit
        return best

    def _could_be_valuable_with_value(self, poss: int, value: int) -> bool:
        """Whether a rank reveal of ``value`` (0-based) could mark this card as valuable."""
        if not poss & self.rank_mask[value]:
            return False
        if self._tri(poss, self.VM) != MAYBE:
            return False
        return self._tri(poss & self.rank_mask[value], self.VM) != NO

    def _no_warning_given(self, giver: int) -> None:
        """``giver`` did not warn the next player: that player's next discard is not valuable."""
        if self.deck == 0 or self.tokens == 0:
            return
        seat = (giver + 1) % self.n
        d = self._next_discard(seat)
        if d != -1:
            self.kn[seat][d] = self._narrow(self.kn[seat][d], ~self.VM)

    def _apply_reveal(self, to: int, mask: int, touched: int, infer: bool) -> None:
        """A reveal: ``mask`` is the colour (rank) mask, ``touched`` the cards it named. Then the
        play-clue inference on the newest touched card that may be playable."""
        hand = self.kn[to]
        identified = False
        inferred = -1
        for i in range(len(hand) - 1, -1, -1):
            k = hand[i]
            was_maybe = self._tri(k, self.PM) == MAYBE
            k = self._truth(k, mask) if touched >> i & 1 else self._truth(k, ~mask & self.full)
            hand[i] = k
            if was_maybe:
                now = self._tri(k, self.PM)
                if now == YES:
                    identified = True
                elif now == MAYBE and touched >> i & 1 and inferred == -1:
                    inferred = i
        if infer and not identified and inferred >= 0:
            hand[inferred] = self._narrow(hand[inferred], self.PM)

    # ------------------------------------------------------------------ replay
    def _catch_up(self, view: HanabiView) -> None:
        """Replay the public moves made since my last turn."""
        history = view.history
        batch = history[self.seen :]
        if not batch:
            return
        n = self.n
        now = {view.seat(o): view.hands[o - 1] for o in range(1, n)}
        # Each partner's hand before its move in this batch (it moves at most once).
        before: dict[int, tuple[int, ...]] = {}
        moved_at: dict[int, int] = {}
        r = self.R
        for j, item in enumerate(batch):
            if item.player == self.me or item.player in moved_at:
                continue
            moved_at[item.player] = j
            hand = list(now[item.player])
            if item.kind in (PLAY, DISCARD):
                if item.drew:
                    hand.pop()
                hand.insert(item.card_index, item.color * r + item.rank)
            before[item.player] = tuple(hand)
        for j, item in enumerate(batch):
            self._update_located()

            def hand_at(seat: int, j: int = j) -> tuple[int, ...]:
                if seat in moved_at and moved_at[seat] < j:
                    return now[seat]
                return before.get(seat, now.get(seat, ()))

            self._observe(item, hand_at)
        self.seen = len(history)

    def _observe(self, item: HistoryItem, hand_at) -> None:
        frm = item.player
        n = self.n
        if item.kind in (PLAY, DISCARD):
            card = item.color * self.R + item.rank
            self._no_warning_given(frm)
            if item.kind == DISCARD:
                k = self.kn[frm][item.card_index]
                if self._known(k) and self._tri(k, self.PM) == YES:
                    self._discard_finesse(frm, card, hand_at)
                self.tokens = min(self.tokens + 1, self.max_info)
            elif item.scored:
                self.fw[item.color] += 1
                if item.information_token:
                    self.tokens += 1
            else:
                self.lives -= 1
            self.played[card] += 1
            hand = self.kn[frm]
            del hand[item.card_index]
            if item.drew:
                hand.append(self.full)
                self.deck -= 1
            self._recompute_masks()
            return
        to = item.target
        expecting = (frm + 1) % n
        if item.kind == REVEAL_COLOR:
            self._apply_reveal(to, self.color_mask[item.color], item.reveal_mask, infer=True)
        else:
            d = self._next_discard(expecting)
            reclaim = self.tokens >= self.max_info and frm == (to + 1) % n and item.reveal_mask & 1
            warning = (
                not reclaim
                and to == expecting
                and d != -1
                and item.reveal_mask >> d & 1
                and self._could_be_valuable_with_value(self.kn[to][d], item.rank)
            )
            if warning:
                self.kn[to][d] = self._narrow(self.kn[to][d], self.VM)
            self._apply_reveal(
                to, self.rank_mask[item.rank], item.reveal_mask, infer=not warning and not reclaim
            )
        if to != expecting:
            self._no_warning_given(frm)
        self.tokens -= 1

    def _discard_finesse(self, frm: int, card: int, hand_at) -> None:
        """``frm`` discarded a card it knew to be playable: the partner whose newest card is that
        card learns it (the one other than the discarder whose newest card it is; me if I see
        nobody holding it)."""
        single = 1 << card
        for seat in range(self.n):
            if seat in (frm, self.me):
                continue
            hand = hand_at(seat)
            if hand and hand[-1] == card:
                self.kn[seat][-1] = self._narrow(self.kn[seat][-1], single)
                return
        if frm != self.me and self.kn[self.me]:
            self.kn[self.me][-1] = self._narrow(self.kn[self.me][-1], single)

    # ------------------------------------------------------------------ decisions
    def act(self, turn: Turn) -> int:
        """Catch up with the public moves, then choose by SmartBot's priorities."""
        view: HanabiView = turn.view
        if self.me != view.player:
            self._reset_public()
            self.me = view.player
        self._catch_up(view)
        self._update_located()
        self._sync(view)
        action = self._decide(view)
        legal = view.legal_actions
        if action not in legal:  # a safety net: conventions never choose an illegal move
            action = legal[0]
        return action

    def _sync(self, view: HanabiView) -> None:
        """Keep the replica honest: the view's public counters win."""
        self.fw = list(view.fireworks)
        self.tokens = view.information_tokens
        self.lives = view.life_tokens
        self.deck = view.deck_size
        for o in range(self.n):
            seat = view.seat(o)
            size = view.my_hand_size if o == 0 else len(view.hands[o - 1])
            hand = self.kn[seat]
            if len(hand) != size:  # never expected; start that hand's model afresh
                self.kn[seat] = [self.full] * size
        self._recompute_masks()

    def _decide(self, view: HanabiView) -> int:
        if self.deck == 0:
            for choice in (self._play_lowest_playable, self._play_mystery):
                a = choice(view)
                if a is not None:
                    return a
        for choice in (
            self._valuable_warning,
            self._discard_finesse_move,
            self._play_lowest_playable,
            self._helpful_hint,
            self._play_mystery,
        ):
            a = choice(view)
            if a is not None:
                return a
        if self.tokens >= self.max_info:  # discarding is illegal: reveal the right partner's card 0
            right = (self.me - 1) % self.n
            hand = view.hands[view.offset(right) - 1]
            return self._rank_action(view.offset(right), hand[0] % self.R)
        for choice in (self._discard_worthless, self._discard_old):
            a = choice(view)
            if a is not None:
                return a
        mine = self.kn[self.me]
        best = max(range(len(mine)), key=lambda i: (self._value(mine[i]), -i))
        return best  # discard the valuable card that blocks the least

    def _color_action(self, offset: int, color: int) -> int:
        return self._color_base + (offset - 1) * self.C + color

    def _rank_action(self, offset: int, rank: int) -> int:
        return self._rank_base + (offset - 1) * self.R + rank

    def _eye(self, poss: int, gone: int) -> int:
        return poss if self._known(poss) else self._narrow(poss, ~gone)

    def _play_lowest_playable(self, view: HanabiView) -> int | None:
        gone = self._eyesight_gone(view)
        best, best_fit = -1, 0.0
        for i, k in enumerate(self.kn[self.me]):
            if self._tri(k, self.PM) == NO:
                continue
            eye = self._eye(k, gone)
            if self._tri(eye, self.PM) != YES:
                continue
            fit = 6 - self._value(eye)
            if self._tri(k, self.PM) != YES:
                fit += 100
            if fit > best_fit:
                best, best_fit = i, fit
        return None if best == -1 else self.H + best

    def _play_mystery(self, view: HanabiView) -> int | None:
        if self.deck > self.mystery.get(self.lives, -99):
            return None
        gone = self._eyesight_gone(view)
        best, best_fit = -1, 0.0
        mine = self.kn[self.me]
        for i in range(len(mine) - 1, -1, -1):
            eye = self._eye(mine[i], gone)
            if self._tri(eye, self.PM) == MAYBE:
                fit = self._prob(eye, self.PM)
                if fit > best_fit:
                    best, best_fit = i, fit
        return None if best == -1 else self.H + best

    def _discard_worthless(self, view: HanabiView) -> int | None:
        gone = self._eyesight_gone(view)
        best, best_fit = -1, 0.0
        for i, k in enumerate(self.kn[self.me]):
            w = self._tri(k, self.WM)
            if w == NO:
                continue
            if w == MAYBE and self._tri(self._eye(k, gone), self.WM) != YES:
                continue
            fit = 2.0 - self._prob(k, self.WM)
            if fit > best_fit:
                best, best_fit = i, fit
        return None if best == -1 else best

    def _discard_old(self, view: HanabiView) -> int | None:
        d = self._next_discard(self.me)
        return None if d == -1 else d

    def _best_hint(self, view: HanabiView, offset: int) -> tuple[float, int | None]:
        """The play clue for the partner at ``offset`` that removes the most possibilities."""
        seat = view.seat(offset)
        hand = view.hands[offset - 1]
        old = self.kn[seat]
        if len(old) != len(hand):
            return -1.0, None
        r = self.R
        really = [bool(self.PM >> card & 1) for card in hand]
        avoid = -1
        if seat == (self.me + 1) % self.n:
            d = self._next_discard(seat)
            if d != -1 and self._could_be_valuable_with_value(old[d], hand[d] % r):
                avoid = hand[d] % r
        best_fit, best_action = -1.0, None
        candidates = []
        for color in sorted({card // r for card in hand}):
            touched = sum(1 << i for i, card in enumerate(hand) if card // r == color)
            candidates.append((self.color_mask[color], touched, self._color_action(offset, color)))
        for rank in sorted({card % r for card in hand}):
            if rank == avoid:
                continue
            touched = sum(1 << i for i, card in enumerate(hand) if card % r == rank)
            candidates.append((self.rank_mask[rank], touched, self._rank_action(offset, rank)))
        for mask, touched, action in candidates:
            new = [
                self._truth(k, mask) if touched >> i & 1 else self._truth(k, ~mask & self.full)
                for i, k in enumerate(old)
            ]
            reveals = False
            misleading = MAYBE
            for i in range(len(hand) - 1, -1, -1):
                if self._tri(old[i], self.PM) != MAYBE:
                    continue
                now = self._tri(new[i], self.PM)
                if now == YES:
                    reveals = True
                elif now == MAYBE and touched >> i & 1 and misleading == MAYBE:
                    misleading = NO if really[i] else YES
            if not (reveals or misleading == NO):
                continue
            fit = float(sum(_popcount(a) - _popcount(b) for a, b in zip(old, new, strict=True)))
            if fit > best_fit:
                best_fit, best_action = fit, action
        return best_fit, best_action

    def _valuable_warning(self, view: HanabiView) -> int | None:
        if self.tokens == 0:
            return None
        seat = (self.me + 1) % self.n
        d = self._next_discard(seat)
        if d == -1:
            return None
        offset = view.offset(seat)
        hand = view.hands[offset - 1]
        if d >= len(hand) or not self.VM >> hand[d] & 1:
            return None
        fit, action = self._best_hint(view, offset)
        if fit > 0 and action is not None:
            return action
        return self._rank_action(offset, hand[d] % self.R)

    def _discard_finesse_move(self, view: HanabiView) -> int | None:
        if self.tokens >= self.max_info:
            return None
        newest = [hand[-1] for hand in view.hands if hand]
        for i, k in enumerate(self.kn[self.me]):
            if self._known(k) and self._tri(k, self.VM) == NO and self._tri(k, self.PM) == YES:
                card = k.bit_length() - 1
                if newest.count(card) == 1:
                    return i
        return None

    def _helpful_hint(self, view: HanabiView) -> int | None:
        if self.tokens == 0:
            return None
        best_fit, best_action = 0.0, None
        for o in range(1, self.n):
            fit, action = self._best_hint(view, o)
            if fit > best_fit and action is not None:
                best_fit, best_action = fit, action
        return best_action
