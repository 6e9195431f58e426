"""The gate of CoordinationQA: learned no-reasoning adversaries and known-groups answerers.

``tom-envs qa verify`` runs this on the shipped suites and a freshly generated one:

* :func:`adversary_gate`: the adversaries of :mod:`tom_envs.validity` (gradient boosting and
  logistic regression on surface features of the question, the options, their order and the
  context), fitted on some items and scored on others (5 folds, one game left out at a time,
  and fitted on the shipped suites / scored on the fresh one), per (game, ability) cell and per
  ability pooled over games, with 95% intervals beside chance, and issue #32's gate;
* :func:`known_groups`: two reference answerers whose ability is known by construction, on the
  contrast sets: the partner-blind reasoner (:func:`~tom_envs.qa.generate.blind_pick`: it sees
  the situation every twin shares, never the partner's behaviour or view) must be at chance,
  exactly one twin right per set; the exact partner model (the engine with the partner that
  played, :func:`~tom_envs.qa.generate.recompute`) must be right on every item.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from tom_envs.qa.items import QAItem
from tom_envs.validity import (
    Example,
    GateDecision,
    Report,
    adversary_reports,
    format_reports,
    gate,
    score_picks,
)

#: Group fields of QA examples: the cell is (game, ability); the gate pools by ability.
FIELDS = ("game", "ability")


def unit_of(item: QAItem) -> str:
    """The fold unit: every item of one situation (its twins, its sibling items) together."""
    sc = item.scenario
    return f"{item.game}/{sc.seed}/{len(sc.actions)}/{sc.player}"


def example(item: QAItem) -> Example:
    """The adversary's view of an item: question, options in the order shown, context."""
    return Example(
        group={"game": item.game, "ability": item.type},
        candidates=item.options,
        answer=item.answer,
        question=item.question,
        context=item.context,
        unit=unit_of(item),
        id=item.id,
    )


def adversary_gate(
    items: Sequence[QAItem],
    fresh: Sequence[QAItem] | None = None,
    repeats: int = 5,
    seed: int = 0,
) -> tuple[list[Report], GateDecision]:
    """Every adversary under every scheme (5-fold, leave-one-game-out, fresh), and the gate."""
    reports = adversary_reports(
        [example(i) for i in items],
        leave_out="game",
        fresh=[example(i) for i in fresh or []],
        repeats=repeats,
        seed=seed,
    )
    return reports, gate(reports, pool_by="ability")


@dataclass(frozen=True)
class KnownGroups:
    """The two reference answerers on the partner contrast sets, and what went wrong."""

    reports: tuple[Report, ...]
    sets: int
    failures: tuple[str, ...]

    @property
    def passed(self) -> bool:
        """Both answerers came out where they must."""
        return not self.failures


def known_groups(items: Sequence[QAItem]) -> KnownGroups:
    """The partner-blind reasoner and the exact partner model on every item of a partner
    contrast set (the twins differ in the partner's behaviour or view)."""
    from tom_envs.qa.generate import blind_pick, recompute

    twins = [i for i in items if i.contrast and i.details.get("varies") == "partner"]
    exs = [example(i) for i in twins]
    blind = [blind_pick(i) for i in twins]
    exact = []
    for i in twins:
        fresh = recompute(i)
        exact.append(None if fresh is None else fresh.answer)
    failures = []
    by_set: dict[str, list[int]] = defaultdict(list)
    for k, it in enumerate(twins):
        by_set[it.contrast].append(k)
    for cid, idx in sorted(by_set.items()):
        right = sum(blind[k] == twins[k].answer for k in idx)
        if right != 1:
            failures.append(f"partner-blind reasoner right on {right} of {len(idx)} twins of {cid}")
        if len(idx) != len(twins[idx[0]].options):
            failures.append(f"{cid}: {len(idx)} twins for {len(twins[idx[0]].options)} options")
    for k, it in enumerate(twins):
        if exact[k] != it.answer:
            failures.append(f"exact partner model wrong on {it.id}")
    reports = (
        score_picks(exs, blind, "partner-blind reasoner"),
        score_picks(exs, exact, "exact partner model"),
    )
    return KnownGroups(reports, len(by_set), tuple(failures))


def format_known_groups(kg: KnownGroups) -> str:
    """The known-groups table (per game and ability, then per ability)."""
    return format_reports(list(kg.reports), pool_by="ability")


__all__ = [
    "FIELDS",
    "KnownGroups",
    "adversary_gate",
    "example",
    "format_known_groups",
    "known_groups",
    "unit_of",
]
