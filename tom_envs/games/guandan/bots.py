"""Rule-based Guandan agents, reading the structured player view.

| name | rule |
|---|---|
| ``random`` | a uniformly random legal action (the paper's 'random' strategy) |
| ``bestp_lowv`` | the paper's 'bestP_lowV' (§4): the legal combination with the best pattern priority, then the fewest wild cards, then the lowest value; never overtakes its teammate; bombs only when the opponent on the table has 6 cards or fewer |
| ``heuristic`` | a stronger rule-based player after the competition agents (specs §4.8): decomposes its hand, leads low singles then sequences, full houses, trips, pairs; follows with the smallest combination that does not break a group; does not overtake its teammate; bombs when an opponent is close to going out; goes out whenever one play empties its hand |
| ``recommender`` | plays the top action of the action recommender (:mod:`recommender`) |
| ``leader`` | the lead convention: plays to go out itself. The recommender's scores without its two teammate terms (no bonus for passing on its teammate's trick, no malus for beating it): it overtakes its teammate's play whenever that helps its own hand, e.g. takes a low single its teammate leads |
| ``supporter`` | the support convention: lets its teammate go out first. Goes out whenever one play empties its hand; while its teammate holds cards it leads its lowest single (a low lead its teammate can take over) and never beats its teammate's play; against an opponent's play it follows the recommender (fights with its scores, bombs near the end) |

``leader`` and ``supporter`` are the two halves of one division of labour (issue #35's zoo
members meant to have different best responses), written before any check was run: with a
``supporter`` teammate the focal should run and take the low singles it is fed (``leader`` does,
the recommender and ``heuristic`` pass on their teammate's play); with a ``leader`` teammate the
focal should support (feed it low leads, never block it). Measured on selection seeds
10000..10059 (docs/results/guandan_conventions.md), ``heuristic`` stays a best
response to both within noise: the design's difference is smaller than one deal's noise.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from tom_envs.core.agents import BaseAgent, RandomAgent, Turn
from tom_envs.core.contract import Bot, BotTable
from tom_envs.core.game import GameBundle
from tom_envs.games.guandan.cards import card_value
from tom_envs.games.guandan.combos import (
    GIVE_BASE,
    PASS,
    SHAPE_BASE,
    ComboType,
    Shape,
    shape_of,
    strength,
)
from tom_envs.games.guandan.recommender import (
    after_play,
    counts_of,
    hand_cost,
    plan_groups,
    play_parts,
    score_actions,
)
from tom_envs.games.guandan.view import ME, NEXT, PARTNER, GuandanView

#: bestP_lowV's pattern priority (higher first): the combinations that shed the most cards.
PATTERN_PRIORITY = {
    ComboType.PLATE: 6,
    ComboType.TUBE: 6,
    ComboType.STRAIGHT: 5,
    ComboType.FULL_HOUSE: 4,
    ComboType.TRIPS: 3,
    ComboType.PAIR: 2,
    ComboType.SINGLE: 1,
    ComboType.STRAIGHT_FLUSH: 0,
    ComboType.BOMB: 0,
    ComboType.JOKER_BOMB: 0,
}


def _plays(view: GuandanView) -> list[tuple[int, Shape]]:
    return [(a, shape_of(a)) for a in view.legal_actions if a >= SHAPE_BASE]


def _finisher(view: GuandanView) -> int | None:
    """A legal play that empties the hand, if any (the smallest such)."""
    total = sum(view.hand)
    best = None
    for a, s in _plays(view):
        if s.size == total and (
            best is None or strength(s, view.level) < strength(shape_of(best), view.level)
        ):
            best = a
    return best


def _give(view: GuandanView) -> int:
    """Tribute: the first offered card. Return: the card that costs the hand least."""
    if view.phase == "tribute":
        return view.legal_actions[0]
    level = view.level
    best, best_cost = view.legal_actions[0], None
    for a in view.legal_actions:
        hand = list(view.hand)
        hand[a - GIVE_BASE] -= 1
        cnt, w = counts_of(tuple(hand), level)
        cost = (hand_cost(cnt, w, level), card_value(a - GIVE_BASE, level))
        if best_cost is None or cost < best_cost:
            best, best_cost = a, cost
    return best


class _RuleBot(BaseAgent):
    """A rule-based player: tribute and return by :func:`_give`, moves by :meth:`play`."""

    def act(self, turn: Turn) -> int:
        """The card to give in the tribute phases, else :meth:`play`'s move."""
        view: GuandanView = turn.view
        if view.phase in ("tribute", "return"):
            return _give(view)
        return self.play(view)

    def play(self, view: GuandanView) -> int:
        """A move in the play phase."""
        raise NotImplementedError


class BestPLowV(_RuleBot):
    """The paper's 'bestP_lowV': best pattern priority, then lowest value."""

    name = "bestp_lowv"

    def play(self, view: GuandanView) -> int:
        """Choose by (pattern priority, fewest wilds, lowest value)."""
        level = view.level
        plays = _plays(view)

        def wilds(a: int) -> int:
            return play_parts(view, a)[1]

        if view.lead is not None:
            if view.lead[0] == PARTNER:
                return PASS
            normal = [(a, s) for a, s in plays if not s.is_bomb]
            if normal:
                return min(normal, key=lambda x: (wilds(x[0]), strength(x[1], level), x[0]))[0]
            if view.cards_left[view.lead[0]] <= 6:
                bombs = [(a, s) for a, s in plays if s.is_bomb]
                if bombs:
                    return min(bombs, key=lambda x: (wilds(x[0]), strength(x[1], level)))[0]
            return PASS
        return max(
            plays,
            key=lambda x: (
                PATTERN_PRIORITY[x[1].type],
                -wilds(x[0]),
                -strength(x[1], level),
                -x[0],
            ),
        )[0]


class HeuristicAgent(_RuleBot):
    """A stronger rule-based player (specs §4.8): hand decomposition, then simple rules."""

    name = "heuristic"

    def play(self, view: GuandanView) -> int:
        """Lead or follow by the rules in the module table."""
        done = _finisher(view)
        if done is not None:
            return done
        return self._lead(view) if view.lead is None else self._follow(view)

    # -------------------------------------------------------------- helpers
    def _group_actions(self, view: GuandanView) -> dict[int, Shape]:
        """Legal plays that are exactly a group of the hand's plan (or trips + a plan pair)."""
        level = view.level
        counts, _ = counts_of(view.hand, level)
        groups = plan_groups(counts, level)
        needs = {(t, need) for t, _, need in groups}
        pair_needs = [need for t, _, need in groups if t == ComboType.PAIR]
        trips_needs = [need for t, _, need in groups if t == ComboType.TRIPS]
        for tn in trips_needs:
            for pn in pair_needs:
                needs.add(
                    (int(ComboType.FULL_HOUSE), tuple(a + b for a, b in zip(tn, pn, strict=True)))
                )
        out = {}
        for a, s in _plays(view):
            need, w = play_parts(view, a)
            if w == 0 and (int(s.type), need) in needs:
                out[a] = s
        return out

    def _lead(self, view: GuandanView) -> int:
        level = view.level
        groups = self._group_actions(view)
        danger = view.cards_left[NEXT]
        normal = {a: s for a, s in groups.items() if not s.is_bomb}

        def low(cands: dict[int, Shape]) -> int:
            return min(cands, key=lambda a: (strength(cands[a], level), a))

        if view.cards_left[PARTNER] == 1 and danger != 1:
            singles = {a: s for a, s in _plays(view) if s.type == ComboType.SINGLE}
            if singles:
                return low(singles)
        if normal:
            singles = {a: s for a, s in normal.items() if s.type == ComboType.SINGLE}
            small = {a: s for a, s in singles.items() if strength(s, level) < 10}
            if small and danger != 1:
                return low(small)
            order = (
                (ComboType.TUBE, ComboType.PLATE),
                (ComboType.STRAIGHT,),
                (ComboType.FULL_HOUSE,),
                (ComboType.TRIPS,),
                (ComboType.PAIR,),
            )
            for types in order:
                cands = {a: s for a, s in normal.items() if s.type in types}
                if types == (ComboType.STRAIGHT,):
                    cands = {a: s for a, s in cands.items() if s.key <= 11}
                if cands:
                    return low(cands)
            if singles:
                if danger == 1:
                    return max(singles, key=lambda a: (strength(singles[a], level), a))
                return low(singles)
        plays = _plays(view)
        non_bomb = {a: s for a, s in plays if not s.is_bomb}
        if non_bomb:  # nothing but broken groups: the least damaging low play
            return self._least_damage(view, non_bomb)
        return low(dict(plays))

    def _least_damage(self, view: GuandanView, cands: dict[int, Shape]) -> int:
        level = view.level

        def cost(a: int) -> tuple[float, int, int]:
            cnt, w = after_play(view, a)
            return (hand_cost(cnt, w, level), strength(cands[a], level), a)

        return min(cands, key=cost)

    def _follow(self, view: GuandanView) -> int:
        level = view.level
        lead = view.lead
        assert lead is not None
        if lead[0] == PARTNER:
            return PASS
        owner_left = view.cards_left[lead[0]]
        groups = self._group_actions(view)
        normal = {a: s for a, s in groups.items() if not s.is_bomb}
        if normal:
            return min(normal, key=lambda a: (strength(normal[a], level), a))
        plays = _plays(view)
        pressing = owner_left <= 8 or sum(view.hand) <= 10
        if pressing:
            broken = {a: s for a, s in plays if not s.is_bomb and play_parts(view, a)[1] == 0}
            if broken:
                return self._least_damage(view, broken)
        bombs = {a: s for a, s in plays if s.is_bomb}
        few_left = bombs and sum(view.hand) - min(s.size for s in bombs.values()) <= 5
        if bombs and (owner_left <= 6 or few_left):
            return min(bombs, key=lambda a: (play_parts(view, a)[1], strength(bombs[a], level), a))
        if owner_left <= 3:
            wild_plays = {a: s for a, s in plays if not s.is_bomb}
            if wild_plays:
                return self._least_damage(view, wild_plays)
        return PASS


def _low(view: GuandanView, cands: dict[int, Shape]) -> int:
    """The weakest of ``cands`` (ties: the lower action)."""
    return min(cands, key=lambda a: (strength(cands[a], view.level), a))


class LeaderAgent(BaseAgent):
    """The lead convention: runs for going out first and expects its teammate to support it."""

    name = "leader"

    def act(self, turn: Turn) -> int:
        """The recommender's scores without its teammate terms: the teammate's trick is fair game."""
        scores = score_actions(turn.view, teammate=False)
        return min(scores, key=lambda a: (-scores[a], a))


class SupporterAgent(BaseAgent):
    """The support convention: hands the lead to its teammate and fights the opponents."""

    name = "supporter"

    def act(self, turn: Turn) -> int:
        """Go out if one play does it; lead the lowest single; never beat the teammate; else the
        recommender's choice against an opponent's play."""
        view: GuandanView = turn.view
        if view.phase == "play":
            done = _finisher(view)
            if done is not None:
                return done
            if view.lead is None and view.cards_left[PARTNER] > 0:
                singles = {a: s for a, s in _plays(view) if s.type == ComboType.SINGLE}
                if singles:
                    return _low(view, singles)
            if view.lead is not None and view.lead[0] == PARTNER:
                return PASS
        scores = score_actions(view)
        return min(scores, key=lambda a: (-scores[a], a))


def _first_lead(view: GuandanView, seat: int) -> int | None:
    """``seat``'s (relative) first free lead of this deal, if it made one."""
    return next((a for s, a in view.free_leads() if s == seat), None)


class _OpenerAgent(HeuristicAgent):
    """``heuristic``, except its own first free lead of the deal (the signal its teammate reads)."""

    def play(self, view: GuandanView) -> int:
        """Go out if one play does it; open with :meth:`opening` at the first free lead; else
        ``heuristic``."""
        if view.lead is None and _finisher(view) is None and _first_lead(view, ME) is None:
            opening = self.opening(view)
            if opening is not None:
                return opening
        return super().play(view)

    def opening(self, view: GuandanView) -> int | None:
        """The first free lead (``None``: ``heuristic``'s lead)."""
        raise NotImplementedError


class PairOpener(_OpenerAgent):
    """Opens with its weakest pair (fewest wild cards first): the pair signal."""

    name = "pair_opener"

    def opening(self, view: GuandanView) -> int | None:
        """The weakest legal pair by (wild cards, strength, action), if any."""
        pairs = [a for a, s in _plays(view) if s.type == ComboType.PAIR]
        if not pairs:
            return None
        return min(
            pairs, key=lambda a: (play_parts(view, a)[1], strength(shape_of(a), view.level), a)
        )


class SingleOpener(_OpenerAgent):
    """Opens with a single: the weakest single of its hand's plan, else the least damaging one."""

    name = "single_opener"

    def opening(self, view: GuandanView) -> int | None:
        """A plan single (a group of one card, no wild), else the single that costs least."""
        plan = {a: s for a, s in self._group_actions(view).items() if s.type == ComboType.SINGLE}
        if plan:
            return _low(view, plan)
        singles = {a: s for a, s in _plays(view) if s.type == ComboType.SINGLE}
        return self._least_damage(view, singles) if singles else None


class _SignalAgent(HeuristicAgent):
    """``heuristic`` while its teammate's first free lead is the agreed type (or not yet made);
    after any other first free lead it withdraws for the rest of the deal."""

    expects: ComboType

    def withdrawn(self, view: GuandanView) -> bool:
        """Whether its teammate's first free lead of this deal broke the convention."""
        first = _first_lead(view, PARTNER)
        return first is not None and shape_of(first).type != self.expects

    def play(self, view: GuandanView) -> int:
        """Withdrawn: pass whenever a pass is legal, lead as ``heuristic`` when it must lead."""
        if view.lead is not None and self.withdrawn(view):
            return PASS
        return super().play(view)


class SignalPair(_SignalAgent):
    """Cooperates only with a teammate whose first free lead was a pair."""

    name = "signal_pair"
    expects = ComboType.PAIR


class SignalSingle(_SignalAgent):
    """Cooperates only with a teammate whose first free lead was a single."""

    name = "signal_single"
    expects = ComboType.SINGLE


class RecommenderAgent(BaseAgent):
    """Plays the action recommender's top-scored action."""

    name = "recommender"

    def act(self, turn: Turn) -> int:
        """The best-scored legal action (ties: catalogue order)."""
        scores = score_actions(turn.view)
        return min(scores, key=lambda a: (-scores[a], a))


#: name -> (agent class, description), in table order (:func:`bot_table`).
BOTS: dict[str, tuple[type[BaseAgent], str]] = {
    "random": (RandomAgent, "uniformly random legal action (the paper's 'random')"),
    "bestp_lowv": (
        BestPLowV,
        "the paper's 'bestP_lowV': best pattern priority, fewest wilds, lowest value",
    ),
    "heuristic": (
        HeuristicAgent,
        "stronger rule-based player (competition agents, specs §4.8): hand decomposition",
    ),
    "recommender": (RecommenderAgent, "plays the action recommender's top-scored action"),
    "leader": (
        LeaderAgent,
        "lead convention: plays to go out itself (recommender scores without teammate terms): "
        "overtakes its teammate's play when that helps its own hand",
    ),
    "supporter": (
        SupporterAgent,
        "support convention: never beats its teammate, leads its lowest single while its "
        "teammate holds cards, fights opponents' plays with the recommender's scores",
    ),
    "signal_pair": (
        SignalPair,
        "pair-signal convention: heuristic while its teammate's first free lead of the deal was "
        "a pair (or not yet made); after any other first lead it withdraws (passes whenever it may)",
    ),
    "signal_single": (
        SignalSingle,
        "single-signal convention: heuristic while its teammate's first free lead was a single "
        "(or not yet made); after any other first lead it withdraws (passes whenever it may)",
    ),
    "pair_opener": (
        PairOpener,
        "heuristic, except its first free lead of the deal: its weakest pair (the pair signal)",
    ),
    "single_opener": (
        SingleOpener,
        "heuristic, except its first free lead of the deal: a single (the single signal)",
    ),
}


def _make(name: str, bundle: GameBundle) -> BaseAgent:
    agent = BOTS[name][0]()
    agent.name = name
    return agent


def bot_table(**config: Any) -> BotTable:
    """The rule-based bots (the same for every configuration) and the populations
    ``rule_based`` and ``all``."""
    bots = tuple(Bot(name, partial(_make, name), desc) for name, (_, desc) in BOTS.items())
    populations = {"rule_based": ("bestp_lowv", "heuristic"), "all": tuple(BOTS)}
    return BotTable(bots, populations, game="Guandan")
