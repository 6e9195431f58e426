"""Literal ToM for any acting agent in any game: "what will <partner> do next?".

**The open probe.** With prediction on (``EpisodeDriver(..., predict="all")``), every seated
agent that has a method ``predict_partner(turn, question) -> answer`` is asked, at each of its
decisions, **after** it chose its action and **before** the environment applies it, one
:class:`NextActionQuestion` per other seat. The truth does not exist when the question is asked:
it is the target's first decision recorded after the question (in a simultaneous game the
partner's move of the same round for the seat that moves first in the AEC order, the next round's
for the other). The answer cannot change the action (already taken). Bots without the method are
never asked, so their play is the same with prediction on or off.

* **Options**: the target's whole action space (never its legal actions at its next turn: that
  set depends on the asker's move and on chance, and legality can carry private information), in
  the game's action texts as the asker's own text layer names them, in an order drawn uniformly
  from ``default_rng([seed, ORDER_SALT, step index, target seat])`` and recorded. The question
  carries the question text and the options only: no answer, no policy, no partner spec.
  Games with more than :data:`MAX_OPTIONS` actions are asked about the coarse classes they
  declare (their ``action_classes`` hook, :mod:`tom_envs.core.action_classes`: Hanabi's play /
  discard / hint colour / hint rank, Guandan's combination types, CoBlock's place / break / wait /
  message / end), scored against the class of the partner's actual move (each step then records
  its ``action_class``, and ``policy_class`` beside a known policy); a game with neither is not
  asked (an agent may still volunteer ``prediction={"partner_action": k}``).
* **Answers**: an ``int`` (0-based index into the shown options), an option's text, or a bare
  number N (the N-th shown option, the suite's number rule). Anything else is recorded as
  unanswered (counted wrong).
* **Volunteered predictions**: the matrix games' existing channel (an agent's
  ``AgentAction(prediction={"partner_action": k})``, RMax and the matrix LLM presets) is scored
  the same way, as ``source="volunteered"`` (2-player games: about the other seat; or a mapping
  ``{"player_1": k}``).

**Scores** (:func:`score_items`): accuracy against the partner's actual next action with a
Wilson interval; where the partner exposes ``action_probs(turn)`` (recorded as the step's
``policy``), the probability the partner's policy gave the predicted action (``p_pred``: the
accuracy earned in expectation, without the partner's sampling noise), its log
(``log_p_pred``, floored at ``log(1e-6)``) and the oracle ceiling (mean of ``max_a pi(a)``).

**Shortcuts** (:func:`shortcut_items`), computed from the same records on the same items and
printed beside the agent (:func:`literal_report`): ``repeat_last`` (the partner's previous
action), ``most_frequent`` (its most frequent action so far in the episode, ties to the lowest
index), ``majority_context`` (the most frequent next action per state type, fitted on the
*other* seeds: leave one seed out; state type = (partner's last action, asker's last action)
unless a ``context`` function is given; an unseen type takes the other seeds' overall majority),
``learned_history`` (a learned no-reasoning sequence model, also fitted on the other seeds only: a
back-off n-gram from the partner's last 3, 2 or 1 actions with the state type, then its last
action alone, then the overall majority; the most specific history seen in training decides)
and ``oracle`` (the argmax of the partner's known policy, where it is recorded). A shortcut
with no basis (no previous action) counts as wrong. An agent's literal ToM is its accuracy
*beside* the best shortcut: an agent that only repeats the partner's last move scores as
``repeat_last`` does.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from tom_envs.core.action_classes import ActionClasses
from tom_envs.core.agents import Agent, AgentAction, BaseAgent, EpisodeInfo, Turn, jsonable
from tom_envs.core.probes import normalise_answer
from tom_envs.core.text import ascii_int
from tom_envs.records import wilson

#: The salt of the option order's generator: ``default_rng([seed, ORDER_SALT, step, target])``.
ORDER_SALT = 2_750_159

#: Games with more actions than this are not asked (a long option list is not a fair question).
MAX_OPTIONS = 16

#: The floor of ``log_p_pred`` (a prediction the partner's policy rules out).
LOG_FLOOR = math.log(1e-6)


@dataclass(frozen=True)
class NextActionQuestion:
    """What an agent is asked: the question and its options, never the answer.

    Attributes:
        id: ``"p<step index>.<target>"`` (unique in the episode).
        target: the seat asked about (``"player_1"``).
        question: the text put to the agent.
        options: the target's action texts, in the shown (shuffled) order.
        kind: ``"next_action"``.
    """

    id: str
    target: str
    question: str
    options: tuple[str, ...]
    kind: str = "next_action"


def option_order(seed: int | None, step: int, target: int, n: int) -> list[int]:
    """The shown order of ``n`` options: a uniform permutation from the probe's own seed."""
    rng = np.random.default_rng(None if seed is None else [int(seed), ORDER_SALT, step, target])
    return [int(k) for k in rng.permutation(n)]


def action_texts(text_layer: Any, view: Any, n: int) -> list[str]:
    """The option texts of actions ``0 .. n-1`` (the asker's text layer on the asker's view);
    ``"Action k"`` for every action when the texts are not ``n`` distinct strings."""
    try:
        texts = [str(text_layer.action_text(view, a)) for a in range(n)]
    except Exception:  # a text layer that cannot name an action it does not hold
        texts = []
    if len(set(texts)) != n:
        texts = [f"Action {a}" for a in range(n)]
    return texts


def read_answer(reply: Any, options: Sequence[str]) -> int | None:
    """The shown option (0-based) an answer names: an int index, an option's text, or a bare
    1-based number; ``None`` when it names none."""
    if isinstance(reply, (int, np.integer)) and not isinstance(reply, bool):
        k = int(reply)
        return k if 0 <= k < len(options) else None
    if not isinstance(reply, str):
        return None
    named = normalise_answer(reply, options)
    if named is not None:
        return list(options).index(named)
    k = ascii_int(reply.strip())
    return k - 1 if k is not None and 1 <= k <= len(options) else None


_UNSET = object()


def game_classes(driver: Any) -> ActionClasses | None:
    """The game's coarse action classes when its action space is too large to ask about exactly
    (its ``action_classes`` hook; ``None`` when it has none or is small enough), once per
    driver."""
    cached = getattr(driver, "_partners_classes", _UNSET)
    if cached is _UNSET:
        cached = None
        hook = getattr(driver.spec.load(), "action_classes", None)
        if int(driver.game.num_actions) > MAX_OPTIONS and hook is not None:
            cached = hook(**{**driver.spec.kwargs, **driver.env_kwargs})
        driver._partners_classes = cached
    return cached  # type: ignore[return-value]


def record_class(driver: Any, record: dict[str, Any], action: int) -> None:
    """Record the class of the action played (games asked at the class level)."""
    classes = game_classes(driver)
    if classes is not None:
        record["action_class"] = classes(action)
        if isinstance(record.get("policy"), Mapping):
            dist: dict[str, float] = {}
            for a, p in record["policy"].items():
                k = str(classes(int(a)))
                dist[k] = dist.get(k, 0.0) + float(p)
            record["policy_class"] = dist


def predict_every(predict: str) -> int | None:
    """The period of a ``predict`` setting: ``"all"`` 1, ``"every:K"`` K, ``"off"`` None
    (:class:`ValueError` naming the allowed values otherwise)."""
    if predict == "off":
        return None
    if predict == "all":
        return 1
    k = ascii_int(predict[6:]) if isinstance(predict, str) and predict.startswith("every:") else None
    if k is None or k < 1:
        raise ValueError(f"predict must be 'off', 'all' or 'every:K' (K >= 1), got {predict!r}")
    return k


def ask_next_action(driver: Any, agent: str, obj: Any, turn: Turn, record: dict[str, Any]) -> None:
    """Put one :class:`NextActionQuestion` per other seat to ``obj`` (after its action, before
    the step is applied) and record them in ``record["predict"]``. A failing answer is recorded
    as ``error`` and counts as unanswered, never fatal. Games with more than
    :data:`MAX_OPTIONS` actions are asked about their coarse action classes (``"classes":
    true``), or not at all when they declare none."""
    every = predict_every(driver.predict)
    if every is None or int(turn.decision) % every:  # ``every:K``: fixed before play
        return
    n = int(driver.game.num_actions)
    env = driver.env
    classes = game_classes(driver)
    if n > MAX_OPTIONS and classes is None:
        return
    if classes is not None:
        texts, n = list(classes.names), len(classes.names)
        what = f"What {classes.noun} will {{target}} make next? Answer with one of the options."
    else:
        texts = action_texts(env.bundle.text, env.view(agent), n)
        what = "What will {target} do next? Answer with one of the options."
    probe_turn = driver._probe_turn(agent, turn.decision)
    out = []
    for target in driver.agents_:
        if target == agent:
            continue
        seat = int(target.rsplit("_", 1)[1])
        order = option_order(driver.seed, int(record["index"]), seat, n)
        options = tuple(texts[k] for k in order)
        question = NextActionQuestion(
            f"p{record['index']}.{target}", target, what.format(target=target), options,
        )  # fmt: skip
        entry: dict[str, Any] = {"id": question.id, "target": target, "source": "probe",
                                 "order": order}  # fmt: skip
        if classes is not None:
            entry["classes"] = True
        try:
            reply = obj.predict_partner(probe_turn, question)
        except Exception as exc:  # recorded, counted unanswered
            reply = None
            entry["error"] = f"{type(exc).__name__}: {exc}"
        shown = read_answer(reply, options)
        entry["reply"] = jsonable(reply)
        entry["action"] = None if shown is None else order[shown]
        out.append(entry)
    record["predict"] = out


def record_policy(obj: Any, turn: Turn, record: dict[str, Any]) -> None:
    """Record the acting seat's known action distribution (its ``action_probs(turn)``), asked
    before it acts; an error is recorded as ``policy_error``, never fatal."""
    probs = getattr(obj, "action_probs", None)
    if probs is None:
        return
    try:
        dist = probs(turn)
    except Exception as exc:
        record["policy_error"] = f"{type(exc).__name__}: {exc}"
        return
    if dist is None:
        return
    items = dist.items() if isinstance(dist, Mapping) else enumerate(dist)
    record["policy"] = {str(int(a)): float(p) for a, p in items if float(p) > 0.0}


# ------------------------------------------------------------------------------- scoring
@dataclass
class Item:
    """One prediction linked to its truth.

    Attributes:
        seed: the episode seed.
        index: the asker's step index (where the question was asked).
        asker, target: the seats.
        source: ``"probe"`` or ``"volunteered"``.
        predicted: the predicted action (``None``: unanswered).
        truth: the target's next action (``None``: unresolved, the target never acted again).
        policy: the target's known distribution at that decision (``None``: not exposed).
        context: the state type the ``majority_context`` shortcut groups by.
        history: the target's actions before the question, oldest first.
        shortcuts: the shortcut predictions for this item (:func:`shortcut_items`).
        kind: ``"action"``, or ``"class"`` for a question about coarse action classes (then
            ``predicted``, ``truth``, ``policy`` and ``history`` are classes).
    """

    seed: int
    index: int
    asker: str
    target: str
    source: str
    predicted: int | None
    truth: int | None
    policy: dict[int, float] | None = None
    context: Any = None
    history: tuple[int, ...] = ()
    shortcuts: dict[str, int | None] = field(default_factory=dict)
    kind: str = "action"


def _volunteered(step: Mapping[str, Any], seats: Sequence[str]) -> dict[str, int]:
    pred = step.get("prediction") or {}
    value = pred.get("partner_action") if isinstance(pred, Mapping) else None
    if isinstance(value, Mapping):
        return {str(t): int(a) for t, a in value.items() if a is not None}
    others = [s for s in seats if s != step["agent"]]
    if value is None or len(others) != 1:
        return {}
    return {others[0]: int(value)}


def default_context(steps: Sequence[Mapping[str, Any]], index: int, asker: str, target: str) -> Any:
    """The state type of a question: (the target's last action, the asker's last action) before
    step ``index`` (``None`` for a seat that has not acted)."""
    last: dict[str, int | None] = {asker: None, target: None}
    for step in steps[:index + 1]:
        if step["agent"] in last and step["action"] is not None:
            last[step["agent"]] = int(step["action"])
    return (last[target], last[asker])


def prediction_items(
    episode: Any,
    context: Callable[[Sequence[Mapping[str, Any]], int, str, str], Any] = default_context,
) -> list[Item]:
    """Every prediction of ``episode`` (open probes and volunteered), each linked to the
    target's first decision recorded after it."""
    raw = episode.steps
    seats = sorted({s["agent"] for s in raw} | set(getattr(episode, "agents", {}) or {}))
    # class-level questions are scored in class space: actions and policies by their class
    by_class = [{**s, "action": s.get("action_class"), "policy": s.get("policy_class")}
                for s in raw] if any("action_class" in s for s in raw) else raw  # fmt: skip
    out = []
    for i, step in enumerate(raw):
        asked: list[tuple[str, str, int | None, bool]] = []
        for entry in step.get("predict") or ():
            asked.append((entry["target"], "probe", entry.get("action"), bool(entry.get("classes"))))
        for target, action in _volunteered(step, seats).items():
            asked.append((target, "volunteered", action, False))
        for target, source, action, classes in asked:
            steps = by_class if classes else raw
            nxt = next((s for s in steps[i + 1:] if s["agent"] == target), None)
            policy = None
            if nxt is not None and isinstance(nxt.get("policy"), Mapping):
                policy = {int(a): float(p) for a, p in nxt["policy"].items()}
            history = tuple(int(s["action"]) for s in steps[:i + 1]
                            if s["agent"] == target and s["action"] is not None)  # fmt: skip
            out.append(Item(
                int(episode.seed), i, step["agent"], target, source,
                None if action is None else int(action),
                None if nxt is None else int(nxt["action"]), policy,
                context(steps, i, step["agent"], target), history, kind="class" if classes else "action",
            ))  # fmt: skip
    return out


def _argmax(counts: Mapping[int, float]) -> int | None:
    """The key with the largest count, ties to the lowest key."""
    if not counts:
        return None
    best = max(counts.values())
    return min(k for k, v in counts.items() if v == best)


#: The back-off orders of the ``learned_history`` shortcut: the target's last 3, 2, 1 actions
#: together with the item's state type, then its last action alone, then nothing (the overall
#: majority of the other seeds).
HISTORY_ORDERS = (3, 2, 1)


def _history_keys(it: Item) -> list[tuple[Any, ...]]:
    """The back-off keys of ``it``, most specific first (each tagged with its level)."""
    keys: list[tuple[Any, ...]] = [(k, it.history[-k:], it.context) for k in HISTORY_ORDERS
                                   if len(it.history) >= k]  # fmt: skip
    if it.history:
        keys.append(("last", it.history[-1]))
    keys.append(("all",))
    return keys


def _learned_history(it: Item, tables: Mapping[int, Mapping[tuple[Any, ...], Counter[int]]]) -> int | None:
    """The ``learned_history`` prediction of ``it``: the most specific back-off key seen on the
    *other* seeds decides (its most frequent next action, ties to the lowest)."""
    for key in _history_keys(it):
        counts: Counter[int] = Counter()
        for seed, table in tables.items():
            if seed != it.seed:
                counts.update(table.get(key, Counter()))
        if counts:
            return _argmax(counts)
    return None


def shortcut_items(items: Sequence[Item]) -> list[Item]:
    """The items with their ``shortcuts`` filled in (see the module docstring); the
    ``majority_context`` table of an item is fitted on the items of *other* seeds with the same
    asker and target, and so is the ``learned_history`` model: a back-off n-gram over the
    target's last actions and the state type (:data:`HISTORY_ORDERS`), a learned predictor with
    no reasoning about the partner, fitted and scored on different seeds."""
    tables: dict[tuple[str, str, str], dict[int, dict[Any, Counter[int]]]] = {}
    grams: dict[tuple[str, str, str], dict[int, dict[tuple[Any, ...], Counter[int]]]] = {}
    for it in items:
        if it.truth is not None:
            by_seed = tables.setdefault((it.asker, it.target, it.kind), {})
            by_seed.setdefault(it.seed, {}).setdefault(it.context, Counter())[it.truth] += 1
            seed_grams = grams.setdefault((it.asker, it.target, it.kind), {}).setdefault(it.seed, {})
            for key in _history_keys(it):
                seed_grams.setdefault(key, Counter())[it.truth] += 1
    out = []
    for it in items:
        cuts: dict[str, int | None] = {
            "repeat_last": it.history[-1] if it.history else None,
            "most_frequent": _argmax(Counter(it.history)),
        }
        per_context: Counter[int] = Counter()
        overall: Counter[int] = Counter()
        for seed, table in tables.get((it.asker, it.target, it.kind), {}).items():
            if seed == it.seed:
                continue
            per_context.update(table.get(it.context, Counter()))
            for counts in table.values():
                overall.update(counts)
        cuts["majority_context"] = _argmax(per_context) if per_context else _argmax(overall)
        cuts["learned_history"] = _learned_history(it, grams.get((it.asker, it.target, it.kind), {}))
        if it.policy:
            cuts["oracle"] = _argmax(it.policy)
        out.append(replace(it, shortcuts=cuts))
    return out


def score_items(items: Iterable[Item], predictor: str | None = None) -> dict[str, float]:
    """Scores of the agent's predictions (``predictor=None``) or of a shortcut's, over the
    resolved items: ``n``, ``unresolved``, ``unanswered``, ``acc`` with its Wilson interval
    (``acc_low``, ``acc_high``) and, over the items whose partner policy is known (``n_policy``),
    ``p_pred``, ``log_p_pred`` and ``ceiling``. Proportions as fractions; ``nan`` when undefined.
    """
    items = list(items)
    resolved = [it for it in items if it.truth is not None]
    guesses = [it.predicted if predictor is None else it.shortcuts.get(predictor) for it in resolved]
    right = sum(g is not None and g == it.truth for g, it in zip(guesses, resolved, strict=True))
    n = len(resolved)
    low, high = wilson(right, n)
    out = {
        "n": float(n),
        "unresolved": float(len(items) - n),
        "unanswered": float(sum(g is None for g in guesses)),
        "acc": right / n if n else float("nan"),
        "acc_low": low,
        "acc_high": high,
    }
    known = [(g, it.policy) for g, it in zip(guesses, resolved, strict=True) if it.policy]
    out["n_policy"] = float(len(known))
    nan = float("nan")
    probs = [0.0 if g is None else pol.get(g, 0.0) for g, pol in known]  # type: ignore[union-attr]
    out["p_pred"] = float(np.mean(probs)) if known else nan
    out["log_p_pred"] = float(np.mean([max(math.log(p), LOG_FLOOR) if p > 0 else LOG_FLOOR
                                       for p in probs])) if known else nan  # fmt: skip
    out["ceiling"] = float(np.mean([max(pol.values()) for _, pol in known])) if known else nan  # type: ignore[union-attr]
    return out


SHORTCUTS = ("repeat_last", "most_frequent", "majority_context", "learned_history", "oracle")


def literal_report(
    episodes: Iterable[Any],
    source: str | None = None,
    context: Callable[[Sequence[Mapping[str, Any]], int, str, str], Any] = default_context,
    kind: str | None = None,
) -> dict[str, dict[str, float]]:
    """``{"agent": scores, "repeat_last": scores, ...}`` on the same items (``source``:
    ``"probe"``, ``"volunteered"`` or both; ``kind``: ``"action"`` or ``"class"``, required
    when the episodes hold both, since exact and class-level accuracies do not pool)."""
    items: list[Item] = []
    for ep in episodes:
        items += prediction_items(ep, context)
    items = shortcut_items(items)
    if source is not None:
        items = [it for it in items if it.source == source]
    kinds = {it.kind for it in items}
    if kind is None and len(kinds) > 1:
        raise ValueError("the episodes hold exact and class-level predictions: give kind=")
    if kind is not None:
        items = [it for it in items if it.kind == kind]
    report = {"agent": score_items(items)}
    for name in SHORTCUTS:
        if name != "oracle" or any(it.policy for it in items):
            report[name] = score_items(items, name)
    return report


# --------------------------------------------------------------------- an agent that answers
class PredictorAgent(BaseAgent):
    """Acts as ``inner`` and answers next-action questions with ``model``.

    ``model`` has ``reset(info)``, ``observe(turn)`` (called at each of the agent's own
    decisions, before ``inner`` acts) and ``predict(turn, target) -> action | None`` (the matrix
    games': :class:`tom_envs.games.matrix.bots.PartnerModel`). The answer
    is the shown option whose text is the predicted action's text in the agent's own legal-action
    list (:meth:`Turn.text`), else ``None``.
    """

    name = "predictor"

    def __init__(self, inner: Agent, model: Any) -> None:
        super().__init__()
        self.inner, self.model = inner, model
        self.name = f"predictor:{getattr(inner, 'name', type(inner).__name__)}"

    def reset(self, info: EpisodeInfo) -> None:
        """Reset the acting agent and the model."""
        super().reset(info)
        self.inner.reset(info)
        self.model.reset(info)

    def act(self, turn: Turn) -> int | AgentAction:
        """The model reads the turn; the inner agent acts."""
        self.model.observe(turn)
        return self.inner.act(turn)

    def predict_partner(self, turn: Turn, question: NextActionQuestion) -> int | None:
        """The shown option naming the model's predicted action."""
        action = self.model.predict(turn, question.target)
        if action is None:
            return None
        text = turn.text().legal_actions.get(int(action))
        return question.options.index(text) if text in question.options else None

    def end_episode(self, turn: Turn) -> None:
        """Forward to the inner agent."""
        end = getattr(self.inner, "end_episode", None)
        if end is not None:
            end(turn)


__all__ = ["HISTORY_ORDERS", "LOG_FLOOR", "MAX_OPTIONS", "ORDER_SALT", "SHORTCUTS", "Item", "NextActionQuestion", "PredictorAgent", "action_texts", "ask_next_action",
           "default_context", "literal_report", "option_order", "predict_every", "prediction_items",
           "read_answer", "record_policy", "score_items", "shortcut_items"]  # fmt: skip
