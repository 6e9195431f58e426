"""The action recommender: scores every legal action of a view and returns the top k.

The paper's LLM agent calls an external tool that scores all legal actions and shows only the top
k (k = 5 by default, §3.2 and §4.1). The paper scores with DanZero's learned Q-network, whose
weights are not available; this recommender scores with a transparent hand evaluation instead:

* :func:`hand_cost` decomposes a hand (natural counts per rank, jokers, wild cards) into the
  fewest playable groups (bombs aside, then straights, tubes and plates where they save groups,
  trips carrying pairs), counting high groups (A and above) as half a group, bombs as one group
  less and each wild card as 1.5 groups less.
* An action's score is minus the cost of the hand it leaves, minus a small price for spending high
  cards, with bonuses and penalties for going out, for overtaking one's teammate, for bombing, and
  for passing while an opponent is about to go out.

:func:`recommend` is the tool: ``recommend(view, k=5, language="zh")`` returns
:class:`Recommendation` records (action, score, text), best first. It reads only the player view.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from tom_envs.games.guandan.cards import HR_CODE, SB_CODE, card_value, rank_value, wild_kind
from tom_envs.games.guandan.combos import (
    GIVE_BASE,
    PASS,
    ComboType,
    cards_for,
    shape_of,
    strength,
)
from tom_envs.games.guandan.view import NEXT, PARTNER, PREVIOUS, GuandanView

Counts = tuple[int, ...]  # 15 rank codes (13 ranks, small joker, big joker)


def counts_of(hand: tuple[int, ...], level: int) -> tuple[Counts, int]:
    """Natural counts per rank code and the number of wild cards of a 54-count hand."""
    wk = wild_kind(level)
    counts = [0] * 15
    for c in range(52):
        if hand[c] and c != wk:
            counts[c // 4] += hand[c]
    counts[SB_CODE] = hand[52]
    counts[HR_CODE] = hand[53]
    return tuple(counts), hand[wk]


def _high(code: int, level: int) -> bool:
    return rank_value(code, level) >= 14


@lru_cache(maxsize=1 << 18)
def _basic(counts: Counts, level: int) -> float:
    cost = 0.0
    trips = pairs = 0
    for r in range(13):
        c = counts[r]
        if c >= 4:
            cost -= 1.0  # a bomb: a winner, not a burden
        elif c:
            cost += 0.5 if _high(r, level) else 1.0
            trips += c == 3
            pairs += c == 2 and not _high(r, level)
    cost -= min(trips, pairs) * 1.0  # a full house carries a pair
    sb, hr = counts[SB_CODE], counts[HR_CODE]
    if sb == 2 and hr == 2:
        cost -= 2.0
    else:
        cost += 0.5 * ((sb > 0) + (hr > 0))
    return cost


#: Sequence templates: (type, length, width, max start position).
_SEQ = ((ComboType.STRAIGHT, 5, 1, 9), (ComboType.TUBE, 3, 2, 11), (ComboType.PLATE, 2, 3, 12))


def _pos_rank(p: int) -> int:
    return 12 if p == 0 else p - 1


@lru_cache(maxsize=1 << 18)
def _plan(counts: Counts, level: int) -> tuple[float, tuple[tuple[int, int, int], ...]]:
    """``(cost, sequences)``: the cheapest decomposition; sequences as (type, start, width)."""
    best = _basic(counts, level)
    best_seq: tuple[tuple[int, int, int], ...] = ()
    for ctype, length, width, max_start in _SEQ:
        for start in range(max_start + 1):
            ranks = [_pos_rank(p) for p in range(start, start + length)]
            if any(counts[r] < width or counts[r] >= 4 for r in ranks):
                continue
            rest = list(counts)
            for r in ranks:
                rest[r] -= width
            sub, seqs = _plan(tuple(rest), level)
            cost = sub + (0.5 if start + length - 1 >= 12 else 1.0)  # K- or A-high: strong
            if cost < best - 1e-9:
                best, best_seq = cost, ((int(ctype), start, width), *seqs)
    return best, best_seq


#: Value of taking a trick (when following): the winner of a trick leads the next one.
TEMPO = 0.8
#: Passing on the teammate's trick is worth this much (it keeps the lead in the team) ...
PARTNER_PASS_BONUS = 1.5
#: ... and overtaking it costs this much (the teammate's groups are left to it).
PARTNER_PLAY_MALUS = 3.0
#: How many groups one wild card is worth (spending it must save more than this).
WILD_VALUE = 1.5


def hand_cost(counts: Counts, wilds: int, level: int) -> float:
    """How many groups the hand still needs to be played out (lower is better)."""
    return _plan(counts, level)[0] - WILD_VALUE * wilds


def plan_groups(counts: Counts, level: int) -> list[tuple[int, int, Counts]]:
    """The decomposition as ``(type, key, need)`` groups (wild cards aside), sequences first.

    Keys follow the catalogue: rank codes, or the top position of a sequence. Trips and pairs are
    listed separately (a player may carry a pair with its trips).
    """
    _, seqs = _plan(counts, level)
    rest = list(counts)
    groups: list[tuple[int, int, Counts]] = []
    for ctype, start, width in seqs:
        length = {ComboType.STRAIGHT: 5, ComboType.TUBE: 3, ComboType.PLATE: 2}[ComboType(ctype)]
        need = [0] * 15
        for p in range(start, start + length):
            need[_pos_rank(p)] += width
            rest[_pos_rank(p)] -= width
        groups.append((ctype, start + length - 1, tuple(need)))
    for r in range(15):
        c = rest[r]
        if not c:
            continue
        need = [0] * 15
        need[r] = c
        if r >= 13:
            if rest[SB_CODE] == 2 and rest[HR_CODE] == 2:
                if r == SB_CODE:
                    groups.append((int(ComboType.JOKER_BOMB), HR_CODE, (0,) * 13 + (2, 2)))
                continue
            kind = ComboType.SINGLE if c == 1 else ComboType.PAIR
            groups.append((int(kind), r, tuple(need)))
            continue
        ctype = {1: ComboType.SINGLE, 2: ComboType.PAIR, 3: ComboType.TRIPS}.get(c, ComboType.BOMB)
        groups.append((int(ctype), r, tuple(need)))
    return groups


@dataclass(frozen=True)
class Recommendation:
    """One scored legal action."""

    action: int
    score: float
    text: str


def play_parts(view: GuandanView, action: int) -> tuple[Counts, int]:
    """The natural cards per rank code and the wild cards the engine plays for ``action``."""
    cards = cards_for(action, view.hand, view.level)
    wk = wild_kind(view.level)
    need = [0] * 15
    wilds = 0
    for c in cards:
        if c == wk:
            wilds += 1
        else:
            need[SB_CODE if c == 52 else HR_CODE if c == 53 else c // 4] += 1
    return tuple(need), wilds


def after_play(view: GuandanView, action: int) -> tuple[Counts, int]:
    """Natural counts and wild cards left after playing ``action``."""
    counts, wilds = counts_of(view.hand, view.level)
    need, w = play_parts(view, action)
    return tuple(c - n for c, n in zip(counts, need, strict=True)), wilds - w


def score_actions(view: GuandanView, teammate: bool = True) -> dict[int, float]:
    """A score for every legal action of ``view`` (higher is better). ``teammate=False`` drops
    the two teammate terms (the bonus for passing on the teammate's trick and the malus for
    beating it): the ``leader`` convention's scores."""
    level = view.level
    counts, wilds = counts_of(view.hand, level)
    legal = view.legal_actions
    if view.phase in ("tribute", "return"):
        out = {}
        for a in legal:
            c = a - GIVE_BASE
            hand = list(view.hand)
            hand[c] -= 1
            cnt, w = counts_of(tuple(hand), level)
            out[a] = -hand_cost(cnt, w, level) - 0.01 * card_value(c, level)
        return out
    base = hand_cost(counts, wilds, level)
    left = view.cards_left
    lead = view.lead
    owner = None if lead is None else lead[0]
    danger = min(left[NEXT] or 99, left[PREVIOUS] or 99)
    out: dict[int, float] = {}
    for a in legal:
        if a == PASS:
            s = -base
            if owner == PARTNER and teammate:
                s += PARTNER_PASS_BONUS
            elif owner is not None and left[owner] <= 5:
                s -= 2.5
            out[a] = s
            continue
        shape = shape_of(a)
        cnt, w = after_play(view, a)
        if not any(cnt) and not w:
            out[a] = 100.0
            continue
        s = -hand_cost(cnt, w, level)
        st = strength(shape, level)
        if lead is not None:
            s += TEMPO  # taking the trick is worth something: the winner leads next
        if shape.is_bomb:
            near = danger <= 6 or hand_cost(cnt, w, level) <= 1.5
            s += 0.5 if near else -1.5
            s -= 0.002 * st
        else:
            s -= 0.03 * st
        if owner == PARTNER and teammate:
            s -= PARTNER_PLAY_MALUS
        if lead is None and danger == 1 and shape.type == ComboType.SINGLE:
            s -= 1.5 - 0.05 * st  # the next opponent could go out on a low single
        out[a] = s
    return out


def recommend(view: GuandanView, k: int = 5, language: str = "en") -> list[Recommendation]:
    """The ``k`` best legal actions of ``view``, best first (ties: catalogue order)."""
    from tom_envs.games.guandan.state import GuandanConfig
    from tom_envs.games.guandan.text import GuandanText

    scores = score_actions(view)
    ranked = sorted(scores, key=lambda a: (-scores[a], a))[: max(k, 0)]
    text = GuandanText(GuandanConfig(language=language))
    return [Recommendation(a, round(scores[a], 4), text.action_text(view, a)) for a in ranked]


def recommend_text(view: GuandanView, k: int = 5, language: str = "en") -> str:
    """The recommendations as a numbered list for a prompt."""
    recs = recommend(view, k, language)
    head = (
        "推荐动作（按评分从高到低）：" if language == "zh" else "Recommended actions (best first):"
    )
    lines = [head]
    for i, r in enumerate(recs, 1):
        lines.append(f"{i}. {r.text} (score {r.score:.2f})")
    return "\n".join(lines)


__all__ = [
    "Recommendation",
    "after_play",
    "counts_of",
    "hand_cost",
    "plan_groups",
    "play_parts",
    "recommend",
    "recommend_text",
    "score_actions",
]
