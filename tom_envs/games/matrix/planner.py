"""Exact optimal responses to finite-state partners, and the paper's ToM metrics on one episode.

``V_k(s)`` is the best expected return over the last ``k`` rounds against a partner in state ``s``:

    Q_k(s, a) = sum_b pi(b | s) * (M[a, b] + V_{k-1}(delta(s, b, a))),   V_k(s) = max_a Q_k(s, a)

where ``M`` is the focal player's payoff table, ``pi`` the partner's action distribution and
``delta`` its state update. This is dynamic programming over the partner's finite-state policy: the
"optimal T-step response to the true partner policy" of Definition 2.2, computed exactly.

A partner that switches from policy ``a`` to policy ``b`` at a known round is one more finite-state
policy, :class:`SwitchingPolicy` (state: rounds played, ``a``'s state, ``b``'s state; ``b`` runs in
shadow from the start), so the clairvoyant optimal response to a switching partner is exact too;
:class:`BayesSwitchingPolicy` (switch round uniform in a known window, unknown to the focal) gives
the Bayes reference.

Metrics of one episode of T rounds (the paper's Sec. 2.1, "Metrics for Our Experiments"):

* ``functional_regret`` = (V_T(s_1) - sum_t r_t) / T  (ΔFunctional/T). Against a stochastic partner
  it is an unbiased estimate of the expected regret.
* ``tom_regret`` (ΔToM/T, the paper's published values): the regret per step of the one-step
  rational response to the agent's own prediction, scored on the played trajectory. At round t the
  agent predicted ``p_t`` and the partner played ``b_t``; the rational response to ``p_t`` is
  ``argmax_a M[a, p_t]`` (the payoff table is known), and its regret in that round is
  ``max_a M[a, b_t] - M[a, b_t]``. Ties among rational responses are averaged (the expected regret
  of a uniformly random rational responder), so no tie-breaking convention favours a predictor.
  Perfect predictions give zero; each wrong prediction costs what answering the wrong action costs
  against the action actually played. This is the definition that reproduces the paper's numbers:
  in RPS every wrong prediction costs 1 or 2 (1.5 on average), so the paper's tit-for-tat row,
  93.0 % accuracy, gives 7.0 x 1.5 / 100 = 0.105, its printed ΔToM/T; the single-action row, 97.4 %,
  gives 2.6 x 1.5 / 100 = 0.039. In the Prisoner's Dilemma defection answers every prediction, so
  the one-step ΔToM/T is 0 for any predictor (``docs/results/paper004_rmax.md`` discusses the
  paper's 0.07 there).
* ``tom_regret_lookahead`` (our variant, not the paper's): the rational response to ``p_t`` looks
  ahead with the partner's true policy, ``argmax_a M[a, p] + V_{k-1}(delta(s_t, p, a))`` with
  k = T - t + 1 rounds left, and its regret is ``V_k(s_t) - Q_k(s_t, a)``. Because the future is
  answered by the true policy, the prediction barely matters (it is 0 for every predictor in the
  Prisoner's Dilemma against all paper partners); it is kept only under this name.
* ``tom_accuracy`` (ToM %): the share of rounds whose prediction equals the partner's action.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from tom_envs.games.matrix.bots import PartnerPolicy
from tom_envs.games.matrix.rules import MatrixConfig, payoff_matrix


class OptimalResponse:
    """Exact T-step optimal values against one partner policy, for the focal ``player``'s seat."""

    def __init__(self, config: MatrixConfig, partner: PartnerPolicy, player: int = 0) -> None:
        self.config = config
        self.partner = partner
        self.matrix = payoff_matrix(config, player)
        self.n = config.num_actions
        self._v: dict[tuple[int, Hashable], float] = {}
        self._q: dict[tuple[int, Hashable], np.ndarray] = {}

    def q_values(self, k: int, state: Hashable) -> np.ndarray:
        """``Q_k(state, a)`` for every action ``a`` with ``k`` rounds left (k >= 1)."""
        key = (k, state)
        cached = self._q.get(key)
        if cached is not None:
            return cached
        if k < 1:
            raise ValueError("q_values needs at least one round left")
        probs = self.partner.action_probs(state)
        q = np.zeros(self.n)
        for a in range(self.n):
            total = 0.0
            for b, p in enumerate(probs):
                if p == 0.0:
                    continue
                nxt = self.partner.next_state(state, b, a)
                total += p * (self.matrix[a, b] + self.value(k - 1, nxt))
            q[a] = total
        self._q[key] = q
        return q

    def value(self, k: int, state: Hashable) -> float:
        """``V_k(state)``: best expected return over the last ``k`` rounds."""
        if k <= 0:
            return 0.0
        key = (k, state)
        v = self._v.get(key)
        if v is None:
            v = float(self.q_values(k, state).max())
            self._v[key] = v
        return v

    def optimal_return(self, horizon: int | None = None) -> float:
        """``V_T(s_1)``: the optimal expected return of a whole episode."""
        t = self.config.horizon if horizon is None else horizon
        return self.value(t, self.partner.initial_state())

    def lookahead_response(self, k: int, state: Hashable, predicted: int) -> int:
        """Best action if the partner plays ``predicted`` now and its true policy afterwards.

        The rational response of ``tom_regret_lookahead`` (ties: the lowest action).
        """
        vals = [
            self.matrix[a, predicted]
            + self.value(k - 1, self.partner.next_state(state, predicted, a))
            for a in range(self.n)
        ]
        return int(np.argmax(vals))


class SwitchingPolicy(PartnerPolicy):
    """Partner ``a`` for the first ``switch_at`` rounds, then partner ``b``: the composite of a
    switching partner, for the exact (clairvoyant: switch round known) optimal response.

    The state is ``(rounds played, a's state, b's state)``. Both machines advance every round on
    the actions actually played (``b`` runs in shadow from the start, so its memory is current at
    the switch, as a switching agent plays it); ``a`` keeps advancing after the switch, unused.
    ``switch_at`` is the 0-based round from which ``b`` plays (``0``: ``b`` throughout;
    ``>= horizon``: ``a`` throughout).
    """

    def __init__(
        self,
        config: MatrixConfig,
        player: int,
        a: PartnerPolicy,
        b: PartnerPolicy,
        switch_at: int,
    ) -> None:
        super().__init__(config, player)
        if (
            isinstance(switch_at, bool)
            or not isinstance(switch_at, int | np.integer)
            or switch_at < 0
        ):
            raise ValueError(f"switch_at must be an int >= 0 (a round index), got {switch_at!r}")
        for name, member in (("a", a), ("b", b)):
            if member.config != config:
                raise ValueError(f"partner {name} ({member.name}) was built for another game")
        self.a, self.b, self.switch_at = a, b, int(switch_at)
        self.name = f"{a.name}->{b.name}@{self.switch_at}"
        self.description = f"{a.name} for rounds 0-{self.switch_at - 1}, then {b.name}"

    def initial_state(self) -> Hashable:
        """No round played; both machines at their start."""
        return (0, self.a.initial_state(), self.b.initial_state())

    def action_probs(self, state: Hashable) -> tuple[float, ...]:
        """``a``'s distribution before round ``switch_at``, ``b``'s from it."""
        t, sa, sb = state  # type: ignore[misc]
        return self.a.action_probs(sa) if t < self.switch_at else self.b.action_probs(sb)

    def next_state(self, state: Hashable, own: int, other: int) -> Hashable:
        """Advance the round counter and both machines on the actions played."""
        t, sa, sb = state  # type: ignore[misc]
        return (t + 1, self.a.next_state(sa, own, other), self.b.next_state(sb, own, other))


#: Posterior probabilities closer than this to 0 or 1 are 0 or 1 (float rounding, not belief).
_SNAP = 1e-9


class BayesSwitchingPolicy(PartnerPolicy):
    """A switching partner whose switch round is unknown: uniform over ``lo..hi`` (inclusive,
    0-based round from which ``b`` plays). The optimal response to it is the **Bayes** reference:
    the best a focal can do knowing ``a``, ``b`` and the window but not the round (it infers the
    switch from the partner's actions). Its state carries the posterior over the round.

    The state is ``(rounds played, a's state, b's state, posterior)``: the posterior over
    ``lo..hi`` is updated from each action the partner plays (Bayes' rule with ``a``'s and ``b``'s
    probabilities of that action), so the state update stays deterministic given the actions
    played; weights are rounded to 12 decimals so equal beliefs share a state. The gap between
    this value and the mean clairvoyant value (:class:`SwitchingPolicy`) over the window is the
    part of the post-switch regret no agent can avoid.
    """

    def __init__(
        self,
        config: MatrixConfig,
        player: int,
        a: PartnerPolicy,
        b: PartnerPolicy,
        lo: int,
        hi: int,
    ) -> None:
        super().__init__(config, player)
        if isinstance(lo, bool) or isinstance(hi, bool) or not 0 <= int(lo) <= int(hi):
            raise ValueError(f"the switch window needs 0 <= lo <= hi, got lo={lo!r}, hi={hi!r}")
        self.a, self.b, self.lo, self.hi = a, b, int(lo), int(hi)
        self.name = f"{a.name}->{b.name}@{self.lo}-{self.hi}"
        self.description = f"{a.name}, then {b.name} from a round uniform in {self.lo}-{self.hi}"

    def initial_state(self) -> Hashable:
        """No round played; both machines at their start; the uniform prior."""
        n = self.hi - self.lo + 1
        prior = tuple(round(1.0 / n, 12) for _ in range(n))
        return (0, self.a.initial_state(), self.b.initial_state(), prior)

    def _switched(self, t: int, post: tuple[float, ...]) -> float:
        """Posterior probability that ``b`` plays round ``t`` (0 or 1 when within ``1e-9`` of
        them, so rounding never gives mass to an impossible action)."""
        p = sum(w for i, w in enumerate(post) if self.lo + i <= t) / sum(post)
        return 0.0 if p < _SNAP else 1.0 if p > 1.0 - _SNAP else float(p)

    def action_probs(self, state: Hashable) -> tuple[float, ...]:
        """The posterior mixture of ``a``'s and ``b``'s distributions."""
        t, sa, sb, post = state  # type: ignore[misc]
        p = self._switched(t, post)
        pa, pb = self.a.action_probs(sa), self.b.action_probs(sb)
        return tuple((1.0 - p) * x + p * y for x, y in zip(pa, pb, strict=True))

    def next_state(self, state: Hashable, own: int, other: int) -> Hashable:
        """Advance both machines; update the posterior on the action ``own`` the partner played."""
        t, sa, sb, post = state  # type: ignore[misc]
        like_a, like_b = self.a.action_probs(sa)[own], self.b.action_probs(sb)[own]
        weights = [w * (like_b if self.lo + i <= t else like_a) for i, w in enumerate(post)]
        total = sum(weights)
        if total <= 0.0:
            raise ValueError(f"action {own} is impossible for {self.name} in {state}")
        post = tuple(0.0 if w / total < _SNAP else round(w / total, 12) for w in weights)
        return (t + 1, self.a.next_state(sa, own, other), self.b.next_state(sb, own, other), post)


def one_step_responses(matrix: np.ndarray, predicted: int) -> np.ndarray:
    """Every rational one-step response to ``predicted``: ``argmax_a matrix[a, predicted]``."""
    col = np.asarray(matrix, dtype=float)[:, predicted]
    return np.flatnonzero(col >= col.max() - 1e-12)


def one_step_tom_regret(matrix: np.ndarray, predicted: int, actual: int) -> float:
    """Regret of answering ``predicted`` rationally (one step) when the partner played ``actual``.

    ``max_a M[a, actual] - mean over rational responses a' to predicted of M[a', actual]``: 0 when
    the prediction is right, or when the wrong prediction has the same rational response.
    """
    m = np.asarray(matrix, dtype=float)
    n_partner = m.shape[1]
    for name, v in (("predicted", predicted), ("actual", actual)):
        if not 0 <= int(v) < n_partner:
            raise ValueError(f"{name} must be a partner action in [0, {n_partner}), got {v}")
    responses = one_step_responses(m, int(predicted))
    return float(m[:, actual].max() - m[responses, actual].mean())


def predictions_matter(matrix: np.ndarray) -> bool:
    """Whether some wrong prediction has a positive one-step ΔToM (False when a dominant action
    answers every prediction, as defection does in the Prisoner's Dilemma)."""
    n = np.asarray(matrix).shape[1]
    return any(one_step_tom_regret(matrix, p, b) > 0 for p in range(n) for b in range(n))


def episode_metrics(
    config: MatrixConfig,
    partner: PartnerPolicy,
    history: Sequence[tuple[int, int]],
    predictions: Sequence[int | None] | None = None,
    player: int = 0,
    solver: OptimalResponse | None = None,
) -> dict[str, float]:
    """ΔFunctional/T, ΔToM/T and ToM % of one played episode.

    Args:
        config: the game.
        partner: the true partner policy (its seat is the other one).
        history: ``(focal action, partner action)`` for every round played.
        predictions: the focal agent's prediction of the partner's action each round (``None``
            where it made none); omit to skip the ToM metrics.
        player: the focal seat (payoffs are read from its side).
        solver: a cached :class:`OptimalResponse` to reuse across episodes.

    Returns:
        ``return``, ``optimal_return``, ``functional_regret`` (per step), and when predictions are
        given, ``tom_accuracy`` (percent of predicted rounds that were right), ``tom_regret``
        (the paper's one-step ΔToM/T) and ``tom_regret_lookahead`` (our look-ahead variant), both
        per step and NaN unless every round has a prediction.
    """
    solver = solver or OptimalResponse(config, partner, player)
    t_total = len(history)
    if t_total == 0:
        raise ValueError("an episode needs at least one round")
    m = solver.matrix
    ret = float(sum(m[a, b] for a, b in history))
    opt = solver.optimal_return(t_total)
    out = {"return": ret, "optimal_return": opt, "functional_regret": (opt - ret) / t_total}
    if predictions is None:
        return out
    if len(predictions) != t_total:
        raise ValueError(f"{len(predictions)} predictions for {t_total} rounds")
    state = partner.initial_state()
    tom_regret = lookahead = 0.0
    hits = made = 0
    for t, ((a, b), pred) in enumerate(zip(history, predictions, strict=True)):
        k = t_total - t
        if pred is not None:
            made += 1
            hits += int(pred == b)
            tom_regret += one_step_tom_regret(m, int(pred), b)
            a_tom = solver.lookahead_response(k, state, int(pred))
            lookahead += solver.value(k, state) - float(solver.q_values(k, state)[a_tom])
        state = partner.next_state(state, b, a)
    complete = made == t_total
    out["tom_regret"] = tom_regret / t_total if complete else float("nan")
    out["tom_regret_lookahead"] = lookahead / t_total if complete else float("nan")
    out["tom_accuracy"] = 100.0 * hits / made if made else float("nan")
    return out
