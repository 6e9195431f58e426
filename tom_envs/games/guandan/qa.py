"""CoordinationQA for Guandan: EC from your hand, the cards played and the legal moves, ToM from
card counting (what your teammate cannot hold, and what it knows you do not hold), JP only where
the optimum is certain.

* **EC** ``can_beat``: whether any play in your hand beats the play on the table;
  ``copies_elsewhere``: copies of a card neither in your hand nor played; ``cards_with_others``:
  cards the other three hold together.
* **ToM** ``teammate_cannot_hold``: which of four cards your teammate certainly does not hold:
  both copies are in your hand or already played (the other three have a copy unaccounted for).
  ``teammate_knows_not_mine``: which of four cards your teammate knows you do not hold: the
  teammate sees the cards played but not your hand, so it knows it of a card whose two copies were
  both played, never of a card you hold (the three wrong options).
* **JP** ``secure_trick``: the one option (among four of your legal actions) that makes certain
  your team wins the trick whatever cards the opponents hold, your teammate never beating its own
  team's play: a play no opponent still in the deal could beat with any cards it may hold (the
  cards neither in your hand nor played, at most as many as it holds), or a pass that leaves your
  teammate's play on the table to opponents who cannot beat it (keeping the partner's lead).
  Computed exactly from your hand, the cards played and the counts of cards left
  (``source="exact_optimum"``). ``go_out``: the one legal play that plays your last cards
  (finishing first is the best outcome of a deal). The ``recommender`` bot's choice is not an
  optimum and is never a key.

The scenarios print the whole deal's history (``history_window``), so every card played is in the
context. ``answerable``: the context shows every move of the deal, and every key survives
re-dealing the cards the asked player cannot see among the other three players (same hand sizes,
so the same context).
"""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any

import numpy as np

from tom_envs.games.guandan.cards import card_name
from tom_envs.games.guandan.combos import SHAPE_BASE, SHAPES, beats, shape_of
from tom_envs.games.guandan.legal import playable_mask
from tom_envs.games.guandan.rules import PASS
from tom_envs.games.guandan.view import NEXT, PARTNER, PREVIOUS, GuandanView
from tom_envs.qa.generate import context_text
from tom_envs.qa.items import ItemMaker, QAItem, Scenario

GENERATOR_VERSION = 2

KINDS = {
    "partner_few_cards": "your teammate holds five cards or fewer",
    "must_respond": "there is a play to beat",
    "opponent_few_cards": "an opponent holds five cards or fewer",
}

#: Moves the context lists: the whole deal (at most 108 plays, each followed by at most three
#: passes), so that the cards played, which card counting reads, are all printed.
HISTORY = {"history_window": 500}

SCENARIOS: list[dict[str, Any]] = [
    {"env_kwargs": HISTORY, "seats": ["heuristic", "heuristic", "heuristic", "heuristic"]},
    {"env_kwargs": HISTORY, "seats": ["bestp_lowv", "heuristic", "bestp_lowv", "heuristic"]},
    {"env_kwargs": HISTORY, "seats": ["random", "bestp_lowv", "heuristic", "bestp_lowv"]},
]

#: Copies of each card kind (two decks).
COPIES = 2


def tags(bundle: Any, state: Any, player: int) -> tuple[str, ...]:
    """The named filters ``state`` matches."""
    view = bundle.game.observe(state, player)
    out = []
    if 0 < view.cards_left[2] <= 5:
        out.append("partner_few_cards")
    if view.lead is not None:
        out.append("must_respond")
    if any(0 < view.cards_left[s] <= 5 for s in (1, 3)):
        out.append("opponent_few_cards")
    return tuple(out)


def questions(bundle: Any, state: Any, player: int, scenario: Scenario) -> list[QAItem]:
    """EC, ToM and JP items for the player to act."""
    game, text = bundle.game, bundle.text
    view = game.observe(state, player)
    if view.phase != "play" or view.to_act != 0:
        return []
    lang = getattr(game.config, "language", "en")
    base = f"guandan/s{scenario.seed}/m{len(scenario.actions)}/p{player}"
    context = context_text(bundle, state, player)
    make = ItemMaker(base, scenario, context)
    items: list[QAItem] = []
    legal = list(view.legal_actions)
    rng = np.random.default_rng([scenario.seed, len(scenario.actions), player, 11])
    seen = np.frombuffer(bytes(view.hand), np.uint8).astype(int) + sum(
        np.frombuffer(bytes(p), np.uint8).astype(int) for p in view.played
    )

    if view.lead is not None:
        beat = any(a != PASS for a in legal)
        items.append(make("EC", "can_beat",
                          "Do you hold any play that beats the play on the table right now?",
                          ("yes", "no"), (0 if beat else 1,), "rules"))  # fmt: skip
    kind = int(rng.integers(len(seen)))
    items.append(make("EC", "copies_elsewhere",
                      f"How many copies of {card_name(kind, lang)} are neither in your hand nor "
                      "already played (the game uses two decks)?", ("0", "1", "2"),
                      (COPIES - int(seen[kind]),), "rules"))  # fmt: skip
    others = sum(view.cards_left[1:])
    if others > 0:
        items.append(make("EC", "cards_with_others",
                          "How many cards do the other three players hold together?",
                          tuple(str(k) for k in _window(others, rng)),
                          (_window(others, rng).index(others),), "rules"))  # fmt: skip

    if view.cards_left[2] > 0:
        impossible = [k for k in range(len(seen)) if seen[k] >= COPIES]
        possible = [k for k in range(len(seen)) if seen[k] < COPIES]
        if impossible and len(possible) >= 3:
            pick = int(rng.choice(impossible))
            others_ = [int(x) for x in rng.choice(possible, size=3, replace=False)]
            cards = sorted([pick, *others_])
            items.append(make("ToM", "teammate_cannot_hold",
                              "Which of these cards can your teammate certainly not be holding?",
                              tuple(card_name(c, lang) for c in cards), (cards.index(pick),),
                              "knowledge"))  # fmt: skip
    item = _knows_not_mine_item(make, view, seen, lang, scenario, player)
    if item is not None:
        items.append(item)

    out = [a for a in legal if a != PASS and shape_of(a).size == view.cards_left[0]]
    rest = [a for a in legal if a not in out]
    if len(out) == 1 and len(rest) >= 2:
        chosen = sorted(
            {out[0], *(int(a) for a in rng.choice(rest, size=min(3, len(rest)), replace=False))}
        )
        items.append(make("JP", "go_out",
                          "Which play is best for your team now?",
                          tuple(text.action_text(view, a) for a in chosen),
                          (chosen.index(out[0]),), "exact_optimum",
                          details={"reason": "plays your last cards: you finish now"}))  # fmt: skip
    item = _secure_item(make, text, view, seen, rng)
    if item is not None:
        items.append(item)
    return items


def _knows_not_mine_item(
    make: ItemMaker, view: GuandanView, seen: np.ndarray, lang: str, scenario: Scenario, player: int
) -> QAItem | None:
    """ToM ``teammate_knows_not_mine``: which card your teammate knows for certain you do not hold.

    Your teammate sees its own hand and the cards played, never yours: it knows that you lack a
    card whose two copies have both been played; it cannot know that you lack a card you hold (you
    hold it). The key is a card fully played, the three others cards in your hand; cards whose fate
    depends on your teammate's unseen hand are never options."""
    if view.cards_left[PARTNER] == 0:
        return None
    hand = np.frombuffer(bytes(view.hand), np.uint8).astype(int)
    gone = [k for k in range(len(seen)) if seen[k] >= COPIES and hand[k] == 0]
    held = [k for k in range(len(hand)) if hand[k] > 0]
    if not gone or len(held) < 3:
        return None
    rng = np.random.default_rng([scenario.seed, len(scenario.actions), player, 13])
    pick = int(rng.choice(gone))
    cards = sorted([pick, *(int(x) for x in rng.choice(held, size=3, replace=False))])
    return make("ToM", "teammate_knows_not_mine",
                "Your teammate sees its own cards and every card played, but not your hand. "
                "Which of these cards does your teammate know for certain that you do not hold?",
                tuple(card_name(c, lang) for c in cards), (cards.index(pick),),
                "knowledge")  # fmt: skip


#: The JP question of ``secure_trick`` items.
SECURE_QUESTION = (
    "Your teammate never beats a play of its own team. Which option makes certain that your team "
    "wins this trick, whatever cards the opponents hold?"
)


def _secure_item(
    make: ItemMaker, text: Any, view: GuandanView, seen: np.ndarray, rng: np.random.Generator
) -> QAItem | None:
    """JP ``secure_trick``: one option that wins the trick for the team for certain, and up to
    three that do not (of the key's combination type first, so that the options look alike);
    ``None`` unless the hand has such an option and at least two others."""
    secure = trick_secure(view, seen)
    good = [a for a, v in secure.items() if v]
    bad = [a for a, v in secure.items() if not v]
    if not good or len(bad) < 2:
        return None
    key = int(good[int(rng.integers(len(good)))])
    kind = "pass" if key == PASS else shape_of(key).type

    def alike(a: int) -> bool:
        return ("pass" if a == PASS else shape_of(a).type) == kind

    same = [a for a in bad if alike(a)]
    other = [a for a in bad if not alike(a)]
    picked = [int(a) for a in rng.permutation(same)[:3]]
    if len(picked) < 3:
        picked += [int(a) for a in rng.permutation(other)[: 3 - len(picked)]]
    chosen = sorted([key, *picked])
    return make(
        "JP",
        "secure_trick",
        SECURE_QUESTION,
        tuple(text.action_text(view, a) for a in chosen),
        (chosen.index(key),),
        "exact_optimum",
        details={"reason": "no opponent can beat it with any cards it may hold"},
    )


@cache
def _beaten_by(level: int, shape: int) -> np.ndarray:
    """Mask over :data:`SHAPES` of the shapes that may be played on ``SHAPES[shape]``."""
    target = SHAPES[shape]
    return np.array([beats(s, target, level) for s in SHAPES], dtype=bool)


_SIZES = np.array([s.size for s in SHAPES])


def trick_secure(view: GuandanView, seen: np.ndarray) -> dict[int, bool]:
    """For each legal action of the player to act: whether it makes certain that its team wins
    the trick, whatever the cards it cannot see, its teammate never beating its team's play.

    The unseen cards (two decks minus ``seen``, the hand and every card played) are those the
    others may hold; an opponent holding ``c`` cards may hold any ``c`` of them. A play is secure
    when no opponent still holding cards could beat it with a combination of at most its cards
    from the unseen ones (or when it plays the last cards of a player whose teammate is out: the
    deal ends, won); a pass, when the play to beat is the teammate's and no opponent still
    to answer it could beat it. Everything read is printed in the context.
    """
    unseen = bytes(int(COPIES - x) for x in seen)
    formable = playable_mask(unseen, view.level)

    def unbeatable(action: int, opponents: list[int]) -> bool:
        most = max((view.cards_left[o] for o in opponents), default=0)
        if most == 0:
            return True
        mask = formable & _beaten_by(view.level, action - SHAPE_BASE) & (most >= _SIZES)
        return not mask.any()

    out: dict[int, bool] = {}
    for a in view.legal_actions:
        if a != PASS and view.cards_left[PARTNER] == 0 and shape_of(a).size == view.cards_left[0]:
            out[a] = True  # both teammates out: the deal ends, won
        elif a != PASS:
            out[a] = unbeatable(a, [NEXT, PREVIOUS])
        elif view.lead is None or view.lead[0] != PARTNER:
            out[a] = False
        else:
            out[a] = unbeatable(view.lead[1], [s for s in _still_to_answer(view) if s % 2])
    return out


def _still_to_answer(view: GuandanView) -> list[int]:
    """Relative seats that answer the play on the table after the player to act passes: the
    players holding cards (other than its owner) when it was played, less those who passed since
    and the player to act, in playing order."""
    assert view.lead is not None
    owner = view.lead[0]
    moves = [m for m in view.history if m[3] == "play"]
    last = max(i for i, m in enumerate(moves) if m[1] != PASS)
    passes = len(moves) - 1 - last
    answering = sum(1 for s in range(4) if s != owner and view.cards_left[s] > 0)
    left = answering - passes - 1
    seats = [s for s in (1, 2, 3) if view.cards_left[s] > 0]
    return seats[:left]


def _window(value: int, rng: np.random.Generator) -> list[int]:
    """Five consecutive counts around ``value`` (never below 1), seeded by the item."""
    lo = max(1, value - 2)
    return list(range(lo, lo + 5))


def answerable(bundle: Any, state: Any, item: QAItem) -> bool:
    """The context prints every move of the deal, and the key is the same when the cards the
    asked player cannot see are dealt differently among the other three players (same hand
    sizes, same context): EC, the card-counting ToM and JP read only your hand, the cards played
    and the counts of cards left."""
    game = bundle.game
    player = item.scenario.player
    view = game.observe(state, player)
    plays = sum(1 for m in view.history if m[3] == "play")
    if plays > game.config.history_window:
        return False  # some cards played are not printed: card counting cannot be done
    ctx = context_text(bundle, state, player)
    others = [s for s in range(4) if s != player]
    hands = [list(state.hands[s]) for s in others]
    pool = [k for h in hands for k, n in enumerate(h) for _ in range(n)]
    rng = np.random.default_rng([item.scenario.seed, len(item.scenario.actions), 31])
    checked = 0
    for _ in range(3):
        perm = [pool[int(i)] for i in rng.permutation(len(pool))]
        new = list(state.hands)
        at = 0
        for s, h in zip(others, hands, strict=True):
            vec = [0] * len(h)
            for k in perm[at : at + sum(h)]:
                vec[k] += 1
            at += sum(h)
            new[s] = tuple(vec)
        variant = dataclasses.replace(state, hands=tuple(new))
        if context_text(bundle, variant, player) != ctx:
            continue
        checked += 1
        fresh = {i.id: i for i in questions(bundle, variant, player, item.scenario)}
        f = fresh.get(item.id)
        if f is None or {f.options[a] for a in f.answers} != {
            item.options[a] for a in item.answers
        }:
            return False
    return checked > 0
