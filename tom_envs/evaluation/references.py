"""The reference a functional-ToM regret is measured against: never the evaluated agents.

Regret is ``U_ref - U_agent`` on the same seeds. The reference of a (game, partner) pair depends
only on the game, the partner and a declared list of policies, never on which agents a run
happens to evaluate (adding an agent that beats everything changes no reference):

1. **exact** (or **bracket**): :func:`tom_envs.references.reference_for` where it gives one
   (matrix games, CollabCapture, CollabEscape, BombDefusal);
2. **lower bound**: else the best of a *declared* candidate set (e.g. the game's zoo members
   played as focal), chosen on *selection seeds* disjoint from the evaluation seeds and then played
   on the evaluation seeds (:func:`candidate_reference`). Some focal policy reaches it, so it is at
   most the best response's value: regret against it is a lower bound and may be negative;
   A cached best response *trained* against this partner for exactly this configuration
   (:func:`trained_spec`, :mod:`tom_envs.best_responses`) joins the candidates: the better of
   it and the best declared candidate on the selection seeds is the reference, and the source
   says which won; when the trained one wins the kind is ``"trained lower bound"`` (still a
   lower bound, never exact);
3. else none (``n/a``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: The kinds a page prints: an exact value, both ends, a value some policy reaches (a declared
#: candidate's, or a trained best response's).
KINDS = ("exact", "bracket", "lower bound", "trained lower bound")


@dataclass(frozen=True)
class PairReference:
    """The reference of one (game, partner, focal seats) on the evaluation seeds.

    Attributes:
        kind: ``"exact"``, ``"bracket"`` (``values`` the lower end, ``upper`` the upper end) or
            ``"lower bound"``.
        values: per evaluation seed, the reference's ``U`` (the lower end of a bracket).
        source: how it was obtained, in words (which solver, or which candidate on which seeds).
        upper: per seed, the upper end (brackets only).
    """

    kind: str
    values: Mapping[int, float]
    source: str
    upper: Mapping[int, float] | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")

    @property
    def mean(self) -> float:
        return float(np.mean(list(self.values.values())))


def solver_reference(
    game: str, partner: str, seat: int, seeds: Sequence[int], env_kwargs: Mapping[str, Any]
) -> PairReference | None:
    """The solver's reference (exact or bracket) where :func:`reference_for` has one, else None."""
    try:
        from tom_envs.references import NoReference, reference_for
    except ImportError:  # the solvers are not installed in this checkout
        return None
    try:
        ref = reference_for(game, partner, seat, tuple(seeds), trained=False, **dict(env_kwargs))
    except (NoReference, KeyError, ValueError, TypeError):
        return None  # no reference for this partner (a learned member, a population, ...)
    kind = {"exact": "exact", "bracket": "bracket", "lower_bound": "lower bound"}[ref.kind]
    upper = dict(zip(ref.seeds, ref.upper, strict=True)) if ref.upper is not None else None
    return PairReference(kind, dict(zip(ref.seeds, ref.values, strict=True)), ref.source, upper)


def trained_spec(
    game: str, partner: str, seat: int, env_kwargs: Mapping[str, Any]
) -> str | None:
    """The agent spec (``br/<partner>``) of the cached trained best response for exactly this
    configuration, or ``None``."""
    from tom_envs.best_responses import find

    br = find(game, partner, seat, env_kwargs)
    return None if br is None else br.agent_spec


def candidate_reference(
    play: Callable[[str, Sequence[int]], Mapping[int, float]],
    candidates: Sequence[str],
    selection_seeds: Sequence[int],
    seeds: Sequence[int],
    trained: str | None = None,
) -> PairReference:
    """The best declared candidate as focal: chosen by its mean ``U`` on ``selection_seeds``
    (ties: the first declared), then played on the evaluation ``seeds``: a lower bound.

    ``play(candidate, seeds) -> {seed: U}`` plays the candidate as focal against the partner.
    ``trained``: the agent spec of a trained best response to the partner (:func:`trained_spec`),
    compared with the best candidate on the same selection seeds (ties: the candidate); alone
    (no candidates) it is played on ``seeds`` directly.
    """
    if trained is not None:
        return _with_trained(play, candidates, selection_seeds, seeds, trained)
    if not candidates:
        raise ValueError("candidates: declare at least one focal policy")
    overlap = sorted(set(selection_seeds) & set(seeds))
    if overlap:
        raise ValueError(f"selection_seeds must be disjoint from the evaluation seeds; both hold "
                         f"{overlap[:10]}")  # fmt: skip
    if not selection_seeds:
        raise ValueError("selection_seeds: give at least one seed")
    scores = {c: float(np.mean(list(play(c, selection_seeds).values()))) for c in candidates}
    best = max(candidates, key=lambda c: scores[c])  # max keeps the first of equal scores
    values = dict(play(best, seeds))
    lo, hi = min(selection_seeds), max(selection_seeds)
    return PairReference("lower bound", values,
                         f"best of {len(candidates)} declared candidates on selection seeds "
                         f"{lo}..{hi}: {best}")  # fmt: skip


def _with_trained(
    play: Callable[[str, Sequence[int]], Mapping[int, float]],
    candidates: Sequence[str],
    selection_seeds: Sequence[int],
    seeds: Sequence[int],
    trained: str,
) -> PairReference:
    """max(trained best response, best declared candidate), chosen on the selection seeds."""
    if not candidates:
        return PairReference("trained lower bound", dict(play(trained, seeds)),
                             f"trained best response {trained} (no declared candidates)")  # fmt: skip
    best = candidate_reference(play, candidates, selection_seeds, seeds)
    name = best.source.rsplit(": ", 1)[-1]
    on_sel = {c: float(np.mean(list(play(c, selection_seeds).values()))) for c in (name, trained)}
    lo, hi = min(selection_seeds), max(selection_seeds)
    versus = (f"on selection seeds {lo}..{hi}: trained {on_sel[trained]:.4g}, best declared "
              f"candidate {name} {on_sel[name]:.4g}")  # fmt: skip
    if on_sel[trained] > on_sel[name]:
        return PairReference("trained lower bound", dict(play(trained, seeds)),
                             f"trained best response {trained} won {versus}")  # fmt: skip
    return PairReference("lower bound", dict(best.values),
                         f"declared candidate {name} won over the trained best response "
                         f"{trained} {versus}")  # fmt: skip


__all__ = ["KINDS", "PairReference", "candidate_reference", "solver_reference", "trained_spec"]
