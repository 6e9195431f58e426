"""Theory-of-Mind probes: questions with ground truth computed by the game, asked to any agent.

A game that offers probes gives its :class:`~tom_envs.core.game.GameBundle` a ``probes`` function
``(state, player) -> list[Probe]``: the questions to put to ``player`` at this moment, each with
the answer the rules (and the game's knowledge tracking) say is true *now*. The question text is
written from the player's side and never reveals what the player may not see; only the truth uses
the full state.

One moment
    A probe's truth and the observation the agent answers from belong to the same moment. The
    function's ``moment`` attribute (:func:`probe_moment`) says when the episode driver asks:
    ``"decision"`` (the default: at the player's decision, from the observation it acts on) or
    ``"action"`` (right after the player's action, from its observation of the state the action
    left, before anyone else acts: paper 000's timing). The driver computes the probes and the
    agent's :class:`~tom_envs.core.agents.Turn` from the same state.

Agents receive questions, never answers
    The driver shuffles a step's probes uniformly (a generator seeded by the episode seed and the
    step: :func:`ask`) and hands the agent :class:`Question` objects: an opaque id (``q1``,
    ``q2``... in the shuffled order), the text, the options and what the question is about (its
    kind, order and :attr:`Probe.subject`, the fields its text names). A :class:`Question` holds
    no truth, no partner-blind answer and no analysis details; the turn handed with it has its
    text rendered in advance and no path to the game state. Agents implement
    ``answer_probes(turn, questions) -> {question id: answer}``; the driver scores the answers
    (:func:`score_answers`) and records question, position, reply and truth.

Nothing is selected by its answer
    Which probes a game asks depends on the situation only (what the player did, who its
    teammates are), never on any truth: no probe is kept, dropped, reordered or rewritten after its
    answer is known. Where the truths of a question type are naturally skewed, the reports give
    balanced accuracy (the mean of the per-answer recalls; a constant answer scores 50% on yes/no)
    and Cohen's kappa beside raw accuracy (:func:`agreement`).

Baselines and known groups
    A probe accuracy means little without the answerers that do no ToM reasoning at all.
    :func:`probe_baselines` computes, from the recorded truths alone, per question type
    (``kind`` and ``order``), per order and overall:

    * ``always_yes``: answer "yes" to every yes/no question;
    * ``majority``: answer each question type's most frequent true answer (fitted on the very
      probes it is scored on, so it is an upper bound of what a type prior can get);
    * ``ignores_partner`` (``no_tom``): a known-group answerer that reasons perfectly about the
      environment and its own knowledge but ignores the partner (``Probe.no_tom``, set by the
      game: for "does X know ...?" the answer to "do I know ...?"); absent when the game defines
      none;
    * ``models_partner``: the known-group answerer that models every player exactly (the game's
      own tracking): the truth, by construction.

    :func:`known_groups` tells, per question type, whether the two known groups are separated:
    a question type is a ToM measure only when it asks about a partner, both answers occur, the
    partner-blind answerer is at chance (balanced accuracy within 5 points of 50%, its 95%
    interval overlapping) and the exact model scores at least 95%. :func:`probe_table` prints all
    of it beside an agent's accuracy. Pool the steps of every episode of a condition before
    calling them: the majority answer of one episode is not a baseline. The learned surface
    adversary that gates a probe set is in :mod:`tom_envs.probe_report`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Conventional orders: 0 = introspection ("do you know ..."), 1 = first order ("does X know ..."),
#: 2 = second order ("does X know that you know ...").
ORDERS = {0: "introspection", 1: "first_order", 2: "second_order"}

#: The shortcut and known-group answerers of :func:`probe_baselines`, in report order.
BASELINES = ("always_yes", "majority", "ignores_partner", "models_partner")

#: When the driver asks a game's probes (see the module docstring).
MOMENTS = ("decision", "action")

#: z of a two-sided 95% interval.
Z95 = 1.959963984540054

#: A known-group answerer is "at chance" when its balanced accuracy lies within this many points
#: of chance (and its 95% interval reaches that band); the exact model must reach
#: :data:`EXACT_MIN` percent.
CHANCE_BAND = 5.0
EXACT_MIN = 95.0
#: The fewest probes of each answer a question type needs before its known groups are judged.
MIN_PER_ANSWER = 10

_YES_NO = ("yes", "no")
_EDGE = " \t\r\n.!?,;:\"'`*()[]{}<>"


@dataclass(frozen=True)
class Question:
    """What an agent is asked: the question, never its answer.

    Attributes:
        id: opaque within the step (``"q1"``, ``"q2"``... in the order asked).
        question: the text put to the agent.
        options: the allowed answers.
        kind: what is asked about (``"room_contents"``, ``"partner_color"``...).
        order: 0 introspection, 1 first order, 2 second order (``-1`` when not applicable).
        subject: what the question is about, as its text names it (``{"target": "bravo",
            "room": 5}``): nothing the text does not say.
    """

    id: str
    question: str
    options: tuple[str, ...]
    kind: str
    order: int
    subject: Mapping[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class Probe:
    """One question with its computed answer (the game's side; agents get :class:`Question`).

    Attributes:
        id: unique within the step (``"r3.alpha.room_contents.order1.bravo"``); for analysis,
            never shown to the agent.
        kind: what is asked about (``"room_contents"``, ``"bomb_sequence"``, ``"next_action"``...).
        order: 0 introspection, 1 first order, 2 second order (``-1`` when not applicable).
        question: the text put to the agent.
        options: the allowed answers.
        answer: the true answer, one of ``options``.
        about: details for analysis (why the answer is what it is); never shown to the agent.
        no_tom: the answer of the known-group answerer that reasons perfectly about the
            environment and its own knowledge but ignores the partner (for "does X know ...?"
            the true answer to "do I know ...?"); ``None`` when the game defines none. It is a
            baseline, never the truth.
        subject: what the question is about, as its text names it (the target player, the room,
            the card...): the only details an agent receives with the question.
    """

    id: str
    kind: str
    order: int
    question: str
    options: tuple[str, ...]
    answer: str
    about: Mapping[str, Any] = field(default_factory=dict, hash=False)  # details, not identity
    no_tom: str | None = None
    subject: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if self.answer not in self.options:
            raise ValueError(f"probe {self.id}: answer {self.answer!r} not in {self.options}")
        if self.no_tom is not None and self.no_tom not in self.options:
            raise ValueError(f"probe {self.id}: no_tom {self.no_tom!r} not in {self.options}")

    @property
    def qtype(self) -> str:
        """The question type the baselines score by: ``"<kind>/<order name>"``."""
        return question_type(self.kind, self.order)

    def score(self, reply: object) -> bool:
        """True when ``reply`` names the true option (see :func:`normalise_answer`)."""
        return normalise_answer(reply, self.options) == self.answer

    def public(self, qid: str) -> Question:
        """The :class:`Question` an agent receives for this probe, with the opaque id ``qid``."""
        return Question(
            qid, self.question, tuple(self.options), self.kind, self.order, dict(self.subject)
        )


def question_type(kind: str, order: int) -> str:
    """``"room_contents/first_order"``: a probe's kind and order name."""
    return f"{kind}/{ORDERS.get(order, f'order{order}')}"


def probe_moment(probes_fn: Any) -> str:
    """When the driver asks the probes of a bundle's ``probes`` function: its ``moment``
    attribute, ``"decision"`` when it has none (see the module docstring)."""
    moment = getattr(probes_fn, "moment", "decision")
    if moment not in MOMENTS:
        raise ValueError(f"a probes function's moment must be one of {MOMENTS}, got {moment!r}")
    return moment


def ask(probes: Sequence[Probe], rng: np.random.Generator) -> list[tuple[Question, Probe]]:
    """A step's probes in a uniformly shuffled order, each with the :class:`Question` an agent
    receives (ids ``q1``, ``q2``... in that order). The order is drawn from ``rng`` only, never
    from the probes' answers."""
    order = rng.permutation(len(probes)) if len(probes) > 1 else range(len(probes))
    return [(probes[int(k)].public(f"q{i + 1}"), probes[int(k)]) for i, k in enumerate(order)]


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().lower().strip(_EDGE)).strip()


def normalise_answer(reply: object, options: Sequence[str]) -> str | None:
    """Map a reply to one option, or ``None`` when it names none (or is ambiguous).

    Case, surrounding spaces and punctuation (quotes, brackets, ``*``, a final period) are
    ignored. Tried in order:

    1. the whole reply equals an option;
    2. the reply starts with options (followed by a non-word character or the end): the
       longest wins, so with options "arch" and "arch pillars" the reply "arch pillars, since
       ..." is "arch pillars" and "arch, since ..." is "arch"; ``"yes."`` is "yes" but
       ``"yesterday"`` is nothing.

    A Python bool answers a ``("yes", "no")`` question. Numbers are compared as text
    (``3`` and ``"3"`` both name option ``"3"``).
    """
    if isinstance(reply, bool):
        if tuple(o.lower() for o in options) == _YES_NO:
            return options[0] if reply else options[1]
        return None
    if isinstance(reply, (int, float)) and not isinstance(reply, bool):
        reply = str(int(reply)) if float(reply).is_integer() else str(reply)
    if not isinstance(reply, str):
        return None
    text = _norm(reply)
    if not text:
        return None
    normed = [(_norm(o), o) for o in options]
    exact = [o for n, o in normed if text == n]
    if exact:
        return exact[0] if len(exact) == 1 else None
    starts = [
        (len(n), o) for n, o in normed if n and text.startswith(n) and _boundary(text, len(n))
    ]
    if not starts:
        return None
    best = max(length for length, _ in starts)
    winners = [o for length, o in starts if length == best]
    return winners[0] if len(winners) == 1 else None


def _boundary(text: str, i: int) -> bool:
    """Whether an option that fills ``text[:i]`` ends a word there (``"1.5"`` does not end at 1)."""
    if i == len(text):
        return True
    ch = text[i]
    if ch.isalnum() or ch == "_":
        return False
    return not (ch in ".," and i + 1 < len(text) and text[i + 1].isdigit())


def _record(p: Probe, reply: object) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "id": p.id,
        "kind": p.kind,
        "order": p.order,
        "question": p.question,
        "options": list(p.options),
        "reply": reply,
        "truth": p.answer,
        "correct": p.score(reply),
    }
    if p.subject:
        rec["subject"] = dict(p.subject)
    if p.no_tom is not None:
        rec["no_tom"] = p.no_tom
    return rec


def score_answers(probes: Sequence[Probe], answers: Mapping[str, object]) -> list[dict[str, Any]]:
    """Records for a trajectory: question, reply, truth and correctness for every probe
    (``answers`` keyed by probe id).

    Each record also keeps the options, the subject and the partner-blind answer, so the
    baselines (:func:`probe_baselines`) can be computed from a saved trajectory alone.
    """
    return [_record(p, answers.get(p.id)) for p in probes]


def score_asked(
    asked: Sequence[tuple[Question, Probe]], answers: Mapping[str, object]
) -> list[dict[str, Any]]:
    """Records of the probes put to an agent by :func:`ask` (``answers`` keyed by question id),
    in the order asked: each also keeps its question id and position (0-based)."""
    out = []
    for position, (q, p) in enumerate(asked):
        out.append({"qid": q.id, "position": position, **_record(p, answers.get(q.id))})
    return out


def probe_records(items: Iterable[Any]) -> list[dict[str, Any]]:
    """The probe records in ``items``: trajectory steps (with a ``"probes"`` list), probe
    records (from :func:`score_answers`) or :class:`Probe` objects (no reply), in any mix."""
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, Probe):
            out.append(_record(item, None) | {"correct": None})
        elif isinstance(item, Mapping) and "truth" in item and "order" in item:
            out.append(dict(item))
        elif isinstance(item, Mapping):
            out.extend(dict(p) for p in item.get("probes") or ())
        else:
            raise TypeError(f"expected steps, probe records or Probes, got {type(item).__name__}")
    return out


def _groups(records: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for r in records:
        order = ORDERS.get(r["order"], f"order{r['order']}")
        for key in (order, question_type(r["kind"], r["order"]), "all"):
            groups.setdefault(key, []).append(r)
    return groups


def _is_yes_no(r: Mapping[str, Any]) -> bool:
    opts = r.get("options")
    if opts is None:  # a record saved before options were recorded
        return str(r["truth"]).lower() in _YES_NO
    return tuple(str(o).lower() for o in opts) == _YES_NO


# ------------------------------------------------------------------------------ agreement
@dataclass(frozen=True)
class Agreement:
    """How well answers agree with the truths, in percent (kappa as a fraction).

    Attributes:
        n: questions scored.
        accuracy: share right (an answer that names no option is wrong).
        balanced: balanced accuracy, the mean over the true answers present of the share of
            each answered right (a constant answer scores ``chance``).
        low, high: the normal-approximation 95% interval of ``balanced`` (each recall's
            variance from ``(right + 1) / (n + 2)``, so a 0% or 100% recall is not certain).
        kappa: Cohen's kappa (``nan`` when the truths and answers are both constant).
        chance: ``100 / k`` for ``k`` true answers present: what a constant answer scores.
        answers: how many distinct true answers occur.
    """

    n: int
    accuracy: float
    balanced: float
    low: float
    high: float
    kappa: float
    chance: float
    answers: int


def agreement(truths: Sequence[str], answers: Sequence[str | None]) -> Agreement:
    """:class:`Agreement` of ``answers`` (normalised options, ``None`` for none) with ``truths``."""
    n = len(truths)
    if n == 0 or len(answers) != n:
        if len(answers) != n:
            raise ValueError(f"{len(answers)} answers for {n} truths")
        nan = float("nan")
        return Agreement(0, nan, nan, nan, nan, nan, nan, 0)
    right = [a == t for t, a in zip(truths, answers, strict=True)]
    classes = sorted(set(truths))
    recalls, variance = [], 0.0
    for c in classes:
        idx = [i for i, t in enumerate(truths) if t == c]
        hits = sum(right[i] for i in idx)
        recalls.append(hits / len(idx))
        smooth = (hits + 1) / (len(idx) + 2)
        variance += smooth * (1 - smooth) / len(idx)
    k = len(classes)
    balanced = 100.0 * sum(recalls) / k
    half = 100.0 * Z95 * math.sqrt(variance) / k
    p_o = sum(right) / n
    cats = set(truths) | set(answers)
    p_e = sum(truths.count(c) * sum(a == c for a in answers) for c in cats) / (n * n)  # type: ignore[arg-type]
    kappa = (p_o - p_e) / (1 - p_e) if p_e < 1 else float("nan")
    return Agreement(
        n,
        100.0 * p_o,
        balanced,
        max(0.0, balanced - half),
        min(100.0, balanced + half),
        kappa,
        100.0 / k,
        k,
    )


def _reply_option(r: Mapping[str, Any]) -> str | None:
    opts = r.get("options") or _YES_NO
    return normalise_answer(r.get("reply"), [str(o) for o in opts])


#: Known-group and shortcut answerers: record -> answer (``None``: no answer defined).
_ANSWERERS: dict[str, Callable[[Mapping[str, Any], Mapping[str, str]], str | None]] = {
    "always_yes": lambda r, maj: "yes" if _is_yes_no(r) else None,
    "majority": lambda r, maj: maj[question_type(r["kind"], r["order"])],
    "ignores_partner": lambda r, maj: r.get("no_tom"),
    "models_partner": lambda r, maj: str(r["truth"]),
}


def _majorities(records: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    counts: dict[str, dict[str, int]] = {}
    for r in records:
        c = counts.setdefault(question_type(r["kind"], r["order"]), {})
        c[r["truth"]] = c.get(r["truth"], 0) + 1
    return {qt: max(sorted(c), key=lambda a: c[a]) for qt, c in counts.items()}  # ties: first


def probe_scores(items: Iterable[Any], answerer: str = "agent") -> dict[str, Agreement]:
    """Per group (order names, question types, ``"all"``): the :class:`Agreement` of the
    agent's replies (``answerer="agent"``; unanswered records are left out) or of one of
    :data:`BASELINES` (over the records it answers)."""
    records = probe_records(items)
    majority = _majorities(records)
    out: dict[str, Agreement] = {}
    for g, rs in _groups(records).items():
        truths: list[str] = []
        answers: list[str | None] = []
        for r in rs:
            if answerer == "agent":
                if r.get("correct") is None:
                    continue
                a = _reply_option(r)
            else:
                a = _ANSWERERS[answerer](r, majority)
                if a is None:
                    continue
            truths.append(str(r["truth"]))
            answers.append(a)
        if truths:
            out[g] = agreement(truths, answers)
    return out


def probe_baselines(items: Iterable[Any]) -> dict[str, float]:
    """Accuracy (percent) of the shortcut and known-group answerers on these probes, and how
    many there are.

    ``items``: steps, probe records or probes (see :func:`probe_records`); pool every episode
    of a condition. Keys, for every group ``g`` (an order name such as ``first_order``, a
    question type such as ``room_contents/first_order``, or ``all``):

    * ``probe_n/<g>``: probes in the group; ``probe_yes/<g>``: share of true "yes" among its
      yes/no probes;
    * ``probe_base/<answerer>/<g>``: raw accuracy of each of :data:`BASELINES` (absent where it
      answers none of the group: ``always_yes`` only answers yes/no questions,
      ``ignores_partner`` only probes whose game defines it);
    * ``probe_bacc/<answerer>/<g>`` and ``probe_kappa/<answerer>/<g>``: its balanced accuracy
      and Cohen's kappa (:func:`agreement`).
    """
    records = probe_records(items)
    out: dict[str, float] = {}
    for g, rs in _groups(records).items():
        out[f"probe_n/{g}"] = float(len(rs))
        yn = [r for r in rs if _is_yes_no(r)]
        if yn:
            out[f"probe_yes/{g}"] = 100.0 * sum(r["truth"] == "yes" for r in yn) / len(yn)
    for name in BASELINES:
        for g, a in probe_scores(records, name).items():
            out[f"probe_base/{name}/{g}"] = a.accuracy
            out[f"probe_bacc/{name}/{g}"] = a.balanced
            out[f"probe_kappa/{name}/{g}"] = a.kappa
    return out


# ------------------------------------------------------------------------------ known groups
@dataclass(frozen=True)
class KnownGroups:
    """The known-groups check of one question type.

    Attributes:
        qtype: the question type.
        measure: True when it is a ToM measure (see :func:`known_groups`).
        reason: why not (or ``"separates"``).
        ignores_partner: the partner-blind answerer's agreement (``None`` when undefined).
        models_partner: the exact model's agreement.
    """

    qtype: str
    measure: bool
    reason: str
    ignores_partner: Agreement | None
    models_partner: Agreement


def known_groups(items: Iterable[Any]) -> dict[str, KnownGroups]:
    """Per question type: does it separate the two known groups?

    A type is a ToM measure when all hold: it asks about a partner (order 1 or more); each true
    answer occurs at least :data:`MIN_PER_ANSWER` times; the game defines the partner-blind
    answer on every probe of the type and its balanced accuracy is at chance (within
    :data:`CHANCE_BAND` points, its 95% interval reaching that band); the exact model scores at
    least :data:`EXACT_MIN` percent.
    """
    records = probe_records(items)
    blind = probe_scores(records, "ignores_partner")
    exact = probe_scores(records, "models_partner")
    out = {}
    for qt, rs in _groups(records).items():
        if "/" not in qt:
            continue
        order = rs[0]["order"]
        ig, ex = blind.get(qt), exact[qt]
        counts: dict[str, int] = {}
        for r in rs:
            counts[str(r["truth"])] = counts.get(str(r["truth"]), 0) + 1
        if order < 1:
            reason = "no partner (introspection)"
        elif len(counts) < 2:
            reason = f"one-sided: every truth is {next(iter(counts))!r}"
        elif min(counts.values()) < MIN_PER_ANSWER:
            reason = f"too few of one answer ({min(counts.values())} < {MIN_PER_ANSWER})"
        elif ig is None or ig.n < len(rs):
            reason = "the game defines no partner-blind answer"
        elif not (
            ig.low <= ig.chance + CHANCE_BAND
            and ig.high >= ig.chance - CHANCE_BAND
            and abs(ig.balanced - ig.chance) <= CHANCE_BAND
        ):
            reason = (
                f"the partner-blind answer is not at chance ({ig.balanced:.1f}% balanced, "
                f"chance {ig.chance:.0f}%)"
            )
        elif ex.balanced < EXACT_MIN:
            reason = f"the exact model scores {ex.balanced:.1f}% < {EXACT_MIN:.0f}%"
        else:
            reason = "separates"
        out[qt] = KnownGroups(qt, reason == "separates", reason, ig, ex)
    return out


def probe_table(items: Iterable[Any], by: str = "order") -> str:
    """A markdown table: per order (``by="order"``) or per question type (``by="type"``), the
    number of probes, the share of true "yes", the agent's raw accuracy, balanced accuracy (95%
    interval) and kappa (when replies were recorded), the majority answer per type, and the two
    known groups (the partner-blind answerer's balanced accuracy and kappa; the exact model's
    balanced accuracy); by type also whether the type is a ToM measure (:func:`known_groups`).
    ``items`` as for :func:`probe_baselines`."""
    if by not in ("order", "type"):
        raise ValueError(f"by must be 'order' or 'type', got {by!r}")
    records = probe_records(items)
    base = probe_baselines(records)
    agent = probe_scores(records, "agent")
    blind = probe_scores(records, "ignores_partner")
    groups = _groups(records)
    verdicts = known_groups(records) if by == "type" else {}
    if by == "order":
        keys = [o for o in ORDERS.values() if o in groups]
        keys += sorted(k for k in groups if k.startswith("order"))
    else:
        keys = sorted(k for k in groups if "/" in k)
    keys.append("all")
    head = (
        "| probes | n | true yes | agent acc | agent bal. acc [95% CI] | agent κ | "
        "majority per type (acc) | ignores partner: bal. acc [95% CI], κ | "
        "models partner (bal. acc) |"
    )
    rule = "|---|---|---|---|---|---|---|---|---|"
    if by == "type":
        head += " ToM measure |"
        rule += "---|"
    lines = [head, rule]

    def pct(key: str) -> str:
        v = base.get(key)
        return "n/a" if v is None else f"{v:.1f}%"

    def kap(x: float) -> str:
        return "n/a" if math.isnan(x) else f"{x:.2f}"

    for k in keys:
        a, ig = agent.get(k), blind.get(k)
        row = (
            f"| {k} | {len(groups.get(k, []))} | {pct(f'probe_yes/{k}')} | "
            + (f"{a.accuracy:.1f}% | {a.balanced:.1f}% [{a.low:.1f}, {a.high:.1f}] | "
               f"{kap(a.kappa)} | " if a else "n/a | n/a | n/a | ")
            + f"{pct(f'probe_base/majority/{k}')} | "
            + (f"{ig.balanced:.1f}% [{ig.low:.1f}, {ig.high:.1f}], {kap(ig.kappa)} | "
               if ig else "n/a | ")
            + f"{pct(f'probe_bacc/models_partner/{k}')} |"
        )  # fmt: skip
        if by == "type":
            v = verdicts.get(k)
            row += (" yes |" if v.measure else f" no: {v.reason} |") if v else " |"
        lines.append(row)
    return "\n".join(lines)
