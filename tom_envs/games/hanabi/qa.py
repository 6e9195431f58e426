"""CoordinationQA for Hanabi (two or more players; the partner is the next seat): EC from the
fireworks, the discard pile and the partner's visible hand, ToM about what the partner needs to
know and what its last reveal meant, JP keyed only where the best move is unique and good.

No item asks whether the partner knows something about a card (its beliefs are printed in the
context: a lookup would answer them). Every key is recomputed on *variants*: states that show the
asked player exactly the same context but deal it other cards (its own hand swapped with unseen
cards of the deck); an item is kept only when every variant gives the same key (``answerable``).

* **EC** ``partner_playable_cards``: which of the partner's cards could be played now (several may
  be right, or "None of them"); ``copies_unseen``: how many copies of a card are neither in the
  partner's hand, nor played, nor discarded; ``stack_max``: the highest rank a colour's stack can
  still reach, given the discard pile.
* **ToM** ``reveal_makes_playable`` (the paper's type 1): which reveal lets the partner know that
  one of its cards can be played now (a card it did not know to be playable, that is playable);
  ``hint_meaning`` (type 2): the partner's last move revealed exactly one of your cards, and the
  team gives reveals to point at playable cards: what should you do? (kept only when that card is
  playable: the convention's reading is true).
* **JP** ``best_move`` (the stated team convention: play a card you know to be playable, else
  give a reveal that lets the partner know a playable card): kept only when exactly one legal move
  does the convention's first applicable step (a unique play of a known-playable card, or, when you
  know none, a unique reveal that makes a partner card known-playable); the other options are
  moves that do neither. Never a fallback: no discard is ever keyed.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from tom_envs.games.hanabi.cards import cards_per_rank
from tom_envs.games.hanabi.probes import knows_playable
from tom_envs.games.hanabi.state import DISCARD, PLAY, REVEAL_COLOR, REVEAL_RANK
from tom_envs.qa.generate import context_text
from tom_envs.qa.items import ItemMaker, QAItem, Scenario

GENERATOR_VERSION = 2

KINDS = {
    "last_life": "one life token left: a misplay ends the game",
    "no_hint_tokens": "no information tokens: reveals are impossible",
    "final_round": "the deck is empty: the last round is being played",
}

SCENARIOS: list[dict[str, Any]] = [
    {"env_kwargs": {}, "seats": ["simple", "simple"]},
    {"env_kwargs": {}, "seats": ["convention", "convention"]},
    {"env_kwargs": {}, "seats": ["random", "simple"]},
]

#: Variants (other deals of the asked player's own cards) an item's key must survive.
VARIANTS = 4

CONVENTION = (
    "Your team's convention: play a card you know to be playable; otherwise give a reveal that "
    "lets your partner know that one of its cards is playable; otherwise discard."
)


def tags(bundle: Any, state: Any, player: int) -> tuple[str, ...]:
    """The named filters ``state`` matches."""
    out = []
    if state.life_tokens == 1:
        out.append("last_life")
    if state.information_tokens == 0:
        out.append("no_hint_tokens")
    if state.deck_size == 0:
        out.append("final_round")
    return tuple(out)


def _playable(cfg: Any, fireworks: tuple[int, ...], card: int) -> bool:
    return fireworks[card // cfg.ranks] == card % cfg.ranks


def _newly_known_playable(game: Any, state: Any, player: int, action: int, partner: int) -> bool:
    """A reveal after which the partner knows a card it did not know to be playable is."""
    before = game.card_knowledge(state, partner)
    after = game.card_knowledge(game.step(state, {player: action}, np.random.default_rng(0)).state,
                                partner)  # fmt: skip
    fw = state.fireworks
    return any(knows_playable(a, fw) and not knows_playable(b, fw)
               for a, b in zip(after, before, strict=True))  # fmt: skip


def questions(bundle: Any, state: Any, player: int, scenario: Scenario) -> list[QAItem]:
    """EC, ToM and JP items for the player to act."""
    return _questions(bundle, state, player, scenario, truth=True)


def _questions(
    bundle: Any, state: Any, player: int, scenario: Scenario, truth: bool
) -> list[QAItem]:
    game, text = bundle.game, bundle.text
    cfg = game.config
    if state.current != player or game.is_terminal(state):
        return []
    base = f"hanabi/p{cfg.players}/s{scenario.seed}/m{len(scenario.actions)}/p{player}"
    make = ItemMaker(base, scenario, context_text(bundle, state, player))
    view = game.observe(state, player)
    moves = text.moves
    fw = state.fireworks
    rng = np.random.default_rng([scenario.seed, len(scenario.actions), player, 5])
    items: list[QAItem] = []
    partner = (player + 1) % cfg.players
    pname = text.possessive(partner)
    hand = state.hands[partner]

    # ---- EC
    playable = [i for i, c in enumerate(hand) if _playable(cfg, fw, c)]
    options = [f"{pname} Card {i} ({text.card_name(c)})" for i, c in enumerate(hand)]
    options.append("None of them")
    answers = tuple(playable) if playable else (len(hand),)
    if len(answers) <= len(options) // 2:
        items.append(make("EC", "partner_playable_cards",
                          f"Which of {pname} cards could be played on the fireworks right now "
                          "without losing a life?", tuple(options), answers, "rules"))  # fmt: skip
    kinds = [c * cfg.ranks + r for c in range(cfg.colors) for r in range(cfg.ranks)]
    card = int(rng.choice(kinds))
    c, r = divmod(card, cfg.ranks)
    total = cards_per_rank(r, cfg.ranks)
    gone = sum(1 for x in hand if x == card) + sum(1 for x in state.discards if x == card)
    gone += 1 if fw[c] > r else 0
    items.append(make("EC", "copies_unseen",
                      f"How many copies of {text.card_name(card)} are neither in {pname} hand, "
                      "nor on the fireworks, nor in the discard pile?",
                      tuple(str(k) for k in range(4)), (total - gone,), "rules"))  # fmt: skip
    color = int(rng.integers(cfg.colors))
    reach = cfg.ranks
    for rank in range(fw[color], cfg.ranks):
        dead = sum(1 for x in state.discards if x == color * cfg.ranks + rank)
        if dead >= cards_per_rank(rank, cfg.ranks):
            reach = rank
            break
    cname = text.colors[color]
    items.append(make("EC", "stack_max",
                      f"Given the discard pile, what is the highest rank the {cname} stack can "
                      "still reach?", tuple(str(k) for k in range(cfg.ranks + 1)), (reach,),
                      "rules"))  # fmt: skip

    # ---- ToM
    legal = list(game.legal_actions(state, player))
    reveals = [a for a in legal if moves[a].kind in (REVEAL_COLOR, REVEAL_RANK)
               and view.seat(moves[a].target_offset) == partner]  # fmt: skip
    good = [a for a in reveals if _newly_known_playable(game, state, player, a, partner)]
    if good and len(good) <= len(reveals) // 2:
        items.append(make("ToM", "reveal_makes_playable",
                          f"Which reveal would let {text.name(partner)} know that one of "
                          f"{text.pronoun(partner)} cards can be played now?",
                          tuple(text.bare_action_text(view, a) for a in reveals),
                          tuple(reveals.index(a) for a in good), "knowledge"))  # fmt: skip
    last = state.history[-1] if state.history else None
    if (
        last is not None
        and last.player != player
        and last.kind in (REVEAL_COLOR, REVEAL_RANK)
        and last.target == player
        and bin(last.reveal_mask).count("1") == 1
    ):
        touched = last.reveal_mask.bit_length() - 1
        if not truth or _playable(cfg, fw, state.hands[player][touched]):
            mine = [a for a in legal if moves[a].kind in (PLAY, DISCARD)]
            key = [a for a in mine if moves[a].kind == PLAY and moves[a].card_index == touched]
            if key:
                items.append(make("ToM", "hint_meaning",
                                  f"Your team gives reveals to point at cards that can be played "
                                  f"now. What does {text.name(last.player)}'s last move tell you "
                                  "to do?", tuple(text.bare_action_text(view, a) for a in mine),
                                  (mine.index(key[0]),), "knowledge"))  # fmt: skip

    # ---- JP
    codes = game.card_knowledge(state, player)
    plays = [
        a for a in legal if moves[a].kind == PLAY and knows_playable(codes[moves[a].card_index], fw)
    ]
    key, bad = None, []
    if len(plays) == 1:
        key = plays[0]
        bad = [a for a in legal if (a != key and moves[a].kind != PLAY) or
               (moves[a].kind == PLAY and a != key)]  # fmt: skip
        bad = [a for a in bad if a not in good]
    elif not plays and len(good) == 1:
        key = good[0]
        bad = [
            a for a in legal if a not in good and moves[a].kind in (REVEAL_COLOR, REVEAL_RANK, PLAY)
        ]
    if key is not None and len(bad) >= 3:
        picks = sorted(
            {key, *(int(a) for a in rng.choice(bad, size=min(4, len(bad)), replace=False))}
        )
        items.append(make("JP", "best_move", f"{CONVENTION} Which move should you make?",
                          tuple(text.bare_action_text(view, a) for a in picks),
                          (picks.index(key),), "convention_bot",
                          details={"convention": "play known playable, else playable reveal"}))  # fmt: skip
    return items


def _variants(bundle: Any, state: Any, player: int, rng: np.random.Generator) -> list[Any]:
    """States showing ``player`` the same context, with its own cards swapped for unseen ones."""
    game = bundle.game
    mine = list(state.hands[player])
    pool = mine + list(state.deck[state.deck_pos :])
    out = []
    for _ in range(VARIANTS):
        perm = [pool[int(i)] for i in rng.permutation(len(pool))]
        hands = list(state.hands)
        hands[player] = tuple(perm[: len(mine)])
        deck = tuple(state.deck[: state.deck_pos]) + tuple(perm[len(mine) :])
        out.append(dataclasses.replace(state, hands=tuple(hands), deck=deck))
    ctx = context_text(bundle, state, player)
    return [
        v
        for v in out
        if context_text(bundle, v, player) == ctx and game.is_terminal(v) == game.is_terminal(state)
    ]


def answerable(bundle: Any, state: Any, item: QAItem) -> bool:
    """The key is the same in every variant (other deals of the asked player's own cards that
    show it the same context): it follows from what the asked player sees."""
    player = item.scenario.player
    rng = np.random.default_rng([item.scenario.seed, len(item.scenario.actions), 77])
    mine = {i.id: i for i in _questions(bundle, state, player, item.scenario, truth=False)}
    if item.id not in mine:
        return False
    want = _keys(mine[item.id])
    variants = _variants(bundle, state, player, rng)
    if not variants:
        return False
    for v in variants:
        fresh = {i.id: i for i in _questions(bundle, v, player, item.scenario, truth=False)}
        if item.id not in fresh or _keys(fresh[item.id]) != want:
            return False
    return True


def _keys(item: QAItem) -> tuple[tuple[str, ...], frozenset[str]]:
    return item.options, frozenset(item.options[a] for a in item.answers)
