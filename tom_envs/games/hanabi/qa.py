"""CoordinationQA for Hanabi: EC from the fireworks and the partner's visible hand, ToM from the
exact card-knowledge tracking (the game's probes), JP from the scripted ``simple`` bot (no
optimum is known for Hanabi: marked ``source="convention_bot"``).

* **EC** ``partner_playable_cards``: which of your partner's cards (visible to you) could be
  played on the fireworks right now; several cards may be right, or "None of them".
* **ToM** the game's probes (``partner_color``, ``partner_rank``, ``partner_playable``): does
  your partner know the colour / rank / playability of its card k (exact knowledge tracking).
* **JP** ``convention_action``: the move the ``simple`` bot's conventions prescribe (play a card
  the reveals prove playable, else reveal a playable card, else discard the oldest unrevealed
  card), among five of the legal moves.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tom_envs.qa.generate import bot_action, context_text, probe_items, sample_options
from tom_envs.qa.items import ItemMaker, QAItem, Scenario

GENERATOR_VERSION = 1

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


def questions(bundle: Any, state: Any, player: int, scenario: Scenario) -> list[QAItem]:
    """EC, ToM and JP items for the player to act."""
    game, text = bundle.game, bundle.text
    cfg = game.config
    if state.current != player:
        return []
    base = f"hanabi/p{cfg.players}/s{scenario.seed}/m{len(scenario.actions)}/p{player}"
    context = context_text(bundle, state, player)
    make = ItemMaker(base, scenario, context)
    items: list[QAItem] = []

    partner = (player + 1) % cfg.players
    hand = state.hands[partner]
    playable = [i for i, c in enumerate(hand) if state.fireworks[c // cfg.ranks] == c % cfg.ranks]
    options = [
        f"{text.possessive(partner)} Card {i} ({text.card_name(c)})" for i, c in enumerate(hand)
    ]
    options.append("None of them")
    answers = tuple(playable) if playable else (len(hand),)
    if len(answers) <= len(options) // 2:
        items.append(
            make(
                "EC",
                "partner_playable_cards",
                (
                    f"Which of {text.possessive(partner)} cards could be played on the fireworks "
                    "right now without losing a life?"
                ),
                tuple(options),
                answers,
                "rules",
            )
        )

    items += probe_items(bundle, state, player, scenario, base, limit=3)

    legal = list(game.legal_actions(state, player))
    if len(legal) >= 2:
        action = bot_action(bundle, state, player, "simple", scenario.seed)
        rng = np.random.default_rng([scenario.seed, len(scenario.actions), 5])
        chosen = sample_options(action, legal, 5, rng)
        view = game.observe(state, player)
        items.append(
            make(
                "JP",
                "convention_action",
                (
                    "Following the team's convention (play a card your hints prove playable; "
                    "otherwise give a hint that makes a partner's card playable; otherwise "
                    "discard your oldest card nobody has hinted), which move should you make?"
                ),
                tuple(text.bare_action_text(view, a) for a in chosen),
                (chosen.index(action),),
                "convention_bot",
                details={"bot": "simple"},
            )
        )
    return items
