"""Named shortcut answerers: explanations of what a suite's items could give away.

A CoordinationQA item must be answered from the state and the partner's behaviour. These five
answerers each read only the item's text. They *explain* a leak when the learned adversary of
:mod:`tom_envs.validity` finds one (which give-away it is); they certify nothing: the generator
never looks at them, and the gate of ``tom-envs qa verify`` is the learned adversary on held-out
and fresh items. The table prints them beside chance:

* ``majority``: always answer the option text most often correct in the group (the best single
  text in hindsight: the strongest "always say X" rule);
* ``position``: always answer the same letter (the best letter in hindsight);
* ``length``: the longest option, or the shortest (whichever scores better);
* ``overlap``: the option sharing the most words with the context, or the fewest (ditto);
* ``lookup``: a fact lookup: the option printed verbatim in the context line that shares the
  most words with the question (abstains unless one option wins with at least two words).

Where a shortcut has no pick for an item (the majority text is not among its options, the letter
is out of range, a tie, an abstention) it guesses uniformly, so it is credited that item's chance
(or its share of the tied options). Accuracies are exact expectations, no sampling. "Chance" is the
expected accuracy of a uniform letter. ``majority`` and ``position`` are fitted on the very items
they answer (the best single text or letter in hindsight): an upper bound of what those priors
get, inflated on small groups.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from tom_envs.qa.items import TYPES, QAItem

#: Points (percent) above or below chance from which :func:`violations` names a shortcut.
BOUND = 10.0
#: The shortcut answerers, in report order.
SHORTCUTS = ("majority", "position", "length", "overlap", "lookup")

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "is",
        "are",
        "be",
        "it",
        "its",
        "you",
        "your",
        "i",
        "my",
        "me",
        "we",
        "our",
        "what",
        "which",
        "who",
        "how",
        "many",
        "much",
        "do",
        "does",
        "did",
        "can",
        "could",
        "will",
        "would",
        "should",
        "now",
        "this",
        "that",
        "these",
        "those",
        "and",
        "or",
        "for",
        "from",
        "with",
        "as",
        "by",
        "if",
        "then",
        "than",
        "there",
        "their",
        "they",
        "he",
        "she",
        "his",
        "her",
        "him",
        "has",
        "have",
        "had",
        "not",
        "no",
        "yes",
        "any",
        "all",
        "more",
        "most",
        "one",
    ]
)


def chance(item: QAItem) -> float:
    """Expected accuracy of a uniform letter on ``item``."""
    return len(item.answers) / len(item.options)


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _credit_among(item: QAItem, picks: Sequence[int]) -> float:
    """Accuracy of a uniform guess among ``picks`` (the options a rule cannot separate)."""
    if not picks:
        return chance(item)
    return sum(p in item.answers for p in picks) / len(picks)


def _extreme(item: QAItem, values: Sequence[float], largest: bool) -> float:
    target = max(values) if largest else min(values)
    if all(v == target for v in values):
        return chance(item)
    return _credit_among(item, [i for i, v in enumerate(values) if v == target])


def length_credit(item: QAItem, longest: bool) -> float:
    """Credit of "answer the longest (or shortest) option" on ``item``."""
    return _extreme(item, [len(o) for o in item.options], longest)


def overlap_values(item: QAItem) -> list[float]:
    """Share of each option's words that appear in the context."""
    ctx = _words(item.context)
    out = []
    for o in item.options:
        w = _words(o)
        out.append(len(w & ctx) / len(w) if w else 0.0)
    return out


def overlap_credit(item: QAItem, most: bool) -> float:
    """Credit of "answer the option with the most (fewest) context words" on ``item``."""
    return _extreme(item, overlap_values(item), most)


def position_credit(item: QAItem, position: int) -> float:
    """Credit of "always answer letter ``position``" on ``item``."""
    if position >= len(item.options):
        return chance(item)
    return float(position in item.answers)


def text_credit(item: QAItem, text: str) -> float:
    """Credit of "always answer the option reading ``text``" on ``item``."""
    if text not in item.options:
        return chance(item)
    return float(item.options.index(text) in item.answers)


def lookup_pick(item: QAItem) -> int | None:
    """The fact-lookup answerer: the option printed in the context line that best matches the
    question (at least two shared content words, a unique winner), else ``None``."""
    qwords = _words(item.question) - _STOP
    if not qwords:
        return None
    lines = [ln.lower() for ln in re.split(r"[\n.;]", item.context) if ln.strip()]
    scores = []
    for opt in item.options:
        o = opt.lower().strip()
        if not o:
            scores.append(0)
            continue
        pat = re.compile(r"(?<![a-z0-9])" + re.escape(o) + r"(?![a-z0-9])")
        best = 0
        for ln in lines:
            if pat.search(ln):
                best = max(best, len(qwords & _words(ln)))
        scores.append(best)
    top = max(scores)
    if top < 2 or scores.count(top) > 1:
        return None
    return scores.index(top)


def lookup_credit(item: QAItem) -> float:
    """Credit of the fact-lookup answerer on ``item`` (chance when it abstains)."""
    pick = lookup_pick(item)
    return chance(item) if pick is None else float(pick in item.answers)


def _best_rule(items: Sequence[QAItem], rules: Iterable[Callable[[QAItem], float]]) -> float:
    best = -1.0
    for rule in rules:
        best = max(best, float(np.mean([rule(i) for i in items])))
    return best


def shortcut_accuracy(items: Sequence[QAItem]) -> dict[str, float]:
    """Accuracy (fraction) of every shortcut on ``items`` (one group), and ``chance``."""
    if not items:
        return {}
    texts = sorted({i.options[a] for i in items for a in i.answers})
    positions = range(max(len(i.options) for i in items))
    return {
        "chance": float(np.mean([chance(i) for i in items])),
        "majority": _best_rule(items, [lambda i, t=t: text_credit(i, t) for t in texts]),
        "position": _best_rule(items, [lambda i, p=p: position_credit(i, p) for p in positions]),
        "length": _best_rule(items, [lambda i, b=b: length_credit(i, b) for b in (True, False)]),
        "overlap": _best_rule(items, [lambda i, b=b: overlap_credit(i, b) for b in (True, False)]),
        "lookup": float(np.mean([lookup_credit(i) for i in items])),
    }


def shortcut_table(items: Sequence[QAItem]) -> list[dict[str, Any]]:
    """One row per game and ability: item count, chance and every shortcut, in percent."""
    groups: dict[tuple[str, str], list[QAItem]] = defaultdict(list)
    for it in items:
        groups[(it.game, it.type)].append(it)
    rows = []
    for (game, typ), group in sorted(
        groups.items(), key=lambda kv: (kv[0][0], list(TYPES).index(kv[0][1]))
    ):
        acc = shortcut_accuracy(group)
        rows.append({"game": game, "type": typ, "items": len(group),
                     **{k: 100.0 * v for k, v in acc.items()}})  # fmt: skip
    return rows


def violations(rows: Sequence[dict[str, Any]], bound: float = BOUND) -> list[str]:
    """The (game, ability, shortcut) cells more than ``bound`` points from chance."""
    out = []
    for r in rows:
        for s in SHORTCUTS:
            if abs(r[s] - r["chance"]) > bound:
                out.append(f"{r['game']} {r['type']} {s}: {r[s]:.1f}% vs chance {r['chance']:.1f}%")
    return out


def format_table(rows: Sequence[dict[str, Any]]) -> str:
    """The shortcut table as markdown (accuracy %, chance first)."""
    head = "| game | ability | items | chance % | " + " | ".join(f"{s} %" for s in SHORTCUTS) + " |"
    lines = [head, "|" + "---|" * (4 + len(SHORTCUTS))]
    for r in rows:
        cells = " | ".join(f"{r[s]:.1f}" for s in SHORTCUTS)
        lines.append(f"| {r['game']} | {r['type']} | {r['items']} | {r['chance']:.1f} | {cells} |")
    return "\n".join(lines)
