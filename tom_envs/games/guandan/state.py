"""Guandan's settings and state values, which the rules (:mod:`~tom_envs.games.guandan.rules`)
read and never mutate: :class:`GuandanConfig`, one public :data:`Move`, a deal's :class:`Tribute`
and :class:`DealResult`, and :class:`GuandanState` (a match: one deal, or a sequence of deals).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tom_envs.games.guandan.cards import ACE, NUM_KINDS, Hand


@dataclass(frozen=True)
class GuandanConfig:
    """Settings of Guandan.

    Attributes:
        match: one deal per episode (``False``) or a whole match until a team passes A.
        start_levels: levels of team 0 (seats 0, 2) and team 1 (seats 1, 3), as rank indices
            (0 = "2" ... 12 = "A").
        level_team: the team whose level is played in the first deal (when no previous order).
        previous_order: finishing order (seats) of a previous deal: the first deal then starts
            with tribute, and its level is that of the previous winners' team.
        tribute: whether tribute and return happen at all.
        anti_tribute: no tribute when the paying side holds both big jokers.
        single_down_payer: who pays in single-down: ``"losing_team_last"`` (the last-placed player
            of the losing team; guandan-world) or ``"last_place"`` (the 4th player, rlcard).
        pass_a: ``"first_second_or_third"`` (a team at A passes with 1st+2nd or 1st+3rd; rlcard,
            DanZero) or ``"first_second"`` (only 1st+2nd; the platform manual's wording).
        a_fail_limit: after this many deals played at its own A without passing, a team drops
            back to 2 (``None``: never).
        max_deals: a match is a draw after this many deals.
        match_reward: ``"deal"`` (every deal pays ±3/±2/±1) or ``"win"`` (±1 when a match ends;
            deals pay 0). One-deal episodes always pay the deal.
        language: ``"en"`` or ``"zh"``: the language of the text layer.
        history_window: how many recent moves the text observation lists (the vector and the
            view keep the whole deal).
    """

    match: bool = False
    start_levels: tuple[int, int] = (0, 0)
    level_team: int = 0
    previous_order: tuple[int, ...] | None = None
    tribute: bool = True
    anti_tribute: bool = True
    single_down_payer: str = "losing_team_last"
    pass_a: str = "first_second_or_third"
    a_fail_limit: int | None = None
    max_deals: int = 100
    match_reward: str = "deal"
    language: str = "en"
    history_window: int = 16

    def __post_init__(self) -> None:
        levels = tuple(int(x) for x in self.start_levels)
        if len(levels) != 2 or not all(0 <= x <= ACE for x in levels):
            raise ValueError(
                f"start_levels must be two rank indices 0..12, got {self.start_levels}"
            )
        object.__setattr__(self, "start_levels", levels)
        if self.level_team not in (0, 1):
            raise ValueError(f"level_team must be 0 or 1, got {self.level_team}")
        if self.previous_order is not None:
            order = tuple(int(x) for x in self.previous_order)
            if sorted(order) != [0, 1, 2, 3]:
                raise ValueError(f"previous_order must order seats 0..3, got {order}")
            object.__setattr__(self, "previous_order", order)
        choices = {
            "single_down_payer": ("losing_team_last", "last_place"),
            "pass_a": ("first_second_or_third", "first_second"),
            "match_reward": ("deal", "win"),
            "language": ("en", "zh"),
        }
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        if self.a_fail_limit is not None and self.a_fail_limit < 1:
            raise ValueError(f"a_fail_limit must be None or >= 1, got {self.a_fail_limit}")
        if self.max_deals < 1:
            raise ValueError(f"max_deals must be >= 1, got {self.max_deals}")
        if self.history_window < 0:
            raise ValueError(f"history_window must be >= 0, got {self.history_window}")


#: One public move of a deal: ``(seat, action, cards, phase)`` with the catalogue action (0 pass,
#: 1..54 give a card, 55.. play a shape), the cards that changed hands or were played (empty for a
#: pass) and the phase (``"tribute"``, ``"return"`` or ``"play"``). Plain tuples keep states cheap
#: to hash, copy and compare.
Move = tuple[int, int, tuple[int, ...], str]


@dataclass(frozen=True)
class Tribute:
    """The tribute of a deal (all public).

    Attributes:
        payers: seats that pay, in paying order.
        receivers: ``receivers[i]`` receives ``payers[i]``'s card (filled once all have paid).
        paid: ``(payer, card)`` in paying order.
        returned: ``(receiver, card)`` in returning order.
        anti: the paying side held both big jokers: no tribute.
        leader: who leads the first trick.
    """

    payers: tuple[int, ...]
    receivers: tuple[int, ...] = ()
    paid: tuple[tuple[int, int], ...] = ()
    returned: tuple[tuple[int, int], ...] = ()
    anti: bool = False
    leader: int = -1


@dataclass(frozen=True)
class DealResult:
    """How a finished deal ended: finishing order, winning team, advance, levels after it."""

    order: tuple[int, ...]
    winner: int
    advance: int
    levels: tuple[int, int]
    passed_a: bool = False


@dataclass(frozen=True)
class GuandanState:
    """Value-semantics state of a match (one deal, or a sequence of deals).

    Attributes:
        hands: 54-count card vectors of the four seats.
        levels: team levels (rank indices); after a deal, the levels it led to.
        level_team: the team whose level is played in this deal.
        level: the level rank of this deal (the level team's level when the deal started).
        phase: ``"tribute"``, ``"return"``, ``"play"`` or ``"over"`` (episode ended).
        to_act: the seat to act (-1 when over).
        lead: the play to beat in the current trick (``None``: ``to_act`` leads).
        to_respond: players that still answer ``lead`` before the trick ends.
        finished: seats out of cards, in order.
        history: this deal's moves.
        tribute: this deal's tribute (``None`` when there is none).
        deal: deals finished before this one.
        previous_order: finishing order of the previous deal (``None`` for a first deal).
        played: cards each seat has played in this deal's tricks (54-count vectors).
        a_fails: per team, deals played at its own A without passing.
        results: finished deals of the match.
        winner: the team that won the match (``None`` while playing or after a one-deal episode,
            -1 for a drawn match).
    """

    hands: tuple[Hand, Hand, Hand, Hand]
    levels: tuple[int, int]
    level_team: int
    level: int
    phase: str
    to_act: int
    lead: Move | None = None
    to_respond: int = 0
    finished: tuple[int, ...] = ()
    history: tuple[Move, ...] = ()
    tribute: Tribute | None = None
    deal: int = 0
    previous_order: tuple[int, ...] | None = None
    played: tuple[Hand, Hand, Hand, Hand] = (bytes(NUM_KINDS),) * 4
    a_fails: tuple[int, int] = (0, 0)
    results: tuple[DealResult, ...] = ()
    winner: int | None = field(default=None)
