"""The functional objective ``U`` of a game: what a best response to a partner maximises.

Paper 004 (Def. 2.2) defines functional ToM by the return an agent earns against a partner,
relative to the best response to that partner. Two games saturate their return for any
competent team (bomb defusal's points, Capture's capture), so the paper's second criterion
(rounds, turns) enters their objective lexicographically. Each game declares its ``U`` where it
keeps its metrics (``games/<game>/metrics.py``) and exports it from ``env.py`` as the optional
hook ``functional_objective(**config) -> FunctionalObjective``
(:data:`tom_envs.core.contract.OPTIONAL_HOOKS`):

==============  ============================================  =========================
game            U (per episode, for the focal seats)          T (per-step divisor)
==============  ============================================  =========================
matrix (3)      the focal seat's return (payoffs)             ``horizon`` (rounds)
CollabCapture   ``captured - turns / (max_turns + 1)``        ``max_turns``
CollabEscape    ``escaped`` (0/1)                             ``max_turns``
BombDefusal     ``team_score - 0.3 x rounds``                 ``max_rounds``
Hanabi          team score (0 when bombed out)                ``max_steps``
Guandan         the team's deal reward (match: summed)        ``max_steps``
CoBlock         ``success - rounds / (max_rounds + 1)``       ``max_rounds``
Overcooked      score (points delivered)                      ``horizon``
==============  ============================================  =========================

Games whose ``U`` reads a metric (``team_score``, ``captured``...) need the episode's metrics,
which the episode driver computes when it records steps; an episode without them raises a
``KeyError`` that names the metric (never a silent 0).

Core: imports only the standard library.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: ``value(episode, focal_seats) -> float``: an episode (:class:`tom_envs.records.Episode` or
#: anything with ``returns`` and ``metrics``) and the focal seats (indices).
ValueFn = Callable[[Any, Sequence[int]], float]


@dataclass(frozen=True)
class FunctionalObjective:
    """A game's functional objective ``U``.

    Attributes:
        name: the formula in words (``"team score - 0.3 x rounds"``).
        unit: what one unit of ``U`` is (``"points"``, ``"captures"``).
        value: ``U`` of one episode for the focal seats.
        horizon: ``T`` of "regret per step" (fixed per configured game, so agents that finish
            early are not favoured); ``None`` when the game has no step limit (no per-step regret).
        higher_is_better: the direction of ``U`` (regret is ``U_ref - U`` when True).
        components: the raw metrics printed beside ``U`` (``("team_score", "rounds")``).
    """

    name: str
    unit: str
    value: ValueFn
    horizon: int | None
    higher_is_better: bool = True
    components: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not callable(self.value):
            raise TypeError(f"FunctionalObjective {self.name!r}: value must be callable")
        if self.horizon is not None and (
            not isinstance(self.horizon, int) or isinstance(self.horizon, bool) or self.horizon < 1
        ):
            raise ValueError(
                f"FunctionalObjective {self.name!r}: horizon must be a whole number >= 1 or "
                f"None, got {self.horizon!r}"
            )

    def __call__(self, episode: Any, focal: Sequence[int]) -> float:
        """``U`` of ``episode`` for the ``focal`` seats (a finite float)."""
        seats = _seats(focal)
        out = float(self.value(episode, seats))
        if not math.isfinite(out):
            raise ValueError(f"{self.name}: value {out!r} of seed {getattr(episode, 'seed', '?')}")
        return out

    def regret(self, reference: float, value: float) -> float:
        """``reference - value`` (``value - reference`` for an objective to minimise)."""
        return reference - value if self.higher_is_better else value - reference

    def per_step(self, amount: float) -> float:
        """``amount / T`` (``nan`` without a horizon)."""
        return float("nan") if self.horizon is None else amount / self.horizon


def _seats(focal: Sequence[int] | int) -> tuple[int, ...]:
    if isinstance(focal, int):
        focal = (focal,)
    seats = tuple(int(s) for s in focal)
    if not seats:
        raise ValueError("focal seats: give at least one seat index")
    return seats


def metric(episode: Any, name: str) -> float:
    """The episode metric ``name``; ``KeyError`` naming it when the episode has none."""
    metrics: Mapping[str, Any] = getattr(episode, "metrics", None) or {}
    if name not in metrics:
        raise KeyError(
            f"episode (seed {getattr(episode, 'seed', '?')}) has no metric {name!r}: the "
            "functional objective needs the game's metrics (play with record_steps=True)"
        )
    return float(metrics[name])


def focal_return(episode: Any, focal: Sequence[int]) -> float:
    """The mean return of the focal seats (teammates share a team return, so the mean is it)."""
    returns: Mapping[str, float] = episode.returns
    values = []
    for seat in focal:
        key = f"player_{seat}"
        if key not in returns:
            raise KeyError(f"focal seat {seat}: the episode has returns for {sorted(returns)}")
        values.append(float(returns[key]))
    return sum(values) / len(values)


def return_objective(name: str, unit: str, horizon: int | None) -> FunctionalObjective:
    """``U`` = the focal seats' return (:func:`focal_return`)."""
    return FunctionalObjective(name, unit, focal_return, horizon)


def metric_objective(
    name: str,
    unit: str,
    horizon: int | None,
    primary: str,
    secondary: str | None = None,
    weight: float = 0.0,
) -> FunctionalObjective:
    """``U = metrics[primary] - weight x metrics[secondary]`` (team metrics: the focal seats are
    on the one team). ``weight`` makes the secondary criterion lexicographic when one unit of
    ``primary`` outweighs ``weight x`` its whole range."""

    def value(episode: Any, focal: Sequence[int]) -> float:
        out = metric(episode, primary)
        if secondary is not None:
            out -= weight * metric(episode, secondary)
        return out

    parts = (primary,) if secondary is None else (primary, secondary)
    return FunctionalObjective(name, unit, value, horizon, components=parts)


__all__ = [
    "FunctionalObjective",
    "ValueFn",
    "focal_return",
    "metric",
    "metric_objective",
    "return_objective",
]
