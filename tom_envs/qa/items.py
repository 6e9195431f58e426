"""CoordinationQA items: one multiple-choice question about one real game state, answer computed.

An item is self-contained and replayable. It names the registered game, the env keyword arguments,
the seed and the joint actions (and chat messages) that lead from ``initial_state`` to the scenario
state, so :func:`replay` rebuilds the exact state and a game's ``verify(item)`` recomputes the answer
from the rules engine. Nothing is hand-labelled.

Per-game generators live in ``tom_envs/games/<game>/qa.py`` (the interface is described in
:mod:`tom_envs.qa.generate`).

Every item has exactly one correct option. Items built as a *contrast set* (minimal pairs: the
same situation with the partner's behaviour or view changed so that the key changes) share a
``contrast`` id; the options of every item of a set are the set's keys, so an answerer that
ignores what differs between the twins is right on exactly one of them.

Answer parsing follows the paper (002, App. D): the text after ``Answer:`` (or ``Action:``) if
present, then the first option letter followed by ``.`` or ``)``, else a fuzzy match of the option
text.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium.utils import seeding

from tom_envs.core.game import GameBundle
from tom_envs.registration import game_spec

#: Question types, as paper 002 defines them.
TYPES = {
    "EC": "Environment Comprehension: an indirect inference about the state, rules or layout",
    "ToM": "Theory of Mind: the partner's intention, knowledge or need",
    "JP": "Joint Planning: the best next action for the team",
}

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

#: Where the truth of an item comes from (``QAItem.source``).
SOURCES = ("rules", "knowledge", "partner_policy", "exact_optimum", "planner", "convention_bot")


@dataclass(frozen=True)
class Scenario:
    """How to rebuild a state: game, env kwargs, seed and the joint actions played from the start.

    Attributes:
        game: registered game name (``"Overcooked"``).
        env_kwargs: keyword arguments of the env (layout, variant...).
        seed: the seed passed to ``reset``; ``initial_state`` draws from ``np.random.default_rng``
            seeded the way :class:`~tom_envs.core.aec.TomAECEnv` seeds it.
        actions: one ``{player: action}`` dict per joint step (keys as strings once in JSON).
        messages: one ``{player: text}`` dict per joint step (empty dicts where none).
        player: the seat the question is put to (the "you" of the question).
        tags: named filters this scenario matches (``"partner_finishing_subtask"``...).
        seats: the agent spec that played each seat in the source episode (a ToM question about
            a scripted partner names its policy from here).
        variant: the counterfactual a contrast item shows (the partner model behind its
            partner-behaviour block, or the change made to the partner's view); ``""`` for the
            state as played. The game's generator rebuilds it from the replayed state.
    """

    game: str
    env_kwargs: Mapping[str, Any]
    seed: int
    actions: tuple[Mapping[int, int], ...]
    messages: tuple[Mapping[int, str], ...] = ()
    player: int = 0
    tags: tuple[str, ...] = ()
    seats: tuple[str, ...] = ()
    variant: str = ""


@dataclass(frozen=True)
class QAItem:
    """One question.

    Attributes:
        id: stable id within a suite (``"overcooked/cramped_room/s12/t37/EC/onions_needed"``).
        game: registered game name.
        type: ``"EC"``, ``"ToM"`` or ``"JP"``.
        kind: what is asked (``"onions_needed"``, ``"partner_next_action"``, ``"best_action"``).
        context: the game description and the state text, as the player sees them.
        question: the question.
        options: the option texts, lettered A, B, C... in this order.
        answers: the index of the correct option, as a one-element tuple (exactly one option is
            correct).
        source: where the truth comes from (one of :data:`SOURCES`).
        scenario: how to rebuild the state.
        details: computed values behind the answer (option values, value gap, the option order
            shown, ...).
        contrast: the id of the contrast set the item belongs to (its twins share it), or ``""``.
    """

    id: str
    game: str
    type: str
    kind: str
    context: str
    question: str
    options: tuple[str, ...]
    answers: tuple[int, ...]
    source: str
    scenario: Scenario
    details: Mapping[str, Any] = field(default_factory=dict)
    contrast: str = ""

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"item {self.id}: type {self.type!r} is not one of {sorted(TYPES)}")
        if self.source not in SOURCES:
            raise ValueError(f"item {self.id}: source {self.source!r} is not one of {SOURCES}")
        if len(self.options) < 2 or len(self.options) > len(LETTERS):
            raise ValueError(f"item {self.id}: needs 2..{len(LETTERS)} options")
        if len(set(self.options)) != len(self.options):
            raise ValueError(f"item {self.id}: duplicate options")
        if len(self.answers) != 1:
            raise ValueError(f"item {self.id}: exactly one option must be correct, got {self.answers}")
        if not 0 <= self.answers[0] < len(self.options):
            raise ValueError(f"item {self.id}: answer {self.answers[0]} out of range")

    @property
    def answer(self) -> int:
        """The index of the correct option."""
        return self.answers[0]
    @property
    def answer_letters(self) -> tuple[str, ...]:
        """The correct letters."""
        return tuple(LETTERS[a] for a in self.answers)

    def prompt(self) -> str:
        """The paper's format: description and state, the question, lettered options."""
        opts = "\n".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(self.options))
        return (
            f"{self.context}\n\n{self.question}\n{opts}\n\n"
            'Think step by step, then end with "Answer: <letter>".'
        )

    def score(self, reply: str) -> bool:
        """True when the parsed reply is one of the correct options."""
        choice = parse_answer(reply, self.options)
        return choice is not None and choice in self.answers

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (one JSONL line)."""
        d = asdict(self)
        d["scenario"]["actions"] = [
            {str(k): int(v) for k, v in a.items()} for a in self.scenario.actions
        ]
        d["scenario"]["messages"] = [
            {str(k): str(v) for k, v in m.items()} for m in self.scenario.messages
        ]
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> QAItem:
        """Inverse of :meth:`to_json`."""
        s = d["scenario"]
        scenario = Scenario(
            game=s["game"],
            env_kwargs=dict(s["env_kwargs"]),
            seed=int(s["seed"]),
            actions=tuple({int(k): int(v) for k, v in a.items()} for a in s["actions"]),
            messages=tuple({int(k): str(v) for k, v in m.items()} for m in s.get("messages", ())),
            player=int(s.get("player", 0)),
            tags=tuple(s.get("tags", ())),
            seats=tuple(s.get("seats", ())),
            variant=str(s.get("variant", "")),
        )
        return cls(
            id=d["id"],
            game=d["game"],
            type=d["type"],
            kind=d["kind"],
            context=d["context"],
            question=d["question"],
            options=tuple(d["options"]),
            answers=tuple(int(a) for a in d["answers"]),
            source=d["source"],
            scenario=scenario,
            details=dict(d.get("details", {})),
            contrast=str(d.get("contrast", "")),
        )


@dataclass(frozen=True)
class ItemMaker:
    """Writes the items of one scenario: shared id prefix, game, context and scenario.

    ``make("EC", "pot_status", question, options, answers, "rules")`` is the item with id
    ``"<base>/EC/pot_status"``.
    """

    base: str
    scenario: Scenario
    context: str

    def __call__(
        self,
        type: str,
        kind: str,
        question: str,
        options: Sequence[str],
        answers: Sequence[int],
        source: str,
        details: Mapping[str, Any] | None = None,
    ) -> QAItem:
        """One item of this scenario."""
        return QAItem(
            id=f"{self.base}/{type}/{kind}",
            game=self.scenario.game,
            type=type,
            kind=kind,
            context=self.context,
            question=question,
            options=tuple(options),
            answers=tuple(int(a) for a in answers),
            source=source,
            scenario=self.scenario,
            details=dict(details or {}),
        )


#: What differs between the twins of a contrast set (``details["varies"]``): the partner's
#: behaviour or view (a partner-blind answerer is at chance on the set, by construction), or the
#: situation (the state: no answerer that ignores the context can beat chance on the set).
VARIES = ("partner", "situation")


def contrast_set(
    base: str,
    type: str,
    kind: str,
    question: str,
    source: str,
    twins: Sequence[tuple[Scenario, str, Any, str]],
    details: Mapping[str, Any] | None = None,
    varies: str = "partner",
) -> list[QAItem]:
    """The items of one contrast set: one per twin ``(scenario, context, key, key text)``, every
    key different, the options of each item the keys of all twins (sorted by text: the canonical
    order, before the shuffle). Ids are ``"<base>/<type>/<kind>/<variant>"``, the contrast id
    ``"<base>/<type>/<kind>"``; ``varies`` (one of :data:`VARIES`) is recorded in the details.

    Raises:
        ValueError: fewer than two twins, two twins with the same key text, or ``varies``
            unknown.
    """
    if varies not in VARIES:
        raise ValueError(f"varies must be one of {VARIES}, got {varies!r}")
    texts = [t[3] for t in twins]
    if len(twins) < 2 or len(set(texts)) != len(texts):
        raise ValueError(f"{base}/{type}/{kind}: a contrast set needs 2+ twins with distinct keys")
    options = tuple(sorted(texts))
    cid = f"{base}/{type}/{kind}"
    return [
        QAItem(
            id=f"{cid}/{scenario.variant}",
            game=scenario.game,
            type=type,
            kind=kind,
            context=context,
            question=question,
            options=options,
            answers=(options.index(text),),
            source=source,
            scenario=scenario,
            details={**dict(details or {}), "key": key, "varies": varies},
            contrast=cid,
        )
        for scenario, context, key, text in twins
    ]


def situation_set(
    base: str,
    type: str,
    kind: str,
    question: str,
    source: str,
    scenario: Scenario,
    candidates: Sequence[tuple[str, Any]],
    key_of: Callable[[Any], Any],
    text_of: Callable[[Any], str],
    context_of: Callable[[Any], str],
    rng: np.random.Generator,
    max_twins: int = 4,
    varies: str = "situation",
    valid: Callable[[Any, Any], bool] | None = None,
    multi: bool = False,
) -> list[QAItem]:
    """A contrast set over counterfactual situations: ``candidates`` are ``(variant, state)``
    edits of one situation, taken in a seeded random order, up to ``max_twins``.

    ``key_of(state)`` is the state's answer (``None``: no unique answer there), or, with
    ``multi``, the list of every correct answer there (one of them becomes the twin's key). A
    state joins with a key that no twin has yet, that is wrong in every twin taken, and in which
    every twin's key is wrong; with ``valid(state, key)``, every key must also be a valid option
    in every twin (an option must make sense in each). ``[]`` when fewer than two twins join.
    """
    correct: list[tuple[Any, set]] = []
    for variant, state in candidates:
        keys = key_of(state)
        if keys is None:
            continue
        keys = list(keys) if multi else [keys]
        if keys:
            correct.append(((variant, state), set(keys)))
    chosen: list[tuple[Any, str, Any, set]] = []
    for i in rng.permutation(len(correct)):
        (variant, state), right = correct[int(i)]
        options = sorted(right, key=str)
        for j in rng.permutation(len(options)):
            key = options[int(j)]
            if any(key == k or key in r or k in right for k, _, _, r in chosen):
                continue
            if valid is not None and not (
                all(valid(state, k) for k, _, _, _ in chosen)
                and all(valid(st, key) for _, _, st, _ in chosen)
            ):
                continue
            chosen.append((key, variant, state, right))
            break
        if len(chosen) == max_twins:
            break
    if len(chosen) < 2:
        return []
    twins = [
        (replace(scenario, variant=variant), context_of(state), key, text_of(key))
        for key, variant, state, _ in sorted(chosen, key=lambda c: str(c[0]))
    ]
    return contrast_set(base, type, kind, question, source, twins, varies=varies)


def arrange(item: QAItem, order: Sequence[int]) -> QAItem:
    """``item`` with its options shown in ``order`` (``order[k]`` is the original index of the
    option now at letter ``k``), recorded in ``details["order"]`` so that :func:`verify
    <tom_envs.qa.generate.verify>` can recompute the item and show it the same way."""
    order = [int(k) for k in order]
    if sorted(order) != list(range(len(item.options))):
        raise ValueError(f"item {item.id}: order {order} is not a permutation of the options")
    return QAItem(
        **{
            **item.__dict__,
            "options": tuple(item.options[k] for k in order),
            "answers": (order.index(item.answer),),
            "details": {**dict(item.details), "order": order},
        }
    )


def item_order(item: QAItem) -> list[int]:
    """The order an item's options are shown in: a uniform permutation seeded by the item's own
    id (its game, scenario seed, moment, player and kind) and nothing else, never its answer nor
    any answerer's output. The twins of a contrast set share one permutation (seeded by the set's
    id): as each option is the key of exactly one twin, every letter is the key of exactly one
    twin of the set, and an answerer that picks by position is at chance on every set."""
    name = item.contrast or item.id
    seed = int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "little")
    return [int(k) for k in np.random.default_rng(seed).permutation(len(item.options))]


def shuffled(item: QAItem) -> QAItem:
    """``item`` (in the game's canonical option order) shown in :func:`item_order`."""
    return arrange(item, item_order(item))


def canonical(item: QAItem) -> QAItem:
    """``item`` with its options back in the order the game wrote them (undoes :func:`arrange`)."""
    order = item.details.get("order")
    if order is None:
        return item
    options = [""] * len(order)
    for shown, k in enumerate(order):
        options[int(k)] = item.options[shown]
    details = {k: v for k, v in item.details.items() if k != "order"}
    return QAItem(**{**item.__dict__, "options": tuple(options),
                     "answers": (int(order[item.answer]),), "details": details})  # fmt: skip


_ANSWER_RE = re.compile(r"(?:answer|action)\s*[:：]\s*(.*)", re.IGNORECASE | re.DOTALL)


def parse_answer(reply: str, options: Sequence[str]) -> int | None:
    """The option index a free-text reply chooses, or ``None`` (paper 002, App. D).

    1. keep the text after the last ``Answer:`` / ``Action:`` if there is one;
    2. the first option letter followed by ``.`` or ``)`` (or standing alone), within range;
    3. else the option whose text matches best (exact containment first, then fuzzy ratio >= 0.6).
    """
    if not isinstance(reply, str) or not reply.strip():
        return None
    text = reply
    found = _ANSWER_RE.findall(text)
    if found:
        text = found[-1]
    text = text.strip().strip("*`\"' ")
    n = len(options)
    m = re.match(r"^\(?([A-Za-z])(?:[.)]|\s*$|\s)", text)
    if m and m.group(1).upper() in LETTERS[:n]:
        return LETTERS.index(m.group(1).upper())
    m = re.search(r"(?<![A-Za-z])([A-Z])[.)]", text)
    if m and m.group(1) in LETTERS[:n]:
        return LETTERS.index(m.group(1))
    low = text.lower()
    contained = [i for i, o in enumerate(options) if o.lower() in low]
    if len(contained) == 1:
        return contained[0]
    if contained:  # prefer the longest option named (e.g. "pot 10" over "pot 1")
        return max(contained, key=lambda i: len(options[i]))
    ratios = [difflib.SequenceMatcher(None, low, o.lower()).ratio() for o in options]
    best = int(np.argmax(ratios))
    return best if ratios[best] >= 0.6 else None


def replay(scenario: Scenario) -> tuple[GameBundle, Any]:
    """Rebuild the scenario's state: ``(bundle, state)``, seeded exactly as ``env.reset(seed)`` is.

    Raises:
        IllegalActionError: a recorded action is not legal (the scenario does not belong to this
            version of the rules).
    """
    from tom_envs.core.params import validate_kwargs

    spec = game_spec(scenario.game)
    # a suite is a file: its arguments are checked as a file's (a layout path stays in this folder)
    kwargs = validate_kwargs(spec.load().PARAMS, scenario.env_kwargs, source="file")
    bundle = spec.load().make_bundle(**{**spec.kwargs, **kwargs})
    rng, _ = seeding.np_random(scenario.seed)
    game = bundle.game
    state = game.initial_state(rng)
    messages = list(scenario.messages) + [{}] * (len(scenario.actions) - len(scenario.messages))
    for actions, msgs in zip(scenario.actions, messages, strict=True):
        state = game.step(state, actions, rng, msgs or None).state
    return bundle, state


def write_suite(items: Iterable[QAItem], path: str | Path, meta: Mapping[str, Any]) -> Path:
    """Write a suite as JSONL: a header line (``{"record": "suite", ...meta}``), then one item per
    line (:meth:`QAItem.to_json`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps({"record": "suite", **meta}) + "\n")
        for item in items:
            fh.write(json.dumps(item.to_json(), ensure_ascii=False) + "\n")
    tmp.replace(path)
    return path


def read_suite(path: str | Path) -> tuple[dict[str, Any], list[QAItem]]:
    """Read a suite written by :func:`write_suite`: ``(meta, items)``."""
    lines = [
        json.loads(x) for x in Path(path).read_text(encoding="utf-8").splitlines() if x.strip()
    ]
    if not lines or lines[0].get("record") != "suite":
        raise ValueError(f"{path} is not a CoordinationQA suite (no suite header line)")
    meta = {k: v for k, v in lines[0].items() if k != "record"}
    items = [QAItem.from_json(d) for d in lines[1:]]
    return meta, items
