"""Natural-language rendering of a Hanabi view, after the paper's App. B (no game logic).

* :meth:`HanabiText.rules_prompt` is App. B.1's rule text, word for word for the full game (numbers
  follow the configuration otherwise), then the paper's "I am Alice, playing the card game Hanabi
  with my partner Bob." The answer-format instruction of App. C.1 is left to the LLM layer.
* :meth:`HanabiText.observation_text` is App. B.2's state description: the stacks, my cards as my
  knowledge describes them, each partner's cards and what the partner knows about them, tokens,
  lives, deck size, discard pile, my action history and the next playable card per stack. Two lines
  are added: each partner's last action (what the paper's ToM step is given) and, once the deck is
  empty, how many turns remain.
* Legal actions are lettered in the paper's order (colour reveals, rank reveals, plays, discards):
  ``"A. Reveal Bobs Yellow color cards"``, ``"G. Play my Card 0"``, ``"L. Discard my Card 0"``.
  The letters depend only on the legal list, so they are part of the action text.
* :meth:`HanabiText.parse_action` accepts the full text, the letter (``"G"``, ``"G."``, ``"(G)"``,
  ``"Action: G"``), the text without the letter, the list number, and free forms such as
  ``"play card 0"``, ``"discard my first card"``, ``"hint Bob red"``, ``"tell Bob about his 1s"``,
  ``"reveal rank 2"``. It never raises, and says why a move is illegal ("no reveal tokens left",
  "Bob has no Red cards").

The spelling is the paper's (``Bobs`` without an apostrophe, ``color``).
"""

from __future__ import annotations

import re

from tom_envs.core.game import ParseResult, SeatRulesText
from tom_envs.core.skin import NAME_POOL, Symbols
from tom_envs.core.text import answer_segment, ascii_int, letter, match_action
from tom_envs.games.hanabi.cards import (
    COLOR_NAMES,
    bits_of,
    cards_per_rank,
    plausible_colors,
    plausible_ranks,
)
from tom_envs.games.hanabi.rules import HanabiConfig, HanabiGame
from tom_envs.games.hanabi.state import (
    DISCARD,
    PLAY,
    REVEAL_COLOR,
    REVEAL_RANK,
    HanabiState,
    HistoryItem,
)
from tom_envs.games.hanabi.view import HanabiView

#: A skin's colours: distinct initials, none of them R, Y, G, W or B, nor A or I (words of
#: their own), so that a card's letter follows its colour (``R3`` -> ``T3`` for Teal).
SKIN_COLOURS = ("Cyan", "Jade", "Khaki", "Lilac", "Magenta", "Navy", "Olive", "Plum", "Saffron",
                "Teal", "Umber", "Violet")  # fmt: skip
#: A skin's card-slot names (``Card 0`` -> ``Card gamma``): words, so that a slot is never read
#: as an option letter or a number.
SKIN_SLOTS = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "kappa", "lambda",
              "sigma", "omega")  # fmt: skip
PRONOUNS = {"Alice": "her", "Bob": "his", "Cathy": "her", "Donald": "his", "Emily": "her"}
_NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight")
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")
_KIND_ORDER = {REVEAL_COLOR: 0, REVEAL_RANK: 1, PLAY: 2, DISCARD: 3}
#: An option letter leading an answer (``"G"``, ``"(G)"``, ``"G."``, ``"A:"``).
_LEADING_LETTER = re.compile(r"\s*[\(\[]?([A-Za-z]{1,2})[\)\]]?(?:[.):]|\s*$)")
#: An option letter ending an answer (``"The action you chose is: D"``).
_TAIL_LETTER = re.compile(r"(?:^|[\s:(\[])([A-Z])[.)\]]?\s*$")


def _join_and(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


class HanabiText(SeatRulesText[HanabiView]):
    """Text for one player, from their view."""

    def __init__(self, config: HanabiConfig) -> None:
        self.config = config
        self.game = HanabiGame(config)
        self.layout = self.game.layout
        self.moves = self.game.moves
        self.colors = COLOR_NAMES[: config.colors]
        self.n = config.players
        self.names = config.names[: config.players]
        self._rules: dict[int, str] = {}  # the rules prompt depends only on the seat
        self._knowledge_texts: dict[int, str] = {}
        r = config.ranks
        self._card_names = tuple(
            f"{self.colors[card // r]} {card % r + 1}" for card in range(config.colors * r)
        )

    # ------------------------------------------------------------------ words
    def name(self, seat: int) -> str:
        """A seat's name (``"Alice"`` for seat 0 by default)."""
        return self.names[seat]

    def possessive(self, seat: int) -> str:
        """The paper's possessive, without an apostrophe: ``"Bobs"``."""
        return self.names[seat] + "s"

    def pronoun(self, seat: int) -> str:
        """``"his"`` / ``"her"`` for the default names, ``"their"`` otherwise."""
        return PRONOUNS.get(self.names[seat], "their")

    def card_name(self, card: int) -> str:
        """``"Red 1"``."""
        return self._card_names[card]

    def knowledge_text(self, code: int) -> str:
        """``"[Red, Yellow, Green, Blue] [1, 2, 3]"``: the plausible colours and ranks."""
        text = self._knowledge_texts.get(code)
        if text is None:
            text = self._knowledge_texts[code] = self._knowledge_text(code)
        return text

    def _knowledge_text(self, code: int) -> str:
        colors = [self.colors[c] for c in bits_of(plausible_colors(code)) if c < len(self.colors)]
        ranks = [str(r + 1) for r in bits_of(plausible_ranks(code)) if r < self.config.ranks]
        return f"[{', '.join(colors)}] [{', '.join(ranks)}]"

    # ------------------------------------------------------------------ rules
    def _rules_text(self, view: HanabiView) -> str:
        """App. B.1's rules (the full game's numbers from the configuration), then who I am."""
        cfg = self.config
        c, r = cfg.colors, cfg.ranks
        color_list = ", ".join(f"{name.lower()} ({name[0]})" for name in _paper_color_order(c))
        counts = [cards_per_rank(k, r) for k in range(r)]
        count_text = ", ".join(
            f"{_NUMBER_WORDS[n - 1] if n <= 8 else n} {k + 1}'s" if n > 1 else f"one {k + 1}"
            for k, n in enumerate(counts)
        )
        example = " -> ".join(f"R{k + 1}" for k in range(r))
        num_colors = _NUMBER_WORDS[c - 1] if c <= 8 else str(c)
        lives = (
            _NUMBER_WORDS[cfg.max_life_tokens - 1].capitalize()
            if cfg.max_life_tokens <= 8
            else str(cfg.max_life_tokens)
        )
        bomb = (
            "0 Points no matter how many cards have been placed in the stack."
            if cfg.bomb_score == "zero"
            else "Sum total of the top card ranks of each color stack."
        )
        lines = [
            "The card game Hanabi has the following rules:",
            f"- The game uses a {cfg.deck_size}-card deck, divided into {num_colors} colours "
            f"({color_list}). Each color has cards of ranks 1 to {r}. Each color has with "
            f"{count_text}.",
            f"- Players have to create stacks of each color. Each color stack starts with a Rank 1 "
            f"card and goes up one by one in ascending order up to Rank {r}. (e.g. Red Stack should "
            f"go from {example}). A card can only be played if it is the next in the incremental "
            "sequence for its color stack.",
            "- Players can only see the others hand, not their own.",
            "- Players have plausible knowledge of their cards based on previously provided hints "
            "by the other player",
            "- They can either play a card, give a reveal, or discard a card.",
            "- Players can only chose an action from the Available Legal Actions.",
            "***Actions:***",
            "1. Reveal (Clue): Spend a reveal token to reveal cards with a particular color or "
            "rank. Revealing a color reveals all cards of that color in partners hand. Revealing a "
            "rank reveals all cards with that rank in partners hand. The game starts with "
            f"{cfg.max_information_tokens} reveal tokens. If no token left, no more reveals can be "
            "given.",
            "2. Discard: Discard a card to regain a reveal token and draw a new card.",
            f"3. Play a Card: If a card played follows sequence in its color stack, it succeeds. "
            f"Success of rank {r} card in any stack gives an additional reveal token. Failure "
            "discards the card, and loses a life. Playing a card you are unsure about is risky as "
            f"it costs a life and you have only {cfg.max_life_tokens} lives. Before playing a card "
            "make sure that its the next card in the sequence for that stack.",
            "***The game ends when:***",
            f"- All {num_colors} stacks are completed. {cfg.max_score} Points.",
            f"- {lives} lives have been lost. {bomb}",
            "- After the last card from the deck is drawn and each player has had a final turn. "
            "Sum total of the top card ranks of each color stack.",
        ]
        me = view.player
        partners = [self.name(view.seat(o)) for o in range(1, self.n)]
        word = "partner" if len(partners) == 1 else "partners"
        lines.append(
            f"I am {self.name(me)}, playing the card game Hanabi with my {word} "
            f"{_join_and(partners)}."
        )
        return "\n".join(lines)

    # ------------------------------------------------------------------ observation
    def move_text(self, item: HistoryItem, viewer: int) -> str:
        """A past move in the paper's history style: ``"Play Card 0"``, ``"Reveal Bobs Rank 3
        Cards"``, ``"Reveal Bobs White Color Cards"``, ``"Discard Card 4"``."""
        if item.kind == PLAY:
            return f"Play Card {item.card_index}"
        if item.kind == DISCARD:
            return f"Discard Card {item.card_index}"
        who = self.possessive(item.target)
        if item.kind == REVEAL_COLOR:
            return f"Reveal {who} {self.colors[item.color]} Color Cards"
        return f"Reveal {who} Rank {item.rank + 1} Cards"

    def outcome_text(self, item: HistoryItem, viewer: int) -> str:
        """What a move did, for the partners' last actions: the card and its fate, or the cards
        a reveal touched."""
        if item.kind in (PLAY, DISCARD):
            card = self.card_name(item.color * self.config.ranks + item.rank)
            if item.kind == DISCARD:
                return f"it was {card}"
            if item.scored:
                return f"it was {card}, played successfully"
            return f"it was {card}, a misplay that cost a life"
        touched = [f"Card {i}" for i in bits_of(item.reveal_mask)]
        whose = "my" if item.target == viewer else f"{self.possessive(item.target)}"
        return f"touching {whose} {_join_and(touched)}"

    def observation_text(self, view: HanabiView) -> str:
        """App. B.2's state description from ``view``'s side (plus the partners' last actions)."""
        me = view.player
        r = self.config.ranks
        lines = []
        if view.current_offset < 0:
            lines.append(f"The game is over. Final score: {view.score}.")
        elif view.current_offset == 0:
            lines.append(f"It is currently My ({self.name(me)}) turn.")
        else:
            lines.append(f"It is currently {self.possessive(view.seat(view.current_offset))} turn.")
        lines.append("Current Stacks:")
        lines.append(
            ", ".join(
                f"{self.colors[c]} - {self.colors[c]} {h}" for c, h in enumerate(view.fireworks)
            )
        )
        lines.append("My cards based on my knowledge:")
        for i, code in enumerate(self.layout.codes(view.knowledge[0], view.my_hand_size)):
            lines.append(f"Card {i} could be: {self.knowledge_text(code)}")
        for o in range(1, view.num_players):
            seat = view.seat(o)
            lines.append(f"I can see {self.possessive(seat)} Cards are:")
            for i, card in enumerate(view.hands[o - 1]):
                lines.append(f"[Card {i}: {self.card_name(card)}]")
            lines.append(f"{self.possessive(seat)} Knowledge about {self.pronoun(seat)} cards:")
            codes = self.layout.codes(view.knowledge[o], view.hand_size(o))
            for i, code in enumerate(codes):
                lines.append(
                    f"{self.name(seat)} believes {self.pronoun(seat)} Card {i} could be: "
                    f"{self.knowledge_text(code)}"
                )
        lines.append(f"Remaining Reveal Tokens: {view.information_tokens}")
        lines.append(f"Remaining Lives: {view.life_tokens}")
        lines.append(f"Deck Size: {view.deck_size}")
        if view.deck_size == 0 and view.current_offset >= 0:
            lines.append(
                f"The deck is empty: {view.turns_to_play} more turn"
                f"{'s' if view.turns_to_play != 1 else ''} will be played in total."
            )
        lines.append(
            "The discard pile is: [" + ", ".join(self.card_name(c) for c in view.discards) + "]"
        )
        mine = [self.move_text(item, me) for item in view.history if item.player == me]
        lines.append("My Action History: [" + ", ".join(mine) + "]")
        for o in range(1, view.num_players):
            seat = view.seat(o)
            last = next((it for it in reversed(view.history) if it.player == seat), None)
            if last is not None:
                lines.append(
                    f"{self.possessive(seat)} Last Action: {self.move_text(last, me)} "
                    f"({self.outcome_text(last, me)})"
                )
        lines.append("The next playable cards for each stack are:")
        for c, h in enumerate(view.fireworks):
            if h >= r:
                lines.append(f"{self.colors[c]} Stack is Full.")
            else:
                lines.append(
                    f"Only {self.colors[c]} {h + 1} can be played on {self.colors[c]} Stack"
                )
        return "\n".join(lines)

    # ------------------------------------------------------------------ actions
    def bare_action_text(self, view: HanabiView, action: int) -> str:
        """The action without its letter: ``"Reveal Bobs Yellow color cards"``, ``"Play my Card
        0"``, ``"Discard my Card 0"``, ``"Reveal Bobs rank 1 cards"``."""
        spec = self.moves[action]
        if spec.kind == PLAY:
            return f"Play my Card {spec.card_index}"
        if spec.kind == DISCARD:
            return f"Discard my Card {spec.card_index}"
        who = self.possessive(view.seat(spec.target_offset))
        if spec.kind == REVEAL_COLOR:
            return f"Reveal {who} {self.colors[spec.color]} color cards"
        return f"Reveal {who} rank {spec.rank + 1} cards"

    def ordered_legal(self, view: HanabiView) -> list[int]:
        """Legal actions in the paper's order: colour reveals, rank reveals, plays, discards."""
        moves = self.moves
        return sorted(view.legal_actions, key=lambda a: (_KIND_ORDER[moves[a].kind], a))

    def action_text(self, view: HanabiView, action: int) -> str:
        """``"G. Play my Card 0"``: the letter of the action in the legal list, then its text."""
        order = self.ordered_legal(view)
        bare = self.bare_action_text(view, action)
        if action in order:
            return f"{letter(order.index(action))}. {bare}"
        return bare

    def legal_actions_text(self, view: HanabiView) -> dict[int, str]:
        """The lettered legal actions, in the paper's order."""
        return {
            a: f"{letter(i)}. {self.bare_action_text(view, a)}"
            for i, a in enumerate(self.ordered_legal(view))
        }

    # ------------------------------------------------------------------ parsing
    def parse_action(self, view: HanabiView, text: str) -> ParseResult:
        """Free text to a legal action, with feedback; never raises (see the module docstring).

        Read from the answer segment (:func:`~tom_envs.core.text.answer_segment`). A leading
        option letter selects that option (``"G"``, ``"(G)"``, ``"G. Play my Card 0"``); a chain of
        letter labels is read to its end, and a label followed by an answer names the answer
        (``"A: B: C: D:"`` plays D, ``"A: The action you chose is: D"`` plays D), without
        recursion, in one pass over the text."""
        if not isinstance(text, str):
            return ParseResult(None, f"expected text, got {type(text).__name__}")
        full = self.legal_actions_text(view)
        if not full:
            return ParseResult(None, "no action is legal for you now (it is not your turn)")
        if len(text) > 20_000:
            text = text[-20_000:]
        first = match_action(text, full)
        if first.valid or first.feedback.startswith(("empty answer", "option number")):
            return first  # an option number past the list says so (the suite's number rule)
        segment = answer_segment(text)
        by_letter = {t.split(".", 1)[0]: a for a, t in full.items()}
        m = _LEADING_LETTER.match(segment)
        if (
            m
            and m.group(1).upper() in by_letter
            and (m.group(1).isupper() or len(segment.strip()) <= 4)
        ):
            a = by_letter[m.group(1).upper()]
            pos = m.end()
            while True:  # "A: B: C: D:" -> the last label of the chain (each pass consumes text)
                nxt = _LEADING_LETTER.match(segment, pos)
                if nxt is None or nxt.end() == pos or nxt.group(1).upper() not in by_letter:
                    break
                if not (nxt.group(1).isupper() or len(segment[pos:].strip()) <= 4):
                    break
                a, pos = by_letter[nxt.group(1).upper()], nxt.end()
            rest = segment[pos:].strip()
            if rest:
                later = self._parse_words(view, rest, full, by_letter)
                if later is not None and later.valid and later.action != a:
                    return later
            return ParseResult(a, f"understood: {full[a]}")
        found = self._parse_words(view, segment, full, by_letter, tail=False)
        if found is not None:
            return found
        return ParseResult(
            None,
            f"could not match {text.strip()[:80]!r} to a legal action; answer with the letter of "
            "one of: " + "; ".join(full.values()),
        )

    def _parse_words(
        self,
        view: HanabiView,
        segment: str,
        full: dict[int, str],
        by_letter: dict[str, int],
        tail: bool = True,
    ) -> ParseResult | None:
        """The segment without a leading letter: a trailing option letter (``tail``: "The action
        you chose is: D"), the text without its letter, then the free forms; ``None`` when
        nothing was understood and nothing needs saying."""
        if tail:
            end = _TAIL_LETTER.search(segment)
            if end and end.group(1) in by_letter:
                b = by_letter[end.group(1)]
                return ParseResult(b, f"understood: {full[b]}")
        first = match_action(segment, full)
        if first.valid:
            return first
        bare = {a: self.bare_action_text(view, a) for a in full}
        second = match_action(segment, bare)
        if second.action is not None:
            return ParseResult(second.action, f"understood: {full[second.action]}")
        loose = self._loose(view, segment)
        if loose is not None:
            action, why = loose
            if action is not None and action in full:
                return ParseResult(action, f"understood: {full[action]}")
            if why:
                return ParseResult(
                    None, f"{why}; choose one of the legal actions: " + "; ".join(full.values())
                )
        if second.feedback.startswith("ambiguous") or first.feedback.startswith("ambiguous"):
            return first if first.feedback.startswith("ambiguous") else second
        return None

    def _loose(self, view: HanabiView, segment: str) -> tuple[int | None, str] | None:
        """Free forms: play/discard card k; reveal/hint/clue/tell (name) colour or rank."""
        s = segment.lower()
        h = self.config.cards_per_hand
        words = {w: i for i, w in enumerate(_ORDINALS)}
        m = re.search(
            r"\b(play|discard)\b[^0-9]{0,20}?([0-9]+|" + "|".join(_ORDINALS) + r")\b", s, re.ASCII
        )
        if m and not re.search(r"\b(reveal|hint|clue|tell)\b", s[: m.start()]):
            raw = m.group(2)
            number = ascii_int(raw) if raw[0].isdigit() else words[raw]
            idx = h if number is None else number  # "play 99999..." names no card
            if not 0 <= idx < max(view.my_hand_size, 1) or idx >= h:
                said = raw if len(raw) <= 12 else raw[:12] + "..."
                return (
                    None,
                    f"you have no Card {said} (your cards are 0 to {view.my_hand_size - 1})",
                )
            if m.group(1) == "play":
                return h + idx, ""
            if view.information_tokens >= self.config.max_information_tokens:
                return None, (
                    f"you cannot discard while all {self.config.max_information_tokens} reveal "
                    "tokens are available"
                )
            return idx, ""
        if not re.search(r"\b(reveal|hint|clue|tell|show|give)\b", s):
            return None
        if view.information_tokens <= 0:
            return None, "no reveal tokens left: you cannot reveal"
        offset = None
        for o in range(1, view.num_players):
            if re.search(r"\b" + re.escape(self.name(view.seat(o)).lower()) + r"s?\b", s):
                offset = o
                break
        if offset is None:
            if view.num_players > 2:
                return None, "say whose cards to reveal"
            offset = 1
        target = self.name(view.seat(offset))
        color = next(
            (c for c, name in enumerate(self.colors) if re.search(rf"\b{name.lower()}s?\b", s)),
            None,
        )
        rank_m = re.search(r"\b([1-9])(?:'?s)?\b", s) or re.search(
            r"\b(" + "|".join(_NUMBER_WORDS[:5]) + r")s?\b", s
        )
        if (color is None) == (rank_m is None):
            return None, "name exactly one colour or one rank to reveal"
        base = 2 * h
        if color is not None:
            action = base + (offset - 1) * self.config.colors + color
            if action not in view.legal_actions:
                return None, f"{target} has no {self.colors[color]} cards"
            return action, ""
        assert rank_m is not None  # exactly one of a colour and a rank was named
        raw = rank_m.group(1)
        rank = int(raw) - 1 if raw.isdigit() else _NUMBER_WORDS.index(raw)
        if not 0 <= rank < self.config.ranks:
            return None, f"ranks go from 1 to {self.config.ranks}"
        action = (
            base
            + (view.num_players - 1) * self.config.colors
            + (offset - 1) * self.config.ranks
            + rank
        )
        if action not in view.legal_actions:
            return None, f"{target} has no rank {rank + 1} cards"
        return action, ""

    # ------------------------------------------------------------------ spectator
    def skin_symbols(self) -> tuple[Symbols, ...]:
        """What a skin renames (``skin=``, :mod:`tom_envs.core.skin`): the colour names, their
        letters (in ``R3`` and ``red (R)``, never as a word of their own, where a letter is an
        option), following the colour's new initial, the players' names (``Bobs`` too) and the
        card slots (``Card 0`` -> ``Card gamma``, also after "play" or "discard", so that a
        canonical ``play 2`` reads as nothing; the listing order stays the hand's order).
        Ranks keep their numbers: the rules compute with them (a stack's height, the score is
        the sum of the stacks' top ranks)."""
        letters = tuple(c[0] for c in self.colors)
        either = "|".join((*self.colors, *SKIN_COLOURS))  # "red (R)" is "olive (R)" by then
        return (
            Symbols("colour", self.colors, SKIN_COLOURS),
            Symbols("colour letter", letters, tuple(c[0] for c in SKIN_COLOURS),
                    case_sensitive=True, glued="[1-9]", glued_only=True, follows="colour"),
            Symbols("colour initial", letters, tuple(c[0] for c in SKIN_COLOURS),
                    case_sensitive=True, before=rf"(?i:{either}) \(", follows="colour"),
            Symbols("player", self.names, NAME_POOL, glued="s"),
            Symbols("slot", tuple(str(i) for i in range(self.config.cards_per_hand)), SKIN_SLOTS,
                    before=r"(?i:card\s+|play\s+|discard\s+)"),
        )  # fmt: skip

    def skin_phrases(self) -> dict[str, str]:
        """The parser's "(your cards are 0 to 4)" restated as a list of slots, so that a skin
        can rename them."""
        return {f"(your cards are 0 to {n - 1})":
                "(your cards are " + ", ".join(f"Card {i}" for i in range(n)) + ")"
                for n in range(1, self.config.cards_per_hand + 1)}  # fmt: skip

    def render_state(self, state: HanabiState) -> str:
        """A spectator's picture: every hand with its knowledge, the table, the last move."""
        cfg = self.config
        lines = [
            f"Hanabi ({cfg.players} players): score {self.game.score(state)}, "
            f"lives {state.life_tokens}, reveal tokens {state.information_tokens}, "
            f"deck {state.deck_size}",
            "Stacks: " + ", ".join(f"{self.colors[c]} {h}" for c, h in enumerate(state.fireworks)),
        ]
        for seat in range(cfg.players):
            mark = " (to act)" if seat == state.current else ""
            cards = ", ".join(
                f"{self.card_name(card)} {self.knowledge_text(code)}"
                for card, code in zip(
                    state.hands[seat], self.game.card_knowledge(state, seat), strict=True
                )
            )
            lines.append(f"{self.name(seat)}{mark}: {cards}")
        lines.append("Discards: [" + ", ".join(self.card_name(c) for c in state.discards) + "]")
        if state.history:
            last = state.history[-1]
            lines.append(
                f"Last move: {self.name(last.player)}: {self.move_text(last, -1)} "
                f"({self.outcome_text(last, -1)})"
            )
        if state.current < 0:
            lines.append("The game is over.")
        return "\n".join(lines)


def _paper_color_order(num_colors: int) -> list[str]:
    """The paper lists the colours as red, green, blue, yellow, white."""
    paper = ["Red", "Green", "Blue", "Yellow", "White"]
    chosen = set(COLOR_NAMES[:num_colors])
    return [c for c in paper if c in chosen]
