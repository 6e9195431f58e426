"""Generating, verifying and answering CoordinationQA suites, for any game with a ``qa.py``.

A game joins by providing ``tom_envs/games/<game>/qa.py`` with::

    GENERATOR_VERSION: int
    KINDS: dict[str, str]          # named scenario filters ("partner_finishing_subtask": ...)
    SCENARIOS: list[dict]          # {"env_kwargs": {...}, "seats": [spec, ...]} episodes to sample
    ASKED_SEATS: tuple[int, ...]   # optional: the seats questions are put to (default: any)
    ABILITIES: tuple[str, ...]     # optional: the abilities the game asks about (default: TYPES)
    def tags(bundle, state, player) -> tuple[str, ...]      # the filters a state matches
    def questions(bundle, state, player, scenario) -> list[QAItem]
    def answerable(bundle, state, item) -> bool   # optional: the key follows from the context
    def blind(bundle, state, item) -> int         # optional: the partner-blind reasoner's pick

``questions`` writes the items of one situation in the game's canonical option order, each with
exactly one correct option computed from the truth (the rules engine, the partner's actual
policy, exact planners). ToM items come as contrast sets (:func:`~tom_envs.qa.items.contrast_set`:
the same situation with the partner's behaviour or view changed so that the key changes; the
options are the set's keys). ``answerable`` (for items outside contrast sets) recomputes the key
from what the context shows and must agree, or the item is not written: its key is not the asked
player's to know. ``blind`` picks an option of a contrast item from what every twin shares (the
situation without the partner's behaviour): by construction it is right on one twin of each set.

Shared here: scenarios are sampled from seeded episodes of the suite's own agents (played by
:func:`tom_envs.runner.play_episode`), cut at a random decision, and rebuilt by
:func:`~tom_envs.qa.items.replay`; each item's options are shown in
:func:`~tom_envs.qa.items.item_order`, a uniform permutation seeded by the item's own id. No item
or option set is ever kept, dropped, reordered or rewritten according to its answer or any
answerer's output. :func:`verify` rebuilds an item's state from its scenario and recomputes it
from scratch, so a stored suite can be checked against the current engine at any time; the
``oracle`` answerer (the exact partner model) answers through that same recomputation, never by
reading the stored answer.
"""

from __future__ import annotations

import importlib
import inspect
import json
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from tom_envs.core.game import agent_index
from tom_envs.core.skin import CANONICAL, Skin, parse_skin
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
    canonical,
    read_suite,
    replay,
    shuffled,
    write_suite,
)
from tom_envs.registration import GAMES, game_spec

SUITE_VERSION = 3
SUITES_DIR = Path(__file__).parent / "suites"
#: Items per ability (EC, ToM, JP) and game in the default suites: cells of 50 or more items,
#: so that a 5-point bound on an answerer's excess over chance can be checked.
DEFAULT_PER_TYPE = 60
DEFAULT_SEED = 2024
#: The seed of the fresh suite ``tom-envs qa verify`` generates for its adversaries.
FRESH_SEED = 4049


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
        acting = [p for p in bundle.game.current_players(state)
                  if p in getattr(module, "ASKED_SEATS", (p,))]  # fmt: skip
        if not acting:
            continue
        player = int(acting[int(rng.integers(len(acting)))])
        scenario = replace(scenario, player=player, tags=tuple(module.tags(bundle, state, player)))
        out.append((scenario, bundle, state))
    return out


def abilities(game: str) -> tuple[str, ...]:
    """The abilities (EC, ToM, JP) the game's generator asks about."""
    return tuple(getattr(qa_module(game), "ABILITIES", tuple(TYPES)))


def generate(
    game: str,
    rng: np.random.Generator,
    n: int,
    filters: Sequence[str] | None = None,
    types: Sequence[str] | None = None,
    skin: str = CANONICAL,
) -> list[QAItem]:
    """About ``n`` items for ``game``, ``n / len(types)`` of each type (default: the abilities
    the game asks about), from scenarios matching ``filters``, each shown in its own uniform
    option order; with a ``skin`` (``"s<k>"``), shown in that disguise (:func:`skin_item`:
    the same items, ids, keys and option positions; only their text differs).

    A contrast set is taken whole, so a type may get up to one set's size minus one more than
    its share. An item (or set) is passed over only when its type is full, when it repeats an
    item already taken (same question, options and context), or, outside contrast sets, when
    the game's answerability check says its key does not follow from the context; never
    because of which option is correct.
    """
    module = qa_module(game)
    types = tuple(types or abilities(game))
    if filters:
        unknown = set(filters) - set(module.KINDS)
        if unknown:
            raise ValueError(
                f"{game}: unknown filters {sorted(unknown)}; known: {sorted(module.KINDS)}"
            )
    quota = {t: n // len(types) + (1 if i < n % len(types) else 0) for i, t in enumerate(types)}
    items: list[QAItem] = []
    seen: set[tuple[str, tuple[str, ...], str]] = set()
    per_round = max(4, n // 4)
    played = 0
    while any(q > 0 for q in quota.values()) and played < MAX_EPISODES:
        played += per_round
        for scenario, bundle, state in sample_scenarios(game, rng, per_round, module):
            if filters and not set(filters) & set(scenario.tags):
                continue
            wanted = tuple(t for t, q in quota.items() if q > 0)
            for group in contrast_groups(_questions(module, bundle, state, scenario, wanted)):
                head = group[0]
                key = (head.question, tuple(sorted(head.options)), head.context)
                if quota.get(head.type, 0) <= 0 or key in seen:
                    continue
                if not head.contrast and not _answerable(module, bundle, state, head):
                    continue
                seen.add(key)
                quota[head.type] -= len(group)
                items.extend(shuffled(it) for it in group)
    return [skin_item(it, skin) for it in items]


_SKINS: OrderedDict[str, Skin] = OrderedDict()


def _skin_of(game: str, env_kwargs: dict[str, Any], key: str) -> Skin:
    """The game's :class:`~tom_envs.core.skin.Skin` ``key`` for these arguments (cached)."""
    from tom_envs.core.skin import SkinnedText

    cache = json.dumps([game, env_kwargs, key], sort_keys=True, default=str)
    if cache not in _SKINS:
        spec = game_spec(game)
        text = spec.load().make_bundle(**{**spec.kwargs, **env_kwargs}, skin=key).text
        assert isinstance(text, SkinnedText)
        _SKINS[cache] = text.skin
        if len(_SKINS) > 64:
            _SKINS.popitem(last=False)
    return _SKINS[cache]


def skin_item(item: QAItem, skin: str) -> QAItem:
    """``item`` shown in ``skin``: its context, question and options renamed by the game's skin
    tables (:mod:`tom_envs.core.skin`); its id, scenario, key and option positions unchanged
    (``details["skin"]`` records the disguise; ``"canonical"``: the item itself). Lists inside
    the context keep the canonical order, so that the item is the canonical one, renamed."""
    key = parse_skin(skin)
    if key == CANONICAL:
        return item
    r = _skin_of(item.game, dict(item.scenario.env_kwargs), key).render
    return replace(
        item,
        context=r(item.context),
        question=r(item.question),
        options=tuple(r(o) for o in item.options),
        details={**item.details, "skin": key},
    )


def contrast_groups(items: Sequence[QAItem]) -> list[list[QAItem]]:
    """``items`` grouped by contrast set (an item outside any set alone), in order of first
    appearance."""
    groups: OrderedDict[str, list[QAItem]] = OrderedDict()
    for it in items:
        groups.setdefault(it.contrast or f"#{it.id}", []).append(it)
    return list(groups.values())


def _questions(module: ModuleType, bundle: Any, state: Any, scenario: Scenario,
               types: Sequence[str]) -> list[QAItem]:  # fmt: skip
    """The game's items for the situation: only ``types`` when its ``questions`` takes a
    ``types`` argument (the items of a type never depend on which other types are asked)."""
    if "types" in inspect.signature(module.questions).parameters:
        return list(module.questions(bundle, state, scenario.player, scenario, types=tuple(types)))
    return list(module.questions(bundle, state, scenario.player, scenario))


def _answerable(module: ModuleType, bundle: Any, state: Any, item: QAItem) -> bool:
    check = getattr(module, "answerable", None)
    return True if check is None else bool(check(bundle, state, item))


#: Episodes sampled before a generator gives up on a quota (in rounds of ``max(4, n / 4)``; a
#: small suite may sample as many as a large one, so rare item kinds still fill it).
MAX_EPISODES = 3000

_WRITTEN: OrderedDict[str, list[QAItem]] = OrderedDict()


def _written(item: QAItem) -> list[QAItem]:
    """Every item the game writes for the item's rebuilt state (cached per scenario: the twins
    of a contrast set and the items of one situation are written once)."""
    sc = item.scenario
    key = json.dumps({"game": item.game, "type": item.type, **asdict(sc),
                      "actions": [sorted(a.items()) for a in sc.actions],
                      "messages": [sorted(m.items()) for m in sc.messages]},
                     sort_keys=True, default=str)  # fmt: skip
    if key in _WRITTEN:
        _WRITTEN.move_to_end(key)
        return _WRITTEN[key]
    module = qa_module(item.game)
    bundle, state = replay(sc)
    out = _questions(module, bundle, state, sc, (item.type,))
    _WRITTEN[key] = out
    if len(_WRITTEN) > 256:
        _WRITTEN.popitem(last=False)
    return out


def recompute(item: QAItem) -> QAItem | None:
    """The item written afresh from its rebuilt state and shown in its own order
    (:func:`~tom_envs.qa.items.item_order`), or ``None`` when the game no longer writes it."""
    for fresh in _written(item):
        if fresh.id == item.id:
            return skin_item(shuffled(fresh), item.details.get("skin", CANONICAL))
    return None


def verify(item: QAItem) -> bool:
    """Rebuild the item's state and recompute it: same question, context, options (in the item's
    own seeded order), answer and contrast set; outside contrast sets, the key follows from the
    context (``module.answerable``)."""
    fresh = recompute(item)
    if fresh is None or any(
        getattr(fresh, f) != getattr(item, f)
        for f in ("question", "options", "answers", "context", "contrast", "type", "kind", "source")
    ):
        return False
    if item.details.get("order") != fresh.details.get("order"):
        return False
    if item.contrast:
        return True
    bundle, state = replay(item.scenario)
    return _answerable(qa_module(item.game), bundle, state, canonical(item))


# ------------------------------------------------------------------ suites
def default_suite_path(game: str) -> Path:
    """Where a game's fixed default suite is shipped."""
    return SUITES_DIR / f"{game}.jsonl"


def suite_meta(game: str, seed: int, n: int, skin: str = CANONICAL) -> dict[str, Any]:
    """The header of a suite: versions, seed and size (and its skin, when not canonical)."""
    from tom_envs import __version__

    extra = {} if parse_skin(skin) == CANONICAL else {"skin": skin}
    return {
        **extra,
        "suite_version": SUITE_VERSION,
        "tom_envs_version": __version__,
        "game": game,
        "generator_version": int(getattr(qa_module(game), "GENERATOR_VERSION", 1)),
        "seed": seed,
        "requested": n,
    }


def build_suite(
    game: str, seed: int = DEFAULT_SEED, per_type: int = DEFAULT_PER_TYPE
) -> tuple[dict[str, Any], list[QAItem]]:
    """A seeded suite for one game, ``per_type`` items of each ability it asks about (same seed
    and versions: the same items)."""
    n = per_type * len(abilities(game))
    items = generate(game, np.random.default_rng([seed, stable_hash(game)]), n)
    meta = suite_meta(game, seed, n)
    meta["items"] = len(items)
    meta["by_type"] = {t: sum(i.type == t for i in items) for t in abilities(game)}
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
    """The exact partner model: answers by recomputing the item with the engine and the partner
    that actually played (not by reading ``item.answers``)."""

    def answer(item: QAItem) -> str:
        fresh = recompute(item)
        return "Answer: none" if fresh is None else f"Answer: {LETTERS[fresh.answer]}"

    return answer


def blind_pick(item: QAItem) -> int | None:
    """The partner-blind reasoner's pick on an item of a partner contrast set (shown index),
    ``None`` elsewhere.

    It reasons about everything the twins of the set share (the situation, the question, the
    option set) and nothing that differs between them (the partner's behaviour or view): the
    game's ``blind(bundle, state, item)`` when it has one, else the first option in canonical
    order. Either way it picks the same option text on every twin, so it is right on exactly one
    twin of each set: chance, by construction.
    """
    if not item.contrast or item.details.get("varies") != "partner":
        return None
    module = qa_module(item.game)
    base = canonical(item)
    pick = 0
    blind = getattr(module, "blind", None)
    if blind is not None:
        bundle, state = replay(item.scenario)
        pick = int(blind(bundle, state, base))
    order = item.details.get("order")
    return pick if order is None else list(order).index(pick)


def blind_answerer() -> Answerer:
    """:func:`blind_pick` as an answerer (``"Answer: none"`` outside contrast sets)."""

    def answer(item: QAItem) -> str:
        pick = blind_pick(item)
        return "Answer: none" if pick is None else f"Answer: {LETTERS[pick]}"

    return answer


def random_baseline(items: Sequence[QAItem]) -> float:
    """Exact expected accuracy of uniform random letters."""
    if not items:
        return float("nan")
    return float(np.mean([1.0 / len(i.options) for i in items]))


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
