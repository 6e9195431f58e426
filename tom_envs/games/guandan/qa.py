"""CoordinationQA for Guandan: EC from your hand, the cards played and the legal moves. The EC items are contrast sets over the deal: twins that show the
same table and history, with some of your cards exchanged for cards the other players hold
(everything you cannot see stays consistent: hand sizes, the cards played), so that the key
changes; the options are the set's keys.

* **EC** ``can_beat``: whether any play in your hand beats the play on the table;
  ``copies_elsewhere``: copies of a card neither in your hand nor played.
* **No JP item** (generator 3). The earlier ``secure_trick`` item (the one option among four
  legal moves that makes certain your team wins the trick, computed exactly) cannot
  be built as a contrast set (exchanging cards between hands almost never changes which moves
  are secure), and written alone it gives its answer away: a learned adversary that reads only
  the options picks the secure move 64-72% of the time where chance is 25% (the strongest
  combination is the key). It is not shipped.

No ToM item: the earlier ones (which cards your teammate cannot hold; which cards it knows you
do not hold) follow from the cards you see and the rules of what each seat sees, whatever the
teammate did: no change of the teammate's behaviour or view can change their answers, so they
are not questions about the teammate (issue #32). The scenarios print the whole deal's history
(``history_window``), so every card played is in the context.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from tom_envs.games.guandan.cards import card_name
from tom_envs.games.guandan.rules import PASS
from tom_envs.games.guandan.view import GuandanView
from tom_envs.qa.generate import context_text
from tom_envs.qa.items import QAItem, Scenario, situation_set

GENERATOR_VERSION = 3

KINDS = {
    "partner_few_cards": "your teammate holds five cards or fewer",
    "must_respond": "there is a play to beat",
    "opponent_few_cards": "an opponent holds five cards or fewer",
}

#: The abilities asked about (no ToM, no JP: see the module docstring).
ABILITIES = ("EC",)

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
#: Hand exchanges a set is drawn from.
SWAPS = 24


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


def _swapped(state: Any, player: int, rng: np.random.Generator, most: int = 3) -> Any:
    """``state`` with 1..``most`` of the player's cards exchanged for as many cards of the other
    three players (drawn uniformly; every hand keeps its size)."""
    hands = [bytearray(h) for h in state.hands]
    others = [s for s in range(4) if s != player]
    mine = [k for k, n in enumerate(hands[player]) for _ in range(n)]
    pool = [(s, k) for s in others for k, n in enumerate(hands[s]) for _ in range(n)]
    if not mine or not pool:
        return None
    n = int(rng.integers(1, min(most, len(mine), len(pool)) + 1))
    give = rng.choice(len(mine), size=n, replace=False)
    take = rng.choice(len(pool), size=n, replace=False)
    for g, t in zip(give, take, strict=True):
        seat, kind = pool[int(t)]
        card = mine[int(g)]
        hands[player][card] -= 1
        hands[player][kind] += 1
        hands[seat][kind] -= 1
        hands[seat][card] += 1
    return dataclasses.replace(state, hands=tuple(bytes(h) for h in hands))


def _with_copies(state: Any, player: int, kind: int, want: int) -> Any:
    """``state`` with exactly ``want`` copies of card ``kind`` in the player's hand, exchanged
    with the other players' cards (hand sizes kept); ``None`` when impossible."""
    hands = [bytearray(h) for h in state.hands]
    others = [s for s in range(4) if s != player]
    while hands[player][kind] > want:  # give a copy away for one of another player's cards
        seat = next(
            (s for s in others if any(n and k != kind for k, n in enumerate(hands[s]))), None
        )
        if seat is None:
            return None
        other = next(k for k, n in enumerate(hands[seat]) if n and k != kind)
        hands[player][kind] -= 1
        hands[player][other] += 1
        hands[seat][other] -= 1
        hands[seat][kind] += 1
    while hands[player][kind] < want:  # take a copy from another player for one of mine
        seat = next((s for s in others if hands[s][kind]), None)
        mine = next((k for k, n in enumerate(hands[player]) if n and k != kind), None)
        if seat is None or mine is None:
            return None
        hands[seat][kind] -= 1
        hands[seat][mine] += 1
        hands[player][mine] -= 1
        hands[player][kind] += 1
    return dataclasses.replace(state, hands=tuple(bytes(h) for h in hands))


def _seen(view: GuandanView) -> np.ndarray:
    """Copies of each card kind in the player's hand or already played."""
    return np.frombuffer(bytes(view.hand), np.uint8).astype(int) + sum(
        np.frombuffer(bytes(p), np.uint8).astype(int) for p in view.played
    )


def questions(bundle: Any, state: Any, player: int, scenario: Scenario) -> list[QAItem]:
    """The EC contrast sets of the player to act."""
    game = bundle.game
    view = game.observe(state, player)
    if view.phase != "play" or view.to_act != 0:
        return []
    lang = getattr(game.config, "language", "en")
    base = f"guandan/s{scenario.seed}/m{len(scenario.actions)}/p{player}"
    items: list[QAItem] = []

    def rng(tag: int) -> np.random.Generator:  # one stream per template
        return np.random.default_rng([scenario.seed, len(scenario.actions), player, tag])

    def ctx(st: Any) -> str:
        return context_text(bundle, st, player)

    def views(r: np.random.Generator) -> list[tuple[str, Any]]:
        out = []
        for k in range(SWAPS):
            st = _swapped(state, player, r)
            if st is not None:
                out.append((f"swap{k}", st))
        return out

    if view.lead is not None:
        r = rng(11)

        def beats(st: Any) -> str:
            legal = game.observe(st, player).legal_actions
            return "yes" if any(a != PASS for a in legal) else "no"

        items += situation_set(
            base, "EC", "can_beat",
            "Do you hold any play that beats the play on the table right now?",
            "rules", scenario, views(r), beats, str, ctx, r,
        )  # fmt: skip
    r = rng(12)
    kind = int(r.integers(len(_seen(view))))
    played = int(sum(np.frombuffer(bytes(p), np.uint8).astype(int)[kind] for p in view.played))
    copies = []
    for want in range(COPIES - played + 1):
        st = _with_copies(state, player, kind, want)
        if st is not None:
            copies.append((f"hold{want}", st))
    items += situation_set(
        base, "EC", "copies_elsewhere",
        f"How many copies of {card_name(kind, lang)} are neither in your hand nor already played "
        "(the game uses two decks)?",
        "rules", scenario, copies,
        lambda st: str(COPIES - int(_seen(game.observe(st, player))[kind])), str, ctx, r,
    )  # fmt: skip
    return items
