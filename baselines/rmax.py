"""Tabular RMax (Brafman & Tennenholtz, 2002) with a frequency-count partner model.

The baseline of "Theory of Mind Benchmarks are Broken for LLMs" (Sec. 2.2): a model-based learner
that starts every episode knowing nothing (not the payoffs, not the partner), treats the last joint
action as its state, and explores by optimism: a state-action tried fewer than ``known_threshold``
times is valued as if it paid ``r_max`` on every remaining step. Its Theory-of-Mind model counts the
partner's actions under the same state and predicts the most frequent one.

It plays any small discrete game through the suite's API (:class:`~tom_envs.core.agents.Turn`):

* state: ``view.last_actions`` when the game's view offers it (the joint action of the last round,
  as in the paper), otherwise the observation vector itself (``state="observation"`` forces that).
* reward: ``turn.reward`` (what the seat received since its previous decision).
* partner's action, for the ToM model: ``view.last_actions[1]`` (two-player views); without it the
  agent makes no predictions.

Planning is exact value iteration on the learned model: over the remaining steps when the game has
a known length (``planning="horizon"``), else discounted (``planning="discount"``, ``gamma``).

Two configurations are named in ``experiments/paper004.py`` (``tom_experiments.paper004``):

* **the paper's learner** (``PAPER_RMAX_SPEC``): plain RMax as paper 004 describes it (Sec. 2.2:
  "the classic RMax algorithm ... with the actions at the last time step treated as the state
  representation"; "a simple frequency count based prediction using the same state
  representation"). ``known_threshold=1``, discounted planning with ``gamma=0.95``, random
  tie-breaking among equally valued actions (``tie_break="random"``), and a per-state count
  predictor (``predictor="state"``) that, in a state with no count yet (or tied counts), predicts
  the lowest action (``guess="lowest"``, what ``argmax`` over a zero count vector returns). The
  paper gives no other setting; these are the issue's and the classic algorithm's.
* **our tuned RMax** (``TUNED_RMAX_SPEC``, an improvement, labelled as such): plans over the steps
  left (``planning="horizon"``: the episode length is part of the game, so it defects in the last
  round of the Prisoner's Dilemma and stops exploring when too few steps remain to pay for it);
  among equally valued actions a known one beats an unknown one (``tie_break="known_first"``), then
  a seeded random choice; predictions back off (``predictor="backoff"``) from an unseen state to the
  states with the same own last action (partners that react to our last move are then predicted
  right at once), then to all states, and with no data at all to a seeded random guess.

Other settings: ``r_max`` = the largest payoff of the table (the game's ``reward_range``), the
standard RMax bound; an unknown state-action is worth ``r_max`` on every remaining step (horizon)
or ``r_max / (1 - gamma)`` (discount).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable
from typing import Any

import numpy as np

from tom_envs.core.agents import AgentAction, BaseAgent, EpisodeInfo, Turn


class RMaxAgent(BaseAgent):
    """Tabular RMax learner with a frequency-count model of the partner.

    Args:
        known_threshold: visits after which a state-action's empirical model is trusted (m).
        planning: ``"horizon"`` (finite, steps left), ``"discount"`` or ``"auto"``.
        gamma: discount for ``planning="discount"``.
        r_max: optimistic reward bound; default the game's largest one-step reward.
        state: ``"auto"`` (``view.last_actions`` if present, else the observation), ``"observation"``
            or ``"last_actions"``.
        tie_break: ``"known_first"`` (known, then random among them) or ``"random"``.
        predictor: ``"backoff"`` (unseen state: same own last action, then all states) or
            ``"state"`` (the paper's: counts of this state only).
        guess: how an unseen state or tied counts are predicted: ``"random"`` (seeded) or
            ``"lowest"`` (the lowest action, as ``argmax`` does).
        persist: keep the learned model across episodes (default: learn from scratch each episode,
            as in the paper).
    """

    name = "rmax"
    description = "tabular RMax with a frequency-count partner model"

    def __init__(
        self,
        known_threshold: int = 1,
        planning: str = "auto",
        gamma: float = 0.95,
        r_max: float | None = None,
        state: str = "auto",
        tie_break: str = "known_first",
        predictor: str = "backoff",
        guess: str = "random",
        persist: bool = False,
    ) -> None:
        super().__init__()
        if known_threshold < 1:
            raise ValueError("known_threshold must be >= 1")
        if planning not in ("auto", "horizon", "discount"):
            raise ValueError("planning must be 'auto', 'horizon' or 'discount'")
        if not 0.0 <= gamma < 1.0:
            raise ValueError("gamma must be in [0, 1)")
        if state not in ("auto", "observation", "last_actions"):
            raise ValueError("state must be 'auto', 'observation' or 'last_actions'")
        if tie_break not in ("known_first", "random"):
            raise ValueError("tie_break must be 'known_first' or 'random'")
        if predictor not in ("backoff", "state"):
            raise ValueError("predictor must be 'backoff' or 'state'")
        if guess not in ("random", "lowest"):
            raise ValueError("guess must be 'random' or 'lowest'")
        self.m = known_threshold
        self.planning = planning
        self.gamma = gamma
        self.r_max_arg = r_max
        self.state_mode = state
        self.tie_break = tie_break
        self.predictor = predictor
        self.guess = guess
        self.persist = persist
        self._fresh()

    def _fresh(self) -> None:
        self.index: dict[Hashable, int] = {}
        self.visits: dict[tuple[int, int], int] = defaultdict(int)
        self.reward_sum: dict[tuple[int, int], float] = defaultdict(float)
        self.next_counts: dict[tuple[int, int], dict[int, int]] = defaultdict(
            lambda: defaultdict(int)
        )
        self.partner_counts: dict[int, np.ndarray] = {}
        self.partner_by_own: dict[int, np.ndarray] = {}
        self.partner_total: np.ndarray | None = None
        self.own_last: dict[int, int | None] = {}
        self._plan: tuple[np.ndarray, np.ndarray, np.ndarray, list[np.ndarray]] | None = None

    # ------------------------------------------------------------------ episode
    def reset(self, info: EpisodeInfo) -> None:
        """New episode: forget everything unless ``persist``."""
        super().reset(info)
        if not self.persist:
            self._fresh()
        self.n_actions = info.num_actions
        self.r_max = float(info.reward_range[1]) if self.r_max_arg is None else self.r_max_arg
        if not np.isfinite(self.r_max):
            raise ValueError("RMax needs a finite r_max: pass r_max= for this game")
        mode = self.planning
        if mode == "auto":
            mode = "horizon" if info.max_steps is not None else "discount"
        self.mode = mode
        self.max_steps = info.max_steps
        self.prev: tuple[int, int] | None = None
        if self.partner_total is None:
            self.partner_total = np.zeros(self.n_actions)

    def _state_key(self, turn: Turn) -> Hashable:
        mode = self.state_mode
        last = getattr(turn.view, "last_actions", _MISSING)
        if mode == "last_actions" or (mode == "auto" and last is not _MISSING):
            if last is _MISSING:
                raise ValueError("state='last_actions' needs a view with last_actions")
            return ("last", last)
        return ("obs", turn.observation.tobytes())

    def _sid(self, key: Hashable) -> int:
        if key not in self.index:
            self.index[key] = len(self.index)
        return self.index[key]

    def _learn(self, turn: Turn, s: int) -> None:
        if self.prev is None:
            return
        sa = self.prev
        self.visits[sa] += 1
        self.reward_sum[sa] += turn.reward
        self.next_counts[sa][s] += 1
        last = getattr(turn.view, "last_actions", None)
        if last is not None and len(last) == 2 and last[1] is not None:
            b = int(last[1])
            self.partner_counts.setdefault(sa[0], np.zeros(self.n_actions))[b] += 1
            own = self.own_last.get(sa[0])
            if own is not None:
                self.partner_by_own.setdefault(own, np.zeros(self.n_actions))[b] += 1
            assert self.partner_total is not None
            self.partner_total[b] += 1

    # ----------------------------------------------------------------- planning
    def _model(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n_s, n_a = len(self.index), self.n_actions
        known = np.zeros((n_s, n_a), dtype=bool)
        rew = np.zeros((n_s, n_a))
        trans = np.zeros((n_s, n_a, n_s))
        for (s, a), v in self.visits.items():
            if v >= self.m:
                known[s, a] = True
                rew[s, a] = self.reward_sum[(s, a)] / v
                for s2, c in self.next_counts[(s, a)].items():
                    trans[s, a, s2] = c / v
        return known, rew, trans

    def q_values(self, s: int, steps_left: int | None) -> tuple[np.ndarray, np.ndarray]:
        """Optimistic action values in state ``s`` and which actions are known there.

        Value iteration is redone only when the learned model changed; otherwise the values of the
        previous plan are reused (they are exact for the same model).
        """
        known, rew, trans = self._model()
        cache = self._plan
        same = (
            cache is not None
            and cache[0].shape == known.shape
            and np.array_equal(cache[0], known)
            and np.array_equal(cache[1], rew)
            and np.array_equal(cache[2], trans)
        )
        if self.mode == "horizon" and steps_left is not None:
            if not (same and len(cache[3]) >= steps_left):  # type: ignore[index]
                values = [np.zeros(len(self.index))]
                for j in range(1, steps_left):
                    q = np.where(known, rew + trans @ values[-1], self.r_max * j)
                    values.append(q.max(axis=1))
                self._plan = (known, rew, trans, values)
            v_prev = self._plan[3][steps_left - 1]  # type: ignore[index]
            q_s = np.where(known[s], rew[s] + trans[s] @ v_prev, self.r_max * steps_left)
            return q_s, known[s]
        unknown_value = self.r_max / (1.0 - self.gamma)
        if not same:
            v = np.full(len(self.index), unknown_value)
            for _ in range(10_000):
                v_new = np.where(known, rew + self.gamma * (trans @ v), unknown_value).max(axis=1)
                if np.max(np.abs(v_new - v)) < 1e-9:
                    v = v_new
                    break
                v = v_new
            self._plan = (known, rew, trans, [v])
        v = self._plan[3][0]  # type: ignore[index]
        q_s = np.where(known[s], rew[s] + self.gamma * (trans[s] @ v), unknown_value)
        return q_s, known[s]

    def _choose(self, q: np.ndarray, known: np.ndarray, legal: tuple[int, ...]) -> int:
        legal_arr = np.asarray(legal)
        vals = q[legal_arr]
        best = legal_arr[vals >= vals.max() - 1e-9]
        if self.tie_break == "known_first" and known[best].any():
            best = best[known[best]]
        return int(best[self.rng.integers(len(best))])

    def predict(self, s: int) -> int:
        """The partner's most frequent action in state ``s``.

        ``predictor="backoff"``: an unseen state backs off to the states where this agent's own
        last action was the same, then to all states. ``predictor="state"``: this state's counts
        only. A state with no data, or tied counts, is resolved by ``guess``.
        """
        sources = [self.partner_counts.get(s)]
        if self.predictor == "backoff":
            own = self.own_last.get(s)
            sources += [None if own is None else self.partner_by_own.get(own), self.partner_total]
        counts = next((c for c in sources if c is not None and c.sum() > 0), None)
        if counts is None:
            counts = np.zeros(self.n_actions)
        best = np.flatnonzero(counts == counts.max())
        if self.guess == "lowest":
            return int(best[0])
        return int(best[self.rng.integers(len(best))])

    # --------------------------------------------------------------------- act
    def act(self, turn: Turn) -> AgentAction:
        """Learn from the last transition, predict the partner, plan, act."""
        s = self._sid(self._state_key(turn))
        if s not in self.own_last:
            last = getattr(turn.view, "last_actions", None)
            self.own_last[s] = None if last is None else int(last[0])
        self._learn(turn, s)
        steps_left = None
        if self.max_steps is not None:
            done = getattr(turn.view, "round", turn.decision)
            steps_left = max(1, self.max_steps - int(done))
        q, known = self.q_values(s, steps_left)
        action = self._choose(q, known, turn.legal_actions)
        self.prev = (s, action)
        prediction: dict[str, Any] | None = None
        if getattr(turn.view, "last_actions", _MISSING) is not _MISSING:
            prediction = {"partner_action": self.predict(s)}
        return AgentAction(action, prediction=prediction)

    def end_episode(self, turn: Turn) -> None:
        """Learn from the final transition (matters when the model persists)."""
        if self.prev is not None and self.persist:
            s = self._sid(("terminal",))
            self._learn(turn, s)
        self.prev = None


_MISSING = object()
