"""Rules of Guandan (掼蛋) as played in competition (specs §4): pure, no gymnasium or pettingzoo.

Four players, seats 0 & 2 against 1 & 3, play proceeds to seat ``(s + 1) % 4``. Two decks (108
cards) are dealt 27 each. A deal has up to three phases:

1. **Tribute** (from the second deal on, or when ``previous_order`` is given): the losers of the
   previous deal pay their highest card (never the heart of the level) to the winners; double-down
   (losers 3rd and 4th) both pay, single-down one pays. **Anti-tribute**: no tribute if the paying
   side holds both big jokers.
2. **Return**: each receiver gives back one card of rank 10 or lower that is not of the level.
3. **Play**: tricks. The leader plays any combination; the others in turn beat it (same type, higher
   key, or a bomb) or pass; when everyone still in the deal has passed, the last player to play
   leads again; if that player has gone out, the teammate leads (wind-follow, 接风).

The deal ends when both players of a team are out, or three players are out. The team of the first
player out wins and advances +3 / +2 / +1 when the teammate finished 2nd / 3rd / 4th. A team at A
that wins a deal played at its own A with 1st+2nd or 1st+3rd passes A and wins the match.
One episode is one deal (``match=False``, the default) or a whole match (``match=True``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from tom_envs.core.game import (
    SEQUENTIAL,
    Game,
    GameTags,
    IllegalActionError,
    StepResult,
    state_replacer,
)
from tom_envs.games.guandan.cards import (
    ACE,
    BIG_JOKER,
    NUM_KINDS,
    Hand,
    add_cards,
    card_value,
    full_deck,
    hand_from_cards,
    remove_cards,
    wild_kind,
)
from tom_envs.games.guandan.combos import (
    GIVE_BASE,
    NUM_ACTIONS,
    PASS,
    SHAPE_BASE,
    realize,
    shape_of,
)
from tom_envs.games.guandan.legal import legal_play_actions
from tom_envs.games.guandan.state import DealResult, GuandanConfig, GuandanState, Move, Tribute
from tom_envs.games.guandan.view import GuandanView, observe

_replace = state_replacer(GuandanState)  # dataclasses.replace without its per-call cost

TRIBUTE = "tribute"
RETURN = "return"
PLAY = "play"
OVER = "over"
#: Upper bound on the moves of one deal: 4 tribute moves + 108 plays, each followed by ≤ 3 passes.
MAX_DEAL_MOVES = 4 + 108 * 4
#: Level advance by the position (0-based) at which the winner's teammate finished.
ADVANCE = {1: 3, 2: 2, 3: 1}


def team_of(seat: int) -> int:
    """Seats 0 and 2 are team 0, seats 1 and 3 team 1."""
    return seat % 2


class GuandanGame(Game[GuandanState, GuandanView]):
    """The rules of Guandan over the fixed action catalogue of :mod:`combos`."""

    name = "guandan"
    #: Fixed facts of the game (the properties of :class:`~tom_envs.core.game.Game`).
    num_players: int = 4  #: four seats
    num_actions: int = NUM_ACTIONS  #: pass, 54 give-card actions and 225 play shapes
    #: Sequential, stochastic, imperfect information, zero-sum between the two teams.
    tags: GameTags = GameTags(SEQUENTIAL, "stochastic", "imperfect", "zero_sum")
    reward_range: tuple[float, float] = (-3.0, 3.0)  #: a deal pays at most ±3

    def __init__(self, config: GuandanConfig | None = None) -> None:
        self.config = config or GuandanConfig()
        self._cache: tuple[GuandanState | None, int, tuple[int, ...]] = (None, -1, ())
        # view.py's per-player conversions: history, tribute and results (by source object)
        self._view_cache: dict[object, tuple[object, tuple]] = {}
        self._obs_cache: dict[int, tuple[GuandanState, GuandanView]] = {}

    @property
    def max_steps(self) -> int:
        """Moves of one deal at most (times ``max_deals`` for a match)."""
        return MAX_DEAL_MOVES * (self.config.max_deals if self.config.match else 1)

    # ----------------------------------------------------------------- dealing
    def initial_state(self, rng: np.random.Generator) -> GuandanState:
        """Deal the first deal (from ``rng``): tribute first if ``previous_order`` is given."""
        cfg = self.config
        order = cfg.previous_order
        level_team = cfg.level_team if order is None else team_of(order[0])
        return self._new_deal(rng, cfg.start_levels, level_team, order, 0, (0, 0), ())

    def deal_from_hands(
        self,
        hands: tuple[Hand, Hand, Hand, Hand],
        leader: int = 0,
        previous_order: tuple[int, ...] | None = None,
        levels: tuple[int, int] | None = None,
        level_team: int | None = None,
    ) -> GuandanState:
        """A first state from given hands (injected chance, for tests and replays)."""
        cfg = self.config
        lv = levels if levels is not None else cfg.start_levels
        order = previous_order if previous_order is not None else cfg.previous_order
        lt = (
            level_team
            if level_team is not None
            else (cfg.level_team if order is None else team_of(order[0]))
        )
        if sum(sum(h) for h in hands) != 108 or any(len(h) != NUM_KINDS for h in hands):
            raise ValueError("hands must be four 54-count vectors holding the 108 cards")
        packed = tuple(bytes(h) for h in hands)
        return self._start(packed, tuple(lv), lt, order, leader, 0, (0, 0), ())  # type: ignore[arg-type]

    def _new_deal(
        self,
        rng: np.random.Generator,
        levels: tuple[int, int],
        level_team: int,
        order: tuple[int, ...] | None,
        deal: int,
        a_fails: tuple[int, int],
        results: tuple[DealResult, ...],
    ) -> GuandanState:
        deck = np.asarray(full_deck())[rng.permutation(108)]
        hands = tuple(hand_from_cards(deck[i * 27 : (i + 1) * 27].tolist()) for i in range(4))
        leader = int(rng.integers(4))
        return self._start(hands, levels, level_team, order, leader, deal, a_fails, results)  # type: ignore[arg-type]

    def _start(
        self,
        hands: tuple[Hand, Hand, Hand, Hand],
        levels: tuple[int, int],
        level_team: int,
        order: tuple[int, ...] | None,
        leader: int,
        deal: int,
        a_fails: tuple[int, int],
        results: tuple[DealResult, ...],
    ) -> GuandanState:
        base = GuandanState(
            hands=hands,
            levels=levels,
            level_team=level_team,
            level=levels[level_team],
            phase=PLAY,
            to_act=leader,
            deal=deal,
            previous_order=order,
            a_fails=a_fails,
            results=results,
        )
        if order is None or not self.config.tribute:
            return base
        first, second = order[0], order[1]
        if team_of(first) == team_of(second):  # double-down: both losers pay
            payers = tuple(
                sorted(
                    (s for s in range(4) if team_of(s) != team_of(first)),
                    key=lambda s: (s - first) % 4,
                )
            )
        elif self.config.single_down_payer == "last_place":
            payers = (order[3],)
        else:
            payers = (next(s for s in reversed(order) if team_of(s) != team_of(first)),)
        big = sum(hands[p][BIG_JOKER] for p in payers)
        if self.config.anti_tribute and big == 2:
            trib = Tribute(payers=payers, anti=True, leader=first)
            return _replace(base, tribute=trib, to_act=first)
        return _replace(base, phase=TRIBUTE, tribute=Tribute(payers=payers), to_act=payers[0])

    # ------------------------------------------------------------------ queries
    def current_players(self, state: GuandanState) -> tuple[int, ...]:
        """The one seat to act (none once the episode is over)."""
        return () if state.phase == OVER else (state.to_act,)

    def legal_actions(self, state: GuandanState, player: int) -> tuple[int, ...]:
        """Legal catalogue actions of ``player`` (empty unless it is that player's turn)."""
        if state.phase == OVER or player != state.to_act:
            return ()
        cached_state, cached_player, cached = self._cache
        if cached_state is state and cached_player == player:
            return cached
        out = self._legal(state, player)
        self._cache = (state, player, out)
        return out

    def _legal(self, state: GuandanState, player: int) -> tuple[int, ...]:
        hand = state.hands[player]
        level = state.level
        if state.phase == TRIBUTE:
            return tuple(GIVE_BASE + c for c in tribute_cards(hand, level))
        if state.phase == RETURN:
            return tuple(GIVE_BASE + c for c in return_cards(hand, level))
        current = None if state.lead is None else state.lead[1] - SHAPE_BASE
        return legal_play_actions(hand, level, current)

    def is_terminal(self, state: GuandanState) -> bool:
        """True once the deal (or the match) is over."""
        return state.phase == OVER

    def observe(self, state: GuandanState, player: int) -> GuandanView:
        """The player's view (see :mod:`tom_envs.games.guandan.view`).

        States are immutable, so the view of the same state object is built once and reused.
        """
        cached = self._obs_cache.get(player)
        if cached is not None and cached[0] is state:
            return cached[1]
        view = observe(self, state, player)
        self._obs_cache[player] = (state, view)
        return view

    # -------------------------------------------------------------------- moves
    def apply(
        self,
        state: GuandanState,
        actions: Mapping[int, int],
        rng: np.random.Generator,
        messages: Mapping[int, str] | None = None,
    ) -> StepResult[GuandanState]:
        """Apply the acting seat's action."""
        seat = state.to_act
        action = int(actions[seat])
        if state.phase == TRIBUTE:
            return StepResult(self._pay(state, seat, action - GIVE_BASE), (0.0,) * 4)
        if state.phase == RETURN:
            return StepResult(self._give_back(state, seat, action - GIVE_BASE), (0.0,) * 4)
        if action == PASS:
            return StepResult(self._pass(state, seat), (0.0,) * 4)
        return self._play(state, seat, action, rng)

    def _pay(self, state: GuandanState, seat: int, card: int) -> GuandanState:
        trib = state.tribute
        assert trib is not None
        hands = list(state.hands)
        hands[seat] = remove_cards(hands[seat], (card,))
        paid = (*trib.paid, (seat, card))
        history = (*state.history, (seat, GIVE_BASE + card, (card,), TRIBUTE))
        if len(paid) < len(trib.payers):
            nxt = trib.payers[len(paid)]
            return _replace(
                state,
                hands=tuple(hands),
                history=history,
                to_act=nxt,
                tribute=replace(trib, paid=paid),
            )  # type: ignore[arg-type]
        order = state.previous_order
        assert order is not None
        first, second = order[0], order[1]
        if len(paid) == 1:
            receivers = (first,)
            leader = paid[0][0]
        else:
            (pa, ca), (pb, cb) = paid
            level = state.level
            if card_value(cb, level) > card_value(ca, level):
                receivers_by = {pb: first, pa: second}
                leader = pb
            else:  # larger, or a tie: the payer seated after the first player gives to it
                receivers_by = {pa: first, pb: second}
                leader = pa
            receivers = tuple(receivers_by[p] for p, _ in paid)
        for (_payer, c), receiver in zip(paid, receivers, strict=True):
            hands[receiver] = add_cards(hands[receiver], (c,))
        givers = tuple(sorted(receivers, key=lambda r: 0 if r == first else 1))
        trib = replace(trib, paid=paid, receivers=receivers, leader=leader)
        return _replace(
            state, hands=tuple(hands), history=history, phase=RETURN, to_act=givers[0], tribute=trib
        )  # type: ignore[arg-type]

    def _give_back(self, state: GuandanState, seat: int, card: int) -> GuandanState:
        trib = state.tribute
        assert trib is not None
        payer = trib.payers[trib.receivers.index(seat)]
        hands = list(state.hands)
        hands[seat] = remove_cards(hands[seat], (card,))
        hands[payer] = add_cards(hands[payer], (card,))
        returned = (*trib.returned, (seat, card))
        history = (*state.history, (seat, GIVE_BASE + card, (card,), RETURN))
        trib = replace(trib, returned=returned)
        done = {r for r, _ in returned}
        first = state.previous_order[0] if state.previous_order else -1
        waiting = [r for r in sorted(trib.receivers, key=lambda r: r != first) if r not in done]
        if waiting:
            return _replace(
                state, hands=tuple(hands), history=history, tribute=trib, to_act=waiting[0]
            )  # type: ignore[arg-type]
        return _replace(
            state, hands=tuple(hands), history=history, tribute=trib, phase=PLAY, to_act=trib.leader
        )  # type: ignore[arg-type]

    def _pass(self, state: GuandanState, seat: int) -> GuandanState:
        lead = state.lead
        if lead is None:
            raise IllegalActionError("the leader cannot pass")
        history = (*state.history, (seat, PASS, (), PLAY))
        left = state.to_respond - 1
        if left > 0:
            return _replace(
                state, history=history, to_respond=left, to_act=next_active(state.hands, seat)
            )
        owner = lead[0]
        if not any(state.hands[owner]):  # the owner went out: its teammate leads (wind-follow)
            owner = (owner + 2) % 4
            if not any(state.hands[owner]):
                owner = next_active(state.hands, owner)
        return _replace(state, history=history, lead=None, to_respond=0, to_act=owner)

    def _play(
        self, state: GuandanState, seat: int, action: int, rng: np.random.Generator
    ) -> StepResult[GuandanState]:
        level = state.level
        cards = realize(shape_of(action), state.hands[seat], level)
        hands = list(state.hands)
        hands[seat] = remove_cards(hands[seat], cards)
        move: Move = (seat, action, cards, PLAY)
        history = (*state.history, move)
        played = list(state.played)
        played[seat] = add_cards(played[seat], cards)
        finished = state.finished
        if not any(hands[seat]):
            finished = (*finished, seat)
        deal_over = len(finished) >= 3 or (
            len(finished) == 2 and team_of(finished[0]) == team_of(finished[1])
        )
        if not deal_over:
            active = sum(1 for s in range(4) if s != seat and any(hands[s]))
            nxt = _replace(
                state,
                hands=tuple(hands),
                history=history,
                lead=move,
                played=tuple(played),
                to_respond=active,
                finished=finished,
                to_act=next_active(tuple(hands), seat),
            )  # type: ignore[arg-type]
            return StepResult(nxt, (0.0,) * 4)
        state = _replace(state, played=tuple(played))  # type: ignore[arg-type]
        return self._end_deal(state, tuple(hands), history, finished, rng)  # type: ignore[arg-type]

    def _end_deal(
        self,
        state: GuandanState,
        hands: tuple[Hand, Hand, Hand, Hand],
        history: tuple[Move, ...],
        finished: tuple[int, ...],
        rng: np.random.Generator,
    ) -> StepResult[GuandanState]:
        cfg = self.config
        rest = sorted((s for s in range(4) if s not in finished), key=lambda s: (sum(hands[s]), s))
        order = (*finished, *rest)
        winner = team_of(order[0])
        partner_place = order.index((order[0] + 2) % 4)
        advance = ADVANCE[partner_place]
        levels = list(state.levels)
        fails = list(state.a_fails)
        at_own_a = state.level_team == winner and levels[winner] == ACE
        allowed = (1, 2) if cfg.pass_a == "first_second_or_third" else (1,)
        passed = at_own_a and partner_place in allowed
        levels[winner] = min(levels[winner] + advance, ACE) if not passed else ACE
        if state.levels[state.level_team] == ACE and not passed:
            fails[state.level_team] += 1
            if cfg.a_fail_limit is not None and fails[state.level_team] >= cfg.a_fail_limit:
                levels[state.level_team] = 0  # too many failures at A: back to 2
                fails[state.level_team] = 0
        result = DealResult(order, winner, advance, (levels[0], levels[1]), passed)
        results = (*state.results, result)
        deal_pay = tuple(float(advance if team_of(s) == winner else -advance) for s in range(4))
        ended = _replace(
            state,
            hands=hands,
            history=history,
            finished=order,
            lead=None,
            to_respond=0,
            phase=OVER,
            to_act=-1,
            results=results,
            levels=(levels[0], levels[1]),
            a_fails=(fails[0], fails[1]),
        )
        if not cfg.match:
            return StepResult(ended, deal_pay, ("deal_over",))
        if passed or len(results) >= cfg.max_deals:
            match_winner = winner if passed else -1
            ended = _replace(ended, winner=match_winner)
            if cfg.match_reward == "win":
                pay = tuple(
                    0.0 if match_winner < 0 else (1.0 if team_of(s) == winner else -1.0)
                    for s in range(4)
                )
            else:
                pay = deal_pay
            return StepResult(ended, pay, ("deal_over", "match_over"))
        nxt = self._new_deal(
            rng, (levels[0], levels[1]), winner, order, len(results), (fails[0], fails[1]), results
        )
        pay = deal_pay if cfg.match_reward == "deal" else (0.0,) * 4
        return StepResult(nxt, pay, ("deal_over",))


def next_active(hands: tuple[Hand, ...], seat: int) -> int:
    """The next seat after ``seat`` that still holds cards."""
    for d in range(1, 5):
        s = (seat + d) % 4
        if any(hands[s]):
            return s
    return seat


def tribute_cards(hand: Hand, level: int) -> list[int]:
    """Card kinds a payer may pay: its highest-valued cards, never the heart of the level."""
    wk = wild_kind(level)
    held = [c for c in range(NUM_KINDS) if hand[c] and c != wk]
    if not held:
        return [wk] if hand[wk] else []
    top = max(card_value(c, level) for c in held)
    return [c for c in held if card_value(c, level) == top]


def return_cards(hand: Hand, level: int) -> list[int]:
    """Card kinds a receiver may give back: rank 10 or lower and not of the level rank.

    If the hand holds none, its lowest-valued cards other than the wild cards.
    """
    ok = [c for c in range(52) if hand[c] and c // 4 <= 8 and c // 4 != level]
    if ok:
        return ok
    wk = wild_kind(level)
    held = [c for c in range(NUM_KINDS) if hand[c] and c != wk] or [wk]
    low = min(card_value(c, level) for c in held)
    return [c for c in held if card_value(c, level) == low]
