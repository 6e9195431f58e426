"""Functional ToM as regret: per episode, per step, per window after a partner's switch, the time
to recover, and the known-groups order check.

Regret is always against a **reference** value on the same seeds (paired design): ``ΔF(seed) =
U_ref(seed) - U_agent(seed)`` with ``U`` the game's functional objective
(:mod:`tom_envs.core.functional`), per step ``ΔF / T`` with the game's fixed ``T``. Intervals are
percentile bootstraps over seeds (:func:`tom_envs.records.bootstrap_ci`), seeded by the caller
(one seed per table cell), so a table regenerates to the same digits. Where the reference is a
lower bound (a trained best response), the regret is a lower bound too, and can be negative:
this module never replaces a reference by a better agent.

**Adaptation** (a switching partner, :mod:`tom_envs.partners.switching`): each episode gives a
per-decision loss series aligned on its own switch point ``t_s`` (the reference's reward minus the
agent's, or an exact per-decision loss ``V - Q``). Window ``j`` sums the losses of decisions
``[t_s + jW, t_s + (j+1)W)`` (``j = -1`` is the window before the switch). The **time to
recover** ``τ`` is ``W · min{j >= 0 : mean(w_j..w_last) <= mean(ε_j..ε_last)}`` with the margin
``ε_j = margin · m_j`` where ``m_j`` is the window regret of the *fixed* agent that keeps playing
the reference of A and never adapts (default ``margin = 0.1``): the first window from which the
agent stays, on average, within 10% of the non-adapting loss. When no window qualifies, ``τ`` is
*censored* (``None``, printed as "> the windows observed").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tom_envs.records import bootstrap_ci

Interval = tuple[float, float, float]


def _paired(reference: Mapping[int, float], agent: Mapping[int, float]) -> list[int]:
    seeds = sorted(set(reference) & set(agent))
    missing = sorted(set(reference) ^ set(agent))
    if missing:
        raise ValueError(
            f"regret is paired by seed: seeds {missing[:10]} are in only one of reference and "
            "agent (play both on the same seeds)"
        )
    if not seeds:
        raise ValueError("regret: no seeds")
    return seeds


def episode_regret(
    reference: Mapping[int, float],
    agent: Mapping[int, float],
    seed: int,
    *,
    horizon: int | None = None,
    higher_is_better: bool = True,
    resamples: int = 2000,
) -> dict[str, Any]:
    """Paired regret per episode (and per step with ``horizon``) with 95% bootstrap intervals.

    ``reference`` and ``agent`` map episode seed -> ``U`` (the same seeds). Returns
    ``{"n", "per_episode": (mean, low, high), "per_step": (mean, low, high) | None,
    "values": {seed: regret}}``.
    """
    seeds = _paired(reference, agent)
    sign = 1.0 if higher_is_better else -1.0
    values = {s: sign * (float(reference[s]) - float(agent[s])) for s in seeds}
    arr = [values[s] for s in seeds]
    per_episode = bootstrap_ci(arr, seed, resamples=resamples)
    per_step = None
    if horizon is not None:
        if horizon < 1:
            raise ValueError(f"horizon must be >= 1, got {horizon!r}")
        per_step = tuple(x / horizon for x in per_episode)
    return {"n": len(seeds), "per_episode": per_episode, "per_step": per_step, "values": values}


def window_sums(losses: Sequence[float], at: int, width: int, before: int = 1) -> dict[int, float]:
    """Window regrets of one episode's per-decision losses aligned on its switch point ``at``:
    ``{j: sum(losses[at + j*width : at + (j+1)*width])}`` for ``j = -before .. last`` (only
    whole windows inside the episode)."""
    if width < 1:
        raise ValueError(f"window width must be >= 1, got {width!r}")
    out = {}
    j = -before
    while True:
        start, stop = at + j * width, at + (j + 1) * width
        if stop > len(losses):
            break
        if start >= 0:
            out[j] = float(sum(losses[start:stop]))
        j += 1
    return out


def switch_windows(
    episode: Any, seat: str, losses: Sequence[float], width: int, before: int = 1
) -> dict[int, float]:
    """:func:`window_sums` aligned on the switch the trajectory recorded for the switching
    partner at ``seat`` (``losses``: one per decision of that partner's episode, e.g. the
    reference's reward minus the agent's). ``ValueError`` when the episode has no such
    within-episode switch."""
    info = (getattr(episode, "switch", None) or {}).get(seat)
    if not info or "at_decision" not in info:
        raise ValueError(
            f"episode (seed {getattr(episode, 'seed', '?')}) records no within-episode switch "
            f"for {seat}: play the partner as switch:a=A:b=B:at=LO-HI:key=K"
        )
    return window_sums(losses, int(info["at_decision"]), width, before)


def mean_windows(per_episode: Sequence[Mapping[int, float]]) -> dict[int, float]:
    """The mean window regret over episodes, for the windows every episode has."""
    if not per_episode:
        return {}
    common = set(per_episode[0])
    for w in per_episode[1:]:
        common &= set(w)
    return {j: float(np.mean([w[j] for w in per_episode])) for j in sorted(common)}


def time_to_recover(
    agent_windows: Mapping[int, float],
    fixed_windows: Mapping[int, float],
    width: int,
    margin: float = 0.1,
) -> int | None:
    """``τ`` in decisions (see the module docstring); ``None`` when censored (never within the
    margin over the windows observed)."""
    if not margin >= 0.0:
        raise ValueError(f"margin must be >= 0, got {margin!r}")
    after = sorted(j for j in agent_windows if j >= 0 and j in fixed_windows)
    for k, j in enumerate(after):
        rest = after[k:]
        mine = float(np.mean([agent_windows[i] for i in rest]))
        eps = margin * float(np.mean([fixed_windows[i] for i in rest]))
        if mine <= eps:
            return j * width
    return None


@dataclass(frozen=True)
class Adaptation:
    """The adaptation curve of one agent against one switching pair.

    Attributes:
        windows: mean window regret per window index (``-1``: before the switch).
        window_ci: each window's bootstrap interval over episodes.
        tau: the time to recover on the mean curve (decisions; ``None``: censored).
        tau_ci: median and 95% interval of ``τ`` over bootstrap resamples (censored resamples
            count as ``inf``), or ``None`` for fewer than two episodes.
        censored_share: the share of resamples in which ``τ`` is censored.
        width: the window width W; margin: the stated margin.
    """

    windows: dict[int, float]
    window_ci: dict[int, tuple[float, float]]
    tau: int | None
    tau_ci: Interval | None
    censored_share: float
    width: int
    margin: float


def adaptation(
    agent: Sequence[Mapping[int, float]],
    fixed: Sequence[Mapping[int, float]],
    width: int,
    seed: int,
    *,
    margin: float = 0.1,
    resamples: int = 1000,
) -> Adaptation:
    """The adaptation curve from per-episode window regrets (:func:`window_sums`) of the agent
    and of the fixed (non-adapting) agent on the **same seeds, in the same order**; intervals
    resample episodes (pairs) with ``default_rng(seed)``."""
    if len(agent) != len(fixed) or not agent:
        raise ValueError(
            f"adaptation is paired by episode: got {len(agent)} agent and {len(fixed)} fixed "
            "episodes (give both for the same seeds)"
        )
    mean_a, mean_f = mean_windows(agent), mean_windows(fixed)
    tau = time_to_recover(mean_a, mean_f, width, margin)
    window_ci = {}
    for j in mean_a:
        _, lo, hi = bootstrap_ci([w[j] for w in agent], seed + 1 + j + 1000, resamples=resamples)
        window_ci[j] = (lo, hi)
    n = len(agent)
    tau_ci = None
    censored = 0.0
    if n >= 2:
        rng = np.random.default_rng(seed)
        taus = []
        for _ in range(resamples):
            idx = rng.integers(0, n, size=n)
            t = time_to_recover(mean_windows([agent[i] for i in idx]),
                                mean_windows([fixed[i] for i in idx]), width, margin)  # fmt: skip
            taus.append(math.inf if t is None else float(t))
        arr = np.asarray(taus)
        censored = float(np.mean(np.isinf(arr)))
        lo, med, hi = np.quantile(arr, [0.025, 0.5, 0.975], method="inverted_cdf")
        tau_ci = (float(med), float(lo), float(hi))
    return Adaptation(mean_a, window_ci, tau, tau_ci, censored, width, margin)


def known_groups(
    oracle: Mapping[int, float],
    adaptive: Mapping[int, float],
    fixed: Mapping[int, float],
    seed: int,
    *,
    resamples: int = 2000,
) -> dict[str, Any]:
    """The known-groups order check: regret ``oracle < adaptive < fixed`` (seed -> regret, the
    same seeds). Each gap (``adaptive - oracle``, ``fixed - adaptive``) gets a paired percentile
    bootstrap interval over seeds; the order ``holds`` when both intervals lie above 0.
    """
    seeds = _paired(oracle, adaptive)
    _paired(adaptive, fixed)

    def gap(hi: Mapping[int, float], lo: Mapping[int, float], salt: int) -> Interval:
        return bootstrap_ci([float(hi[s]) - float(lo[s]) for s in seeds], seed + salt,
                            resamples=resamples)  # fmt: skip

    first, second = gap(adaptive, oracle, 0), gap(fixed, adaptive, 1)
    holds = first[1] > 0.0 and second[1] > 0.0
    return {"n": len(seeds), "adaptive_minus_oracle": first, "fixed_minus_adaptive": second,
            "holds": bool(holds)}  # fmt: skip


def decision_losses(
    episode: Any, seat: str, reward_of: Callable[[Mapping[str, Any]], float] | None = None
) -> list[float]:
    """The per-decision rewards of ``seat`` in ``episode`` (one per decision of that seat, the
    reward of the joint step its decision completed or the next recorded one), a building block
    for window losses: ``reference rewards - agent rewards`` decision by decision."""
    reward_of = reward_of or (lambda step: float((step.get("rewards") or {}).get(seat, 0.0)))
    out: list[float] = []
    pending = False
    for step in episode.steps:
        if step["agent"] == seat:
            if pending:
                out.append(0.0)
            pending = True
        if pending and step.get("rewards") is not None:
            out.append(reward_of(step))
            pending = False
    if pending:
        out.append(0.0)
    return out


def round_rewards(episode: Any, partner: str, focal: Sequence[str]) -> list[float]:
    """The team's reward per decision of the ``partner`` seat: entry ``d`` sums the rewards of the
    ``focal`` seats over the steps from the partner's decision ``d`` up to (not including) its
    decision ``d + 1`` (steps before its first decision count in entry 0). One entry per
    partner decision, so windows of these rounds align on a switch recorded in partner decisions
    (simultaneous games: one entry per joint step; turn-based games: a round of the partner's
    move and the moves after it)."""
    out: list[float] = []
    lead = 0.0  # the rewards before the partner's first decision
    for step in episode.steps:
        if step["agent"] == partner:
            out.append(lead if not out else 0.0)
        rewards = step.get("rewards") or {}
        r = sum(float(rewards.get(seat, 0.0)) for seat in focal)
        if out:
            out[-1] += r
        else:
            lead += r
    return out


__all__ = ["Adaptation", "adaptation", "decision_losses", "episode_regret", "known_groups",
           "mean_windows", "round_rewards", "switch_windows", "time_to_recover", "window_sums"]  # fmt: skip
