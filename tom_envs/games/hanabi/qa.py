"""CoordinationQA for Hanabi (two or more players; the partner is the next seat): every item is a
contrast set. The context is the asked player's observation (the paper's format: its own card
knowledge, the partner's cards, the partner's card knowledge, fireworks, tokens, discards).

* **EC** ``partner_playable_card``: which of the partner's cards could be played now without
  losing a life (twins: the same hands with other firework heights, exactly one of the
  partner's cards playable in each); ``copies_unseen``: how many copies of a card are neither in
  the partner's hand, nor on the fireworks, nor in the discard pile (twins: the same situation
  with another number of its copies discarded).
* **ToM** ``reveal_makes_playable`` (the paper's type 1): which reveal would let the partner
  know that one of its cards can be played now. Twins: the same cards with the partner's card
  knowledge changed (as if it had been given another earlier reveal), so that another reveal is
  the one that works; in each twin exactly one of the options works. The partner's knowledge is
  printed (as in the paper): the item asks what a reveal would add to it, so an answerer that
  ignores the partner's knowledge is right on one twin of each set.
* **JP** ``best_move``: the stated team convention's move (play a card you know to be playable;
  otherwise give a reveal that lets your partner know one of its cards is playable), keyed where
  exactly one move does the convention's first applicable step. Twins: the same cards with your
  own or the partner's knowledge changed (other earlier reveals).

The paper's type 2 ("what does the partner's last reveal mean"), stated with its convention, is
answered by reading which card was touched, without any model of the partner: it is not asked.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from tom_envs.games.hanabi.cards import cards_per_rank
from tom_envs.games.hanabi.probes import knows_playable
from tom_envs.games.hanabi.state import PLAY, REVEAL_COLOR, REVEAL_RANK
from tom_envs.qa.generate import context_text
from tom_envs.qa.items import QAItem, Scenario, situation_set

GENERATOR_VERSION = 3

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

CONVENTION = (
    "Your team's convention: play a card you know to be playable; otherwise give a reveal that "
    "lets your partner know that one of its cards is playable; otherwise discard."
)
#: Firework edits an EC set is drawn from.
FIREWORK_EDITS = 40


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


def _playable(cfg: Any, fireworks: Sequence[int], card: int) -> bool:
    return fireworks[card // cfg.ranks] == card % cfg.ranks


def reveal_knowledge(game: Any, state: Any, seat: int, kind: int, value: int) -> Any:
    """``state`` with ``seat``'s card knowledge as if it had also been told which of its cards
    have colour (``REVEAL_COLOR``) or rank (``REVEAL_RANK``) ``value``."""
    lay = game.layout
    cfg = game.config
    bits = state.knowledge[seat]
    for i, card in enumerate(state.hands[seat]):
        slot = lay.slot(bits, i)
        if kind == REVEAL_COLOR:
            touched, mask = card // cfg.ranks == value, lay.color_rows[value]
            flag = 1 << (lay.cr + value)
        else:
            touched, mask = card % cfg.ranks == value, lay.rank_cols[value]
            flag = 1 << (lay.cr + cfg.colors + value)
        plausible = slot & lay.full_slot
        rest = slot & ~lay.full_slot
        slot = ((plausible & mask) | rest | flag) if touched else ((plausible & ~mask) | rest)
        bits = (bits & ~(lay.slot_mask << (i * lay.width))) | (slot << (i * lay.width))
    knowledge = list(state.knowledge)
    knowledge[seat] = bits
    return dataclasses.replace(state, knowledge=tuple(knowledge))


def variant_state(game: Any, state: Any, variant: str) -> Any:
    """The twin state a knowledge variant names (``"s1:c3+r0"``: seat 1 also told its colour-3
    cards and its rank-0 cards, as :func:`_earlier_reveals` writes them); other variants (the
    firework and discard edits of EC twins) are not knowledge changes and raise."""
    seat, changes = variant.split(":")
    for change in changes.split("+"):
        kind = REVEAL_COLOR if change[0] == "c" else REVEAL_RANK
        state = reveal_knowledge(game, state, int(seat[1:]), kind, int(change[1:]))
    return state


def _earlier_reveals(game: Any, state: Any, seat: int) -> list[tuple[str, Any]]:
    """Variants of ``state`` where ``seat`` was also given one earlier reveal (a colour or a rank
    it holds) or two (one of each)."""
    cfg = game.config
    hand = state.hands[seat]
    colors = sorted({c // cfg.ranks for c in hand})
    ranks = sorted({c % cfg.ranks for c in hand})
    singles = [(REVEAL_COLOR, c) for c in colors] + [(REVEAL_RANK, r) for r in ranks]
    out = []
    for combo in [*((s,) for s in singles), *itertools.product(
            [(REVEAL_COLOR, c) for c in colors], [(REVEAL_RANK, r) for r in ranks])]:  # fmt: skip
        st = state
        for kind, value in combo:
            st = reveal_knowledge(game, st, seat, kind, value)
        name = "+".join(("c" if k == REVEAL_COLOR else "r") + str(v) for k, v in combo)
        out.append((f"s{seat}:{name}", st))
    return out


def _newly_known_playable(game: Any, state: Any, player: int, action: int, partner: int) -> bool:
    """A reveal after which the partner knows a card it did not know to be playable is."""
    before = game.card_knowledge(state, partner)
    spec = game.moves[action]
    after_state = reveal_knowledge(
        game, state, partner, spec.kind, spec.color if spec.kind == REVEAL_COLOR else spec.rank
    )
    after = game.card_knowledge(after_state, partner)
    fw = state.fireworks
    return any(knows_playable(a, fw) and not knows_playable(b, fw)
               for a, b in zip(after, before, strict=True))  # fmt: skip


def _reveals(game: Any, state: Any, player: int, partner: int) -> list[int]:
    """The legal reveals of ``player`` to ``partner``."""
    view = game.observe(state, player)
    return [a for a in game.legal_actions(state, player)
            if game.moves[a].kind in (REVEAL_COLOR, REVEAL_RANK)
            and view.seat(game.moves[a].target_offset) == partner]  # fmt: skip


def questions(bundle: Any, state: Any, player: int, scenario: Scenario,
              types: Sequence[str] = ("EC", "ToM", "JP")) -> list[QAItem]:  # fmt: skip
    """The EC, ToM and JP contrast sets of the player to act (only ``types``)."""
    game, text = bundle.game, bundle.text
    cfg = game.config
    if state.current != player or game.is_terminal(state):
        return []
    base = f"hanabi/p{cfg.players}/s{scenario.seed}/m{len(scenario.actions)}/p{player}"
    view = game.observe(state, player)
    partner = (player + 1) % cfg.players
    pname = text.possessive(partner)
    items: list[QAItem] = []

    def rng(tag: int) -> np.random.Generator:  # one stream per template
        return np.random.default_rng([scenario.seed, len(scenario.actions), player, tag])

    def ctx(st: Any) -> str:
        return context_text(bundle, st, player)

    def move_text(action: int) -> str:
        return text.bare_action_text(view, action)

    if "EC" in types:
        hand = state.hands[partner]
        r = rng(5)
        edits = []
        for _ in range(FIREWORK_EDITS):
            fw = tuple(int(x) for x in r.integers(0, cfg.ranks + 1, size=cfg.colors))
            edits.append(("fw=" + "".join(map(str, fw)), dataclasses.replace(state, fireworks=fw)))

        def playable(st: Any) -> int | None:
            hits = [i for i, c in enumerate(hand) if _playable(cfg, st.fireworks, c)]
            return hits[0] if len(hits) == 1 else None

        items += situation_set(
            base, "EC", "partner_playable_card",
            f"Which of {pname} cards could be played on the fireworks right now without losing "
            "a life?",
            "rules", scenario, edits, playable,
            lambda i: f"{pname} Card {i} ({text.card_name(hand[i])})", ctx, r,
        )  # fmt: skip
        items += _copies_set(bundle, state, player, scenario, base, rng(6), ctx)

    if "ToM" in types and partner != player:
        reveals = _reveals(game, state, player, partner)

        def good_reveal(st: Any) -> str | None:
            good = [a for a in reveals if _newly_known_playable(game, st, player, a, partner)]
            return move_text(good[0]) if len(good) == 1 else None

        items += situation_set(
            base, "ToM", "reveal_makes_playable",
            f"Which reveal would let {text.name(partner)} know that one of "
            f"{text.pronoun(partner)} cards can be played now?",
            "knowledge", scenario, _earlier_reveals(game, state, partner), good_reveal, str, ctx,
            rng(7), varies="partner",
        )  # fmt: skip

    if "JP" in types:
        reveals = _reveals(game, state, player, partner)
        legal = list(game.legal_actions(state, player))

        def convention(st: Any) -> str | None:
            codes = game.card_knowledge(st, player)
            plays = [a for a in legal if game.moves[a].kind == PLAY
                     and knows_playable(codes[game.moves[a].card_index], st.fireworks)]  # fmt: skip
            if plays:
                return move_text(plays[0]) if len(plays) == 1 else None
            good = [a for a in reveals if _newly_known_playable(game, st, player, a, partner)]
            return move_text(good[0]) if len(good) == 1 else None

        edits = _earlier_reveals(game, state, player) + _earlier_reveals(game, state, partner)
        items += situation_set(
            base, "JP", "best_move", f"{CONVENTION} Which move should you make?",
            "convention_bot", scenario, edits, convention, str, ctx, rng(8),
        )  # fmt: skip
    return items


def _copies_set(bundle: Any, state: Any, player: int, scenario: Scenario, base: str,
                rng: np.random.Generator, ctx: Any) -> list[QAItem]:  # fmt: skip
    """EC ``copies_unseen``: twins with another number of the card's copies discarded."""
    game, text = bundle.game, bundle.text
    cfg = game.config
    partner = (player + 1) % cfg.players
    card = int(rng.integers(cfg.colors * cfg.ranks))
    c, r = divmod(card, cfg.ranks)
    total = cards_per_rank(r, cfg.ranks)
    seen = sum(1 for x in state.hands[partner] if x == card) + (1 if state.fireworks[c] > r else 0)
    pile = tuple(x for x in state.discards if x != card)
    edits = []
    for d in range(total - seen + 1):
        discards = pile + (card,) * d
        edits.append((f"discarded{d}", dataclasses.replace(state, discards=discards)))
    return situation_set(
        base, "EC", "copies_unseen",
        f"How many copies of {text.card_name(card)} are neither in {text.possessive(partner)} "
        "hand, nor on the fireworks, nor in the discard pile?",
        "rules", scenario, edits,
        lambda st: total - seen - sum(1 for x in st.discards if x == card), str, ctx, rng,
    )  # fmt: skip


def blind(bundle: Any, state: Any, item: QAItem) -> int:
    """The partner-blind reasoner on a ToM twin: the reveal of the rank of the partner's first
    playable card if it is an option (it would tell a partner who knows nothing), else the first
    option. It sees the cards and the fireworks, never the partner's knowledge."""
    game, text = bundle.game, bundle.text
    cfg = game.config
    player = item.scenario.player
    partner = (player + 1) % cfg.players
    view = game.observe(state, player)
    for a in _reveals(game, state, player, partner):
        spec = game.moves[a]
        if spec.kind == REVEAL_RANK and any(
            _playable(cfg, state.fireworks, c) and c % cfg.ranks == spec.rank
            for c in state.hands[partner]
        ):
            t = text.bare_action_text(view, a)
            if t in item.options:
                return item.options.index(t)
    return 0
