"""Shared helpers for text layers: matching free text to a legal action with clear feedback."""

from __future__ import annotations

import re
import string
from collections.abc import Mapping

from tom_envs.core.game import ParseResult

LETTERS = string.ascii_uppercase


def letter(i: int) -> str:
    """0 -> "A", 25 -> "Z", 26 -> "AA" (lettered option lists of any length)."""
    out = ""
    i += 1
    while i:
        i, rem = divmod(i - 1, 26)
        out = LETTERS[rem] + out
    return out


#: A bare option number: ASCII digits only, optionally signed ("²", "①" and "٣" are not numbers).
NUMBER = re.compile(r"[+-]*[0-9]+", re.ASCII)
#: Longest option number read (a longer digit string is refused, never converted).
MAX_NUMBER_DIGITS = 6


def ascii_int(text: str, max_digits: int = MAX_NUMBER_DIGITS) -> int | None:
    """``"12"`` -> 12; anything but 1 to ``max_digits`` ASCII digits -> ``None``. Never raises
    (``"²".isdigit()`` is true but ``int("²")`` raises, and ``int`` refuses 4,301+ digits)."""
    if not (0 < len(text) <= max_digits and text.isascii() and text.isdigit()):
        return None
    return int(text)


def option_number(said: str, options: Mapping[int, str]) -> ParseResult:
    """The suite's number rule: a bare number N is the N-th listed legal action (1-based).

    ``said`` is a bare number as :data:`NUMBER` matches it; a sign, zero, an N past the list or
    a digit string longer than :data:`MAX_NUMBER_DIGITS` gets feedback naming the range.
    """
    keys = list(options)
    k = ascii_int(said)
    if k is not None and 1 <= k <= len(keys):
        return ParseResult(keys[k - 1], f"understood: {options[keys[k - 1]]}")
    shown = said if len(said) <= 12 else said[:12] + "..."
    return ParseResult(
        None,
        f"option number {shown} does not exist: a bare number is the N-th listed legal action, "
        f"choose 1-{len(keys)}",
    )


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().lower()).strip(" .!\"'`*")


def _options_list(options: Mapping[int, str]) -> str:
    return "; ".join(repr(t) for t in options.values())


def match_action(text: object, options: Mapping[int, str]) -> ParseResult:
    """Match free text to one of ``options`` (legal action -> its text). Never raises.

    Accepted, in order: the exact option text (case and surrounding spaces ignored); the text
    inside an ``<action>…</action>`` tag, or after a last ``Action:`` / ``Answer:`` marker; a bare
    number N, the N-th listed action (:func:`option_number`); exactly one option text contained as
    whole words in the answer. An answer that names several different actions is refused as
    ambiguous.
    """
    if not isinstance(text, str):
        return ParseResult(None, f"expected text, got {type(text).__name__}")
    if not options:
        return ParseResult(None, "no action is legal for you now")
    raw = text
    tag = re.findall(r"<action>(.*?)</action>", raw, flags=re.IGNORECASE | re.DOTALL)
    if tag:
        raw = tag[-1]
    else:
        marker = re.split(r"(?i)\b(?:final )?(?:action|answer|choice)\s*:", raw)
        if len(marker) > 1:
            raw = marker[-1]
    norm = _norm(raw)
    if not norm:
        return ParseResult(None, f"empty answer; choose one of: {_options_list(options)}")
    by_text = {_norm(t): a for a, t in options.items()}
    if norm in by_text:
        a = by_text[norm]
        return ParseResult(a, f"understood: {options[a]}")
    number = NUMBER.fullmatch(norm)
    if number is not None:
        return option_number(number.group(0), options)
    hits: list[tuple[int, int]] = []
    for t, a in by_text.items():
        for m in re.finditer(r"(?<![\w])" + re.escape(t) + r"(?![\w])", norm):
            hits.append((m.end(), a))
    if hits:
        distinct = sorted({a for _, a in hits})
        if len(distinct) == 1:
            a = distinct[0]
            return ParseResult(a, f"understood: {options[a]}")
        named = ", ".join(repr(options[a]) for a in distinct)
        return ParseResult(
            None, f"ambiguous answer: it names {named}; answer with exactly one legal action"
        )
    return ParseResult(
        None,
        f"could not match {text.strip()[:80]!r} to a legal action; choose one of: "
        f"{_options_list(options)}",
    )
