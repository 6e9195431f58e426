"""A learned no-reasoning adversary for "pick one of several candidates" measures, and its gate.

A measure is valid only if no surface property of its examples gives the answer away. Named
shortcuts explain a leak; they cannot prove there is none. This module trains answerers that do
no reasoning at all (gradient boosting and logistic regression on surface features of the
question, the candidates and the context) on some examples and scores them on examples they were
not fitted on: k folds, one group left out at a time (e.g. one game), and a freshly generated set
(another seed). Per cell and pooled, it reports the held-out accuracy with a 95% Wilson interval
beside chance, and :func:`gate` applies the rule of issue #32:

* no cell is *shown* to beat chance by more than ``cell_margin`` (5) points: the lower end of the
  cell's 95% interval stays below ``chance + 5``;
* pooled over the cells of each value of ``pool_by`` (e.g. each ability, over games), the point
  estimate is within ``pooled_margin`` (3) points of chance.

It serves any measure whose examples are multiple-choice items (CoordinationQA) or yes/no
questions (a probe is two candidates, ``("yes", "no")``). Known-groups answerers (reference
answerers whose ability is known by construction) are scored with :func:`score_picks` and the
same tables.

API::

    ex = Example(group={"game": "Hanabi", "ability": "ToM"}, candidates=("A", "B", "C"),
                 answer=1, question="...", context="...", unit="scenario-17")
    reports = adversary_reports(examples, leave_out="game", fresh=fresh_examples)
    print(format_reports(reports, pool_by="ability"))
    decision = gate(reports, pool_by="ability")       # decision.passed, decision.failures

scikit-learn is imported lazily (the ``qa`` and ``test`` extras): ``import tom_envs`` does not
need it. Everything is seeded; the same examples give the same report.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tom_envs.records import wilson

#: The adversaries :func:`adversary_reports` trains, in report order.
ADVERSARIES = ("boosting", "logistic")
#: The gate's margins (points of accuracy), issue #32.
CELL_MARGIN = 5.0
POOLED_MARGIN = 3.0


@dataclass(frozen=True)
class Example:
    """One question: candidates, the correct one, and what the adversary may read.

    Attributes:
        group: the cell this example belongs to, as named fields (``{"game": ..., "ability":
            ...}``, or ``{"team": ..., "probe": ...}``); the cell is the tuple of the values in
            field order. ``leave_out`` and ``pool_by`` name one of these fields.
        candidates: the candidate texts in the order shown (options; ``("yes", "no")``).
        answer: index of the correct candidate.
        question: the question text.
        context: the context text shown with the question.
        chance: expected accuracy of a uniform guess; ``None`` means ``1 / len(candidates)``.
            A measure scored against another reference (a per-type majority) passes it here.
        unit: examples with the same unit stay in the same fold (items of one scenario, the
            twins of a minimal pair, the probes of one step); ``""`` means the example alone.
        features: numeric example-level surface features (a probe's position in its list, how
            many siblings it has...), read by the adversary together with each candidate's.
        candidate_features: one mapping of numeric surface features per candidate (optional).
        id: an identifier, for reports.
    """

    group: Mapping[str, str]
    candidates: tuple[str, ...]
    answer: int
    question: str = ""
    context: str = ""
    chance: float | None = None
    unit: str = ""
    features: Mapping[str, float] = field(default_factory=dict)
    candidate_features: tuple[Mapping[str, float], ...] = ()
    id: str = ""

    def __post_init__(self) -> None:
        if len(self.candidates) < 2:
            raise ValueError(f"example {self.id!r}: needs at least 2 candidates")
        if not 0 <= self.answer < len(self.candidates):
            raise ValueError(
                f"example {self.id!r}: answer {self.answer} is not a candidate index "
                f"(0..{len(self.candidates) - 1})"
            )
        if self.candidate_features and len(self.candidate_features) != len(self.candidates):
            raise ValueError(f"example {self.id!r}: one candidate_features mapping per candidate")
        if self.chance is not None and not 0.0 < self.chance < 1.0:
            raise ValueError(f"example {self.id!r}: chance must lie in (0, 1), got {self.chance}")

    @property
    def cell(self) -> tuple[str, ...]:
        """The cell key: the group's values in field order."""
        return tuple(str(v) for v in self.group.values())

    @property
    def base_rate(self) -> float:
        """The chance this example is scored against."""
        return 1.0 / len(self.candidates) if self.chance is None else float(self.chance)


@dataclass(frozen=True)
class Cell:
    """Accuracy of one answerer on one cell (or a pool of cells), in percent."""

    key: tuple[str, ...]
    n: int
    correct: float
    chance: float
    low: float
    high: float

    @property
    def accuracy(self) -> float:
        """Accuracy in percent (``nan`` when empty)."""
        return 100.0 * self.correct / self.n if self.n else float("nan")

    @property
    def excess(self) -> float:
        """Points above chance."""
        return self.accuracy - self.chance


@dataclass
class Report:
    """Held-out (or reference) accuracy of one answerer under one evaluation scheme.

    Attributes:
        answerer: the adversary's (or reference answerer's) name.
        scheme: how it was evaluated (``"5-fold"``, ``"leave-one-game-out"``, ``"fresh"``...).
        fields: the group fields, in order (cells are tuples of their values).
        examples: the examples scored.
        correct: per example, whether the pick was right (aligned with ``examples``): 1 or 0,
            or the share of right picks over ``repeats`` fits.
        repeats: fits averaged per example.
    """

    answerer: str
    scheme: str
    fields: tuple[str, ...]
    examples: list[Example]
    correct: list[float]
    repeats: int = 1

    def cells(self) -> list[Cell]:
        """One :class:`Cell` per group, sorted by key."""
        by: dict[tuple[str, ...], list[int]] = defaultdict(list)
        for k, ex in enumerate(self.examples):
            by[ex.cell].append(k)
        return [self._cell(key, idx) for key, idx in sorted(by.items())]

    def pooled(self, pool_by: str | None) -> list[Cell]:
        """Cells pooled by one field (``"ability"``: one row per ability over every game), or
        one row over everything when ``pool_by`` is ``None``."""
        by: dict[tuple[str, ...], list[int]] = defaultdict(list)
        for k, ex in enumerate(self.examples):
            key = ("all",) if pool_by is None else (str(ex.group[pool_by]),)
            by[key].append(k)
        return [self._cell(key, idx) for key, idx in sorted(by.items())]

    def _cell(self, key: tuple[str, ...], idx: Sequence[int]) -> Cell:
        n = len(idx)
        correct = float(sum(self.correct[k] for k in idx))
        chance = 100.0 * float(np.mean([self.examples[k].base_rate for k in idx]))
        low, high = wilson(correct, n)
        return Cell(key, n, correct, chance, 100.0 * low, 100.0 * high)


# ------------------------------------------------------------------ surface features
_WORD = re.compile(r"[a-z]+|\d+(?:\.\d+)?")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_HASH_DIM = 64
#: Inner folds of the training set from which the training rows' priors are counted.
INNER_FOLDS = 5
#: Share of the training units each repeated fit of a leave-out or fresh report sees.
SUBSAMPLE = 0.8


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _shape(text: str) -> str:
    """The candidate's form: digits -> 0, letters -> a, runs collapsed (``"Room 12"`` -> ``"a 0"``)."""
    s = re.sub(r"[A-Za-z]+", "a", re.sub(r"\d+", "0", text.strip()))
    return re.sub(r"\s+", " ", s)


def _template(question: str) -> str:
    """The question with its numbers masked (``"...cooker c0..."`` -> ``"...cooker c#..."``)."""
    return re.sub(r"\d+", "#", question.strip().lower())


def _bucket(token: str, dim: int = _HASH_DIM) -> int:
    return int.from_bytes(hashlib.blake2b(token.encode(), digest_size=4).digest(), "little") % dim


def _number(text: str) -> float:
    m = _NUMBER.search(text)
    return float(m.group()) if m else float("nan")


def _rank(values: Sequence[float]) -> list[float]:
    """Each value's rank among the item's values, scaled to [0, 1] (ties share the mean rank;
    ``nan`` stays ``nan``; 0.5 when all are equal)."""
    arr = np.asarray(values, float)
    out = np.full(len(arr), np.nan)
    ok = ~np.isnan(arr)
    if ok.sum() == 0:
        return list(out)
    vals = arr[ok]
    order = vals.argsort(kind="stable")
    ranks = np.empty(len(vals))
    ranks[order] = np.arange(len(vals), dtype=float)
    for v in np.unique(vals):  # ties share their mean rank
        ranks[vals == v] = ranks[vals == v].mean()
    span = max(len(vals) - 1, 1)
    out[ok] = ranks / span if len(vals) > 1 else 0.5
    return list(out)


@dataclass
class _Priors:
    """Counts fitted on the training examples only: how often a candidate text (overall and per
    question template) and a candidate form were shown, and how often they were correct."""

    text: dict[str, list[float]] = field(default_factory=lambda: defaultdict(lambda: [0.0, 0.0]))
    qtext: dict[str, list[float]] = field(default_factory=lambda: defaultdict(lambda: [0.0, 0.0]))
    shape: dict[str, list[float]] = field(default_factory=lambda: defaultdict(lambda: [0.0, 0.0]))
    pos: dict[str, list[float]] = field(default_factory=lambda: defaultdict(lambda: [0.0, 0.0]))

    def keys(self, ex: Example, i: int) -> list[tuple[dict[str, list[float]], str]]:
        """The (table, key) pairs candidate ``i`` of ``ex`` counts under."""
        c = ex.candidates[i].strip().lower()
        return [
            (self.text, c),
            (self.qtext, _template(ex.question) + "|" + c),
            (self.shape, _template(ex.question) + "|" + _shape(ex.candidates[i])),
            (self.pos, f"{_template(ex.question)}|{len(ex.candidates)}|{i}"),
        ]

    def add(self, ex: Example) -> None:
        """Count the example's candidates."""
        for i in range(len(ex.candidates)):
            hit = float(i == ex.answer)
            for table, key in self.keys(ex, i):
                table[key][0] += hit
                table[key][1] += 1.0

    def rates(self, ex: Example, i: int, minus: _Priors | None = None) -> list[float]:
        """Smoothed correct-rates of the candidate's text, template+text, form and position,
        each minus the item's chance (0 when never seen), and how often each was seen. For a
        training example, ``minus`` holds the counts of its own inner fold, subtracted first:
        its prior comes from the other folds (a leave-self-out prior would leak its label)."""
        base = 1.0 / len(ex.candidates)
        out = []
        sub = minus.keys(ex, i) if minus is not None else None
        for t, (table, key) in enumerate(self.keys(ex, i)):
            hit, seen = table.get(key, (0.0, 0.0))
            if sub is not None:
                h2, s2 = sub[t][0].get(key, (0.0, 0.0))
                hit, seen = hit - h2, seen - s2
            out.append((hit + 2.0 * base) / (seen + 2.0) - base)
            out.append(math.log1p(max(seen, 0.0)))
        return out


def _static_rows(ex: Example, extra_keys: Sequence[str], cand_keys: Sequence[str]) -> np.ndarray:
    """The fixed surface features of one example, one row per candidate (the fitted priors are
    added per fit, :meth:`_Priors.rates`)."""
    n = len(ex.candidates)
    cands = [c.strip() for c in ex.candidates]
    qwords = set(_words(ex.question))
    cwords = set(_words(ex.context))
    ctx_low = ex.context.lower()
    lengths = [float(len(c)) for c in cands]
    nwords = [float(len(_words(c))) for c in cands]
    numbers = [_number(c) for c in cands]
    overlap_q, overlap_c, mentions = [], [], []
    for c in cands:
        w = set(_words(c))
        overlap_q.append(len(w & qwords) / len(w) if w else 0.0)
        overlap_c.append(len(w & cwords) / len(w) if w else 0.0)
        pat = r"(?<![a-z0-9])" + re.escape(c.lower()) + r"(?![a-z0-9])"
        mentions.append(math.log1p(len(re.findall(pat, ctx_low))) if c else 0.0)
    shapes = [_shape(c) for c in cands]
    # the canonical (sorted) order: where each candidate would stand if the list were sorted
    canon = sorted(
        range(n),
        key=lambda i: (np.isnan(numbers[i]), 0.0 if np.isnan(numbers[i]) else numbers[i],
                       cands[i].lower()),
    )  # fmt: skip
    canon_pos = [0] * n
    for r, i in enumerate(canon):
        canon_pos[i] = r
    in_order = [1.0 if (i == 0 or canon_pos[i - 1] < canon_pos[i]) and
                (i == n - 1 or canon_pos[i] < canon_pos[i + 1]) else 0.0 for i in range(n)]  # fmt: skip
    sets = [set(_words(c)) for c in cands]
    rank_len, rank_num = _rank(lengths), _rank(numbers)
    rank_oc, rank_men = _rank(overlap_c), _rank(mentions)
    ex_extra = [float(ex.features.get(k, 0.0)) for k in extra_keys]
    has_num = not all(np.isnan(numbers))
    rows = []
    for i in range(n):
        others = [j for j in range(n) if j != i]
        jacc = [len(sets[i] & sets[j]) / max(len(sets[i] | sets[j]), 1) for j in others]
        same_shape = sum(shapes[j] == shapes[i] for j in others) / max(len(others), 1)
        displacement = canon_pos[i] - i
        tokens = np.zeros(_HASH_DIM)
        for w in _words(cands[i]):
            tokens[_bucket("c:" + w)] += 1.0
        cf = ex.candidate_features[i] if ex.candidate_features else {}
        row = [
            float(n), float(i), i / max(n - 1, 1), float(i == 0), float(i == n - 1),
            lengths[i], nwords[i], rank_len[i], float(lengths[i] == max(lengths)),
            float(lengths[i] == min(lengths)), lengths[i] - float(np.mean(lengths)),
            numbers[i], rank_num[i],
            float(has_num and numbers[i] == np.nanmax(numbers)),
            float(has_num and numbers[i] == np.nanmin(numbers)),
            float(displacement), float(abs(displacement)), in_order[i],
            float(sum(in_order) == n - 1 and not in_order[i]),
            overlap_q[i], overlap_c[i], rank_oc[i], mentions[i], rank_men[i],
            float(np.mean(jacc)) if jacc else 0.0, same_shape,
            *ex_extra,
            *[float(cf.get(k, 0.0)) for k in cand_keys],
            *tokens,
        ]  # fmt: skip
        rows.append(row)
    return np.asarray(rows, float)


def _token_dict(ex: Example, i: int) -> dict[str, float]:
    """Sparse token features of candidate ``i`` for the logistic adversary: its words, its words
    crossed with the question template and with its position, its text with the template."""
    tpl = _template(ex.question)
    n = len(ex.candidates)
    c = ex.candidates[i]
    d: dict[str, float] = {}
    for w in _words(c) or ["<empty>"]:
        d["w=" + w] = 1.0
        d[f"t={tpl}|w={w}"] = 1.0
        d[f"p={i}/{n}|w={w}"] = 1.0
    d[f"t={tpl}|p={i}/{n}"] = 1.0
    d[f"t={tpl}|c={c.strip().lower()}"] = 1.0
    return d


class _Data:
    """Every example's fixed features, computed once for all the fits of a report."""

    def __init__(self, examples: Sequence[Example]) -> None:
        self.examples = list(examples)
        extra = sorted({k for ex in self.examples for k in ex.features})
        cand = sorted({k for ex in self.examples for cf in ex.candidate_features for k in cf})
        self.static = [_static_rows(ex, extra, cand) for ex in self.examples]
        self._tokens: list[list[dict[str, float]]] | None = None

    def tokens(self, k: int) -> list[dict[str, float]]:
        """The sparse token dicts of example ``k`` (built on first use)."""
        if self._tokens is None:
            self._tokens = [
                [_token_dict(ex, i) for i in range(len(ex.candidates))] for ex in self.examples
            ]
        return self._tokens[k]

    def matrix(self, idx: Sequence[int], priors: _Priors,
               minus: Sequence[_Priors | None]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
        """Rows of examples ``idx``: ``(X, y, position in idx)``; ``minus[j]`` is subtracted
        from ``priors`` for ``idx[j]`` (its inner fold's counts, or ``None``)."""
        blocks, y, owner = [], [], []
        for j, k in enumerate(idx):
            ex = self.examples[k]
            pri = np.asarray([priors.rates(ex, i, minus[j]) for i in range(len(ex.candidates))])
            blocks.append(np.hstack([self.static[k], pri]))
            y.extend(float(i == ex.answer) for i in range(len(ex.candidates)))
            owner.extend([j] * len(ex.candidates))
        return np.vstack(blocks), np.asarray(y, float), np.asarray(owner, int)


# ------------------------------------------------------------------ adversaries
def _fit_predict(kind: str, data: _Data, train: Sequence[int], test: Sequence[int],
                 seed: int) -> list[bool]:  # fmt: skip
    """Fit adversary ``kind`` on examples ``train``; whether its pick on each of ``test`` is
    right."""
    from threadpoolctl import threadpool_limits

    # one thread: on a shared machine, OpenMP threads contending for cores are several times
    # slower than one (and the result does not depend on the thread count)
    with threadpool_limits(1):
        return _fit_predict_1(kind, data, train, test, seed)


def _fit_predict_1(kind: str, data: _Data, train: Sequence[int], test: Sequence[int],
                   seed: int) -> list[bool]:  # fmt: skip
    exs = data.examples
    priors = _Priors()
    inner = _folds([exs[k] for k in train], INNER_FOLDS, seed + 1)
    by_fold = [_Priors() for _ in range(INNER_FOLDS)]
    for k, f in zip(train, inner, strict=True):
        priors.add(exs[k])
        by_fold[f].add(exs[k])
    Xtr, ytr, _ = data.matrix(train, priors, [by_fold[f] for f in inner])
    Xte, _, own = data.matrix(test, priors, [None] * len(test))
    if kind == "boosting":
        from sklearn.ensemble import HistGradientBoostingClassifier

        model = HistGradientBoostingClassifier(
            max_iter=150, learning_rate=0.08, max_leaf_nodes=15, min_samples_leaf=10,
            l2_regularization=1.0, random_state=seed,
        )  # fmt: skip
        # a column that is all ``nan`` (no candidate is a number) has no bins: -1 stands for it
        model.fit(np.nan_to_num(Xtr, nan=-1.0), ytr)
        score = model.predict_proba(np.nan_to_num(Xte, nan=-1.0))[:, 1]
    elif kind == "logistic":
        from scipy import sparse
        from sklearn.feature_extraction import FeatureHasher
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import StandardScaler

        hasher = FeatureHasher(n_features=2**14, alternate_sign=False)
        dense_tr = np.nan_to_num(Xtr, nan=-1.0)
        dense_te = np.nan_to_num(Xte, nan=-1.0)
        scaler = StandardScaler().fit(dense_tr)
        tok_tr = hasher.transform([d for k in train for d in data.tokens(k)])
        tok_te = hasher.transform([d for k in test for d in data.tokens(k)])
        Atr = sparse.hstack([sparse.csr_matrix(scaler.transform(dense_tr)), tok_tr]).tocsr()
        Ate = sparse.hstack([sparse.csr_matrix(scaler.transform(dense_te)), tok_te]).tocsr()
        model = LogisticRegression(C=0.5, max_iter=2000, random_state=seed)
        model.fit(Atr, ytr)
        score = model.predict_proba(Ate)[:, 1]
    else:
        raise ValueError(f"unknown adversary {kind!r}; known: {ADVERSARIES}")
    best: dict[int, tuple[float, int]] = {}
    start: dict[int, int] = {}
    for r, j in enumerate(own):
        start.setdefault(int(j), r)
        i = r - start[int(j)]
        if int(j) not in best or score[r] > best[int(j)][0] + 1e-12:
            best[int(j)] = (float(score[r]), i)
    return [best[j][1] == exs[k].answer for j, k in enumerate(test)]


def _folds(examples: Sequence[Example], k: int, seed: int | Sequence[int]) -> list[int]:
    """A fold per example; examples of one unit share a fold; units are dealt at random."""
    units: dict[str, list[int]] = defaultdict(list)
    for i, ex in enumerate(examples):
        units[ex.unit or f"#{i}"].append(i)
    names = sorted(units)
    order = np.random.default_rng(seed).permutation(len(names))
    fold = [0] * len(examples)
    for r, u in enumerate(order):
        for i in units[names[int(u)]]:
            fold[i] = r % k
    return fold


def _subsample(examples: Sequence[Example], idx: Sequence[int], share: float,
               seed: Sequence[int]) -> list[int]:  # fmt: skip
    """A random ``share`` of the units among ``idx`` (whole units), in index order."""
    units: dict[str, list[int]] = defaultdict(list)
    for k in idx:
        units[examples[k].unit or f"#{k}"].append(k)
    names = sorted(units)
    keep = np.random.default_rng(seed).permutation(len(names))[: max(1, round(share * len(names)))]
    return sorted(k for u in keep for k in units[names[int(u)]])


def _fields(examples: Sequence[Example]) -> tuple[str, ...]:
    fields = tuple(examples[0].group) if examples else ()
    for ex in examples:
        if tuple(ex.group) != fields:
            raise ValueError(f"example {ex.id!r}: group fields {tuple(ex.group)} != {fields}")
    return fields


def kfold(examples: Sequence[Example], adversary: str = "boosting", k: int = 5, seed: int = 0,
          repeats: int = 1, data: _Data | None = None) -> Report:  # fmt: skip
    """Held-out accuracy over ``k`` folds (units kept whole), averaged over ``repeats`` fold
    assignments."""
    data = data or _Data(examples)
    exs = data.examples
    correct = np.zeros(len(exs))
    for r in range(repeats):
        fold = _folds(exs, k, [seed, r])
        for f in range(k):
            test = [i for i in range(len(exs)) if fold[i] == f]
            train = [i for i in range(len(exs)) if fold[i] != f]
            if test and train:
                correct[test] += _fit_predict(adversary, data, train, test, seed + r)
    return Report(adversary, f"{k}-fold", _fields(exs), exs, list(correct / repeats), repeats)


def _fit_on(adversary: str, data: _Data, train: Sequence[int], test: Sequence[int], seed: int,
            repeats: int) -> np.ndarray:  # fmt: skip
    """Mean correctness on ``test`` of ``repeats`` fits, each on a random 80% of the training
    units (all of them when ``repeats`` is 1)."""
    out = np.zeros(len(test))
    for r in range(repeats):
        part = (
            list(train) if repeats == 1 else _subsample(data.examples, train, SUBSAMPLE, [seed, r])
        )
        out += _fit_predict(adversary, data, part, test, seed + r)
    return out / repeats


def leave_one_out(examples: Sequence[Example], by: str, adversary: str = "boosting",
                  seed: int = 0, repeats: int = 1, data: _Data | None = None) -> Report:  # fmt: skip
    """Held-out accuracy leaving one value of field ``by`` out at a time (one game)."""
    data = data or _Data(examples)
    exs = data.examples
    fields = _fields(exs)
    if by not in fields:
        raise ValueError(f"leave_one_out: by={by!r} is not a group field; fields: {fields}")
    correct = np.zeros(len(exs))
    for value in sorted({str(ex.group[by]) for ex in exs}):
        test = [i for i, ex in enumerate(exs) if str(ex.group[by]) == value]
        train = [i for i, ex in enumerate(exs) if str(ex.group[by]) != value]
        if train:
            correct[test] = _fit_on(adversary, data, train, test, seed, repeats)
    return Report(adversary, f"leave-one-{by}-out", fields, exs, list(correct), repeats)


def transfer(train: Sequence[Example], test: Sequence[Example], adversary: str = "boosting",
             seed: int = 0, repeats: int = 1, scheme: str = "fresh",
             data: _Data | None = None) -> Report:  # fmt: skip
    """Fitted on ``train`` (the shipped set), scored on ``test`` (a fresh set from a new seed).
    ``data``, when given, must hold ``[*train, *test]``."""
    data = data or _Data([*train, *test])
    n = len(train)
    idx_test = list(range(n, len(data.examples)))
    correct = _fit_on(adversary, data, list(range(n)), idx_test, seed, repeats)
    exs = data.examples[n:]
    return Report(adversary, scheme, _fields(exs), exs, list(correct), repeats)


def adversary_reports(
    examples: Sequence[Example],
    leave_out: str | None = None,
    fresh: Sequence[Example] | None = None,
    adversaries: Sequence[str] = ADVERSARIES,
    k: int = 5,
    seed: int = 0,
    repeats: int = 1,
) -> list[Report]:
    """Every adversary under every scheme: ``k``-fold, leave-one-``leave_out``-out (when given),
    and fitted on ``examples`` / scored on ``fresh`` (when given). With ``repeats`` > 1 each
    held-out accuracy is the mean over that many fits (fold assignments, or random 80% shares
    of the training units): the adversary's expected accuracy, whose noise shrinks with the
    repeats while a real leak stays."""
    examples = list(examples)
    fresh = list(fresh or [])
    data = _Data([*examples, *fresh])
    own = _Data.__new__(_Data)  # the shipped examples only, sharing the computed features
    own.examples, own.static, own._tokens = examples, data.static[: len(examples)], None
    out = []
    for adv in adversaries:
        out.append(kfold(examples, adv, k, seed, repeats, own))
        if leave_out is not None:
            out.append(leave_one_out(examples, leave_out, adv, seed, repeats, own))
        if fresh:
            out.append(transfer(examples, fresh, adv, seed, repeats, data=data))
    return out


def score_picks(examples: Sequence[Example], picks: Sequence[int | None], answerer: str,
                scheme: str = "reference") -> Report:  # fmt: skip
    """A report for a reference answerer's picks (``None``: no pick, scored wrong)."""
    examples = list(examples)
    if len(picks) != len(examples):
        raise ValueError(f"score_picks: {len(picks)} picks for {len(examples)} examples")
    right = [float(p is not None and p == ex.answer) for p, ex in zip(picks, examples, strict=True)]
    return Report(answerer, scheme, _fields(examples), examples, right)


# ------------------------------------------------------------------ the gate
@dataclass(frozen=True)
class GateDecision:
    """The gate's verdict: ``passed`` and one line per failed check."""

    passed: bool
    failures: tuple[str, ...]
    checks: int


def cell_failure(rep: Any, c: Any, value: str, chance: str, cell_margin: float) -> str:
    """The gate's line for cell ``c`` of ``rep`` whose 95% interval lies wholly at or above
    chance + ``cell_margin``: ``value`` and ``chance`` as the measure writes them."""
    return (
        f"{rep.answerer} {rep.scheme} {'/'.join(c.key)}: {value} [{c.low:.1f}, {c.high:.1f}] "
        f"beats chance {chance} by more than {cell_margin:g} points (n={c.n})"
    )


def gate(reports: Sequence[Report], pool_by: str | None = None, cell_margin: float = CELL_MARGIN,
         pooled_margin: float = POOLED_MARGIN) -> GateDecision:  # fmt: skip
    """Issue #32's rule on every report: no cell whose 95% interval lies wholly above
    ``chance + cell_margin`` (its lower end at or above it), and every pooled row (per value of
    ``pool_by``) within ``pooled_margin`` points of chance, above or below."""
    failures = []
    checks = 0
    for rep in reports:
        for c in rep.cells():
            checks += 1
            if c.low >= c.chance + cell_margin:
                failures.append(cell_failure(rep, c, f"{c.accuracy:.1f}%", f"{c.chance:.1f}%",
                                             cell_margin))  # fmt: skip
        for c in rep.pooled(pool_by):
            checks += 1
            if abs(c.excess) > pooled_margin:
                failures.append(
                    f"{rep.answerer} {rep.scheme} pooled {'/'.join(c.key)}: {c.accuracy:.1f}% vs "
                    f"chance {c.chance:.1f}% ({c.excess:+.1f} points, bound {pooled_margin:g}; "
                    f"n={c.n})"
                )
    return GateDecision(not failures, tuple(failures), checks)


# ------------------------------------------------------------------ tables
def format_reports(reports: Sequence[Report], pool_by: str | None = None,
                   cells: bool = True) -> str:  # fmt: skip
    """Markdown: one row per answerer, scheme and cell (when ``cells``), then the pooled rows,
    each with accuracy, its 95% interval and chance (percent)."""
    if not reports:
        return ""
    fields = reports[0].fields
    head = (
        "| answerer | scheme | "
        + " | ".join(fields)
        + " | n | accuracy % | 95% CI | chance % | excess |"
    )
    lines = [head, "|" + "---|" * (len(fields) + 7)]

    def row(rep: Report, key: Sequence[str], c: Cell) -> str:
        scheme = rep.scheme if rep.repeats == 1 else f"{rep.scheme} (mean of {rep.repeats})"
        return (f"| {rep.answerer} | {scheme} | " + " | ".join(key) +
                f" | {c.n} | {c.accuracy:.1f} | [{c.low:.1f}, {c.high:.1f}] | {c.chance:.1f} |"
                f" {c.excess:+.1f} |")  # fmt: skip

    for rep in reports:
        if cells:
            for c in rep.cells():
                lines.append(row(rep, c.key, c))
        for c in rep.pooled(pool_by):
            key = [("all" if f != pool_by else c.key[0]) for f in fields]
            lines.append(row(rep, [f"**{k}**" for k in key], c))
    return "\n".join(lines)


def summary(reports: Sequence[Report], pool_by: str | None = None) -> list[dict[str, Any]]:
    """Pooled rows as dicts (answerer, scheme, pool key, n, accuracy, CI, chance), for JSON."""
    out = []
    for rep in reports:
        for c in rep.pooled(pool_by):
            out.append({"answerer": rep.answerer, "scheme": rep.scheme, "pool": c.key[0],
                        "n": c.n, "accuracy": c.accuracy, "low": c.low, "high": c.high,
                        "chance": c.chance})  # fmt: skip
    return out


__all__ = [
    "ADVERSARIES",
    "CELL_MARGIN",
    "POOLED_MARGIN",
    "Cell",
    "Example",
    "GateDecision",
    "Report",
    "adversary_reports",
    "format_reports",
    "gate",
    "kfold",
    "leave_one_out",
    "score_picks",
    "summary",
    "transfer",
    "wilson",
]
