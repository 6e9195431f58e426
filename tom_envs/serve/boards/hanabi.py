"""Hanabi: the fireworks, hint and life tokens, your cards face down with everything you know
about each (click one to play or discard it), every partner's cards face up with what they know
(click one to give a hint that touches it), the discard pile and every move so far."""

from __future__ import annotations

from typing import Any

from tom_envs.games.hanabi.cards import bits_of, plausible_colors, plausible_ranks
from tom_envs.games.hanabi.state import DISCARD, PLAY, REVEAL_COLOR
from tom_envs.serve.boards.base import Board, and_list, plural

TITLE = "Hanabi"
FILL = {"Red": "#e74c3c", "Yellow": "#f1c40f", "Green": "#27ae60", "White": "#ecf0f1",
        "Blue": "#3498db", "Multicolor": "#b38fd1"}  # fmt: skip
CW, CH, GAP = 92, 112, 10


def seat_names(bundle: Any) -> list[str]:
    """The players' names (Alice, Bob, ... or the game's ``names``)."""
    return list(bundle.text.names)


def possessive(name: str) -> str:
    """``"Bob's"`` (``"Chris'"``)."""
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def build(ctx: Any) -> Board:
    """The table from the seat's view."""
    view, text = ctx.view, ctx.bundle.text
    hand = max(view.my_hand_size, *(len(h) for h in view.hands))
    b = Board(max(620, 20 + (CW + GAP) * hand), 150 + (CH + 70) * view.num_players)
    _legend(b, text)
    _fireworks(b, view, text)
    y = 140
    _my_hand(b, ctx, y)
    for o in range(1, view.num_players):
        y += CH + 70
        _their_hand(b, ctx, o, y)
    _panels(b, view, text, ctx.names)
    turn = ("your turn" if view.current_offset == 0 else "the game is over"
            if view.current_offset < 0 else f"{ctx.names[view.seat(view.current_offset)]}'s turn")  # fmt: skip
    b.headline = (f"Score {view.score} · hints left {view.information_tokens} · lives left "
                  f"{view.life_tokens} · cards in the deck {view.deck_size} · {turn}")  # fmt: skip
    return b


def _legend(b: Board, text: Any) -> None:
    b.mark("hidden", "one of your cards: you cannot see it; the dots are the colours it may "
           "still be, the numbers the ranks it may still be", "rect", "#555")  # fmt: skip
    b.mark("known", "what that player knows about the card above (colours and ranks it may "
           "still be)", "rect", "#f4f6f7", "#aaa")  # fmt: skip
    for c in text.colors:
        b.mark(f"colour:{c}", f"a {c} card (number: its rank)", "rect", FILL.get(c, "#ccc"))
    b.mark("stack", "a firework: the highest card played in that colour", "rect", "#fff", "#333")


def _fireworks(b: Board, view: Any, text: Any) -> None:
    b.text(10, 22, "Fireworks (the next card of a colour must be one higher):", 13, "start",
           bold=True)  # fmt: skip
    for c, h in enumerate(view.fireworks):
        name = text.colors[c]
        b.rect(10 + 78 * c, 34, 70, 60, FILL.get(name, "#ccc"), m="stack",
               tip=f"{name} firework: {h} played")  # fmt: skip
        b.text(45 + 78 * c, 72, str(h), 24, bold=True)
        b.text(45 + 78 * c, 110, name, 11)


def _knowledge(b: Board, text: Any, x: float, y: float, code: int, dark: bool) -> None:
    """Every colour and rank a card may still be, in full (dots and digits)."""
    colours = [c for c in bits_of(plausible_colors(code)) if c < len(text.colors)]
    ranks = [r + 1 for r in bits_of(plausible_ranks(code)) if r < text.config.ranks]
    for k, c in enumerate(colours):
        b.circle(x + 12 + 15 * k, y, 6, FILL.get(text.colors[c], "#ccc"), "#222",
                 tip=text.colors[c])  # fmt: skip
    b.text(x + CW / 2, y + 22, " ".join(str(r) for r in ranks), 13,
           fill="#fff" if dark else "#111", bold=True)  # fmt: skip


def _my_hand(b: Board, ctx: Any, y: float) -> None:
    view, text = ctx.view, ctx.bundle.text
    b.text(10, y - 10, "Your cards (you cannot see them; here is what you know):", 13, "start",
           bold=True)  # fmt: skip
    acts: dict[int, list[int]] = {}
    for a in view.legal_actions:
        spec = text.moves[a]
        if spec.kind in (PLAY, DISCARD):
            acts.setdefault(spec.card_index, []).append(a)
            verb = "Play" if spec.kind == PLAY else "Discard"
            b.label(a, f"{verb} your Card {spec.card_index}", verb)
    for k, code in enumerate(text.layout.codes(view.knowledge[0], view.my_hand_size)):
        x = 10 + (CW + GAP) * k
        act = acts.get(k, [])
        b.rect(x, y, CW, CH, "#555", "#d4a017" if act else "#222", sw=3 if act else 1, m="hidden",
               act=act, tip=f"your Card {k}: play or discard it")  # fmt: skip
        b.text(x + CW / 2, y + 22, f"Card {k}", 13, fill="#fff", bold=True, act=act)
        _knowledge(b, text, x, y + 55, code, dark=True)


def _their_hand(b: Board, ctx: Any, o: int, y: float) -> None:
    view, text, names = ctx.view, ctx.bundle.text, ctx.names
    seat, r = view.seat(o), text.config.ranks
    who = names[seat]
    b.text(10, y - 10, f"{possessive(who)} cards (and what {who} knows about them):", 13,
           "start", bold=True)  # fmt: skip
    hints = _hints_for(b, ctx, o)
    codes = text.layout.codes(view.knowledge[o], len(view.hands[o - 1]))
    for k, card in enumerate(view.hands[o - 1]):
        x = 10 + (CW + GAP) * k
        colour, rank = card // r, card % r
        act = hints.get(("c", colour), []) + hints.get(("r", rank), [])
        name = text.colors[colour]
        b.rect(x, y, CW, 60, FILL.get(name, "#ccc"), "#d4a017" if act else "#222",
               sw=3 if act else 1, m=f"colour:{name}", act=act,
               tip=f"{possessive(who)} Card {k}: {name} {rank + 1}; click to give a hint")  # fmt: skip
        b.text(x + CW / 2, y + 40, f"{rank + 1}", 26, bold=True, act=act)
        b.rect(x, y + 62, CW, 50, "#f4f6f7", "#aaa", m="known", tip=f"what {who} knows")
        _knowledge(b, text, x, y + 78, codes[k], dark=False)


def _hints_for(b: Board, ctx: Any, o: int) -> dict[tuple[str, int], list[int]]:
    """Label the hints to the player ``o`` seats after me; by ``("c", colour)`` / ``("r", rank)``."""
    view, text, names = ctx.view, ctx.bundle.text, ctx.names
    who = names[view.seat(o)]
    out: dict[tuple[str, int], list[int]] = {}
    for a in view.legal_actions:
        spec = text.moves[a]
        if spec.kind in (PLAY, DISCARD) or spec.target_offset != o:
            continue
        if spec.kind == REVEAL_COLOR:
            out.setdefault(("c", spec.color), []).append(a)
            b.label(a, f"Tell {who} which cards are {text.colors[spec.color]}", "Hint")
        else:
            out.setdefault(("r", spec.rank), []).append(a)
            b.label(a, f"Tell {who} which cards are {spec.rank + 1}s", "Hint")
    return out


def _panels(b: Board, view: Any, text: Any, names: list[str]) -> None:
    pile = [text.card_name(c) for c in view.discards]
    b.panel("Discard pile", [and_list(pile)] if pile else ["empty"])
    moves = []
    for item in view.history:
        who = "You" if item.player == view.player else names[item.player]
        said = f"{text.move_text(item, view.player)} ({text.outcome_text(item, view.player)})"
        for seat, name in enumerate(names):  # the paper's "Bobs" -> "Bob's"
            said = said.replace(text.possessive(seat), possessive(name))
        moves.append(f"{who}: {said}")
    b.panel("Moves so far", moves or ["none yet"])
    if view.deck_size == 0 and view.current_offset >= 0:
        b.panel("The deck is empty", [f"{plural(view.turns_to_play, 'more turn')} will be played."])


def outcome(ctx: Any) -> str:
    """The end of the game in words."""
    return f"The game is over: the team scored {ctx.view.score} points."
