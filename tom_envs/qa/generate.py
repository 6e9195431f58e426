"""Generating, verifying and answering CoordinationQA suites, for any game with a ``qa.py``.

A game joins by providing ``tom_envs/games/<game>/qa.py`` with::

    GENERATOR_VERSION: int
    KINDS: dict[str, str]          # named scenario filters ("partner_finishing_subtask": ...)
    SCENARIOS: list[dict]          # {"env_kwargs": {...}, "seats": [spec, ...]} episodes to sample
    def tags(bundle, state, player) -> tuple[str, ...]      # the filters a state matches
    def questions(bundle, state, player, scenario) -> list[QAItem]
    def answerable(bundle, state, item) -> bool   # the key, recomputed from the asker's view

``questions`` computes each key from the truth (the rules engine, the partner's actual policy,
exact planners); ``answerable`` recomputes it from what the context shows (the asked player's
view and the history it saw, partner behaviour included) and must agree, or the item is dropped.

Everything else is shared here: scenarios are sampled from seeded episodes of the suite's own
agents (played by :func:`tom_envs.runner.play_episode`), cut at a random decision, and rebuilt by
:func:`~tom_envs.qa.items.replay`; the game writes its EC / ToM / JP items for that exact state
with answers computed by its rules, knowledge tracking, partner policies or planners.
:func:`verify` rebuilds an item's state from its scenario and recomputes it from scratch, so a
stored suite can be checked against the current engine at any time; the ``oracle`` answerer
answers through that same recomputation (never by reading the stored answer).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from tom_envs.core.game import agent_index
from tom_envs.driver import (
    FailurePolicy,
    decide,
    draw_episode_seed,
    episode_info,
    fallback_rng,
)
from tom_envs.qa.items import (
    LETTERS,
    TYPES,
    QAItem,
    Scenario,
    arrange,
    read_suite,
    replay,
    write_suite,
)
from tom_envs.registration import GAMES, game_spec

SUITE_VERSION = 2
SUITES_DIR = Path(__file__).parent / "suites"
#: Items per game in the default suites (balanced across EC / ToM / JP where the game allows).
DEFAULT_ITEMS = 60
DEFAULT_SEED = 2024


def qa_module(game: str) -> ModuleType:
    """The game's generator module (``tom_envs.games.<game>.qa``)."""
    spec = game_spec(game)
    name = spec.module.rsplit(".", 1)[0] + ".qa"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name == name:
            raise KeyError(f"no CoordinationQA generator for {spec.name} yet ({name})") from None
        raise


def qa_games() -> list[str]:
    """Registered games that have a generator."""
    out = []
    for spec in GAMES:
        try:
            qa_module(spec.name)
        except KeyError:
            continue
        out.append(spec.name)
    return out


def joint_actions(
    steps: Sequence[dict[str, Any]],
) -> tuple[list[dict[int, int]], list[dict[int, str]]]:
    """The joint actions and chat messages of a trajectory, one dict per joint step."""
    actions: list[dict[int, int]] = []
    messages: list[dict[int, str]] = []
    for st in steps:
        j = st["joint_step"]
        while len(actions) <= j:
            actions.append({})
            messages.append({})
        p = agent_index(st["agent"])
        actions[j][p] = int(st["action"])
        if st.get("message") is not None and "message_error" not in st:
            messages[j][p] = str(st["message"])
    # the last group may be incomplete only if the episode was cut mid joint step (never here)
    return actions, messages


def sample_scenarios(
    game: str, rng: np.random.Generator, n: int, module: ModuleType | None = None
) -> list[tuple[Scenario, Any, Any]]:
    """``n`` scenarios ``(scenario, bundle, state)`` cut from seeded episodes of the game's agents."""
    from tom_envs.agents import make_agent
    from tom_envs.runner import play_episode

    module = module or qa_module(game)
    spec = game_spec(game)
    out: list[tuple[Scenario, Any, Any]] = []
    attempts = 0
    while len(out) < n and attempts < 20 * n + 20:
        attempts += 1
        choice = module.SCENARIOS[int(rng.integers(len(module.SCENARIOS)))]
        kwargs = dict(choice.get("env_kwargs", {}))
        seed = draw_episode_seed(rng)
        full = replace(spec, kwargs={**spec.kwargs, **kwargs})
        bundle = spec.load().make_bundle(**full.kwargs)
        agents = [make_agent(s, full, bundle) for s in choice["seats"]]
        # scenarios come from the bots' own play: a bot that fails is a bug, never a fallback
        ep = play_episode(spec, agents, seed, kwargs, policy=FailurePolicy(on_failure="raise"))
        actions, messages = joint_actions(ep.steps)
        if not actions:
            continue
        cut = int(rng.integers(len(actions)))  # the state before joint step `cut`
        scenario = Scenario(
            spec.name,
            kwargs,
            seed,
            tuple(actions[:cut]),
            tuple(messages[:cut]),
            seats=tuple(choice["seats"]),
        )
        bundle, state = replay(scenario)
        if bundle.game.is_terminal(state):
            continue
        acting = bundle.game.current_players(state)
        player = int(acting[int(rng.integers(len(acting)))]) if acting else 0
        scenario = replace(scenario, player=player, tags=tuple(module.tags(bundle, state, player)))
        out.append((scenario, bundle, state))
    return out


def generate(
    game: str,
    rng: np.random.Generator,
    n: int,
    filters: Sequence[str] | None = None,
    types: Sequence[str] = tuple(TYPES),
) -> list[QAItem]:
    """Up to ``n`` items for ``game``, balanced across ``types``, from scenarios matching ``filters``.

    An item the game wrote is kept only if (1) it is new (question, options, context), (2) the
    game's answerability check recomputes its key from what the asked player sees
    (``module.answerable``), and (3) its ability's :class:`~tom_envs.qa.shortcuts.Balancer` can
    take it: its correct option is placed at the letter that keeps answer positions even, and it
    is rejected if it would push any shortcut rule more than the margin from chance or if the
    fact lookup answers it.
    """
    from tom_envs.qa.shortcuts import Balancer

    module = qa_module(game)
    if filters:
        unknown = set(filters) - set(module.KINDS)
        if unknown:
            raise ValueError(
                f"{game}: unknown filters {sorted(unknown)}; known: {sorted(module.KINDS)}"
            )
    quota = {t: n // len(types) + (1 if i < n % len(types) else 0) for i, t in enumerate(types)}
    balancers = {t: Balancer(q) for t, q in quota.items()}
    items: list[QAItem] = []
    seen: set[tuple[str, tuple[str, ...], str]] = set()
    per_round = max(4, n // 2)
    played = 0
    while any(quota.values()) and played < MAX_EPISODES:
        played += per_round
        for scenario, bundle, state in sample_scenarios(game, rng, per_round, module):
            if filters and not set(filters) & set(scenario.tags):
                continue
            for item in module.questions(bundle, state, scenario.player, scenario):
                key = (item.question, tuple(sorted(item.options)), item.context)
                if item.type not in quota or quota[item.type] <= 0 or key in seen:
                    continue
                if not module.answerable(bundle, state, item):
                    continue
                placed = balancers[item.type].offer(item, rng)
                if placed is None:
                    continue
                seen.add(key)
                quota[item.type] -= 1
                items.append(placed)
    return items


def trim(items: list[QAItem]) -> list[QAItem]:
    """Drop items, latest first, from any ability whose shortcut answerers stray more than the
    bound from chance (possible only when a game could not fill its quota, so that the
    generation margin, set for a full group, is too wide for the smaller one). Applied to the
    default suites; tiny suites (a few items per ability) cannot meet the bound at all."""
    from tom_envs.qa.shortcuts import shortcut_table, violations

    items = list(items)
    for t in TYPES:
        while True:
            group = [i for i in items if i.type == t]
            if not group or not violations(shortcut_table(group)):
                break
            base = len(violations(shortcut_table(group)))
            best = None
            for cand in reversed(group):
                rest = [i for i in group if i is not cand]
                v = len(violations(shortcut_table(rest))) if rest else 0
                if v < base:
                    best = cand
                    break
            items.remove(best if best is not None else group[-1])
    return items


#: Episodes sampled before a generator gives up on a quota (in rounds of ``max(4, n / 2)``; a
#: small suite may sample as many as a large one, so rare item kinds still fill it).
MAX_EPISODES = 1200


def recompute(item: QAItem) -> tuple[QAItem | None, bool]:
    """The item written afresh from its rebuilt state (shown in the stored option order), and
    whether the game's answerability check passes on it."""
    module = qa_module(item.game)
    bundle, state = replay(item.scenario)
    for fresh in module.questions(bundle, state, item.scenario.player, item.scenario):
        if fresh.id == item.id:
            order = item.details.get("order")
            if order is not None:
                if sorted(order) != list(range(len(fresh.options))):
                    return None, False
                fresh = arrange(fresh, order)
            return fresh, bool(module.answerable(bundle, state, fresh))
    return None, False


def verify(item: QAItem) -> bool:
    """Rebuild the item's state and recompute it: same question, context, options and answers,
    and the answer is recomputable from what the asked player sees (``module.answerable``)."""
    fresh, answerable = recompute(item)
    return (
        fresh is not None
        and answerable
        and fresh.question == item.question
        and fresh.options == item.options
        and fresh.answers == item.answers
        and fresh.context == item.context
    )


# ------------------------------------------------------------------ suites
def default_suite_path(game: str) -> Path:
    """Where a game's fixed default suite is shipped."""
    return SUITES_DIR / f"{game}.jsonl"


def suite_meta(game: str, seed: int, n: int) -> dict[str, Any]:
    """The header of a suite: versions, seed and size."""
    from tom_envs import __version__

    return {
        "suite_version": SUITE_VERSION,
        "tom_envs_version": __version__,
        "game": game,
        "generator_version": int(getattr(qa_module(game), "GENERATOR_VERSION", 1)),
        "seed": seed,
        "requested": n,
    }


def build_suite(
    game: str, seed: int = DEFAULT_SEED, n: int = DEFAULT_ITEMS
) -> tuple[dict[str, Any], list[QAItem]]:
    """A seeded suite for one game (same seed and versions: the same items)."""
    items = trim(generate(game, np.random.default_rng([seed, stable_hash(game)]), n))
    meta = suite_meta(game, seed, n)
    meta["items"] = len(items)
    meta["by_type"] = {t: sum(i.type == t for i in items) for t in TYPES}
    return meta, items


def stable_hash(text: str) -> int:
    """A seed from a game's name, the same in every process (``hash`` is salted per process)."""
    return int.from_bytes(text.encode()[:8].ljust(8, b"\0"), "little")


def write_default_suites(games: Iterable[str] | None = None, check: bool = False) -> list[str]:
    """(Re)generate the shipped suites; with ``check``, return the stale ones instead of writing."""
    stale = []
    for game in games or qa_games():
        meta, items = build_suite(game)
        path = default_suite_path(game)
        if check:
            if not path.exists():
                stale.append(game)
                continue
            old_meta, old_items = read_suite(path)
            if [i.to_json() for i in old_items] != [i.to_json() for i in items] or {
                k: v for k, v in old_meta.items() if k != "tom_envs_version"
            } != {k: v for k, v in meta.items() if k != "tom_envs_version"}:
                stale.append(game)
        else:
            write_suite(items, path, meta)
    return stale


# ------------------------------------------------------------------ answerers
Answerer = Callable[[QAItem], str]


def random_answerer(seed: int = 0) -> Answerer:
    """Picks a letter uniformly at random (seeded)."""
    rng = np.random.default_rng(seed)

    def answer(item: QAItem) -> str:
        return f"Answer: {LETTERS[int(rng.integers(len(item.options)))]}"

    return answer


def oracle_answerer() -> Answerer:
    """Answers by recomputing the item with the engine (not by reading ``item.answers``)."""

    def answer(item: QAItem) -> str:
        fresh, _ = recompute(item)
        return "Answer: none" if fresh is None else f"Answer: {LETTERS[fresh.answers[0]]}"

    return answer


def random_baseline(items: Sequence[QAItem]) -> float:
    """Exact expected accuracy of uniform random letters (several correct letters count)."""
    if not items:
        return float("nan")
    return float(np.mean([len(i.answers) / len(i.options) for i in items]))


def dump(items: Sequence[QAItem]) -> str:
    """Items as JSONL text (for quick inspection)."""
    return "\n".join(json.dumps(i.to_json()) for i in items)


# ------------------------------------------------------------------ helpers for generators
def context_text(bundle: Any, state: Any, player: int) -> str:
    """The asked player's rules prompt and observation text (nothing it may not see)."""
    view = bundle.game.observe(state, player)
    return f"{bundle.text.rules_prompt(view)}\n\n{bundle.text.observation_text(view)}"


def bot_action(bundle: Any, state: Any, seat: int, spec: str, seed: int = 0) -> int:
    """What a (stateless) scripted bot plays at ``seat`` in ``state``, through the Turn API."""
    from tom_envs.agents import make_agent
    from tom_envs.core.agents import state_turn

    game = bundle.game
    registered = _spec_for(bundle)
    agent = make_agent(spec, registered, bundle)
    agent.reset(episode_info(registered, game, seat, seed))
    turn = state_turn(bundle, state, seat)  # the one Turn factory (text layer attached)
    # the driver's step primitive, failures raised: a key is never a fallback move
    return decide(agent, turn, fallback_rng(seed), FailurePolicy(on_failure="raise")).action


def _spec_for(bundle: Any) -> Any:
    """The registered spec whose env module built ``bundle`` (by the game's class module)."""
    pkg = type(bundle.game).__module__.rsplit(".", 1)[0]
    for spec in GAMES:
        if spec.module.rsplit(".", 1)[0] == pkg:
            return spec
    raise KeyError(f"no registered game for {pkg}")


def probe_items(
    bundle: Any, state: Any, player: int, scenario: Scenario, base: str, limit: int = 3
) -> list[QAItem]:
    """ToM items from the game's own probes (ground truth from its knowledge tracking).

    A deterministic subset (by the scenario's seed) of the probes the game would ask ``player``
    now, kept whole: question, options and computed answer.
    """
    if bundle.probes is None:
        return []
    probes = list(bundle.probes(state, player))
    if not probes:
        return []
    rng = np.random.default_rng([scenario.seed, len(scenario.actions), player, 99])
    picked = sorted(rng.choice(len(probes), size=min(limit, len(probes)), replace=False))
    context = context_text(bundle, state, player)
    out = []
    for k in picked:
        p = probes[int(k)]
        out.append(
            QAItem(
                id=f"{base}/ToM/{p.id}",
                game=scenario.game,
                type="ToM",
                kind=p.kind,
                context=context,
                question=p.question,
                options=tuple(p.options),
                answers=(p.options.index(p.answer),),
                source="knowledge",
                scenario=scenario,
                details={"order": p.order, **dict(p.about)},
            )
        )
    return out

