"""Optimal joint planning by exhaustive search, for small cooperative simultaneous-move games.

The team (both seats, planned centrally) faces an MDP whose actions are joint actions; chance (the
roaming killer of CollabEscape) is enumerated exactly by the rules' ``outcomes(state, joint)``. The
planner enumerates every state reachable from the start, builds the transition table once, and
computes by backward induction

    V_0(s) = [s is a success]
    V_k(s) = max_j  sum_{s'} P(s' | s, j) * V_{k-1}(s')         (success and failure absorb)

so ``V_k(s)`` is the highest probability of reaching the goal within ``k`` turns (the capture in
CollabCapture, the escape in CollabEscape). From it:

* **optimal turns** of a deterministic game: the least ``k`` with ``V_k(s) = 1``;
* **optimal success probability** within the turn limit ``H``: ``V_H(s)``, and without a limit the
  fixed point ``V_inf`` (value iteration from 0 converges to it from below);
* the **optimal joint policy** with ``k`` turns left: the joint action maximising
  ``(Q_k, Q_{k-1}, ..., Q_1)`` lexicographically (most likely to succeed in time, then soonest),
  then the first in the canonical order (product of each seat's legal actions in display order).
  Every optimal bot computes the same choice from the same state, so two of them coordinate.

The games provide, on their ``Game`` object: ``legal_actions``/``options``, ``outcomes(state,
joint) -> ((p, next), ...)``, ``canonical(state)`` (the state without its turn counter and display
fields), ``succeeded(state)``, ``failed(state)`` and ``config.max_turns``.

The planner also scores play (used by the games' metrics and ToM probes):
:meth:`JointPlanner.q_table` gives ``Q_k(s, (a, b))`` for every joint action, from which
best responses to a partner's actual (or predicted) move are read.

**Best response to a known partner.** :class:`BestResponsePlanner` reuses the same tables for one
seat against a fixed Markov partner (:class:`MarkovPartner`: ``(state, turns left) -> action
distribution``; the ``greedy`` bot through :func:`partner_from_view`, ``optimal`` through
:func:`optimal_partner`, ``random`` through :func:`uniform_partner`, a learned actor the same way
or in one batched call with :func:`partner_from_batch`): backward induction with the ``max`` over
the seat's own action of the partner-weighted joint rows, so its value is the exact
best-response value (the functional-ToM reference, :mod:`tom_envs.references`), with
``q_values`` per own action and ``best_action``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import numpy as np

from tom_envs.core.agents import AgentAction, BaseAgent, Turn, as_agent_action, state_turn
from tom_envs.core.contract import Bot, BotTable
from tom_envs.core.probes import Probe

#: Values closer than this are ties (the values are probabilities and turn counts).
TIE = 1e-9
#: Value layers kept for games without a turn limit (tie-breaking uses the first ones).
UNBOUNDED_LAYERS = 100
#: Value iteration stops when no value moves by more than this (games without a turn limit).
CONVERGENCE_TOL = 1e-13
MAX_ITERATIONS = 100_000


@dataclass
class _Tables:
    states: list[Hashable]
    index: dict[Hashable, int]
    kind: np.ndarray  # 0 running, 1 success, 2 failure
    row_start: np.ndarray  # first row of each state (rows of a state are contiguous)
    row_count: np.ndarray
    row_joint: list[tuple[int, int]]
    t_row: np.ndarray
    t_next: np.ndarray
    t_prob: np.ndarray


class JointPlanner:
    """Exact finite-horizon values and the optimal joint policy of one configured game.

    Args:
        game: the rules object (see the module docstring for what it must offer).
        roots: start states to search from (default: the game's initial state).
        horizon: turns to plan over: ``"limit"`` (default) for the game's ``config.max_turns``,
            an int, or ``None`` for no limit (values then converge to ``V_inf``).
    """

    def __init__(
        self, game: Any, roots: Sequence[Any] | None = None, horizon: int | str | None = "limit"
    ) -> None:
        self.game = game
        if horizon == "limit":
            horizon = game.config.max_turns
        if horizon is not None and (not isinstance(horizon, int) or horizon < 0):
            raise ValueError(f"horizon must be 'limit', None or an int >= 0, got {horizon!r}")
        self.horizon: int | None = horizon
        if roots is None:
            roots = [game.initial_state(np.random.default_rng(0))]
        self._tables = self._build([game.canonical(s) for s in roots])
        self._solve()

    # -------------------------------------------------------------------------- search
    def _build(self, roots: list[Any]) -> _Tables:
        game = self.game
        states: list[Hashable] = []
        index: dict[Hashable, int] = {}
        kinds: list[int] = []

        def add(s: Any) -> int:
            i = index.get(s)
            if i is None:
                i = index[s] = len(states)
                states.append(s)
                kinds.append(1 if game.succeeded(s) else 2 if game.failed(s) else 0)
            return i

        for r in roots:
            add(r)
        row_start: list[int] = []
        row_count: list[int] = []
        row_joint: list[tuple[int, int]] = []
        t_row: list[int] = []
        t_next: list[int] = []
        t_prob: list[float] = []
        i = 0
        while i < len(states):
            s = states[i]
            row_start.append(len(row_joint))
            if kinds[i] != 0:
                row_count.append(0)
                i += 1
                continue
            joints = list(itertools.product(game.options(s, 0), game.options(s, 1)))
            row_count.append(len(joints))
            for joint in joints:
                r = len(row_joint)
                row_joint.append(joint)
                for p, nxt in game.outcomes(s, {0: joint[0], 1: joint[1]}):
                    t_row.append(r)
                    t_next.append(add(game.canonical(nxt)))
                    t_prob.append(p)
            i += 1
        return _Tables(
            states,
            index,
            np.asarray(kinds, dtype=np.int8),
            np.asarray(row_start, dtype=np.int64),
            np.asarray(row_count, dtype=np.int64),
            row_joint,
            np.asarray(t_row, dtype=np.int64),
            np.asarray(t_next, dtype=np.int64),
            np.asarray(t_prob, dtype=np.float64),
        )

    # --------------------------------------------------------------------------- solve
    def _backup(self, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One Bellman backup: ``(Q over rows, V over states)`` from the previous layer ``v``."""
        t = self._tables
        q = np.bincount(t.t_row, weights=t.t_prob * v[t.t_next], minlength=len(t.row_joint))
        new = np.where(t.kind == 1, 1.0, 0.0)
        running = t.row_count > 0
        if running.any():
            new[running] = np.maximum.reduceat(q, t.row_start[running])
        return q, new

    def _solve(self) -> None:
        t = self._tables
        v = np.where(t.kind == 1, 1.0, 0.0)
        layers = [v]
        limit = self.horizon if self.horizon is not None else UNBOUNDED_LAYERS
        for _ in range(limit):
            v = self._backup(v)[1]
            layers.append(v)
        self._layers = np.stack(layers)  # _layers[k] = V_k
        self._v_inf = None
        if self.horizon is None:
            for _ in range(MAX_ITERATIONS):
                nxt = self._backup(v)[1]
                if np.max(np.abs(nxt - v)) < CONVERGENCE_TOL:
                    v = nxt
                    break
                v = nxt
            self._v_inf = v

    # ------------------------------------------------------------------------- queries
    @property
    def num_states(self) -> int:
        """States reachable from the roots (including absorbing ones)."""
        return len(self._tables.states)

    def _idx(self, state: Any) -> int:
        key = self.game.canonical(state)
        i = self._tables.index.get(key)
        if i is None:
            raise KeyError(f"state {key} is not reachable from the planner's roots")
        return i

    def turns_left(self, state: Any) -> int | None:
        """Turns left before the limit (``None`` without a limit)."""
        return None if self.horizon is None else max(0, self.horizon - int(state.turn))

    def value(self, state: Any, k: int | None = None) -> float:
        """``V_k(state)``: the best probability of success within ``k`` turns (default: the turns
        left before the limit; without a limit, the unbounded value)."""
        i = self._idx(state)
        k = self.turns_left(state) if k is None else k
        if k is None:
            assert self._v_inf is not None
            return float(self._v_inf[i])
        if k >= len(self._layers):
            raise ValueError(f"k={k} exceeds the {len(self._layers) - 1} layers kept")
        return float(self._layers[k][i])

    def success_curve(self, state: Any) -> np.ndarray:
        """``[V_0, V_1, ..., V_K](state)`` over the kept layers."""
        return self._layers[:, self._idx(state)].copy()

    def optimal_turns(self, state: Any) -> int | None:
        """Least ``k`` with ``V_k(state) = 1`` (sure success within ``k`` turns), if any kept."""
        curve = self.success_curve(state)
        hits = np.flatnonzero(curve >= 1.0 - TIE)
        return int(hits[0]) if hits.size else None

    def _rows(self, i: int) -> range:
        t = self._tables
        return range(int(t.row_start[i]), int(t.row_start[i] + t.row_count[i]))

    def _q_rows(self, i: int, layer: np.ndarray) -> np.ndarray:
        """``Q`` of the rows of state ``i`` against value layer ``layer`` (= V_{k-1})."""
        t = self._tables
        rows = self._rows(i)
        lo, hi = np.searchsorted(t.t_row, [rows.start, rows.stop])
        q = np.zeros(len(rows))
        np.add.at(q, t.t_row[lo:hi] - rows.start, t.t_prob[lo:hi] * layer[t.t_next[lo:hi]])
        return q

    def q_table(self, state: Any, k: int | None = None) -> dict[tuple[int, int], float]:
        """``Q_k(state, (a, b))`` for every joint action: success probability within ``k`` turns
        when the team plays ``(a, b)`` now and optimally afterwards (default ``k``: turns left)."""
        i = self._idx(state)
        k = self.turns_left(state) if k is None else k
        prev = self._v_inf if k is None else self._layers[k - 1] if k >= 1 else None
        if prev is None:
            return {j: 0.0 for j in self.joint_actions(state)}
        q = self._q_rows(i, prev)
        return {self._tables.row_joint[r]: float(q[n]) for n, r in enumerate(self._rows(i))}

    def joint_actions(self, state: Any) -> list[tuple[int, int]]:
        """The joint actions in canonical order."""
        i = self._idx(state)
        return [self._tables.row_joint[r] for r in self._rows(i)]

    def optimal_joint_actions(self, state: Any, k: int | None = None) -> list[tuple[int, int]]:
        """Every joint action optimal under the lexicographic order ``(Q_k, ..., Q_1)``."""
        i = self._idx(state)
        rows = list(self._rows(i))
        if not rows:
            return []
        k = self.turns_left(state) if k is None else k
        keep = np.ones(len(rows), dtype=bool)
        layers: list[np.ndarray] = []
        if k is None:
            assert self._v_inf is not None
            layers.append(self._v_inf)
            k = len(self._layers) - 1
        layers += [self._layers[kk - 1] for kk in range(min(k, len(self._layers) - 1), 0, -1)]
        for prev in layers:
            q = self._q_rows(i, prev)
            best = q[keep].max()
            keep &= q >= best - TIE
            if keep.sum() == 1:
                break
        return [self._tables.row_joint[rows[n]] for n in np.flatnonzero(keep)]

    def best_joint_action(self, state: Any, k: int | None = None) -> tuple[int, int]:
        """The optimal joint action (first in canonical order among the optimal ones)."""
        best = self.optimal_joint_actions(state, k)
        if not best:
            raise ValueError("no action in a terminal state")
        return best[0]

    def policy_outcome(self, state: Any, turns: int | None = None) -> dict[str, float]:
        """Exact outcome distribution of the optimal joint policy from ``state``.

        Propagates the state distribution turn by turn (chance enumerated exactly) for ``turns``
        turns (default: the turns left, or the kept layers without a limit). Returns the
        probabilities of success and failure, and the expected turns to success given success.
        """
        t = self._tables
        k0 = self.turns_left(state)
        total = (len(self._layers) - 1 if k0 is None else k0) if turns is None else turns
        dist = {self._idx(state): 1.0}
        success = failure = 0.0
        weighted_turns = 0.0
        for step in range(total):
            nxt: dict[int, float] = {}
            k = None if k0 is None else k0 - step
            for i, mass in dist.items():
                joint = self.best_joint_action(t.states[i], k)
                r = self._rows(i).start + self._tables_row_offset(i, joint)
                lo, hi = np.searchsorted(t.t_row, [r, r + 1])
                for n, p in zip(t.t_next[lo:hi], t.t_prob[lo:hi], strict=True):
                    m = mass * p
                    if t.kind[n] == 1:
                        success += m
                        weighted_turns += m * (step + 1)
                    elif t.kind[n] == 2:
                        failure += m
                    else:
                        nxt[int(n)] = nxt.get(int(n), 0.0) + m
            dist = nxt
            if not dist:
                break
        return {
            "success": success,
            "failure": failure,
            "expected_turns_given_success": weighted_turns / success if success else float("nan"),
        }

    def turns_to_success(self, state: Any, k: int | None = None) -> int:
        """``T_k(state)``: least ``k' <= k`` with sure success within ``k'`` turns, else ``k + 1``
        (a deterministic game's optimal turns, with failure costing one turn past the limit)."""
        k = self.turns_left(state) if k is None else k
        if k is None:
            raise ValueError("turns_to_success needs a turn limit")
        curve = self._layers[: k + 1, self._idx(state)]
        hits = np.flatnonzero(curve >= 1.0 - TIE)
        return int(hits[0]) if hits.size else k + 1

    def q_turns(self, state: Any, k: int | None = None) -> dict[tuple[int, int], float]:
        """Expected turns to success of each joint action played now, optimal play after it
        (deterministic games: exact; failure counts as one turn past the limit)."""
        t = self._tables
        i = self._idx(state)
        k = self.turns_left(state) if k is None else k
        if k is None:
            raise ValueError("q_turns needs a turn limit")
        out = {}
        for r in self._rows(i):
            lo, hi = np.searchsorted(t.t_row, [r, r + 1])
            total = 0.0
            for n, p in zip(t.t_next[lo:hi], t.t_prob[lo:hi], strict=True):
                if t.kind[n] == 1:
                    cost = 1.0
                elif t.kind[n] == 2 or k <= 1:
                    cost = float(k + 1)
                else:
                    cost = 1.0 + min(self.turns_to_success(t.states[n], k - 1), k)
                total += p * cost
            out[t.row_joint[r]] = float(total)
        return out

    def _tables_row_offset(self, i: int, joint: tuple[int, int]) -> int:
        rows = self._rows(i)
        for n, r in enumerate(rows):
            if self._tables.row_joint[r] == joint:
                return n
        raise KeyError(joint)


# ------------------------------------------------------------------------------- helpers
@lru_cache(maxsize=32)
def planner_for(game_cls: type, config: Hashable) -> JointPlanner:
    """A cached planner for a configured game (built once per process and configuration)."""
    return JointPlanner(game_cls(config))


# --------------------------------------------------------------------------------- agent
class JointPlannerAgent(BaseAgent):
    """Plays its seat's part of the optimal joint action and predicts the partner's part.

    Two of these coordinate perfectly (both compute the same joint action from the same state).
    With another partner it still plays as if the partner were optimal. The planner is built on
    the first decision and shared by every agent of the same configuration in the process.

    Args:
        game: the configured rules object.
        state_from_view: rebuilds the rules state from a player's (fully observable) view.
    """

    name = "optimal"

    def __init__(self, game: Any, state_from_view: Callable[[Any], Any]) -> None:
        super().__init__()
        self.game_cls = type(game)
        self.config = game.config
        self.state_from_view = state_from_view

    @property
    def planner(self) -> JointPlanner:
        """The shared planner of this configuration."""
        return planner_for(self.game_cls, self.config)

    def act(self, turn: Turn) -> AgentAction:
        """My part of the optimal joint action; the partner's part as my prediction."""
        joint_action = self.planner.best_joint_action(self.state_from_view(turn.view))
        me = turn.player
        return AgentAction(
            int(joint_action[me]), prediction={"partner_action": int(joint_action[1 - me])}
        )



class RuleBot(BaseAgent):
    """A deterministic room-game bot of one rule ``(view, *context) -> action`` (no memory)."""

    def __init__(self, name: str, rule: Callable[..., int], *context: Any) -> None:
        super().__init__()
        self.name, self.rule, self.context = name, rule, context

    def act(self, turn: Turn) -> int:
        """The rule's action in this view."""
        return int(self.rule(turn.view, *self.context))


def rule_bot(name: str, rule: Callable[..., int], description: str,
             context: Callable[[Any], Any] | None = None) -> Bot:  # fmt: skip
    """A :class:`Bot` playing :class:`RuleBot` ``rule``; ``context(bundle)``, when given, is
    the rule's second argument (e.g. the configured maze)."""
    return Bot(name, lambda bundle: RuleBot(name, rule, *(() if context is None else (context(bundle),))),
               description)  # fmt: skip


def planner_bot_table(
    greedy: Bot, state_from_view: Callable[[Any], Any], game: str, search: str = "",
    conventions: Sequence[Bot] = (),
) -> Callable[..., BotTable]:  # fmt: skip
    """A room game's ``bot_table(**config)``: its ``greedy`` bot and :class:`JointPlannerAgent`
    as ``optimal`` (``search``: what its description adds about the search), both in the
    population ``all``, then its ``conventions`` (rule bots that split the work differently, in
    the population ``conventions``), the same for every scenario."""
    optimal = Bot(
        "optimal",
        lambda bundle: JointPlannerAgent(bundle.game, state_from_view),
        f"its part of the optimal joint plan (exhaustive search{search}); predicts the partner's "
        "part",
    )

    def bot_table(**config: Any) -> BotTable:
        """The bots (the same for every scenario) and the population ``all``."""
        pops: dict[str, tuple[str, ...]] = {"all": ("greedy", "optimal")}
        if conventions:
            pops["conventions"] = tuple(b.name for b in conventions)
        return BotTable((greedy, optimal, *conventions), pops, game=game)

    return bot_table

# -------------------------------------------------------------------------------- probes
def next_action_probes(game: Any, text: Any) -> Callable[[Any, int], list[Probe]]:
    """A ``bundle.probes`` function: "What action does my partner intend to take?".

    The options are the partner's legal actions (as the partner's text names them); the truth is
    the partner's part of the optimal joint plan. A question is asked only when that part is
    unique (the same in every optimal joint action), as the paper kept only unambiguous questions
    (a situation chosen from the plan, before and whatever the truth). Asked at the player's
    decision; the game defines no partner-blind answer (``no_tom``), so the known-groups check
    cannot certify it as a ToM measure.
    """

    def probes(state: Any, player: int) -> list[Probe]:
        if game.is_terminal(state):
            return []
        planner = planner_for(type(game), game.config)
        partner = 1 - player
        intended = {j[partner] for j in planner.optimal_joint_actions(state)}
        if len(intended) != 1:
            return []
        (truth,) = intended
        pview = game.observe(state, partner)
        options = tuple(text.action_text(pview, a) for a in pview.legal_actions)
        mine = game.observe(state, player)
        who = getattr(mine, "partner_name", f"player_{partner}")
        return [
            Probe(
                id=f"turn{state.turn}.next_action.{who.lower()}",
                kind="next_action",
                order=1,
                question=f"What action does my partner {who} intend to take this turn?",
                options=options,
                answer=text.action_text(pview, truth),
                about={"partner": partner, "action": int(truth), "source": "optimal joint plan"},
                subject={"target": who},
            )
        ]

    return probes


# ------------------------------------------------------------------------------- metrics
def replay(
    game: Any, seed: int, steps: Sequence[Mapping[str, Any]]
) -> tuple[list[tuple[Any, dict[int, int]]], Any]:
    """``([(state, {seat: action}), ...], final state)`` of a recorded episode.

    The env draws every chance outcome from ``seeding.np_random(seed)`` in ``reset`` and ``step``;
    replaying the recorded joint actions through the same generator gives the same states.
    """
    from gymnasium.utils import seeding

    rng, _ = seeding.np_random(seed)
    state = game.initial_state(rng)
    joints: dict[int, dict[int, int]] = {}
    for step in steps:
        seat = int(str(step["agent"]).rpartition("_")[2])
        joints.setdefault(int(step["joint_step"]), {})[seat] = int(step["action"])
    out = []
    for t in sorted(joints):
        joint_action = joints[t]
        if len(joint_action) != game.num_players:
            break  # an unfinished joint step (the episode was cut mid-turn)
        out.append((state, joint_action))
        state = game.step(state, joint_action, rng).state
    return out, state


def replay_with_planner(
    bundle: Any, episode: Any
) -> tuple[Any, JointPlanner, list[tuple[Any, dict[int, int]]], Any, Any]:
    """``(game, its exact planner, trajectory, final state, start state)`` of a recorded episode.

    The trajectory and final state are :func:`replay`'s; the start is the game's (no chance).
    """
    game = bundle.game
    planner = planner_for(type(game), game.config)
    trajectory, final = replay(game, episode.seed, episode.steps)
    return game, planner, trajectory, final, game.initial_state(None)


def seat_metrics(
    planner: JointPlanner,
    trajectory: Sequence[tuple[Any, Mapping[int, int]]],
    predictions: Mapping[int, Sequence[int | None]],
    score: Callable[[JointPlanner, Any], dict[tuple[int, int], float]],
) -> dict[str, float]:
    """Per seat: best-response regret and, where predictions were made, ToM accuracy and regret.

    ``score(planner, state)`` gives every joint action's value (higher is better) with optimal play
    afterwards. For seat ``i`` at turn ``t``, with the partner's actual action ``b``:

    * ``br_regret/player_i`` (summed over turns) = ``max_a score(a, b) - score(a_t, b)``: how much
      the seat lost by not best-responding to what its partner actually did.
    * ``tom_accuracy/player_i`` = percent of turns whose predicted partner action was right.
    * ``tom_regret/player_i`` (summed) = the same regret for acting rationally on the prediction
      (the seat's own action if it best-responds to the prediction, else the first that does).
    """
    out: dict[str, float] = {}
    for seat in (0, 1):
        br = tom = 0.0
        hits = made = 0
        preds = list(predictions.get(seat, ()))
        for t, (state, joint_action) in enumerate(trajectory):
            q = score(planner, state)
            mine, theirs = joint_action[seat], joint_action[1 - seat]
            value = {j[seat]: v for j, v in q.items() if j[1 - seat] == theirs}
            best = max(value.values())
            br += best - value[mine]
            pred = preds[t] if t < len(preds) else None
            if pred is None:
                continue
            made += 1
            hits += int(pred == theirs)
            on_pred = {j[seat]: v for j, v in q.items() if j[1 - seat] == pred}
            if not on_pred:  # an illegal prediction: act as if it named nothing useful
                continue
            top = max(on_pred.values())
            rational = [a for a, v in on_pred.items() if v >= top - TIE]
            a_tom = mine if mine in rational else rational[0]
            tom += best - value[a_tom]
        out[f"br_regret/player_{seat}"] = float(br)
        if made:
            out[f"tom_accuracy/player_{seat}"] = 100.0 * hits / made
            out[f"tom_regret/player_{seat}"] = float(tom)
    return out


def predictions_of(steps: Sequence[Mapping[str, Any]]) -> dict[int, list[int | None]]:
    """Each seat's ``prediction["partner_action"]`` per turn (``None`` where it made none)."""
    out: dict[int, list[int | None]] = {0: [], 1: []}
    for step in sorted(steps, key=lambda s: (s["joint_step"], s["agent"])):
        seat = int(str(step["agent"]).rpartition("_")[2])
        pred = (step.get("prediction") or {}).get("partner_action")
        out[seat].append(None if pred is None else int(pred))
    return out


# ------------------------------------------------------------------ best response to a partner
#: A Markov partner's action distribution: ``(canonical state, turns left) -> {action: prob}``
#: (``turns left`` is ``None`` in a game without a turn limit).
PartnerProbs = Callable[[Any, "int | None"], Mapping[int, float]]


@dataclass(frozen=True)
class MarkovPartner:
    """A partner policy the best-response planner can tabulate.

    Attributes:
        name: how results name it (``"greedy"``, ``"optimal"``, ``"random"``, ``"zoo/ppo_s0"``).
        probs: ``(canonical state, turns left) -> {action: probability}`` over the partner's
            options in that state (missing actions have probability 0). The canonical state is
            the planner's (no turn counter; see the game's ``canonical``), so the partner must be
            Markov in it and in the turns left: the rule bots are; a learned actor is tabulated
            by evaluating it on the view of every reachable ``(state, turns left)``
            (:func:`partner_from_view`).
        stationary: ``True`` when ``probs`` ignores the turns left (evaluated once per state).
        batch: optional ``(canonical states, turns left) -> array (states, actions)`` of
            probabilities over the action catalogue, used to tabulate every state in one call
            (a learned actor's batched forward pass: :func:`partner_from_batch`); ``probs`` must
            agree with it.
    """

    name: str
    probs: PartnerProbs
    stationary: bool = False
    batch: Callable[[Sequence[Any], int | None], np.ndarray] | None = None


def partner_from_view(
    name: str,
    game: Any,
    seat: int,
    policy: Callable[[Any, int | None], Mapping[int, float] | int],
    stationary: bool = False,
) -> MarkovPartner:
    """A :class:`MarkovPartner` from a policy of the partner's *view*.

    ``policy(view, turns_left)`` returns ``{action: probability}``, or one action (deterministic).
    The view is ``game.observe`` of the canonical state with its turn counter set to
    ``max_turns - turns_left`` (so a policy reading the turn sees the right one). What the
    canonical state drops (CollabEscape's display-only ``fixing`` flags) reads as its default.
    """
    horizon = game.config.max_turns

    def probs(state: Any, turns_left: int | None) -> Mapping[int, float]:
        turn = 0 if horizon is None or turns_left is None else horizon - turns_left
        out = policy(game.observe(replace(state, turn=turn), seat), turns_left)
        if isinstance(out, Mapping):
            return out
        return {int(out): 1.0}

    return MarkovPartner(name, probs, stationary)


def optimal_partner(planner: JointPlanner, seat: int) -> MarkovPartner:
    """``optimal``: the partner's part of the joint planner's optimal joint action, exactly as
    :class:`JointPlannerAgent` plays it (lexicographic ``(Q_k, ..., Q_1)``, then the first joint
    action in canonical order), tabulated for every state at once per ``k``."""
    t = planner._tables
    running = t.row_count > 0
    starts = t.row_start[running]
    row_state = np.repeat(np.arange(len(t.states)), t.row_count)
    n_rows = len(t.row_joint)
    partner_part = np.asarray([j[seat] for j in t.row_joint], dtype=np.int64)
    q_cache: dict[int, np.ndarray] = {}
    chosen: dict[int | None, np.ndarray] = {}

    def q_rows(prev_key: int) -> np.ndarray:  # Q of every row against V_{prev_key} (-1: V_inf)
        q = q_cache.get(prev_key)
        if q is None:
            prev = planner._v_inf if prev_key < 0 else planner._layers[prev_key]
            assert prev is not None  # V_inf exists exactly when there is no turn limit
            q = q_cache[prev_key] = np.bincount(
                t.t_row, weights=t.t_prob * prev[t.t_next], minlength=n_rows
            )
        return q

    def choose(k: int | None) -> np.ndarray:
        if k is None:
            top = len(planner._layers) - 1
            keys = [-1, *range(top - 1, -1, -1)]
        else:
            keys = list(range(min(k, len(planner._layers) - 1) - 1, -1, -1))
        keep = np.ones(n_rows, dtype=bool)
        for key in keys:
            q = q_rows(key)
            best = np.maximum.reduceat(np.where(keep, q, -np.inf), starts)
            full = np.full(len(t.states), np.inf)
            full[running] = best
            keep &= q >= full[row_state] - TIE
        first = np.minimum.reduceat(np.where(keep, np.arange(n_rows), n_rows), starts)
        out = np.full(len(t.states), -1, dtype=np.int64)
        out[running] = partner_part[first]
        return out

    def probs(state: Any, turns_left: int | None) -> Mapping[int, float]:
        key = None if planner.horizon is None else turns_left
        if key not in chosen:
            chosen[key] = choose(key)
        return {int(chosen[key][planner._idx(state)]): 1.0}

    return MarkovPartner("optimal", probs, stationary=False)


def partner_from_agent(
    name: str, bundle: Any, seat: int, agent: Any, stationary: bool = False
) -> MarkovPartner:
    """A :class:`MarkovPartner` from an agent object, asked on the full turn of every state.

    The turn is the one the episode driver would hand it (:func:`~tom_envs.core.agents.state_turn`:
    view, vector observation, mask, text) for the canonical state with the turn counter of the
    turns left. An agent with ``action_probs(turn)`` (its known policy) is read through it;
    otherwise its ``act(turn)`` is taken as a deterministic choice. The tabulation is exact only
    for an agent that is Markov in ``(state, turns left)`` (rule bots, feedforward actors); one
    that learns or remembers within the episode is not (the caller vouches for it).
    """
    game = bundle.game
    horizon = game.config.max_turns

    def probs(state: Any, turns_left: int | None) -> Mapping[int, float]:
        turn_no = 0 if horizon is None or turns_left is None else horizon - turns_left
        turn = state_turn(bundle, replace(state, turn=turn_no), seat)
        known = getattr(agent, "action_probs", None)
        if known is not None:
            dist = known(turn)
            if dist is not None:
                return {int(a): float(p) for a, p in dict(dist).items()}
        action = as_agent_action(agent.act(turn)).action
        if action is None:
            raise ValueError(f"partner {name!r} named no action in {state}")
        return {int(action): 1.0}

    return MarkovPartner(name, probs, stationary)


def partner_from_batch(
    name: str,
    game: Any,
    seat: int,
    policy: Callable[[Sequence[Any], int | None], np.ndarray],
    stationary: bool = False,
) -> MarkovPartner:
    """A :class:`MarkovPartner` from a *batched* policy of the partner's views.

    ``policy(views, turns_left)`` returns an array ``(len(views), actions)`` of probabilities over
    the action catalogue (a learned actor: one forward pass over the encoded views, illegal
    actions masked to 0). The views are built as in :func:`partner_from_view`.
    """
    horizon = game.config.max_turns

    def views(states: Sequence[Any], turns_left: int | None) -> list[Any]:
        turn = 0 if horizon is None or turns_left is None else horizon - turns_left
        return [game.observe(replace(s, turn=turn), seat) for s in states]

    def batch(states: Sequence[Any], turns_left: int | None) -> np.ndarray:
        return np.asarray(policy(views(states, turns_left), turns_left), dtype=np.float64)

    def probs(state: Any, turns_left: int | None) -> Mapping[int, float]:
        row = batch([state], turns_left)[0]
        return {int(a): float(p) for a, p in enumerate(row) if p > 0.0}

    return MarkovPartner(name, probs, stationary, batch)


def uniform_partner(game: Any, seat: int) -> MarkovPartner:
    """``random``: uniform over the partner's options (as :class:`~tom_envs.core.agents.RandomAgent`
    plays the legal actions)."""

    def probs(state: Any, turns_left: int | None) -> Mapping[int, float]:
        opts = game.options(state, seat)
        return {a: 1.0 / len(opts) for a in opts}

    return MarkovPartner("random", probs, stationary=True)


class BestResponsePlanner:
    """The exact best response of seat ``seat`` to a known Markov partner in the other seat.

    Reuses the joint planner's tables (every state reachable from the start, chance enumerated
    exactly) and replaces the ``max`` over joint actions by a ``max`` over the focal's own action
    of the partner-weighted joint rows:

        V_0(s) = 0 (running),  V_k(success) = 1,  V_k(failure) = 0
        Q_k(s, a) = sum_b pi(b | s, k) * ( sum_{s'} P(s' | s, (a, b)) * V_{k-1}(s') - step_cost )
        V_k(s) = max_a Q_k(s, a)

    With ``step_cost = 0``, ``V_H(start)`` is the highest probability of success within the turn
    limit that any focal policy reaches with this partner (CollabEscape's objective). With
    ``step_cost = 1 / (max_turns + 1)`` it is the highest expected ``success - turns/(max_turns+1)``
    (CollabCapture's: capture first, then speed; ``turns`` is the limit when there is no success).
    The partner only needs to be Markov in the planner's canonical state and the turns left
    (:class:`MarkovPartner`); chance and a stochastic partner are enumerated exactly.

    Args:
        game: the configured rules object (a ``JointPlanner`` game).
        partner: the other seat's policy.
        seat: the focal seat (0 or 1).
        step_cost: cost per turn played before success (see above).
        planner: a joint planner of the same game to reuse (its tables are shared, not copied).
    """

    def __init__(
        self,
        game: Any,
        partner: MarkovPartner,
        seat: int,
        step_cost: float = 0.0,
        planner: JointPlanner | None = None,
    ) -> None:
        if seat not in (0, 1):
            raise ValueError(f"seat must be 0 or 1, got {seat!r}")
        if not isinstance(partner, MarkovPartner):
            raise TypeError(f"partner must be a MarkovPartner, got {type(partner).__name__}")
        if not step_cost >= 0.0:
            raise ValueError(f"step_cost must be >= 0, got {step_cost!r}")
        self.game = game
        self.partner = partner
        self.seat = seat
        self.step_cost = float(step_cost)
        self.planner = planner if planner is not None else JointPlanner(game)
        if self.planner.game.config != game.config:
            raise ValueError("planner was built for another configuration of the game")
        self.horizon = self.planner.horizon
        if self.horizon is None and not partner.stationary:
            raise ValueError(
                f"partner {partner.name!r} reads the turns left, which a game without a turn "
                "limit does not have: give a stationary partner or a turn limit"
            )
        if self.horizon is None and self.step_cost:
            raise ValueError("step_cost needs a turn limit (the unbounded value would diverge)")
        self._groups()
        self._solve()

    # ------------------------------------------------------------------------- tables
    def _groups(self) -> None:
        """Group the joint rows by (state, focal action); each state's groups are contiguous."""
        t = self.planner._tables
        n_rows = len(t.row_joint)
        group = np.empty(n_rows, dtype=np.int64)
        g_start: list[int] = []  # first group of each state
        g_count: list[int] = []
        g_action: list[int] = []
        other: list[int] = []
        for i in range(len(t.states)):
            g_start.append(len(g_action))
            lo, n = int(t.row_start[i]), int(t.row_count[i])
            mine: dict[int, int] = {}
            for r in range(lo, lo + n):
                a = t.row_joint[r][self.seat]
                if a not in mine:
                    mine[a] = len(g_action)
                    g_action.append(a)
                group[r] = mine[a]
                other.append(t.row_joint[r][1 - self.seat])
            g_count.append(len(mine))
        self._row_group = group
        self._row_other = np.asarray(other, dtype=np.int64)
        self._g_start = np.asarray(g_start, dtype=np.int64)
        self._g_count = np.asarray(g_count, dtype=np.int64)
        self._g_action = np.asarray(g_action, dtype=np.int64)
        self._row_state = np.repeat(np.arange(len(t.states)), t.row_count)

    def _weights(self, turns_left: int | None) -> np.ndarray:
        """``pi(b_r | s_r, k)`` of every joint row ``r`` (checked: a distribution over the
        partner's options)."""
        if self.partner.batch is not None:
            return self._batch_weights(turns_left)
        t = self.planner._tables
        w = np.zeros(len(t.row_joint))
        for i, s in enumerate(t.states):
            n = int(t.row_count[i])
            if n == 0:
                continue
            lo = int(t.row_start[i])
            dist = self.partner.probs(s, turns_left)
            opts = self.game.options(s, 1 - self.seat)
            total = 0.0
            for b, p in dist.items():
                if p < 0.0 or not np.isfinite(p):
                    raise ValueError(
                        f"partner {self.partner.name!r}: probability {p!r} of action {b} in {s}"
                    )
                if p and b not in opts:
                    raise ValueError(
                        f"partner {self.partner.name!r} plays {b} in {s}, not among its options "
                        f"{opts}"
                    )
                total += p
            if abs(total - 1.0) > 1e-9:
                raise ValueError(
                    f"partner {self.partner.name!r}: probabilities sum to {total} in {s}"
                )
            others = self._row_other[lo : lo + n]
            w[lo : lo + n] = [float(dist.get(int(b), 0.0)) for b in others]
        return w

    def _batch_weights(self, turns_left: int | None) -> np.ndarray:
        """:meth:`_weights` from the partner's batched policy (one call for every state)."""
        assert self.partner.batch is not None
        t = self.planner._tables
        running = np.flatnonzero(t.row_count > 0)
        table = self.partner.batch([t.states[i] for i in running], turns_left)
        if table.ndim != 2 or table.shape[0] != len(running):
            raise ValueError(
                f"partner {self.partner.name!r}: batch gave shape {table.shape} for "
                f"{len(running)} states (expected (states, actions))"
            )
        if not np.all(np.isfinite(table)) or np.any(table < 0.0):
            raise ValueError(f"partner {self.partner.name!r}: negative or non-finite probability")
        sums = table.sum(axis=1)
        if np.any(np.abs(sums - 1.0) > 1e-6):
            bad = int(np.argmax(np.abs(sums - 1.0)))
            raise ValueError(
                f"partner {self.partner.name!r}: probabilities sum to {sums[bad]} in "
                f"{t.states[running[bad]]}"
            )
        allowed = np.zeros_like(table, dtype=bool)
        for n, i in enumerate(running):
            allowed[n, list(self.game.options(t.states[i], 1 - self.seat))] = True
        if np.any(table[~allowed] > 0.0):
            n = int(np.argmax((table * ~allowed).max(axis=1)))
            raise ValueError(
                f"partner {self.partner.name!r} gives mass to an action outside its options in "
                f"{t.states[running[n]]}"
            )
        row_in_batch = np.full(len(t.states), -1, dtype=np.int64)
        row_in_batch[running] = np.arange(len(running))
        return table[row_in_batch[self._row_state], self._row_other]

    def _q_groups(self, prev: np.ndarray, w: np.ndarray) -> np.ndarray:
        """``Q`` of every (state, focal action) group against the previous layer ``prev``."""
        t = self.planner._tables
        q_rows = np.bincount(t.t_row, weights=t.t_prob * prev[t.t_next], minlength=len(w))
        q_rows = q_rows - self.step_cost
        return np.bincount(self._row_group, weights=w * q_rows, minlength=len(self._g_action))

    def _backup(self, prev: np.ndarray, w: np.ndarray) -> np.ndarray:
        t = self.planner._tables
        qg = self._q_groups(prev, w)
        new = np.where(t.kind == 1, 1.0, 0.0)
        running = t.row_count > 0
        if running.any():
            new[running] = np.maximum.reduceat(qg, self._g_start[running])
        return new

    def _solve(self) -> None:
        t = self.planner._tables
        v = np.where(t.kind == 1, 1.0, 0.0)
        self._w_fixed = self._weights(None) if self.partner.stationary else None
        self._w_layers: dict[int, np.ndarray] = {}
        layers = [v]
        if self.horizon is None:
            assert self._w_fixed is not None
            for _ in range(MAX_ITERATIONS):
                nxt = self._backup(v, self._w_fixed)
                done = np.max(np.abs(nxt - v)) < CONVERGENCE_TOL
                v = nxt
                if done:
                    break
            self._layers = np.stack([layers[0], v])
            return
        for k in range(1, self.horizon + 1):
            v = self._backup(v, self.weights(k))
            layers.append(v)
        self._layers = np.stack(layers)  # _layers[k] = V_k

    def weights(self, turns_left: int | None) -> np.ndarray:
        """The partner's probability of every joint row with ``turns_left`` turns left."""
        if self._w_fixed is not None:
            return self._w_fixed
        assert turns_left is not None
        w = self._w_layers.get(turns_left)
        if w is None:
            w = self._w_layers[turns_left] = self._weights(turns_left)
        return w

    # ------------------------------------------------------------------------ queries
    def _k(self, state: Any, k: int | None) -> int:
        if k is not None:
            if not 0 <= k < len(self._layers) or (self.horizon is None and k != 1):
                raise ValueError(f"k={k} is outside the kept layers")
            return k
        if self.horizon is None:
            return 1  # the unbounded fixed point is layer 1
        return max(0, self.horizon - int(state.turn))

    def start(self) -> Any:
        """The game's start state (no chance at the start in these games)."""
        return self.game.initial_state(np.random.default_rng(0))

    def value(self, state: Any = None, k: int | None = None) -> float:
        """``V_k(state)``: the best-response value (default: the start, with the turns left)."""
        state = self.start() if state is None else state
        i = self.planner._idx(state)
        return float(self._layers[self._k(state, k)][i])

    def q_values(self, state: Any = None, k: int | None = None) -> dict[int, float]:
        """``Q_k(state, a)`` for every focal action ``a`` (display order), the partner's
        distribution over its own action averaged in."""
        state = self.start() if state is None else state
        i = self.planner._idx(state)
        k = self._k(state, k)
        g0, n = int(self._g_start[i]), int(self._g_count[i])
        if n == 0:
            return {}
        if k == 0:
            return {int(a): 0.0 for a in self._g_action[g0 : g0 + n]}
        if self.horizon is None:  # the unbounded fixed point: Q against V_inf itself
            qg = self._q_groups_of(i, self._layers[1], self.weights(None))
        else:
            qg = self._q_groups_of(i, self._layers[k - 1], self.weights(k))
        return {int(a): float(q) for a, q in zip(self._g_action[g0 : g0 + n], qg, strict=True)}

    def _q_groups_of(self, i: int, prev: np.ndarray, w: np.ndarray) -> np.ndarray:
        t = self.planner._tables
        rows = self.planner._rows(i)
        lo, hi = np.searchsorted(t.t_row, [rows.start, rows.stop])
        q_rows = np.zeros(len(rows))
        np.add.at(q_rows, t.t_row[lo:hi] - rows.start, t.t_prob[lo:hi] * prev[t.t_next[lo:hi]])
        q_rows -= self.step_cost
        g0, n = int(self._g_start[i]), int(self._g_count[i])
        out = np.zeros(n)
        sl = slice(rows.start, rows.stop)
        np.add.at(out, self._row_group[sl] - g0, w[sl] * q_rows)
        return out

    def best_actions(self, state: Any = None, k: int | None = None) -> list[int]:
        """Every focal action of the highest ``Q_k`` (display order), ties broken as the joint
        planner breaks them: by ``Q_{k-1}``, ..., ``Q_1`` (most likely to succeed in time, then
        soonest), each against the partner's distribution now."""
        state = self.start() if state is None else state
        q = self.q_values(state, k)
        if not q:
            return []
        actions = list(q)
        vals = np.asarray([q[a] for a in actions])
        keep = vals >= vals.max() - TIE
        if self.horizon is not None and keep.sum() > 1:
            i = self.planner._idx(state)
            k = self._k(state, k)
            w = self.weights(k)
            for kk in range(k - 1, 0, -1):
                qq = self._q_groups_of(i, self._layers[kk - 1], w)
                keep &= qq >= qq[keep].max() - TIE
                if keep.sum() == 1:
                    break
        return [a for a, ok in zip(actions, keep, strict=True) if ok]

    def best_action(self, state: Any = None, k: int | None = None) -> int:
        """The best response now (the first best in display order)."""
        best = self.best_actions(state, k)
        if not best:
            raise ValueError("no action in a terminal state")
        return best[0]

    def outcome(self, state: Any = None, against: BestResponsePlanner | None = None) -> dict[str, float]:
        """Exact outcome of the best response (:meth:`best_action`) with this partner, or with
        the partner of ``against`` (a planner of the same tables and seat: this best response
        played against another member, e.g. a fixed convention against a mismatched partner).

        Propagates the distribution over states turn by turn (partner and chance enumerated) up
        to the turn limit (or the layers a planner without a limit keeps). Returns ``success``
        and ``failure`` probabilities, ``expected_turns`` (turns played, the limit counted where
        there is no success) and ``expected_turns_given_success``.
        """
        actual = self if against is None else against
        if actual.planner is not self.planner or actual.seat != self.seat:
            raise ValueError("against must share this planner's tables and seat")
        state = self.start() if state is None else state
        t = self.planner._tables
        k0 = None if self.horizon is None else max(0, self.horizon - int(state.turn))
        total = UNBOUNDED_LAYERS if k0 is None else k0
        dist = {self.planner._idx(state): 1.0}
        success = failure = turns_success = turns_all = 0.0
        for step in range(total):
            k = None if k0 is None else k0 - step
            nxt: dict[int, float] = {}
            w = actual.weights(k)
            for i, mass in dist.items():
                a = self.best_action(t.states[i], None if k is None else k)
                for r in self.planner._rows(i):
                    if t.row_joint[r][self.seat] != a or w[r] == 0.0:
                        continue
                    lo, hi = np.searchsorted(t.t_row, [r, r + 1])
                    for n, p in zip(t.t_next[lo:hi], t.t_prob[lo:hi], strict=True):
                        m = mass * w[r] * p
                        if t.kind[n] == 1:
                            success += m
                            turns_success += m * (step + 1)
                        elif t.kind[n] == 2:
                            failure += m
                            turns_all += m * (step + 1)
                        else:
                            nxt[int(n)] = nxt.get(int(n), 0.0) + m
            dist = nxt
            if not dist:
                break
        turns_all += turns_success + sum(dist.values()) * total
        return {
            "success": float(success),
            "failure": float(failure),
            "expected_turns": float(turns_all),
            "expected_turns_given_success": (
                float(turns_success / success) if success else float("nan")
            ),
        }
