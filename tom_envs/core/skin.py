"""Disguised variants: the ``skin`` game argument, a presentation-only relabelling of the text.

A skin renames the surface symbols a text agent reads (colours, room and bomb numbers, suit and
agent names, action names) and permutes the listing order of the legal actions, without changing
the game: rules, state, vector observations, action indices, rewards and every bot's view are
untouched. So partners, returns and legal-action sets are identical by construction, checkpoints
are unaffected, and the gap between a text agent's canonical and skinned scores measures how much
of its play rests on symbols it may have memorised (issue #36).

* ``skin="canonical"`` (the default) is today's text, byte for byte: nothing is wrapped.
* ``skin="s<k>"`` (``k`` in 1..10^6) is one seeded disguise. :class:`Skin` draws, per symbol
  category of the game (salted by the category's name), a bijection from the canonical names onto
  a pool disjoint from them, and a presentation order of the legal actions.
* Each game declares its categories in its text layer: ``skin_symbols(self) -> tuple[Symbols,
  ...]`` (a game without it keeps its names and has only its listing order permuted).
  :class:`SkinnedText` wraps the game's :class:`~tom_envs.core.game.TextInterface`: every text it
  renders (rules, observation, legal actions, feedback, and any other string the game's text layer
  returns, such as a board panel or a probe's partner name) passes through the forward tables; an
  answer passes through the reverse tables (a skinned name reads as its canonical one; a canonical
  name of a renamed category reads as nothing: the disguise cannot be bypassed by a memorised name)
  before the game's own parser reads it. A bare option number is the N-th option *as listed in the
  skin*: the presentation order is installed on the game's own ``legal_actions_text``, so every
  listing and the number rule agree.
* :func:`skinnable` wraps a game's ``make_bundle``: it takes ``skin=`` off the arguments (so no
  game's signature or config changes), builds the game, and installs the skin on its text layer.
  :func:`tom_envs.identity.resolved_env_kwargs` records a non-canonical skin, so results are never
  mixed across skins.

Symbols are matched as whole words (never inside a longer word); a category may require a
context before the symbol (``Room 5``, ``Bomb 2``) and match a list after it (``rooms 0, 3 and
5``); case-insensitive categories keep the case of what they replace (``Red``/``red``/``RED``).

What each game renames (its text layer's ``skin_symbols``; every game also permutes its legal
list, and a bare option number is the N-th option as listed):

======================  ==================================================================
game                    renamed
======================  ==================================================================
matrix games            action names: one letter -> another (``C D E H K L M N Q T U V X
                        Z``), repeated letters -> repeated letters, words -> nonsense words
BombDefusal             tool colours, call signs, room numbers (after room/rooms/numbered/
                        node, lists too) and bomb numbers onto 1-99; chat is stored in
                        canonical names, so teammates read it in their own
CollabCapture/Escape    Alice/Bob, room numbers (the range "room 1 to 10" restated as a list),
                        the adversary's role (``thief``, ``killer``)
Hanabi                  colour names and their letters (``R3`` -> ``T3``, ``red (R)``), the
                        players' names (``Bobs`` too), the card slots (``Card 0`` -> ``Card
                        gamma``; a canonical ``play 2`` reads as nothing)
Guandan                 suits: names, symbols (``♥7`` -> ``★7``) and Chinese names (``红桃``)
CoBlock                 block colours, ``player_0``/``player_1``; the x axis mirrored
                        (``x -> X-1-x`` in every ``(x, y, z)``) by about half the skins
Overcooked              chefs' names, ``onion``/``onions``; the kitchen mirrored left to right
                        by about half the skins (cells ``(x, y)`` -> ``(W-1-x, y)``, left/right
                        and east/west swapped, in action names, prose and the drawn kitchen)
Example                 the colours
======================  ==================================================================

Kept, on purpose: ranks (Hanabi, Guandan), numbers the rules compute with (a Hanabi stack's
height and the score as the sum of top ranks; Guandan's levels advance by rank), so renaming
them would change the task, not its surface; Guandan's seat numbers, whose order the rules state
(``player k+1``); Overcooked's point labels (``o0``) and its vertical axis (one
reflection already moves every memorised position). The
matrix games list their payoff table and question in the skin's order too (``skin_order``).
CoordinationQA items in a skin are the canonical items renamed
(:func:`tom_envs.qa.generate.skin_item`), their contexts' lists in the canonical order.
"""

from __future__ import annotations

import functools
import hashlib
import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tom_envs.core.game import GameBundle, ParseResult, TextInterface, TextObservation
from tom_envs.core.params import Param

CANONICAL = "canonical"
#: The largest skin number (``s1`` … ``s1000000``).
MAX_SKIN = 1_000_000
#: The env-level argument every game takes besides its ``PARAMS`` (as ``max_cycles``): it changes
#: only the text, never the rules, so it is not a field of any game's config.
SKIN = Param(
    "skin",
    "str",
    CANONICAL,
    "presentation-only relabelling of the text (names, numbers, listing order; every game, "
    "not a rule)",
    max_len=12,
    allowed_text=f"'canonical' or 's<k>' with k in 1..{MAX_SKIN}",
)
_KEY = re.compile(r"s([1-9][0-9]{0,6})")
#: What a canonical name of a renamed category reads as in an answer: matches no action.
BLOCKED = "\u2047"

# ----------------------------------------------------------------------------- pools
#: Colour words none of the games uses canonically (lower case).
COLOUR_POOL: tuple[str, ...] = (
    "amber", "azure", "beige", "coral", "crimson", "cyan", "indigo", "ivory", "jade", "khaki",
    "lavender", "lilac", "magenta", "maroon", "mauve", "navy", "ochre", "olive", "peach", "plum",
    "rust", "saffron", "scarlet", "sepia", "silver", "tan", "teal", "topaz", "umber", "violet",
)  # fmt: skip
#: Given names none of the games uses canonically.
NAME_POOL: tuple[str, ...] = (
    "Arlo", "Beda", "Cyra", "Dario", "Elin", "Faro", "Galen", "Hedda", "Ines", "Joren", "Kaia",
    "Lorca", "Mira", "Nilo", "Oda", "Pim", "Quill", "Rhea", "Soren", "Tove", "Ulla", "Vero",
    "Wren", "Xavi", "Yara", "Zeno",
)  # fmt: skip
#: Call signs (the NATO alphabet's second half and more), for bomb-defusal players.
CALLSIGN_POOL: tuple[str, ...] = (
    "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango",
    "uniform", "victor", "whiskey", "xray", "yankee", "zulu",
)  # fmt: skip
#: Nonsense words (paper 004's idea of meaningless option names), for action names.
NONSENSE_POOL: tuple[str, ...] = (
    "blick", "dax", "fep", "glorp", "kiki", "lorp", "mib", "nolt", "pell", "quib", "rask",
    "sorn", "tufa", "vask", "wug", "yent", "zib", "zorp",
)  # fmt: skip
#: Single upper-case letters (for one-letter option names).
LETTER_POOL: tuple[str, ...] = tuple("CDEHKLMNQTUVXZ")


def number_pool(low: int = 1, high: int = 99) -> tuple[str, ...]:
    """Decimal numbers ``low..high`` as names (room and bomb numbers)."""
    return tuple(str(k) for k in range(low, high + 1))


@dataclass(frozen=True)
class Symbols:
    """One category of surface symbols a game's text shows.

    Attributes:
        category: its name (``"colour"``); also the salt of its table.
        names: the canonical names (as shown; for a case-insensitive category any case).
        pool: the names it may become; those equal to a canonical name are never used.
        case_sensitive: match in the shown case only (one-letter names: the "a" of prose is not
            option A); otherwise any case matches and the replacement takes the matched case.
        before: a regular expression that must stand just before the symbol (kept as is), e.g.
            ``r"(?i:room )"``; empty for none.
        listed: after ``before``, a whole list of symbols is renamed (``0, 3, 5, and 8``).
        glued: a regular expression that may follow the symbol inside the same word (``"[1-5]"``
            for Hanabi's ``R3``): the symbol is then matched at a word's start only.
        glued_only: the glued part is required (a one-letter colour is renamed in ``R3``, never
            as a word of its own, where it could be an option letter).
        boundary: match whole words only (``False`` for scripts written without spaces, where
            a name stands between other characters: Guandan's Chinese ``红桃7``).
        follows: another category whose draw this one repeats: ``names[i]`` becomes ``pool[j]``
            where that category's ``names[i]`` became its ``pool[j]`` (``hearts``/``heart``,
            ``Red``/``R``); the two pools are parallel lists.
    """

    category: str
    names: tuple[str, ...]
    pool: tuple[str, ...]
    case_sensitive: bool = False
    before: str = ""
    listed: bool = False
    glued: str = ""
    glued_only: bool = False
    boundary: bool = True
    follows: str = ""

    def __post_init__(self) -> None:
        if self.listed and self.glued:
            raise ValueError(f"skin category {self.category!r}: a listed category has no glue")
        key = (lambda s: s) if self.case_sensitive else str.lower
        names = tuple(dict.fromkeys(self.names))
        object.__setattr__(self, "names", names)
        canon = {key(n) for n in names}
        if len({key(p) for p in self.pool}) != len(self.pool):
            raise ValueError(f"skin category {self.category!r}: its pool repeats a name")
        usable = [p for p in self.pool if key(p) not in canon]
        if len(usable) < len(names):
            raise ValueError(
                f"skin category {self.category!r}: {len(names)} names but only {len(usable)} "
                "pool names disjoint from them"
            )


@dataclass(frozen=True)
class Mirror:
    """A reflection of the layout where the rules are symmetric under it: in every text, the
    ``x`` group of each ``pattern`` match becomes ``extent - 1 - x`` (its own inverse, so answers
    are read back the same way). A skin mirrors or not by a seeded coin of its key.

    Attributes:
        name: what is mirrored (``"x"``); also the coin's salt.
        pattern: a regular expression with a group named ``x`` (an integer).
        extent: the axis' size.
        swaps: pairs of words the reflection exchanges (``("left", "right")``), as whole words,
            keeping the matched case; a word right after one of ``not_after`` is kept (``"3
            steps left"`` is time, not a side).
        not_after: the words after which a swap word is kept.
        rows: a regular expression matching a whole line that is one row of a drawn grid
            (``extent`` characters): such a line is written backwards.
    """

    name: str
    pattern: str
    extent: int
    swaps: tuple[tuple[str, str], ...] = ()
    not_after: tuple[str, ...] = ()
    rows: str = ""

    def apply(self, text: str) -> str:
        """``text`` with the axis reflected (the inverse too)."""

        def flip(m: re.Match[str]) -> str:
            s, e = m.span("x")
            x = self.extent - 1 - int(m.group("x"))
            return m.group(0)[: s - m.start()] + str(x) + m.group(0)[e - m.start() :]

        text = re.sub(self.pattern, flip, text)
        if self.rows:
            text = re.sub(self.rows, lambda m: m.group(0)[::-1], text, flags=re.MULTILINE)
        if self.swaps:
            other = {a.lower(): b for a, b in self.swaps} | {b.lower(): a for a, b in self.swaps}
            keep = "".join(rf"(?<!\b{re.escape(w)} )" for w in self.not_after)
            words = "|".join(re.escape(w) for w in other)
            text = re.sub(rf"{keep}\b(?:{words})\b",
                          lambda m: _case_like(other[m.group(0).lower()], m.group(0)),
                          text, flags=re.IGNORECASE)  # fmt: skip
        return text


def room_symbols(rooms: Sequence[int], players: Sequence[str]) -> tuple[Symbols, ...]:
    """The categories of a room game (CollabCapture, CollabEscape): the players' names, and the
    room numbers after "room", "rooms", "move to" or "go to" (lists included) onto 1-99."""
    return (
        Symbols("player", tuple(players), NAME_POOL),
        Symbols("room", tuple(map(str, rooms)), number_pool(),
                before=r"(?i:rooms?\s+|move\s+to\s+|go\s+to\s+)", listed=True),
    )  # fmt: skip


def parse_skin(value: Any) -> str:
    """``"canonical"`` or ``"s<k>"`` (``k`` in 1..10^6), else ``ValueError`` naming ``skin``."""
    text = SKIN.parse(value)
    if text == CANONICAL:
        return text
    m = _KEY.fullmatch(text)
    if m is None or int(m.group(1)) > MAX_SKIN:
        SKIN._fail(value)
    return text


def _case_like(word: str, like: str) -> str:
    """``word`` in the case of ``like`` (``RED`` -> upper, ``Red`` -> capitalised, else lower)."""
    if len(like) > 1 and like.isupper():
        return word.upper()
    if like[:1].isupper():
        return word[:1].upper() + word[1:]
    return word.lower()


_LIST_SEP = r"(?:,\s+and\s+|,\s+or\s+|\s+and\s+|\s+or\s+|,\s*)"


class _Table:
    """One direction of one category: a regex finding its symbols and the name each becomes."""

    def __init__(self, sym: Symbols, mapping: Mapping[str, str]) -> None:
        self.sym = sym
        self.case = sym.case_sensitive
        self.map = dict(mapping) if self.case else {k.lower(): v for k, v in mapping.items()}
        alt = "|".join(re.escape(n) for n in sorted(mapping, key=len, reverse=True))
        tail = r"(?!\w)"
        if sym.glued:
            tail = rf"(?=(?:{sym.glued}){'' if sym.glued_only else '?'}(?!\w))"
        one = rf"(?<!\w)(?:{alt}){tail}" if alt else r"(?!x)x"
        if alt and not sym.boundary:
            one = rf"(?:{alt})"
        flags = 0 if self.case else re.IGNORECASE
        self.one = re.compile(one, flags)
        body = rf"{one}(?:{_LIST_SEP}{one})*" if sym.listed else one
        self.pattern = re.compile(
            rf"(?P<before>{sym.before})(?P<body>{body})" if sym.before else rf"(?P<body>{body})",
            flags,
        )

    def _rename(self, said: str) -> str:
        new = self.map[said if self.case else said.lower()]
        return new if self.case else _case_like(new, said)

    def sub(self, text: str) -> str:
        listed = self.sym.listed

        def repl(m: re.Match[str]) -> str:
            before = m.group("before") if self.sym.before else ""
            body = m.group("body")
            if listed:  # each symbol of the list (the glue, if any, is outside the match)
                return before + self.one.sub(lambda k: self._rename(k.group(0)), body)
            return before + self._rename(body)

        return self.pattern.sub(repl, text)


class Skin:
    """A seeded disguise: per category a bijection onto its pool, and a presentation order.

    Args:
        key: ``"s<k>"`` (the tables depend on nothing else).
        symbols: the game's categories (:class:`Symbols`).
        phrases: canonical phrases restated before renaming, where the canonical text leans on
            the canonical names' order (``"room 1 to 10"`` -> ``"rooms 1, 2, ... and 10"``).
        mirrors: reflections the rules are symmetric under; each applies when the key's coin
            for it says so (:meth:`mirrored`).
    """

    def __init__(
        self,
        key: str,
        symbols: Sequence[Symbols] = (),
        phrases: Mapping[str, str] | None = None,
        mirrors: Sequence[Mirror] = (),
    ) -> None:
        self.key = parse_skin(key)
        if self.key == CANONICAL:
            raise ValueError("the canonical skin renames nothing: do not build a Skin for it")
        self.symbols = tuple(symbols)
        self.phrases = dict(phrases or {})
        self.mirrors = tuple(m for m in mirrors if self.mirrored(m.name))
        self.tables: dict[str, dict[str, str]] = {}
        self._positions: dict[str, list[int]] = {}
        forward: list[_Table] = []
        reverse: list[_Table] = []
        for sym in self.symbols:
            if sym.category in self.tables:
                raise ValueError(f"skin category {sym.category!r} declared twice")
            table = self._draw(sym)
            self.tables[sym.category] = table
            forward.append(_Table(sym, table))
            back = {v: k for k, v in table.items()}
            back.update({k: BLOCKED for k in table})
            reverse.append(_Table(sym, back))
        self._forward = tuple(forward)
        self._reverse = tuple(reverse)
        self._message = tuple(
            _Table(sym, {v: k for k, v in self.tables[sym.category].items()})
            for sym in self.symbols
        )
        self._rank: dict[int, int] = {}

    def _draw(self, sym: Symbols) -> dict[str, str]:
        """``names[i] -> pool[positions[i]]``: positions drawn (salted by the category) among
        the pool entries that are no canonical name, or repeated from the followed category."""
        key = (lambda s: s) if sym.case_sensitive else str.lower
        canon = {key(n) for n in sym.names}
        if sym.follows:
            if sym.follows not in self._positions:
                raise ValueError(f"skin category {sym.category!r} follows the undeclared "
                                 f"{sym.follows!r} (declare it first)")  # fmt: skip
            positions = self._positions[sym.follows][: len(sym.names)]
            if len(positions) < len(sym.names) or any(key(sym.pool[j]) in canon for j in positions):
                raise ValueError(f"skin category {sym.category!r}: its pool is not parallel to "
                                 f"{sym.follows!r}'s or meets its canonical names")  # fmt: skip
        else:
            usable = [j for j, p in enumerate(sym.pool) if key(p) not in canon]
            rng = random.Random(f"tom-envs skin {self.key} {sym.category}")
            positions = rng.sample(usable, len(sym.names))
        self._positions[sym.category] = positions
        return {n: sym.pool[j] for n, j in zip(sym.names, positions, strict=True)}

    # ------------------------------------------------------------------ text
    def render(self, text: str) -> str:
        """Canonical text -> skinned text (every category in turn; pools are disjoint from the
        canonical names, so one category never renames another's output)."""
        for old, new in self.phrases.items():
            if old in text:
                text = text.replace(old, new)
        return self._translate(text, self._forward)

    def read(self, text: str) -> str:
        """An answer in the skin -> the canonical answer the game's parser reads (a canonical
        name of a renamed category becomes :data:`BLOCKED`, matching nothing)."""
        return self._translate(text, self._reverse)

    def read_message(self, text: str) -> str:
        """A free message in the skin -> canonical (skinned names translated back, nothing
        blocked), so teammates of any skin read it in theirs."""
        return self._translate(text, self._message)

    def _translate(self, text: str, tables: tuple[_Table, ...]) -> str:
        """The mirrors, then each name table in turn."""
        for mirror in self.mirrors:
            text = mirror.apply(text)
        for table in tables:
            text = table.sub(text)
        return text

    def mirrored(self, name: str) -> bool:
        """The key's seeded coin for the reflection ``name`` (about half the skins mirror)."""
        digest = hashlib.blake2b(f"{self.key}/mirror/{name}".encode(), digest_size=8).digest()
        return digest[0] % 2 == 1

    # ------------------------------------------------------------------ order
    def rank(self, action: int) -> int:
        """The action's place key in the presentation order (a seeded hash of the action)."""
        r = self._rank.get(action)
        if r is None:
            digest = hashlib.blake2b(f"{self.key}/{action}".encode(), digest_size=8).digest()
            r = self._rank[action] = int.from_bytes(digest, "big")
        return r

    def order(self, actions: Iterable[int]) -> list[int]:
        """``actions`` in the skin's presentation order (the same actions, a seeded order that
        depends only on the actions and the key)."""
        return sorted(actions, key=self.rank)


def _skin_value(value: Any, skin: Skin) -> Any:
    """A value returned by the game's text layer, with its strings skinned (str, and lists,
    tuples and dicts of them; anything else as is)."""
    if isinstance(value, str):
        return skin.render(value)
    if isinstance(value, ParseResult):
        return _skin_result(value, skin)
    if isinstance(value, TextObservation):
        return TextObservation(
            skin.render(value.rules),
            skin.render(value.observation),
            {a: skin.render(t) for a, t in value.legal_actions.items()},
            skin.render(value.answer_format),
        )
    if isinstance(value, dict):
        return {k: _skin_value(v, skin) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and any(isinstance(v, str) for v in value):
        return type(value)(_skin_value(v, skin) for v in value)
    return value


def _skin_result(result: ParseResult, skin: Skin) -> ParseResult:
    return replace(result, feedback=skin.render(result.feedback))


class SkinnedText(TextInterface[Any]):
    """A game's text layer seen through a :class:`Skin` (see the module docstring).

    ``inner`` is the game's own text object, owned by this bundle: its ``legal_actions_text`` (or,
    for a game that letters its list from an ``ordered_legal`` method, that method) is re-bound on
    the instance to list the legal actions in the skin's order (so the game's own numbered or
    lettered listings and its number rule follow the skin); a game that lists its actions
    elsewhere too offers ``skin_order(order)`` (the matrix games' payoff table). Every other attribute of
    the game's text layer is reachable through this object; strings it returns are skinned.
    """

    def __init__(self, inner: TextInterface[Any], skin: Skin) -> None:
        self.inner = inner
        self.skin = skin
        present = getattr(inner, "skin_order", None)
        if present is not None:  # the game lists its actions elsewhere too (a payoff table)
            present(skin.order)
        ordered = getattr(inner, "ordered_legal", None)
        if ordered is not None:  # the game letters its list from this order (Hanabi)

            def ordered_legal(view: Any) -> list[int]:
                return skin.order(ordered(view))

            inner.ordered_legal = ordered_legal  # type: ignore[attr-defined]
        else:
            listed = inner.legal_actions_text

            def legal_actions_text(view: Any) -> dict[int, str]:
                options = listed(view)
                return {a: options[a] for a in skin.order(options)}

            inner.legal_actions_text = legal_actions_text  # type: ignore[method-assign]

    @property
    def key(self) -> str:
        """The skin's key (``"s1"``)."""
        return self.skin.key

    def rules_prompt(self, view: Any) -> str:
        return self.skin.render(self.inner.rules_prompt(view))

    def observation_text(self, view: Any) -> str:
        return self.skin.render(self.inner.observation_text(view))

    def action_text(self, view: Any, action: int) -> str:
        return self.skin.render(self.inner.action_text(view, action))

    def legal_actions_text(self, view: Any) -> dict[int, str]:
        return {a: self.skin.render(t) for a, t in self.inner.legal_actions_text(view).items()}

    def answer_format(self, view: Any) -> str:
        return self.skin.render(self.inner.answer_format(view))

    def parse_action(self, view: Any, text: str) -> ParseResult:
        """The answer read back through the reverse tables, then the game's own parser; its
        feedback skinned, a message to teammates stored in canonical names."""
        if not isinstance(text, str):
            return _skin_result(self.inner.parse_action(view, text), self.skin)
        result = self.inner.parse_action(view, self.skin.read(text))
        out = _skin_result(result, self.skin)
        if result.message is not None:  # the message as written, names translated back
            said = self.inner.parse_action(view, self.skin.read_message(text)).message
            out = replace(out, message=said)
        return out

    def read_reply(self, reply: str, parse: Callable[[str], ParseResult]) -> ParseResult:
        """``parse`` (a parser of canonical text, e.g. an agent-side interface's own) applied
        to ``reply`` read back through the reverse tables, its feedback skinned."""
        return _skin_result(parse(self.skin.read(reply)), self.skin)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.inner, name)
        if callable(value):

            @functools.wraps(value)
            def skinned(*args: Any, **kwargs: Any) -> Any:
                return _skin_value(value(*args, **kwargs), self.skin)

            return skinned
        return _skin_value(value, self.skin)


def skin_symbols(text: TextInterface[Any]) -> tuple[Symbols, ...]:
    """The game's declared symbol categories (``text.skin_symbols()``; none if it has none)."""
    declare: Callable[[], Sequence[Symbols]] | None = getattr(text, "skin_symbols", None)
    return tuple(declare()) if declare is not None else ()


def skin_mirrors(text: TextInterface[Any]) -> tuple[Mirror, ...]:
    """The game's symmetric reflections (``text.skin_mirrors()``; none if it has none)."""
    declare: Callable[[], Sequence[Mirror]] | None = getattr(text, "skin_mirrors", None)
    return tuple(declare()) if declare is not None else ()


def skin_phrases(text: TextInterface[Any]) -> dict[str, str]:
    """The game's phrases to restate before renaming (``text.skin_phrases()``; none if none)."""
    declare: Callable[[], Mapping[str, str]] | None = getattr(text, "skin_phrases", None)
    return dict(declare()) if declare is not None else {}


class SkinnedProbes:
    """A game's probe function whose questions, options and answers are skinned (the answer
    stays one of the options: both are renamed by the same tables)."""

    def __init__(self, probes: Callable[[Any, int], list[Any]], skin: Skin) -> None:
        self.inner = probes
        self.skin = skin
        self.moment = getattr(probes, "moment", "decision")

    def __call__(self, state: Any, player: int) -> list[Any]:
        r = self.skin.render
        return [
            replace(
                p,
                question=r(p.question),
                options=tuple(r(o) for o in p.options),
                answer=r(p.answer),
                no_tom=None if p.no_tom is None else r(p.no_tom),
                subject={k: _skin_value(v, self.skin) for k, v in p.subject.items()},
            )
            for p in self.inner(state, player)
        ]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def skin_for(text: TextInterface[Any], key: str) -> Skin:
    """The :class:`Skin` ``key`` of a game's text layer (its symbols, phrases and mirrors)."""
    return Skin(key, skin_symbols(text), skin_phrases(text), skin_mirrors(text))


def skin_text(text: TextInterface[Any], skin: Any) -> TextInterface[Any]:
    """A text layer seen through ``skin`` (``"canonical"``: ``text`` itself), for agent-side
    interfaces that render with a text layer of their own (Overcooked's mid-level chooser)."""
    key = parse_skin(skin)
    if key == CANONICAL:
        return text
    return SkinnedText(text, skin_for(text, key))


def apply_skin(bundle: GameBundle, skin: Any) -> GameBundle:
    """``bundle`` with its text (and probe questions) seen through ``skin`` (``"canonical"``:
    the bundle itself, unchanged)."""
    key = parse_skin(skin)
    if key == CANONICAL:
        return bundle
    the_skin = skin_for(bundle.text, key)
    probes = bundle.probes
    return replace(
        bundle,
        text=SkinnedText(bundle.text, the_skin),
        probes=None if probes is None else SkinnedProbes(probes, the_skin),
    )


def skinnable(make_bundle: Callable[..., GameBundle]) -> Callable[..., GameBundle]:
    """A game's ``make_bundle`` that also takes ``skin=`` (see :func:`apply_skin`)."""

    @functools.wraps(make_bundle)
    def wrapped(**config: Any) -> GameBundle:
        skin = config.pop("skin", CANONICAL)
        key = parse_skin(skin)  # checked first: a bad skin fails before the game is built
        return apply_skin(make_bundle(**config), key)

    return wrapped


def skin_of(bundle: GameBundle) -> str:
    """The bundle's skin key (``"canonical"`` when its text is not skinned)."""
    return bundle.text.key if isinstance(bundle.text, SkinnedText) else CANONICAL


__all__ = [
    "BLOCKED",
    "CANONICAL",
    "SKIN",
    "Mirror",
    "Skin",
    "SkinnedText",
    "Symbols",
    "apply_skin",
    "parse_skin",
    "room_symbols",
    "skin_for",
    "skin_mirrors",
    "skin_of",
    "skin_phrases",
    "skin_symbols",
    "skin_text",
    "skinnable",
]
