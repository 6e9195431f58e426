"""Reproduce the tabular rows of "Theory of Mind Benchmarks are Broken for LLMs" (paper 004).

For each of the 6 cells (RPS, IBS, IPD x single-action / tit-for-tat partner) it plays, for
``episodes`` seeded episodes of T = 100 rounds each:

* **the paper's learner**: plain RMax as the paper describes it (``PAPER_RMAX_SPEC``);
* **our tuned RMax** (``TUNED_RMAX_SPEC``), an improvement, reported as a separate row;
* uniform random (no predictions).

It computes ΔFunctional/T, ΔToM/T (the paper's one-step definition) and ToM % exactly
(:mod:`tom_envs.games.matrix.planner`) and writes them with 95% intervals beside the paper's
(Tables 1, 3, 4 and 10). Two checks per figure: **target met** means the paper's number lies inside
our 95% interval; **in paper's CI** means our mean lies inside the paper's interval. Both allow
half a unit of the paper's last printed digit (its numbers are rounded).

The page also prints, on the same trajectories, what shortcut predictors would score (the
adversaries of ΔToM/T), the look-ahead variant, and the Prisoner's Dilemma investigation: what the
candidate definitions of ΔToM/T give where the paper prints about 0.07 and the one-step definition 0.

Run: ``tom-envs reproduce paper004 --episodes 1000 --out docs/results/paper004_rmax.md``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from tom_envs.agents import make_agent
from tom_envs.evaluation.tables import TableCell
from tom_envs.games.matrix.bots import PartnerPolicy, make_partner
from tom_envs.games.matrix.planner import (
    OptimalResponse,
    one_step_responses,
    one_step_tom_regret,
)
from tom_envs.games.matrix.rules import MatrixConfig, payoff_matrix
from tom_envs.records import Episode, mean_ci95, summarize
from tom_envs.registration import game_spec
from tom_envs.runner import run

#: (game name, partner population) -> paper's (ΔFunctional/T, ±, ΔToM/T, ±, ToM %, ±).
#: RPS tit-for-tat ΔFunctional is 0.224 in Table 4 and 0.211 in Table 10; we compare with 0.224.
PAPER_TABULAR: dict[tuple[str, str], tuple[float, float, float, float, float, float]] = {
    ("RockPaperScissors", "single_action"): (0.083, 0.004, 0.039, 0.006, 97.4, 0.4),
    ("RockPaperScissors", "tit_for_tat"): (0.224, 0.007, 0.105, 0.000, 93.0, 0.0),
    ("BattleOfSexes", "single_action"): (0.211, 0.012, 0.088, 0.020, 98.7, 0.3),
    ("BattleOfSexes", "tit_for_tat"): (0.468, 0.031, 0.162, 0.005, 98.1, 0.1),
    ("PrisonersDilemma", "single_action"): (0.086, 0.009, 0.071, 0.015, 98.6, 0.3),
    ("PrisonersDilemma", "tit_for_tat"): (0.248, 0.005, 0.070, 0.000, 98.0, 0.0),
}

#: The paper's learner: plain RMax (m = 1, gamma = 0.95, random ties, per-state count predictor).
PAPER_RMAX_SPEC = (
    "rmax:known_threshold=1:planning=discount:gamma=0.95:tie_break=random:predictor=state"
    ":guess=lowest"
)
#: The same with a seeded random guess in unseen states (the paper does not say which it used).
PAPER_RMAX_RANDOM_GUESS_SPEC = PAPER_RMAX_SPEC.replace("guess=lowest", "guess=random")
#: Our tuned RMax (finite-horizon planning, known-first ties, back-off predictor): an improvement.
TUNED_RMAX_SPEC = "rmax:known_threshold=1:planning=horizon"

#: Row label -> agent spec, in the order the page prints them.
AGENTS: dict[str, str] = {
    "paper's learner (plain RMax)": PAPER_RMAX_SPEC,
    "plain RMax, random guess in unseen states": PAPER_RMAX_RANDOM_GUESS_SPEC,
    "tuned RMax (ours)": TUNED_RMAX_SPEC,
    "uniform random": "random",
}

#: Digits the paper prints for (ΔFunctional/T, ΔToM/T, ToM %).
PAPER_DIGITS = (3, 3, 1)

GAME_KEY = {"RockPaperScissors": "rps", "BattleOfSexes": "ibs", "PrisonersDilemma": "ipd"}


@dataclass
class CellResult:
    """Our figures for one (game, partner, agent) cell: (mean, 95% half-width) each."""

    game: str
    partner: str
    agent: str
    episodes: int
    functional_regret: tuple[float, float]
    tom_regret: tuple[float, float]
    tom_accuracy: tuple[float, float]
    optimal_return: tuple[float, float]
    seconds: float
    tom_regret_lookahead: tuple[float, float] = (math.nan, math.nan)
    #: ΔToM/T of other predictors and definitions on the same trajectories (name -> mean, ci).
    extra: dict[str, tuple[float, float]] = field(default_factory=dict)


# ------------------------------------------------------------------ trajectories
def focal_history(ep: Episode) -> tuple[list[tuple[int, int]], list[int | None]]:
    """Seat 0's ``(own, partner's)`` actions and its predictions."""
    mine = [s for s in ep.steps if s["agent"] == "player_0"]
    theirs = [s["action"] for s in ep.steps if s["agent"] == "player_1"]
    preds = [(s.get("prediction") or {}).get("partner_action") for s in mine]
    hist = [(int(s["action"]), int(b)) for s, b in zip(mine, theirs, strict=True)]
    return hist, [None if p is None else int(p) for p in preds]


class DiscountedResponse:
    """Discounted (infinite-horizon) optimal values against a finite-state partner.

    ``Q(s, a) = sum_b pi(b | s) (M[a, b] + gamma V(delta(s, b, a)))``, by value iteration over the
    partner states reachable from its initial state (at most ``max_states``).
    """

    def __init__(
        self,
        matrix: np.ndarray,
        partner: PartnerPolicy,
        gamma: float = 0.95,
        max_states: int = 10_000,
    ) -> None:
        if not 0.0 <= gamma < 1.0:
            raise ValueError(f"gamma must be in [0, 1), got {gamma}")
        self.m, self.partner, self.gamma = matrix, partner, gamma
        n = matrix.shape[0]
        self.states: list[Hashable] = [partner.initial_state()]
        self.index = {self.states[0]: 0}
        i = 0
        while i < len(self.states):
            s = self.states[i]
            i += 1
            for b, pb in enumerate(partner.action_probs(s)):
                for a in range(n if pb > 0 else 0):
                    s2 = partner.next_state(s, b, a)
                    if s2 not in self.index:
                        if len(self.states) >= max_states:
                            raise ValueError(f"partner {partner.name} has over {max_states} states")
                        self.index[s2] = len(self.states)
                        self.states.append(s2)
        self.v = np.zeros(len(self.states))
        for _ in range(100_000):
            new = np.array([self.q(s).max() for s in self.states])
            done = np.max(np.abs(new - self.v)) < 1e-10
            self.v = new
            if done:
                break

    def q(self, s: Hashable) -> np.ndarray:
        """``Q(s, a)`` for every action."""
        n = self.m.shape[0]
        out = np.zeros(n)
        for b, pb in enumerate(self.partner.action_probs(s)):
            if pb > 0:
                for a in range(n):
                    nxt = self.index[self.partner.next_state(s, b, a)]
                    out[a] += pb * (self.m[a, b] + self.gamma * self.v[nxt])
        return out

    def value(self, s: Hashable) -> float:
        """``V(s)``."""
        return float(self.v[self.index[s]])

    def q_given(self, s: Hashable, a: int, b: int) -> float:
        """Value of ``a`` if the partner plays ``b`` now and its true policy afterwards."""
        nxt = self.index[self.partner.next_state(s, b, a)]
        return float(self.m[a, b] + self.gamma * self.v[nxt])

    def stationary_return(self, horizon: int) -> float:
        """Expected T-round return of the greedy policy on ``Q`` (ties: lowest action)."""
        w: dict[Hashable, float] = {s: 0.0 for s in self.states}
        for _ in range(horizon):
            new = {}
            for s in self.states:
                a = int(np.argmax(self.q(s)))
                new[s] = sum(
                    pb * (self.m[a, b] + w[self.partner.next_state(s, b, a)])
                    for b, pb in enumerate(self.partner.action_probs(s))
                    if pb > 0
                )
            w = new
        return w[self.partner.initial_state()]


@lru_cache(maxsize=64)
def _solvers(config: MatrixConfig, partner: str) -> tuple[DiscountedResponse, OptimalResponse]:
    pol = make_partner(partner, config, 1)
    return DiscountedResponse(payoff_matrix(config, 0), pol), OptimalResponse(config, pol, 0)


def candidate_tom_regrets(
    config: MatrixConfig, partner: str, hist: Sequence[tuple[int, int]], preds: Sequence[int]
) -> dict[str, float]:
    """ΔToM/T of one episode under every candidate definition and shortcut predictor."""
    m = payoff_matrix(config, 0)
    disc, exact = _solvers(config, partner)
    pol = exact.partner
    n = config.num_actions
    t_total = len(hist)
    out = dict.fromkeys(CANDIDATES, 0.0)
    state = pol.initial_state()
    for t, ((a, b), p) in enumerate(zip(hist, preds, strict=True)):
        # shortcut predictors, one-step definition
        out["always wrong"] += one_step_tom_regret(m, (b + 1) % n, b)
        out["repeat partner's last"] += one_step_tom_regret(m, hist[t - 1][1] if t else 0, b)
        out["constant lowest action"] += one_step_tom_regret(m, 0, b)
        # candidate definitions for the agent's own predictions
        a_look = int(np.argmax([disc.q_given(state, x, p) for x in range(n)]))
        out["discounted look-ahead (gamma 0.95)"] += disc.value(state) - disc.q(state)[a_look]
        out["discounted look-ahead response, one-step score"] += float(m[:, b].max() - m[a_look, b])
        if t + 1 < t_total:
            nb = hist[t + 1][1]
            out["scored against the partner's next action"] += one_step_tom_regret(m, p, nb)
        a_star = int(np.argmax(disc.q(state)))
        out["scored against the discounted optimum's action"] += float(
            m[a_star, b] - m[one_step_responses(m, p), b].mean()
        )
        prev = preds[t - 1] if t else p
        out["previous round's prediction"] += one_step_tom_regret(m, prev, b)
        transposed = int(np.argmax(m[p, :]))
        out["response from the transposed table"] += float(m[:, b].max() - m[transposed, b])
        k = t_total - t
        out["one-step response, finite-horizon score"] += exact.value(k, state) - float(
            exact.q_values(k, state)[one_step_responses(m, p)].mean()
        )
        state = pol.next_state(state, b, a)
    res = {k: v / t_total for k, v in out.items()}
    ret = float(sum(m[x, y] for x, y in hist))
    res[STATIONARY] = (disc.stationary_return(t_total) - ret) / t_total
    return res


REPEAT = "repeat partner's last"
#: ΔFunctional/T against the stationary (gamma = 0.95) best response instead of the T-step optimum.
STATIONARY = "functional regret vs the stationary optimum"

#: Names of :func:`candidate_tom_regrets`' figures, in print order.
CANDIDATES = (
    "always wrong",
    "repeat partner's last",
    "constant lowest action",
    "scored against the partner's next action",
    "previous round's prediction",
    "scored against the discounted optimum's action",
    "response from the transposed table",
    "discounted look-ahead (gamma 0.95)",
    "discounted look-ahead response, one-step score",
    "one-step response, finite-horizon score",
)


def cell_result(
    game: str, partner: str, agent: str, eps: Sequence[Episode], extras: bool = False
) -> CellResult:
    """One cell's figures from its episodes (``extras``: also the candidate and shortcut ΔToM/T,
    which read the partner member each episode drew from ``Episode.members``)."""
    s = summarize(list(eps))
    nan = (math.nan, math.nan)
    extra: dict[str, tuple[float, float]] = {}
    if extras:
        config: MatrixConfig = game_spec(game).load().make_bundle(**game_spec(game).kwargs).game.config
        per: dict[str, list[float]] = {}
        for ep in eps:
            hist, preds = focal_history(ep)
            name = ep.members.get("player_1")
            if name is None or any(p is None for p in preds):
                continue
            for k, v in candidate_tom_regrets(config, name, hist, preds).items():  # type: ignore[arg-type]
                per.setdefault(k, []).append(v)
        extra = {k: mean_ci95(v) for k, v in per.items()}
    return CellResult(
        game,
        partner,
        agent,
        len(eps),
        s.get("functional_regret", nan),
        s.get("tom_regret", nan),
        s.get("tom_accuracy", nan),
        s.get("optimal_return", nan),
        sum(ep.wall_time_s for ep in eps),
        s.get("tom_regret_lookahead", nan),
        extra,
    )


def run_cell(
    game: str, partner: str, agent: str, episodes: int, seed: int = 0, extras: bool = False
) -> CellResult:
    """Play one cell serially and summarise it (for tests and notebooks; the paper table plays
    its cells in the evaluation worker pool:
    :data:`tom_experiments.paper004_page.TABLE`)."""
    spec = game_spec(game)
    eps = run(
        spec,
        [lambda: make_agent(agent, spec), lambda: make_agent(f"population:{partner}", spec)],
        episodes,
        seed=seed,
    )
    return cell_result(game, partner, agent, eps, extras)


def cell_key(game: str, partner: str, label: str) -> str:
    """The table cell key of (game, partner population, agent label)."""
    short = {PAPER_RMAX_SPEC: "rmax_paper", PAPER_RMAX_RANDOM_GUESS_SPEC: "rmax_paper_random_guess",
             TUNED_RMAX_SPEC: "rmax_tuned", "random": "random"}[AGENTS[label]]  # fmt: skip
    return f"{game}.{partner}.{short}"


def table_cells(episodes: int = 100, seed: int = 0) -> list[TableCell]:
    """Every (game, partner population, agent) cell of :data:`PAPER_TABULAR` x :data:`AGENTS`."""
    return [
        TableCell(cell_key(game, partner, label), game, (agent, f"population:{partner}"), episodes, seed)
        for game, partner in PAPER_TABULAR
        for label, agent in AGENTS.items()
    ]


def half_unit(digits: int) -> float:
    """Half a unit of the last printed digit (the rounding of a paper's number)."""
    return 0.5 * 10.0**-digits


def paper_inside_ours(ours: tuple[float, float], paper: float, digits: int) -> bool:
    """Target met: the paper's (rounded) number lies inside our 95% interval."""
    m, h = ours
    if math.isnan(m):
        return False
    return abs(m - paper) <= (0.0 if math.isnan(h) else h) + half_unit(digits)


def ours_inside_paper(
    ours: tuple[float, float], paper: float, paper_ci: float, digits: int
) -> bool:
    """Our mean lies inside the paper's 95% interval."""
    m = ours[0]
    return not math.isnan(m) and abs(m - paper) <= paper_ci + half_unit(digits)
