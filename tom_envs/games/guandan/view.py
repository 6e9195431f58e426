"""What one Guandan player sees: the only place that decides it.

A player sees its own hand, how many cards every other player holds, every move of the deal
(plays, passes, tribute and return cards are all public), the levels, the finishing order and
the results of earlier deals. It never sees another player's cards. Seats are egocentric: relative
seat 0 is me, 1 the next player (an opponent), 2 my teammate, 3 the previous player (an opponent).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tom_envs.core.game import converted_history
from tom_envs.games.guandan.combos import PASS

if TYPE_CHECKING:
    from tom_envs.games.guandan.rules import GuandanGame
    from tom_envs.games.guandan.state import GuandanState, Tribute

#: Relative seat names.
ME, NEXT, PARTNER, PREVIOUS = 0, 1, 2, 3


#: A move as seen by a player: ``(relative seat, action, cards, phase)`` (see ``rules.Move``).
PublicMove = tuple[int, int, tuple[int, ...], str]


@dataclass(frozen=True)
class GuandanView:
    """One player's view.

    Attributes:
        player: the absolute seat.
        phase: ``"tribute"``, ``"return"``, ``"play"`` or ``"over"``.
        hand: my 54-count card vector.
        level: the level rank of this deal (rank index; its hearts are wild).
        my_level: my team's level; ``their_level``: the opponents'.
        level_is_mine: whether this deal is played at my team's level.
        cards_left: cards held by relative seats 0..3.
        played: cards played in tricks this deal by relative seats 0..3 (54-count vectors).
        lead: the play to beat (``None``: nothing to beat; I lead if it is my turn).
        to_act: relative seat to act (-1 when over).
        history: this deal's moves, oldest first (relative seats).
        finished: relative seats out of cards, in order (the full order once the deal is over).
        tribute_payers / tribute_receivers / tribute_paid / tribute_returned: this deal's tribute
            (relative seats; paid and returned as ``(seat, card)``); ``anti_tribute`` if refused.
        deal: deals finished before this one; ``match``: whether the episode is a whole match.
        results: earlier deals as ``(finishing order (relative), winner is my team, advance)``.
        a_fails: deals played at our / their own A without passing.
        match_winner: ``None``, 0 (my team), 1 (the opponents) or -1 (draw).
        legal_actions: catalogue actions I may take now.
    """

    player: int
    phase: str
    hand: tuple[int, ...]
    level: int
    my_level: int
    their_level: int
    level_is_mine: bool
    cards_left: tuple[int, int, int, int]
    played: tuple[tuple[int, ...], ...]
    lead: PublicMove | None
    to_act: int
    history: tuple[PublicMove, ...]
    finished: tuple[int, ...]
    tribute_payers: tuple[int, ...]
    tribute_receivers: tuple[int, ...]
    tribute_paid: tuple[tuple[int, int], ...]
    tribute_returned: tuple[tuple[int, int], ...]
    anti_tribute: bool
    deal: int
    match: bool
    results: tuple[tuple[tuple[int, ...], bool, int], ...]
    a_fails: tuple[int, int]
    match_winner: int | None
    legal_actions: tuple[int, ...]

    @property
    def leading(self) -> bool:
        """Whether I act now with nothing to beat."""
        return self.phase == "play" and self.to_act == ME and self.lead is None

    def free_leads(self) -> list[tuple[int, int]]:
        """This deal's free leads so far, oldest first, as ``(relative seat, action)``.

        A play is a free lead when no play was open to beat: the deal's first play, or the first
        play after a trick closed (every other player still holding cards passed after the last
        play: ``rules._pass``'s bookkeeping). Recovered from the public history and the cards each
        seat holds now (tested against the engine's tricks), so any player may ask it.
        """
        plays = [m for m in self.history if m[3] == "play"]
        held = list(self.cards_left)
        for seat, a, cards, _ in plays:
            if a != PASS:
                held[seat] += len(cards)
        out: list[tuple[int, int]] = []
        open_, left = False, 0
        for seat, a, cards, _ in plays:
            if a == PASS:
                left -= 1
                open_ = left > 0
                continue
            if not open_:
                out.append((seat, a))
            held[seat] -= len(cards)
            open_, left = True, sum(1 for s in range(4) if s != seat and held[s] > 0)
        return out

    def partner_last(self) -> PublicMove | None:
        """My teammate's most recent play-phase move this deal (``None`` if none)."""
        for m in reversed(self.history):
            if m[0] == PARTNER and m[3] == "play":
                return m
        return None


_new = object.__new__
_set_dict = GuandanView.__dict__["__dict__"].__set__


def _rel(seat: int, player: int) -> int:
    return (seat - player) % 4


def _public(moves: tuple, player: int) -> tuple[PublicMove, ...]:
    """``moves`` from ``player``'s side (seats relative to the player)."""
    return tuple([((m[0] - player) % 4, m[1], m[2], m[3]) for m in moves])


def _history(game: GuandanGame, history: tuple, player: int) -> tuple[PublicMove, ...]:
    """The deal's moves from ``player``'s side (only new moves converted: ``converted_history``)."""
    return converted_history(game._view_cache, player, history, _public)


_SIZES: dict[bytes, int] = {}


def _size(hand: bytes) -> int:
    """Cards in a hand (kept per hand: a hand is unchanged until its owner plays)."""
    n = _SIZES.get(hand)
    if n is None:
        n = sum(hand)
        if type(hand) is bytes:
            if len(_SIZES) >= 16384:
                _SIZES.clear()
            _SIZES[hand] = n
    return n


def _tribute(game: GuandanGame, trib: Tribute | None, player: int) -> tuple:
    """The tribute fields of ``player``'s view (kept per tribute object and player: a deal's
    tribute is unchanged once play starts)."""
    if trib is None:
        return _NO_TRIBUTE
    cache = game._view_cache
    key = ("tribute", player)
    hit = cache.get(key)
    if hit is not None and hit[0] is trib:
        return hit[1]
    out = (
        tuple(_rel(s, player) for s in trib.payers),
        tuple(_rel(s, player) for s in trib.receivers),
        tuple((_rel(s, player), c) for s, c in trib.paid),
        tuple((_rel(s, player), c) for s, c in trib.returned),
        trib.anti,
    )
    cache[key] = (trib, out)
    return out


_NO_TRIBUTE = ((), (), (), (), False)


def _results(game: GuandanGame, results: tuple, player: int) -> tuple:
    """Earlier deals from ``player``'s side (kept per results tuple and player)."""
    if not results:
        return ()
    cache = game._view_cache
    key = ("results", player)
    hit = cache.get(key)
    if hit is not None and hit[0] is results:
        return hit[1]
    mine = player % 2
    out = tuple(
        (tuple(_rel(s, player) for s in r.order), r.winner == mine, r.advance) for r in results
    )
    cache[key] = (results, out)
    return out


def observe(game: GuandanGame, state: GuandanState, player: int) -> GuandanView:
    """Build ``player``'s view of ``state``."""
    if player not in (0, 1, 2, 3):
        raise ValueError(f"player must be 0..3, got {player}")
    s1, s2, s3 = (player + 1) % 4, (player + 2) % 4, (player + 3) % 4
    mine = player % 2
    hands = state.hands
    played = state.played
    lead = state.lead
    levels = state.levels
    payers, receivers, paid, returned, anti = _tribute(game, state.tribute, player)
    winner = state.winner
    a_fails = state.a_fails
    finished = state.finished
    values = {
        "player": player,
        "phase": state.phase,
        "hand": hands[player],
        "level": state.level,
        "my_level": levels[mine],
        "their_level": levels[1 - mine],
        "level_is_mine": state.level_team == mine,
        "cards_left": (_size(hands[player]), _size(hands[s1]), _size(hands[s2]), _size(hands[s3])),
        "played": (played[player], played[s1], played[s2], played[s3]),
        "lead": None if lead is None else ((lead[0] - player) % 4, lead[1], lead[2], lead[3]),
        "to_act": -1 if state.to_act < 0 else (state.to_act - player) % 4,
        "history": _history(game, state.history, player),
        "finished": tuple([(s - player) % 4 for s in finished]) if finished else (),
        "tribute_payers": payers,
        "tribute_receivers": receivers,
        "tribute_paid": paid,
        "tribute_returned": returned,
        "anti_tribute": anti,
        "deal": state.deal,
        "match": game.config.match,
        "results": _results(game, state.results, player),
        "a_fails": (a_fails[mine], a_fails[1 - mine]),
        "match_winner": None
        if winner is None
        else (-1 if winner < 0 else (0 if winner == mine else 1)),
        "legal_actions": game.legal_actions(state, player),
    }
    view = _new(GuandanView)  # the frozen dataclass, filled with one call (no __post_init__)
    _set_dict(view, values)
    return view
