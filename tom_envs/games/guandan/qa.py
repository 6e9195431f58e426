"""CoordinationQA for Guandan: EC from the legal-move generator, ToM from card counting (what
your teammate cannot hold, given your hand and every card played), JP from the action
recommender (no optimum is known for Guandan: ``source="convention_bot"``).

* **EC** ``can_beat``: whether any play in your hand beats the play on the table (yes/no).
* **ToM** ``teammate_cannot_hold``: which of four cards your teammate certainly does not hold:
  both copies are in your hand or already played (the other three have a copy unaccounted for).
* **JP** ``recommended_play``: the play the action recommender scores highest (the
  ``recommender`` bot), among five of your legal actions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tom_envs.games.guandan.cards import card_name
from tom_envs.games.guandan.rules import PASS
from tom_envs.qa.generate import bot_action, context_text, sample_options
from tom_envs.qa.items import ItemMaker, QAItem, Scenario

GENERATOR_VERSION = 1

KINDS = {
    "partner_few_cards": "your teammate holds five cards or fewer",
    "must_respond": "there is a play to beat",
    "opponent_few_cards": "an opponent holds five cards or fewer",
}

SCENARIOS: list[dict[str, Any]] = [
    {"env_kwargs": {}, "seats": ["heuristic", "heuristic", "heuristic", "heuristic"]},
    {"env_kwargs": {}, "seats": ["bestp_lowv", "heuristic", "bestp_lowv", "heuristic"]},
    {"env_kwargs": {}, "seats": ["random", "bestp_lowv", "heuristic", "bestp_lowv"]},
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

    if view.lead is not None:
        beat = any(a != PASS for a in legal)
        items.append(
            make(
                "EC",
                "can_beat",
                "Do you hold any play that beats the play on the table right now?",
                ("yes", "no"),
                (0 if beat else 1,),
                "rules",
            )
        )

    rng = np.random.default_rng([scenario.seed, len(scenario.actions), player, 11])
    if view.cards_left[2] > 0:
        seen = np.frombuffer(bytes(view.hand), np.uint8).astype(int) + sum(
            np.frombuffer(bytes(p), np.uint8).astype(int) for p in view.played
        )
        impossible = [k for k in range(len(seen)) if seen[k] >= COPIES]
        possible = [k for k in range(len(seen)) if seen[k] < COPIES]
        if impossible and len(possible) >= 3:
            pick = int(rng.choice(impossible))
            others = [int(x) for x in rng.choice(possible, size=3, replace=False)]
            cards = sorted([pick, *others])
            items.append(
                make(
                    "ToM",
                    "teammate_cannot_hold",
                    "Which of these cards can your teammate certainly not be holding?",
                    tuple(card_name(c, lang) for c in cards),
                    (cards.index(pick),),
                    "knowledge",
                )
            )

    if len(legal) >= 2:
        action = bot_action(bundle, state, player, "recommender", scenario.seed)
        chosen = sample_options(action, legal, 5, rng)
        items.append(
            make(
                "JP",
                "recommended_play",
                (
                    "Which play is best for your team now (the one the action recommender, which "
                    "scores plays by pattern, card value and the game situation, ranks first)?"
                ),
                tuple(text.action_text(view, a) for a in chosen),
                (chosen.index(action),),
                "convention_bot",
                details={"bot": "recommender"},
            )
        )
    return items
