"""Guandan: your hand (click cards to pick them: the list then shows the plays that use those
cards), the play to beat and who made it, every player by seat with their role and cards left,
and every move of the deal in full. Other players' cards are never shown."""

from __future__ import annotations

from typing import Any

from tom_envs.games.guandan.cards import (
    BIG_JOKER,
    RANKS,
    SMALL_JOKER,
    card_name,
    sort_by_value,
    wild_kind,
)
from tom_envs.games.guandan.combos import GIVE_BASE, PASS, SHAPE_BASE, cards_for
from tom_envs.serve.boards.base import Board

TITLE = "Guandan"
ROLE = ("you", "next player (opponent)", "your teammate", "previous player (opponent)")
CW, CH = 40, 58


def seat_names(bundle: Any) -> list[str]:
    """Players 0 to 3 (the game's names: players 0 and 2 against 1 and 3)."""
    return [f"Player {k}" for k in range(4)]


def face(card: int, level: int) -> str:
    """What a card counts as when matching a selection: its rank (jokers and the wild apart)."""
    if card in (SMALL_JOKER, BIG_JOKER):
        return str(card)
    return "wild" if card == wild_kind(level) else str(card // 4)


def build(ctx: Any) -> Board:
    """The table from the seat's view."""
    view, text = ctx.view, ctx.bundle.text
    lang = getattr(ctx.bundle.game.config, "language", "en")
    cards = sort_by_value([k for k, n in enumerate(bytes(view.hand)) for _ in range(n)], view.level)
    rows = max(1, (len(cards) + 15) // 16)
    b = Board(16 * (CW + 4) + 20, 250 + rows * (CH + 8))
    y0 = 235
    b.select = True
    b.mark("card", "one of your cards (click to pick it; red: hearts and diamonds)", "rect", "#fff")
    b.mark("wild", "a wild card (the heart of the level's rank): it stands for any card but a "
           "joker", "rect", "#fff3c4", "#d4a017")  # fmt: skip
    _table(b, ctx)
    b.text(10, y0 - 10, "Your hand (click cards to pick them, then choose a play below):", 13,
           "start", bold=True)  # fmt: skip
    wk = wild_kind(view.level)
    for i, c in enumerate(cards):
        x, y = 10 + (CW + 4) * (i % 16), y0 + (CH + 8) * (i // 16)
        name = card_name(c, lang)
        red = name[:1] in "♥♦" or c == BIG_JOKER
        b.rect(x, y, CW, CH, "#fff3c4" if c == wk else "#fff", "#d4a017" if c == wk else "#333",
               m="wild" if c == wk else "card", sel=f"{face(c, view.level)}:{i}",
               tip=name + (" (wild)" if c == wk else ""))  # fmt: skip
        short = {SMALL_JOKER: "jk", BIG_JOKER: "JK"}.get(c, name)
        b.text(x + CW / 2, y + CH / 2 + 5, short, 13 if len(short) < 3 else 11,
               fill="#c0392b" if red else "#111", bold=True, sel=f"{face(c, view.level)}:{i}")  # fmt: skip
    for a in view.legal_actions:
        _label(b, view, text, a)
    _panels(b, ctx)
    return b


def _label(b: Board, view: Any, text: Any, a: int) -> None:
    words = text.action_text(view, a)
    if a == PASS:
        b.label(a, "Pass", "")
        return
    if a < SHAPE_BASE:
        b.label(a, words, "Tribute")
        b.faces[a] = [face(a - GIVE_BASE, view.level)]
        return
    b.label(a, words, words.split(":")[0].split(" ")[0])
    try:
        b.faces[a] = [face(c, view.level) for c in cards_for(a, view.hand, view.level)]
    except ValueError:
        b.faces[a] = []


def _table(b: Board, ctx: Any) -> None:
    """The four seats around the table: names, roles, cards left, the play to beat."""
    view, text = ctx.view, ctx.bundle.text
    spots = {0: (b.width / 2, 116), 1: (b.width - 110, 68), 2: (b.width / 2, 20), 3: (110, 68)}
    for rel, (x, y) in spots.items():
        seat = (view.player + rel) % 4
        team = "#1f5fbf" if rel % 2 == 0 else "#c0392b"
        key = b.mark(f"team{rel % 2}", "your team (you and your teammate)" if rel % 2 == 0
                     else "the other team", "rect", team)  # fmt: skip
        acting = view.to_act == rel
        b.rect(x - 100, y - 16, 200, 40, "#fff", team, m=key, sw=4 if acting else 1.5,
               tip=ROLE[rel])  # fmt: skip
        b.text(x, y, f"{ctx.names[seat]}: {ROLE[rel]}", 12, bold=True, fill=team)
        b.text(x, y + 16, f"{view.cards_left[rel]} cards left" + (" · to play" if acting else ""),
               11)  # fmt: skip
    lead = (text.move_text(view, view.lead) if view.lead is not None
            else "nothing: whoever leads may play any combination")  # fmt: skip
    b.rect(10, 150, b.width - 20, 40, "#f4f6f7", "#aaa",
           m=b.mark("lead", "the play to beat on the table", "rect", "#f4f6f7", "#aaa"))
    b.text(b.width / 2, 175, f"To beat: {lead}", 13, bold=True)


def _panels(b: Board, ctx: Any) -> None:
    view, text = ctx.view, ctx.bundle.text
    rank = RANKS[view.level]
    whose = "your team's" if view.level_is_mine else "the other team's"
    b.panel("This deal", [f"Level: {rank} ({whose} level); your team is at {RANKS[view.my_level]}, "
                          f"the other team at {RANKS[view.their_level]}",
                          f"Wild card: the heart {rank} (♥{rank}) stands for any card but a joker",
                          f"Phase: {view.phase}"])  # fmt: skip
    b.panel("Moves this deal", [text.move_text(view, m) for m in view.history] or ["none yet"])
    if view.finished:
        b.panel("Out of cards", [ROLE[r] for r in view.finished])
    if view.results:
        b.panel("Earlier deals", [f"Deal {k + 1}: {'your team' if won else 'the other team'} won, "
                                  f"advancing {adv} level(s)"
                                  for k, (_, won, adv) in enumerate(view.results)])  # fmt: skip
    b.headline = (f"Deal {view.deal + 1} · cards left: you {view.cards_left[0]}, teammate "
                  f"{view.cards_left[2]}, opponents {view.cards_left[1]} and {view.cards_left[3]}")  # fmt: skip


def outcome(ctx: Any) -> str:
    """The end of the game in words."""
    v = ctx.view
    if v.results:
        _, won, adv = v.results[-1]
        return f"The deal is over: {'your team' if won else 'the other team'} won ({adv} level(s))."
    return "The game is over."
