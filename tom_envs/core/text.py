"""Shared helpers for text layers: the one answer extractor and the matcher of free text to a
legal action, with clear feedback.

Every game's parser reads a reply the same way (:func:`answer_segment`), by one rule:

1. **A tag.** The content of the *last* complete ``<action>…</action>`` tag (any case); with no
   complete tag, the text after the last opening ``<action>`` (a reply cut off by its budget).
2. **Else a label.** The text after the *last* answer label (:data:`ANSWER_LABELS`: ``Action:``,
   ``Answer:``, ``Final answer:``, ``Choice:``, ``Action selection:``, ``Selected action:``, plus
   a game's own, e.g. CoBlock's ``Command:``; any case, ASCII or full-width colon), to the end of
   its line; an empty rest of the line (``"Action:\\n B"``) or a code-fence opener moves on to the
   next non-empty line (the papers' authors read ``Action:\\s*(.*)`` the same way).
3. **Else the whole reply.**

A model that restates its answer means the last one, so the last tag and the last label win (the
LLM agent's reply reader, ``tom_llm_agents.parsing.read_reply``, keeps the last ``Action:`` line
too). A label inside the chosen tag is read as well (``<action>Answer: B</action>`` is ``B``).
Then the decoration around the answer is removed: code fences, matching quotes of any kind,
backticks and markdown emphasis (``**B**``, ```` `move up` ````, ``"Option J"``, ``“B”``).

Every function here is linear in its input (no backtracking regular expression over an unbounded
span, no recursion) and never raises: the games' parsers build on them, and a fuzz test
(``tests/games/test_text_parsing.py``) checks that ten times the input never costs much more than
ten times the work.

:func:`match_action` then matches the segment to one of the legal actions' texts. An option is
read only as whole words: never inside a longer word (``Rock`` in ``Rocky``), nor as the tail of
a contraction or possessive (``S`` in ``What's``, ``Let's``, ``player's``) or part of a hyphenated
word. Its feedback speaks English or Chinese (``language="zh"``, paper 001's Guandan).
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence

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

# ----------------------------------------------------------------------------- the extractor
#: The labels that introduce an answer in every game (case-insensitive, then ``:`` or ``：``);
#: the Chinese ones are those of the LLM agent's Chinese answer format (``动作：``).
ANSWER_LABELS: tuple[str, ...] = (
    "final action",
    "final answer",
    "action selection",
    "selected action",
    "action",
    "answer",
    "choice",
    "最终动作",
    "最终答案",
    "动作",
    "答案",
)
_OPEN_TAG = re.compile(r"<action>", re.IGNORECASE)
_CLOSE_TAG = re.compile(r"</action>", re.IGNORECASE)
_LABEL_CACHE: dict[tuple[str, ...], re.Pattern[str]] = {}
#: Opening and closing characters removed in pairs around an answer.
_PAIRS = {
    '"': '"',
    "'": "'",
    "`": "`",
    "*": "*",
    "_": "_",
    "“": "”",
    "”": "”",
    "‘": "’",
    "«": "»",
    "「": "」",
    "『": "』",
}
#: Characters that are part of a word for option matching (an apostrophe or hyphen only between
#: word characters: see :func:`_token_pattern`).
_JOINERS = "'’ʼ"


def _label_pattern(extra: Sequence[str]) -> re.Pattern[str]:
    key = tuple(extra)
    pattern = _LABEL_CACHE.get(key)
    if pattern is None:
        words = sorted({*ANSWER_LABELS, *(w.lower() for w in extra)}, key=len, reverse=True)
        # a Latin label is a whole word ("reaction:" is no label); a Chinese one has no spaces
        # around it to tell words apart, so it is read wherever it stands
        latin = "|".join(r"\s+".join(map(re.escape, w.split())) for w in words if w.isascii())
        cjk = "|".join(re.escape(w) for w in words if not w.isascii())
        alternation = rf"(?<![\w])(?:{latin})" + (f"|(?:{cjk})" if cjk else "")
        pattern = re.compile(rf"(?:{alternation})[ \t]*[:：]", re.IGNORECASE)
        _LABEL_CACHE[key] = pattern
    return pattern


def tag_content(text: str) -> str | None:
    """The last complete ``<action>`` tag's content, else the text after the last opening tag,
    else ``None`` (no tag). Linear."""
    closes = [m.start() for m in _CLOSE_TAG.finditer(text)]
    opens = [m.end() for m in _OPEN_TAG.finditer(text)]
    if not opens:
        return None
    if closes:
        last_close = closes[-1]
        before = [o for o in opens if o <= last_close]
        if before:
            return text[before[-1] : last_close]
    return text[opens[-1] :]


def _line_after(text: str, start: int) -> str:
    """From ``start``: skip whitespace (new lines too), a bold label's closing ``**`` and a
    code-fence opener, then the rest of that line."""
    n = len(text)
    i = start
    while i < n and text[i] == "*":  # the label's closing emphasis: "**Action:** B"
        i += 1
    for _ in range(2):
        while i < n and text[i].isspace():
            i += 1
        if text.startswith("```", i):
            end = text.find("\n", i)
            if end < 0:  # "```B```" on the label's line
                return text[i:]
            i = end + 1
            continue
        break
    end = text.find("\n", i)
    return text[i:] if end < 0 else text[i:end]


def _undecorate(text: str) -> str:
    """Strip whitespace, code fences, and matching quotes, backticks or emphasis around ``text``
    (``**"B"**``), walking two indices inward: no copy per layer."""
    i, j = 0, len(text)
    for _ in range(6):
        before = (i, j)
        while i < j and text[i].isspace():
            i += 1
        while j > i and text[j - 1].isspace():
            j -= 1
        if text.startswith("```", i, j):
            i += 3
            newline = text.find("\n", i, j)
            if newline >= 0 and " " not in text[i:newline].strip(" \t"):
                i = newline + 1  # the fence's language tag
            k = j
            while k > i and text[k - 1].isspace():
                k -= 1
            if k - i >= 3 and text.startswith("```", k - 3, k):
                j = k - 3
            continue
        while j - i >= 2 and text[i] in _PAIRS and text[j - 1] == _PAIRS[text[i]]:
            i += 1
            j -= 1
            while i < j and text[i].isspace():
                i += 1
            while j > i and text[j - 1].isspace():
                j -= 1
        if (i, j) == before:
            break
    return text[i:j]


def answer_segment(text: object, labels: Sequence[str] = ()) -> str:
    """The part of a reply that names the action, by the module's one rule (tag, else label, else
    the whole reply), without decoration. ``labels``: a game's own labels besides
    :data:`ANSWER_LABELS`. Never raises; linear in the reply."""
    if not isinstance(text, str):
        return ""
    pattern = _label_pattern(labels)
    tagged = tag_content(text)
    body = tagged if tagged is not None else text
    last = None
    for last in pattern.finditer(body):  # noqa: B007 - the last label is the one read
        pass
    if last is not None:
        return _undecorate(_line_after(body, last.end()))
    return _undecorate(body)


def answer_marked(text: object, labels: Sequence[str] = ()) -> bool:
    """Whether the reply marks its answer (an ``<action>`` tag or an answer label), as opposed
    to an answer that is the whole reply. Linear."""
    if not isinstance(text, str):
        return False
    return tag_content(text) is not None or _label_pattern(labels).search(text) is not None


# ----------------------------------------------------------------------------- numbers
def ascii_int(text: str, max_digits: int = MAX_NUMBER_DIGITS) -> int | None:
    """``"12"`` -> 12; anything but 1 to ``max_digits`` ASCII digits -> ``None``. Never raises
    (``"²".isdigit()`` is true but ``int("²")`` raises, and ``int`` refuses 4,301+ digits)."""
    if not (0 < len(text) <= max_digits and text.isascii() and text.isdigit()):
        return None
    return int(text)


#: The matcher's feedback, in each language a game's text may speak (``language=``).
FEEDBACK: dict[str, dict[str, str]] = {
    "en": {
        "understood": "understood: {action}",
        "bad_number": "option number {said} does not exist: a bare number is the N-th listed "
        "legal action, choose 1-{n}",
        "not_text": "expected text, got {kind}",
        "none_legal": "no action is legal for you now",
        "empty": "empty answer",
        "ambiguous": "ambiguous answer: it names {named}; answer with exactly one legal action",
        "unmatched": "could not match {said} to a legal action",
        "choose": "; choose one of: {options}",
    },
    "zh": {
        "understood": "已理解：{action}",
        "bad_number": "不存在编号为 {said} 的选项：单独的数字表示列出的第 N 个合法动作，请在 1-{n} 中选择",
        "not_text": "需要文本，收到的是 {kind}",
        "none_legal": "你现在没有合法动作",
        "empty": "回答为空",
        "ambiguous": "回答不明确：它提到了 {named}；请只回答一个合法动作",
        "unmatched": "无法把 {said} 对应到一个合法动作",
        "choose": "；请从以下动作中选择一个：{options}",
    },
}


def _words(language: str) -> dict[str, str]:
    return FEEDBACK.get(language, FEEDBACK["en"])


def option_number(said: str, options: Mapping[int, str], language: str = "en") -> ParseResult:
    """The suite's number rule: a bare number N is the N-th listed legal action (1-based).

    ``said`` is a bare number as :data:`NUMBER` matches it; a sign, zero, an N past the list or
    a digit string longer than :data:`MAX_NUMBER_DIGITS` gets feedback naming the range.
    """
    words = _words(language)
    keys = list(options)
    k = ascii_int(said)
    if k is not None and 1 <= k <= len(keys):
        return ParseResult(keys[k - 1], words["understood"].format(action=options[keys[k - 1]]))
    shown = said if len(said) <= 12 else said[:12] + "..."
    return ParseResult(None, words["bad_number"].format(said=shown, n=len(keys)))


# ----------------------------------------------------------------------------- matching
def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().lower()).strip(" .!\"'`*")


def _options_list(options: Mapping[int, str]) -> str:
    return "; ".join(repr(t) for t in options.values())


def _token_pattern(option: str, case_sensitive: bool) -> re.Pattern[str]:
    """``option`` as whole words: not inside a word, not the tail or head of a contraction or
    possessive (``What's``, ``S's``), not part of a hyphenated word (``P-value``)."""
    j = _JOINERS
    body = re.escape(option)
    flags = 0 if case_sensitive else re.IGNORECASE
    return re.compile(rf"(?<![\w])(?<!\w[{j}])(?<!\w-){body}(?![\w])(?![{j}]\w)(?!-\w)", flags)


def named_options(text: str, options: Mapping[int, str], case_sensitive: bool = False) -> list[int]:
    """Every option whose text occurs in ``text`` as whole words (see :func:`_token_pattern`),
    in the options' order. Linear in ``text`` for a given list of options."""
    found = []
    for a, t in options.items():
        t = re.sub(r"\s+", " ", t.strip()) if case_sensitive else _norm(t)
        if t and t in text and _token_pattern(t, case_sensitive).search(text) is not None:
            found.append(a)  # (the substring test first: a fast scan rules most options out)
    return found


def match_action(
    text: object,
    options: Mapping[int, str],
    *,
    case_sensitive: bool = False,
    language: str = "en",
    listing: bool = True,
) -> ParseResult:
    """Match free text to one of ``options`` (legal action -> its text). Never raises.

    Read from :func:`answer_segment` (the last ``<action>`` tag, else the last answer label,
    else the whole reply). Accepted, in order: the exact option text (case and surrounding spaces
    ignored, unless ``case_sensitive``); a bare number N, the N-th listed action
    (:func:`option_number`); exactly one option text contained as whole words in the answer
    (:func:`named_options`; in its own case only with ``case_sensitive``, for one-letter names
    that prose would otherwise supply). An answer that names several different actions is
    refused as ambiguous. ``language``: the feedback's (``"en"`` or ``"zh"``); ``listing``: end the
    feedback of an unmatched answer with the options (off when the caller lists them itself).
    """
    words = _words(language)
    if not isinstance(text, str):
        return ParseResult(None, words["not_text"].format(kind=type(text).__name__))
    if not options:
        return ParseResult(None, words["none_legal"])
    choose = words["choose"].format(options=_options_list(options)) if listing else ""
    by_text = {_norm(t): a for a, t in options.items()}
    whole = _norm(text)
    if whole in by_text:  # the exact text, before any extraction
        a = by_text[whole]
        return ParseResult(a, words["understood"].format(action=options[a]))
    segment = re.sub(r"\s+", " ", answer_segment(text)).strip(" .!\"'`*")
    said = segment.lower()
    if not said:
        return ParseResult(None, words["empty"] + choose)
    if said in by_text:
        a = by_text[said]
        return ParseResult(a, words["understood"].format(action=options[a]))
    number = NUMBER.fullmatch(said)
    if number is not None:
        return option_number(number.group(0), options, language)
    hits = named_options(segment if case_sensitive else said, options, case_sensitive)
    if len(hits) == 1:
        a = hits[0]
        return ParseResult(a, words["understood"].format(action=options[a]))
    if hits:
        named = ", ".join(repr(options[a]) for a in hits)
        return ParseResult(None, words["ambiguous"].format(named=named))
    shown = repr(text.strip()[:80])
    return ParseResult(None, words["unmatched"].format(said=shown) + choose)
