"""Theory-of-Mind probes: questions with ground truth computed by the game, asked to any agent.

A game that offers probes gives its :class:`~tom_envs.core.game.GameBundle` a ``probes`` function
``(state, player) -> list[Probe]``: the questions to put to ``player`` now, each with the answer
the rules (and the game's knowledge tracking) say is true. The runner asks every agent that
implements ``answer_probes(turn, probes) -> {probe id: answer}`` and records the answers beside
the truth (:func:`score_answers`), so literal ToM is scored in the same run as functional ToM. The
question text is written from the player's side and never reveals what the player may not see;
only the ground truth uses the full state.

Shortcut baselines
    A probe accuracy means little without the accuracy of answerers that do no ToM reasoning at
    all. :func:`probe_baselines` computes, from the recorded truths alone, per question type
    (``kind`` and ``order``), per order and overall:

    * ``always_yes``: answer "yes" to every yes/no question;
    * ``majority``: answer each question type's most frequent true answer (fitted on the very
      probes it is scored on, so it is an upper bound of what a type prior can get);
    * ``no_tom``: answer from the asker's own knowledge only (``Probe.no_tom``, set by the game:
      for "does X know ...?" the answer to "do I know ...?"); absent when the game sets none.

    :func:`probe_table` prints them beside an agent's accuracy. Pool the steps of every episode of
    a condition before calling them: the majority answer of one episode is not a baseline.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: Conventional orders: 0 = introspection ("do you know ..."), 1 = first order ("does X know ..."),
#: 2 = second order ("does X know that you know ...").
ORDERS = {0: "introspection", 1: "first_order", 2: "second_order"}

#: The shortcut answerers of :func:`probe_baselines`, in report order.
BASELINES = ("always_yes", "majority", "no_tom")

_YES_NO = ("yes", "no")
_EDGE = " \t\r\n.!?,;:\"'`*()[]{}<>"


@dataclass(frozen=True)
class Probe:
    """One question with its computed answer.

    Attributes:
        id: unique within the step (``"bomb3.contents.order1.bravo"``).
        kind: what is asked about (``"room_contents"``, ``"bomb_sequence"``, ``"next_action"``...).
        order: 0 introspection, 1 first order, 2 second order (``-1`` when not applicable).
        question: the text put to the agent.
        options: the allowed answers (``("yes", "no")`` for yes/no questions).
        answer: the true answer, one of ``options``.
        about: structured details for analysis (target player, fact, ...).
        no_tom: the answer of an answerer that uses only the asked player's own knowledge (for
            "does X know ...?" the true answer to "do I know ...?"); ``None`` when the game
            defines none. It is a baseline, never the truth.
    """

    id: str
    kind: str
    order: int
    question: str
    options: tuple[str, ...]
    answer: str
    about: Mapping[str, Any] = field(default_factory=dict, hash=False)  # details, not identity
    no_tom: str | None = None

    def __post_init__(self) -> None:
        if self.answer not in self.options:
            raise ValueError(f"probe {self.id}: answer {self.answer!r} not in {self.options}")
        if self.no_tom is not None and self.no_tom not in self.options:
            raise ValueError(f"probe {self.id}: no_tom {self.no_tom!r} not in {self.options}")

    @property
    def qtype(self) -> str:
        """The question type the baselines balance and score by: ``"<kind>/<order name>"``."""
        return question_type(self.kind, self.order)

    def score(self, reply: object) -> bool:
        """True when ``reply`` names the true option (see :func:`normalise_answer`)."""
        return normalise_answer(reply, self.options) == self.answer


def question_type(kind: str, order: int) -> str:
    """``"room_contents/first_order"``: a probe's kind and order name."""
    return f"{kind}/{ORDERS.get(order, f'order{order}')}"


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


def score_answers(probes: Sequence[Probe], answers: Mapping[str, object]) -> list[dict[str, Any]]:
    """Records for a trajectory: question, reply, truth and correctness for every probe.

    Each record also keeps the options and the no-ToM answer, so the shortcut baselines
    (:func:`probe_baselines`) can be computed from a saved trajectory alone.
    """
    out = []
    for p in probes:
        reply = answers.get(p.id)
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
        if p.no_tom is not None:
            rec["no_tom"] = p.no_tom
        out.append(rec)
    return out


def probe_records(items: Iterable[Any]) -> list[dict[str, Any]]:
    """The probe records in ``items``: trajectory steps (with a ``"probes"`` list), probe
    records (from :func:`score_answers`) or :class:`Probe` objects (no reply), in any mix."""
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, Probe):
            out.append(score_answers([item], {})[0] | {"reply": None, "correct": None})
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


def probe_baselines(items: Iterable[Any]) -> dict[str, float]:
    """Accuracy (percent) of the shortcut answerers on these probes, and how many there are.

    ``items``: steps, probe records or probes (see :func:`probe_records`); pool every episode
    of a condition. Keys, for every group ``g`` (an order name such as ``first_order``, a
    question type such as ``room_contents/first_order``, or ``all``):

    * ``probe_n/<g>``: probes in the group;
    * ``probe_base/always_yes/<g>``: share of true "yes" among its yes/no probes (absent when
      it has none);
    * ``probe_base/majority/<g>``: accuracy of answering each question type's most frequent
      true answer (for an order or ``all``: pooled over the types in it);
    * ``probe_base/no_tom/<g>``: accuracy of the asker's-own-knowledge answer, over the probes
      that carry one (absent when none does).
    """
    records = probe_records(items)
    majority: dict[str, str] = {}
    counts: dict[str, dict[str, int]] = {}
    for r in records:
        c = counts.setdefault(question_type(r["kind"], r["order"]), {})
        c[r["truth"]] = c.get(r["truth"], 0) + 1
    for qt, c in counts.items():
        majority[qt] = max(sorted(c), key=lambda a: c[a])  # ties: alphabetical first
    out: dict[str, float] = {}
    for g, rs in _groups(records).items():
        out[f"probe_n/{g}"] = float(len(rs))
        yn = [r for r in rs if _is_yes_no(r)]
        if yn:
            out[f"probe_base/always_yes/{g}"] = (
                100.0 * sum(r["truth"] == "yes" for r in yn) / len(yn)
            )
        hits = [r["truth"] == majority[question_type(r["kind"], r["order"])] for r in rs]
        out[f"probe_base/majority/{g}"] = 100.0 * sum(hits) / len(hits)
        nt = [r for r in rs if r.get("no_tom") is not None]
        if nt:
            out[f"probe_base/no_tom/{g}"] = (
                100.0 * sum(r["no_tom"] == r["truth"] for r in nt) / len(nt)
            )
    return out


def probe_table(items: Iterable[Any], by: str = "order") -> str:
    """A markdown table: per order (``by="order"``) or per question type (``by="type"``), the
    number of probes, the agent's accuracy (when replies were recorded) and every shortcut
    baseline beside it. ``items`` as for :func:`probe_baselines`."""
    if by not in ("order", "type"):
        raise ValueError(f"by must be 'order' or 'type', got {by!r}")
    records = probe_records(items)
    base = probe_baselines(records)
    groups = _groups(records)
    if by == "order":
        keys = [o for o in ORDERS.values() if o in groups]
        keys += sorted(k for k in groups if k.startswith("order"))
    else:
        keys = sorted(k for k in groups if "/" in k)
    keys.append("all")
    lines = [
        "| probes | n | agent | always yes | majority per type | no-ToM (own knowledge) |",
        "|---|---|---|---|---|---|",
    ]

    def pct(key: str) -> str:
        v = base.get(key)
        return "n/a" if v is None else f"{v:.1f}%"

    for k in keys:
        rs = groups.get(k, [])
        answered = [r for r in rs if r.get("correct") is not None]  # a missing reply is wrong
        agent = (
            f"{100.0 * sum(bool(r['correct']) for r in answered) / len(answered):.1f}%"
            if answered
            else "n/a"
        )
        lines.append(
            f"| {k} | {len(rs)} | {agent} | {pct(f'probe_base/always_yes/{k}')} | "
            f"{pct(f'probe_base/majority/{k}')} | {pct(f'probe_base/no_tom/{k}')} |"
        )
    return "\n".join(lines)
