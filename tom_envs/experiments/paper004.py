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
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from tom_envs.agents import make_agent
from tom_envs.experiments.tables import PaperTable, TableCell
from tom_envs.games.matrix.bots import PartnerPolicy, make_partner
from tom_envs.games.matrix.planner import (
    OptimalResponse,
    one_step_responses,
    one_step_tom_regret,
    predictions_matter,
)
from tom_envs.games.matrix.rules import MatrixConfig, payoff_matrix
from tom_envs.registration import game_spec
from tom_envs.runner import Episode, mean_ci95, run, summarize

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
    its cells in the evaluation worker pool, :data:`TABLE`)."""
    spec = game_spec(game)
    eps = run(
        spec,
        [lambda: make_agent(agent, spec), lambda: make_agent(f"population:{partner}", spec)],
        episodes,
        seed=seed,
    )
    return cell_result(game, partner, agent, eps, extras)


def _key(game: str, partner: str, label: str) -> str:
    short = {PAPER_RMAX_SPEC: "rmax_paper", PAPER_RMAX_RANDOM_GUESS_SPEC: "rmax_paper_random_guess",
             TUNED_RMAX_SPEC: "rmax_tuned", "random": "random"}[AGENTS[label]]  # fmt: skip
    return f"{game}.{partner}.{short}"


def table_cells(episodes: int = 100, seed: int = 0) -> list[TableCell]:
    """Every (game, partner population, agent) cell of :data:`PAPER_TABULAR` x :data:`AGENTS`."""
    return [
        TableCell(_key(game, partner, label), game, (agent, f"population:{partner}"), episodes, seed)
        for game, partner in PAPER_TABULAR
        for label, agent in AGENTS.items()
    ]


def render(played: Mapping[str, Sequence[Episode]], episodes: int = 100, seed: int = 0) -> str:
    """The page from the episodes of :func:`table_cells`."""
    results = [
        cell_result(game, partner, agent, played[_key(game, partner, label)],
                    extras=agent == PAPER_RMAX_SPEC)
        for game, partner in PAPER_TABULAR
        for label, agent in AGENTS.items()
    ]  # fmt: skip
    return markdown(results, episodes, seed)


def _half_unit(digits: int) -> float:
    return 0.5 * 10.0**-digits


def paper_inside_ours(ours: tuple[float, float], paper: float, digits: int) -> bool:
    """Target met: the paper's (rounded) number lies inside our 95% interval."""
    m, h = ours
    if math.isnan(m):
        return False
    return abs(m - paper) <= (0.0 if math.isnan(h) else h) + _half_unit(digits)


def ours_inside_paper(
    ours: tuple[float, float], paper: float, paper_ci: float, digits: int
) -> bool:
    """Our mean lies inside the paper's 95% interval."""
    m = ours[0]
    return not math.isnan(m) and abs(m - paper) <= paper_ci + _half_unit(digits)


def _fmt(v: tuple[float, float], digits: int = 3) -> str:
    m, h = v
    if math.isnan(m):
        return "n/a"
    if math.isnan(h):
        return f"{m:.{digits}f}"
    return f"{m:.{digits}f} ± {h:.{digits}f}"


def _yes(flags: Sequence[bool]) -> str:
    return " / ".join("yes" if f else "**no**" for f in flags)


def implied_one_step(game: str, accuracy: float) -> tuple[float, float]:
    """Range of the one-step ΔToM/T implied by a ToM % (cheapest and dearest wrong prediction)."""
    m = payoff_matrix(MatrixConfig(game=GAME_KEY[game]), 0)
    n = m.shape[1]
    costs = [one_step_tom_regret(m, p, b) for p in range(n) for b in range(n) if p != b]
    wrong = (100.0 - accuracy) / 100.0
    return wrong * min(costs), wrong * max(costs)


# ----------------------------------------------------------------------- report
def markdown(results: Sequence[CellResult], episodes: int, seed: int) -> str:
    """The page: the paper's rows beside ours, the definitions and the investigation."""
    label_of = {v: k for k, v in AGENTS.items()}
    lines = [
        "# Paper 004, tabular rows: the paper's learner and ours beside the paper",
        "",
        "Generated by `tom-envs reproduce paper004 --episodes "
        f"{episodes} --out docs/results/paper004_rmax.md` (the `paper004` table of "
        "`tom_envs/experiments/paper004.py`, its cells played by the eval worker pool). "
        f"Episodes per cell: {episodes} (seeds {seed}..{seed + episodes - 1}), T = 100. "
        "Intervals are 95% (1.96 standard errors over episodes). Regrets are per step; ToM % is "
        "next-action prediction accuracy. The paper's figures are Tables 1, 3, 4 and 10 "
        "(RPS tit-for-tat ΔFunctional/T is 0.224 in Table 4 and 0.211 in Table 10; we compare "
        "with 0.224).",
        "",
        "Agents:",
        "",
        f"* **paper's learner (plain RMax)**: `{PAPER_RMAX_SPEC}`. Classic RMax as the paper "
        "describes it (Sec. 2.2): the last joint action is the state, a state-action is known "
        "after m = 1 visit, unknown ones are worth r_max / (1 - gamma) with r_max the table's "
        "largest payoff, discounted value iteration with gamma = 0.95, random tie-breaking; the "
        "ToM model counts the partner's actions per state and predicts the most frequent one "
        "(the lowest action in a state with no count yet, as argmax does).",
        f"* **plain RMax, random guess in unseen states**: `{PAPER_RMAX_RANDOM_GUESS_SPEC}`: the "
        "same learner, except that a state with no count yet is predicted by a seeded random "
        "guess. The paper does not say which; the row shows how much the ToM columns depend on it "
        "(the actions are the same learner's, though random draws shift its tie-breaking).",
        f"* **tuned RMax (ours)**: `{TUNED_RMAX_SPEC}`: an improvement, not the paper's learner. "
        "It plans over the steps left (so it defects in the last round of the Prisoner's "
        "Dilemma), prefers known actions on ties, and its predictor backs off from an unseen "
        "state to the states with the same own last action, then to all states "
        "(`baselines/rmax.py`).",
        "* **uniform random**: no predictions, so its ToM columns are n/a.",
        "",
        "Checks, per figure (ΔFunctional/T / ΔToM/T / ToM %): **target met** = the paper's number "
        "lies inside our 95% interval; **in paper's CI** = our mean lies inside the paper's 95% "
        "interval. Both allow half a unit of the paper's last printed digit (0.0005 or 0.05), as "
        "the paper's numbers are rounded; a paper interval printed as ± 0.000 is therefore "
        "± 0.0005.",
        "",
        "| game | partner | agent | ΔFunctional/T (ours) | paper | ΔToM/T (ours) | paper | "
        "ToM % (ours) | paper | optimal return | target met | in paper's CI |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    misses: list[str] = []
    notes: list[str] = []
    for r in results:
        p = PAPER_TABULAR[(r.game, r.partner)]
        label = label_of[r.agent]
        is_rmax = r.agent != "random"
        met = inside = ""
        if is_rmax:
            ours = (r.functional_regret, r.tom_regret, r.tom_accuracy)
            met_f = [paper_inside_ours(o, p[2 * i], PAPER_DIGITS[i]) for i, o in enumerate(ours)]
            in_f = [
                ours_inside_paper(o, p[2 * i], p[2 * i + 1], PAPER_DIGITS[i])
                for i, o in enumerate(ours)
            ]
            met, inside = _yes(met_f), _yes(in_f)
            if r.agent == PAPER_RMAX_SPEC and not all(in_f):
                names = ("ΔFunctional/T", "ΔToM/T", "ToM %")
                for i in (i for i in range(3) if not in_f[i]):
                    misses.append(f"{r.game} / {r.partner}: {names[i]}")
                    note = CELL_NOTES.get((r.game, r.partner, i)) or CELL_NOTES.get(
                        (r.game, "*", i)
                    )
                    if note is None:
                        d = PAPER_DIGITS[i]
                        lo, hi = p[2 * i] - p[2 * i + 1], p[2 * i] + p[2 * i + 1]
                        m, h = ours[i]
                        h = 0.0 if math.isnan(h) else h
                        overlap = m - h <= hi + _half_unit(d) and m + h >= lo - _half_unit(d)
                        note = (
                            f"**{r.game}, {r.partner}, {names[i]}.** Ours "
                            f"{_fmt(ours[i], d + 1)} against the paper's [{lo:.{d}f}, "
                            f"{hi:.{d}f}]; the two intervals "
                            + ("overlap." if overlap else "do not overlap.")
                        )
                    if note not in notes:
                        notes.append(note)
        paper = (
            (f"{p[0]:.3f} ± {p[1]:.3f}", f"{p[2]:.3f} ± {p[3]:.3f}", f"{p[4]:.1f} ± {p[5]:.1f}")
            if is_rmax
            else ("", "", "")
        )
        lines.append(
            f"| {r.game} | {r.partner} | {label} | {_fmt(r.functional_regret)} | {paper[0]} | "
            f"{_fmt(r.tom_regret)} | {paper[1]} | {_fmt(r.tom_accuracy, 2)} | {paper[2]} | "
            f"{_fmt(r.optimal_return, 1)} | {met} | {inside} |"
        )
    lines += [
        "",
        "Cells of the paper's learner outside the paper's interval: "
        + ("; ".join(misses) if misses else "none")
        + ".",
        "",
        *[f"* {n}" for n in notes],
        "",
        "## Definitions",
        "",
        "Exact, by dynamic programming over the partner's finite-state policy "
        "(`tom_envs/games/matrix/planner.py`): ΔFunctional/T = (V*_T - return) / T, V*_T the "
        "optimal T-step return against the true partner (Def. 2.2). **ΔToM/T** (the paper's "
        "published values): each round, the one-step rational response to the agent's "
        "prediction p_t, argmax_a M[a, p_t], is scored on the played trajectory against the "
        "partner's actual action b_t: max_a M[a, b_t] - M[a, b_t], averaged over T. A right "
        "prediction costs 0; a wrong one costs what answering the wrong action costs. The "
        "look-ahead variant (`tom_regret_lookahead`: the response looks ahead with the partner's "
        "true policy) is ours and is printed only in the second table.",
        "",
        "Why this is the paper's definition: the paper's own (ToM %, ΔToM/T) pairs satisfy it. "
        "The one-step ΔToM/T implied by the paper's ToM % lies between the cheapest and the "
        "dearest wrong prediction:",
        "",
        "| game | partner | paper ToM % | implied one-step ΔToM/T | paper ΔToM/T |",
        "|---|---|---|---|---|",
    ]
    for (game, partner), p in PAPER_TABULAR.items():
        lo, hi = implied_one_step(game, p[4])
        rng = f"{lo:.3f}" if abs(hi - lo) < 1e-12 else f"{lo:.3f} to {hi:.3f}"
        lines.append(f"| {game} | {partner} | {p[4]:.1f} | {rng} | {p[2]:.3f} ± {p[3]:.3f} |")
    lines += [
        "",
        "In RPS a wrong prediction costs 1 or 2 (1.5 on average when both wrong actions are "
        "equally likely): 93.0 % gives 7.0 wrong predictions per 100 rounds x 1.5 = 0.105 and "
        "97.4 % gives 2.6 x 1.5 = 0.039, the paper's two values to three decimals. In Battle of "
        "the Sexes a wrong prediction costs 7 or 10, and both paper values fall in range (0.162 "
        "= 1.9 x 8.5 / 100: wrong predictions of both kinds). In the Prisoner's Dilemma "
        "defection answers every prediction, so the one-step ΔToM/T is 0 whatever the predictor; "
        "the paper prints about 0.07 (see the investigation below).",
        "",
        "## The measure against its shortcuts",
        "",
        "ΔToM/T of other predictors on the paper's learner's own trajectories (same rounds, "
        "same partner actions), and our look-ahead variant of the agent's predictions. A measure "
        "of ToM must rank an always-wrong predictor below a perfect one (0); the look-ahead "
        "variant barely depends on the prediction, which is why it is not the paper's.",
        "",
        "| game | partner | agent's predictions | always wrong | repeat partner's last | "
        "constant lowest action | look-ahead variant (agent's) | predictions can matter |",
        "|---|---|---|---|---|---|---|---|",
    ]
    paper_rows = [r for r in results if r.agent == PAPER_RMAX_SPEC]
    for r in paper_rows:
        e = r.extra
        matter = predictions_matter(payoff_matrix(MatrixConfig(game=GAME_KEY[r.game]), 0))
        lines.append(
            f"| {r.game} | {r.partner} | {_fmt(r.tom_regret)} | "
            f"{_fmt(e.get('always wrong', (math.nan, math.nan)))} | "
            f"{_fmt(e.get(REPEAT, (math.nan, math.nan)))} | "
            f"{_fmt(e.get('constant lowest action', (math.nan, math.nan)))} | "
            f"{_fmt(r.tom_regret_lookahead)} | {'yes' if matter else 'no (dominant action)'} |"
        )
    lines += [
        "",
        "Tuned RMax, look-ahead variant for comparison: "
        + "; ".join(
            f"{r.game}/{r.partner} {_fmt(r.tom_regret_lookahead)}"
            for r in results
            if r.agent == TUNED_RMAX_SPEC
        )
        + ".",
        "",
        "## Prisoner's Dilemma: where does the paper's 0.07 come from?",
        "",
        "The one-step definition reproduces RPS and Battle of the Sexes but gives 0 in the "
        "Prisoner's Dilemma, where the paper prints 0.071 ± 0.015 (single action) and 0.070 ± "
        "0.000 (tit-for-tat). Each candidate definition below is computed on the paper's "
        "learner's own Prisoner's Dilemma trajectories and predictions (ΔToM/T, mean ± 95%):",
        "",
        "| candidate | IPD single_action | IPD tit_for_tat | RPS tit_for_tat (paper 0.105) | "
        "IBS tit_for_tat (paper 0.162) |",
        "|---|---|---|---|---|",
    ]
    by_cell = {(r.game, r.partner): r for r in paper_rows}
    cand_rows = [
        ("one-step, same trajectory (the paper's, as implemented)", "tom_regret"),
        ("look-ahead with the true partner over the steps left (our variant)", "lookahead"),
        *[(c, c) for c in CANDIDATES[3:]],
    ]
    for name, key in cand_rows:
        cells = []
        for cell in (
            ("PrisonersDilemma", "single_action"),
            ("PrisonersDilemma", "tit_for_tat"),
            ("RockPaperScissors", "tit_for_tat"),
            ("BattleOfSexes", "tit_for_tat"),
        ):
            r = by_cell[cell]
            if key == "tom_regret":
                v = r.tom_regret
            elif key == "lookahead":
                v = r.tom_regret_lookahead
            else:
                v = r.extra.get(key, (math.nan, math.nan))
            cells.append(_fmt(v))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "ΔFunctional/T of the paper's learner against two references: the exact T-step optimum "
        "(Def. 2.2, the table above) and the stationary gamma = 0.95 best response played for "
        "100 rounds:",
        "",
        "| game | partner | vs T-step optimum | vs stationary optimum | paper |",
        "|---|---|---|---|---|",
    ]
    for r in paper_rows:
        p = PAPER_TABULAR[(r.game, r.partner)]
        lines.append(
            f"| {r.game} | {r.partner} | {_fmt(r.functional_regret)} | "
            f"{_fmt(r.extra.get(STATIONARY, (math.nan, math.nan)))} | {p[0]:.3f} ± {p[1]:.3f} |"
        )
    lines += IPD_FINDINGS
    return "\n".join(lines) + "\n"


#: Static findings printed under the investigation table (the numbers above are measured live).
IPD_FINDINGS = [
    "",
    "Candidates: *scored against the partner's next action* answers p_t but scores it against "
    "b_(t+1); *previous round's prediction* answers p_(t-1) (a one-round misalignment of the "
    "logged predictions); *scored against the discounted optimum's action* compares with what "
    "the gamma = 0.95 optimal policy would earn against b_t instead of the best reply to b_t; "
    "*response from the transposed table* answers from the partner's side of the table (a "
    "payoff-convention slip); *discounted look-ahead* answers p_t with "
    "argmax_a M[a, p_t] + gamma V(next) and scores V - Q with gamma = 0.95 values (the learner's "
    "own discount); the last two score the discounted look-ahead response one step, and the "
    "one-step response by the finite-horizon values V*_k - Q*_k.",
    "",
    "Findings. (1) No candidate that keeps the RPS and Battle-of-the-Sexes values gives "
    "about 0.07 in both Prisoner's Dilemma cells: every definition built on the one-step "
    "response gives 0, because defection is dominant and the paper's partners never make a "
    "prediction change it; look-ahead definitions give 0 too (cooperation is then both the "
    "answer and the best action). Definitions that do give positive values in the Prisoner's "
    "Dilemma (scoring against the discounted optimum's action, answering from the transposed "
    "table, the discounted look-ahead response scored one step, the one-step response scored by "
    "finite-horizon values) charge every round, including "
    "those with right predictions, and give values one to two orders of magnitude above 0.07 "
    "(or negative). (2) The paper's IPD numbers are nearly the same per episode in both cells, "
    "about 7 regret per 100 rounds: 0.070 with exactly 2 wrong predictions against tit-for-tat "
    "(98.0 %), 0.071 with 1.4 wrong predictions against single-action partners (98.6 %), i.e. "
    "3.5 and about 5 per wrong prediction. The count predictor's errors are predictions of "
    "cooperation where the partner defects; against a defector, answering with cooperation costs "
    "5 and answering with defection 0. So the single-action value (1.4 x 5 = 0.070) is what a "
    "response that cooperates after each wrong prediction would cost, and the tit-for-tat value "
    "needs it after only some of them. No response computed from the prediction and the payoff "
    "table alone cooperates in the one-shot Prisoner's Dilemma; one computed from the learner's "
    "own (optimistic, partly unknown) RMax values could, but the paper does not say so, and it "
    "would then measure the planner, not the prediction. We therefore report the one-step value "
    "(0) and mark the two Prisoner's Dilemma ΔToM/T cells as not reproduced. "
    "(3) A related finding for ΔFunctional/T against tit-for-tat: the paper's 0.248 matches "
    "plain RMax if the reference optimum is the stationary (gamma = 0.95) best response, which "
    "cooperates in all 100 rounds (return 800), instead of the exact T-step optimum, which "
    "defects in round 100 (802): a discounted learner never takes that last-round gain, so "
    "measured against 802 its regret is 0.02 per step higher (see the IPD tit-for-tat row).",
]

#: Why the paper's learner misses the paper's interval, per (game, partner or "*", figure index:
#: 0 ΔFunctional/T, 1 ΔToM/T, 2 ToM %); printed under the table for each miss.
_RPS_TFT_TOM = (
    "**RPS, tit-for-tat, ToM % and ΔToM/T.** Our count predictor is wrong exactly once in each "
    "state it has not seen yet, where it predicts the lowest action (rock). Of the 10 states (the "
    "start and 9 joint actions) the partner plays rock only at the start and after our scissors, "
    "so 6 predictions are wrong in every episode: ToM 94.0 % and ΔToM/T (3 x 1 + 3 x 2) / 100 = "
    "0.090, exactly. The paper's 93.0 % (± 0.0) is one wrong prediction more in every episode, "
    "which is what a tit-for-tat opening with paper or scissors would give (the paper does not "
    "state the opening; ours opens with rock): 0.100 or 0.110, 0.105 on average, the paper's "
    "value. A random guess in unseen states gives 93.4 % and 0.100 (second row)."
)
_IBS_TOM = (
    "**Battle of the Sexes, ΔToM/T.** With the lowest-action guess every wrong prediction "
    "predicts J (Fight) where the partner plays F, and costs 7; the paper's values need wrong "
    "predictions of both kinds (tit-for-tat: 0.162 = 1.9 x 8.5 / 100, half of them costing 10). "
    "The random guess makes both kinds but in more states (second row: ToM 97.6 % against "
    "tit-for-tat). Neither guess gives the paper's accuracy and ΔToM/T together."
)
_IPD_TOM = (
    "**Prisoner's Dilemma, ΔToM/T.** The one-step value is 0 for any predictor (defection is "
    "dominant); see the investigation below."
)
CELL_NOTES: dict[tuple[str, str, int], str] = {
    ("RockPaperScissors", "tit_for_tat", 0): (
        "**RPS, tit-for-tat, ΔFunctional/T.** Ours equals Table 10's value for this cell, "
        "0.211 ± 0.007; Table 4 prints 0.224 ± 0.007 for the same row, and we compare with it."
    ),
    ("RockPaperScissors", "tit_for_tat", 1): _RPS_TFT_TOM,
    ("RockPaperScissors", "tit_for_tat", 2): _RPS_TFT_TOM,
    ("BattleOfSexes", "*", 1): _IBS_TOM,
    ("BattleOfSexes", "tit_for_tat", 0): (
        "**Battle of the Sexes, tit-for-tat, ΔFunctional/T.** Ties between the (J, J) loop and "
        "unexplored actions (both worth r_max / (1 - gamma) = 200) decide how long the learner "
        "explores; random tie-breaking makes this cell the noisiest (our interval and the paper's "
        "overlap)."
    ),
    ("PrisonersDilemma", "*", 1): _IPD_TOM,
    ("PrisonersDilemma", "tit_for_tat", 0): (
        "**Prisoner's Dilemma, tit-for-tat, ΔFunctional/T.** The paper's 0.248 is our value "
        "against the stationary optimum (cooperate for 100 rounds, 800), not against the exact "
        "T-step optimum (802, defecting in round 100), which a discounted learner never reaches: "
        "see the second ΔFunctional/T table below."
    ),
}


#: The table of ``tom-envs reproduce paper004`` (``[[tables]] table = "paper004"``).
TABLE = PaperTable(
    "paper004",
    "Paper 004, Tables 1, 3, 4 and 10 (tabular rows) beside ours",
    table_cells,
    render,
)

