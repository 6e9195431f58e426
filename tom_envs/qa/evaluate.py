"""Evaluating answerers (any LLM endpoint, or the random and oracle answerers) on QA suites.

Accuracy per game and type with standard errors over trials (the paper: 3 trials), beside the
exact random-choice baseline; unparseable replies are counted (and scored wrong). The correlation
between a model's QA accuracy and its agentic score on the same games (paper 002, Fig. 2) is
:func:`correlation` over ``{game: (qa accuracy, agentic score)}``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tom_envs.driver import classify_exception
from tom_envs.qa.generate import random_baseline
from tom_envs.qa.items import QAItem, parse_answer

SYSTEM = "You answer multiple-choice questions about a cooperative game."


@dataclass
class QAResult:
    """Per-trial correctness of every item, with the raw replies."""

    answerer: str
    items: list[QAItem]
    correct: list[list[bool]] = field(default_factory=list)  # trial -> item
    invalid: list[list[bool]] = field(default_factory=list)
    replies: list[list[str]] = field(default_factory=list)
    tokens: int = 0
    #: failed answers by kind (:data:`~tom_envs.core.agents.FAILURE_KINDS`: ``endpoint``,
    #: ``context_overflow``, ``exception``; a reply naming no option is ``unparseable``)
    failures: dict[str, int] = field(default_factory=dict)
    first_failure: str | None = None

    def failure_summary(self) -> str:
        """``"endpoint 12, unparseable 3"`` (empty when nothing failed)."""
        return ", ".join(f"{k} {v}" for k, v in sorted(self.failures.items()))

    def every_answer_failed(self) -> bool:
        """True when no reply named an option: the answerer failed, the accuracy means nothing."""
        total = sum(len(t) for t in self.invalid)
        return total > 0 and self.invalid_count() == total

    def accuracy(self, keep: Callable[[QAItem], bool] = lambda i: True) -> tuple[float, float, int]:
        """Mean accuracy (%) over trials, its standard error over trials, and the item count."""
        idx = [k for k, it in enumerate(self.items) if keep(it)]
        if not idx or not self.correct:
            return float("nan"), float("nan"), 0
        per_trial = [100.0 * float(np.mean([trial[k] for k in idx])) for trial in self.correct]
        se = (
            float(np.std(per_trial, ddof=1) / math.sqrt(len(per_trial)))
            if len(per_trial) > 1
            else float("nan")
        )
        return float(np.mean(per_trial)), se, len(idx)

    def invalid_count(self) -> int:
        """Replies that named no option, over every trial."""
        return int(sum(sum(t) for t in self.invalid))

    def table(self) -> list[dict[str, Any]]:
        """One row per game and type (and ``all``): accuracy ± SE, random baseline, items."""
        rows = []
        games = sorted({i.game for i in self.items})
        for g in [*games, "all"]:
            for t in ("EC", "ToM", "JP", "all"):

                def keep(i: QAItem, g: str = g, t: str = t) -> bool:
                    return (g == "all" or i.game == g) and (t == "all" or i.type == t)

                acc, se, n = self.accuracy(keep)
                if n:
                    sub = [i for i in self.items if keep(i)]
                    rows.append({"game": g, "type": t, "items": n, "accuracy": acc, "se": se,
                                 "random": 100.0 * random_baseline(sub)})  # fmt: skip
        return rows


def run_answerer(
    items: Sequence[QAItem],
    answer: Callable[[QAItem, int], str],
    name: str,
    trials: int = 3,
) -> QAResult:
    """Ask every item ``trials`` times (``answer(item, trial)``); failures count as invalid."""
    res = QAResult(name, list(items))
    for trial in range(trials):
        correct, invalid, replies = [], [], []
        for item in items:
            kind = None
            try:
                reply = answer(item, trial)
            except Exception as exc:  # an answerer failure is an invalid answer, never fatal
                reply = f"<error: {type(exc).__name__}: {exc}>"
                kind = classify_exception(exc)
            choice = parse_answer(reply, item.options)
            if choice is None:  # the same failure kinds as every episode driver
                kind = kind or "unparseable"
                res.failures[kind] = res.failures.get(kind, 0) + 1
                if res.first_failure is None:
                    res.first_failure = f"{kind}: {reply[:300]}"
            invalid.append(choice is None)
            correct.append(choice is not None and choice in item.answers)
            replies.append(reply)
        res.correct.append(correct)
        res.invalid.append(invalid)
        res.replies.append(replies)
    return res


def correlation(pairs: Mapping[str, tuple[float, float]]) -> tuple[float, int]:
    """Pearson r between QA accuracy and agentic score, and the number of pairs.

    Keys are models (paper 002's Fig. 2: one point per LLM, e.g. overall QA accuracy against
    overall agentic score) or games (one model's accuracy and score per game, as
    ``tom-envs qa eval --agentic scores.json`` computes).
    """
    xs = np.asarray([v[0] for v in pairs.values()], float)
    ys = np.asarray([v[1] for v in pairs.values()], float)
    if len(xs) < 3 or xs.std() == 0 or ys.std() == 0:
        return float("nan"), len(xs)
    return float(np.corrcoef(xs, ys)[0, 1]), len(xs)


def format_rows(rows: Sequence[Mapping[str, Any]]) -> str:
    """The accuracy table as markdown."""
    lines = ["| game | type | items | accuracy % | SE | random % |", "|---|---|---|---|---|---|"]
    for r in rows:
        se = "" if math.isnan(r["se"]) else f"{r['se']:.1f}"
        lines.append(
            f"| {r['game']} | {r['type']} | {r['items']} | {r['accuracy']:.1f} | {se} | {r['random']:.1f} |"
        )
    return "\n".join(lines)
