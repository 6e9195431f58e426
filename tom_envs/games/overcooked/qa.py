"""CoordinationQA for Overcooked: EC from the kitchen state, ToM about the task the partner has
taken on (inferred from its recent walk), JP from deterministic rollouts of the rules.

Every item comes in a contrast set: twins that share the question and the options (the set's
keys, one per twin) and differ in one thing.

* **EC** (the context: the rules and the kitchen): ``onions_needed``: onions a cooker still needs
  before it cooks; ``cooker_needs``: what a chef must bring to a cooker for it to progress (an
  onion, a plate, nothing while it cooks); ``onions_to_fill_all``: onions still needed to fill
  every cooker. Twins: the same kitchen with other cooker contents. The context shows onions in
  a cooker and whether it cooks, not the difference nor the steps left.
* **ToM** ``partner_heading``: which task the partner has taken on, judged from its last moves
  (4, 3 or 2) (inverse planning: it walks a shortest path to the place of its task, as the question
  states). Twins: the same kitchen (the partner where it stands, facing where it last moved,
  holding what it holds) with another recent walk: one that approaches the place of another
  task open to it at every move and does not approach the place of any other option (each
  option is the task of one twin). The
  partner-blind reasoner (the kitchen without the walk: it predicts the greedy chef's task) is
  at chance.
* **JP** ``best_task``: the task after which the team delivers its next soup soonest, both chefs
  then taking the nearest useful task, as the question states (exact rules, deterministic
  rollouts, :func:`steps_to_delivery`; ``source="planner"``), keyed where it is at least 2 steps
  sooner than every other task. Twins: the same kitchen with other cooker contents (filling,
  cooking, ready), every option a task open to you in every twin.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from tom_envs.games.overcooked.bots import choose
from tom_envs.games.overcooked.kitchen import kitchen
from tom_envs.games.overcooked.layout import DIRECTIONS
from tom_envs.games.overcooked.midlevel import MOVE_AWAY_ACTION, mid_level_actions
from tom_envs.games.overcooked.rules import ONIONS_PER_SOUP
from tom_envs.qa.generate import context_text
from tom_envs.qa.items import QAItem, Scenario, contrast_set, situation_set

GENERATOR_VERSION = 4

KINDS = {
    "partner_finishing_subtask": "your partner holds an onion or a plate: it is about to finish a subtask",
    "soup_ready": "a soup is cooked and waiting",
    "pot_almost_full": "a pot holds two onions",
}

_LAYOUTS = ("cramped_room", "asymmetric_advantages", "coordination_ring", "forced_coordination",
            "counter_circuit")  # fmt: skip
SCENARIOS: list[dict[str, Any]] = [
    {"env_kwargs": {"layout": lay, "horizon": 120}, "seats": seats}
    for lay in _LAYOUTS
    for seats in (
        ["greedy", "greedy"],
        ["planner", "greedy"],
        ["random", "greedy"],
        ["role_onions", "role_dishes"],
    )
]

TOM_QUESTION = (
    "Your partner has taken on one of these tasks and walks along a shortest path to its place. "
    "Judging from its last moves, which one?"
)
#: ToM: moves of the partner's recent walk shown (the longest that tells its task apart),
#: random walks tried per task and length, most twins.
WALKS = (4, 3, 2)
WALK_TRIES = 12
MAX_TWINS = 4
#: Counterfactual cooker contents a JP set is drawn from (each needs rollouts of every task).
JP_EDITS = 12
#: JP: the best task must bring the next delivery at least this many steps sooner than every
#: other task, within this many steps.
GAP = 2
DELIVERY_LIMIT = 80


def tags(bundle: Any, state: Any, player: int) -> tuple[str, ...]:
    """The named filters ``state`` matches."""
    cfg = bundle.game.config
    out = []
    if state.chefs[1 - player].held:
        out.append("partner_finishing_subtask")
    if any(n > 0 and tick >= cfg.cook_time for n, tick in state.pots):
        out.append("soup_ready")
    if any(n == ONIONS_PER_SOUP - 1 and tick < 0 for n, tick in state.pots):
        out.append("pot_almost_full")
    return tuple(out)


def _pots(state: Any, pots: Sequence[tuple[int, int]]) -> Any:
    return replace(state, pots=tuple(pots))


def _walk_back(k: Any, goal: Mapping[Any, int], end: Any, facing: int, steps: int,
               rng: np.random.Generator) -> list[Any] | None:  # fmt: skip
    """A walk of ``steps`` moves that ends at ``end`` and gets one step nearer the place of
    ``goal`` at every move (oldest cell first), consistent with where the chef faces: facing a
    floor cell, its last move was that way; facing a counter (a move toward it only turns the
    chef), it arrived from any side. ``None`` when there is none."""
    dx, dy = DIRECTIONS[facing]
    ahead = (end[0] + dx, end[1] + dy)
    if end not in goal:
        return None
    path = [end]
    for i in range(steps):
        here = path[-1]
        back = [(here[0] + ex, here[1] + ey) for ex, ey in DIRECTIONS]
        if i == 0 and ahead in k.floor:
            back = [(end[0] - dx, end[1] - dy)]
        back = [c for c in back if c in k.floor and goal.get(c) == goal[here] + 1]
        if not back:
            return None
        path.append(back[int(rng.integers(len(back)))])
    return path[::-1]


def _approaches(goal: Mapping[Any, int], path: Sequence[Any]) -> bool:
    """Every move of ``path`` gets one step nearer the place of ``goal``."""
    return all(b in goal and a in goal and goal[b] == goal[a] - 1
               for a, b in itertools.pairwise(path))  # fmt: skip


def _moves_text(path: Sequence[Any]) -> str:
    words = {(0, -1): "up", (0, 1): "down", (1, 0): "right", (-1, 0): "left"}
    moves = [f"{words[(b[0] - a[0], b[1] - a[1])]} from {a} to {b}"
             for a, b in itertools.pairwise(path)]  # fmt: skip
    return (f"Your partner's last {len(moves)} moves, oldest first: it moved "
            + "; then ".join(moves) + ".")  # fmt: skip


def _partner_set(
    bundle: Any, state: Any, player: int, scenario: Scenario, base: str
) -> list[QAItem]:
    """ToM ``partner_heading``: the contrast set over the partner's recent walk (module
    docstring)."""
    game = bundle.game
    cfg = game.config
    k = kitchen(cfg.kitchen)
    other = 1 - player
    chef = state.chefs[other]
    if state.timestep < max(WALKS):
        return []
    tasks = [a for a in mid_level_actions(k, state, other, cfg.cooking)
             if a.target and chef.pos in k.goal.get(a.target, {})]  # fmt: skip
    places = [a.target for a in tasks]
    tasks = [a for a in tasks if places.count(a.target) == 1]
    rng = np.random.default_rng([scenario.seed, state.timestep, player, 59])
    walks: dict[Any, list[list]] = {}
    for task in tasks:
        goal = k.goal[task.target]
        for steps in WALKS:
            got = [w for w in (_walk_back(k, goal, chef.pos, chef.facing, steps, rng)
                               for _ in range(WALK_TRIES)) if w is not None]  # fmt: skip
            if got:
                walks[task] = got
                break
    # twins: tasks whose walks approach none of the other twins' places (the options)
    found: list[tuple[Any, list]] = []
    for i in rng.permutation(len(tasks)):
        task = tasks[int(i)]
        for path in walks.get(task, []):
            if any(_approaches(k.goal[t.target], path) for t, _ in found) or any(
                _approaches(k.goal[task.target], p) for _, p in found
            ):
                continue
            found.append((task, path))
            break
        if len(found) == MAX_TWINS:
            break
    if len(found) < 2:
        return []
    found.sort(key=lambda f: f[0].text)
    view_ctx = context_text(bundle, state, player)
    twins = []
    for task, path in found:
        ctx = f"{view_ctx}\n\n{_moves_text(path)}"
        twins.append((replace(scenario, variant=f"to-{task.target}"), ctx, task.text, task.text))
    return contrast_set(base, "ToM", "partner_heading", TOM_QUESTION, "partner_policy", twins)


def questions(bundle: Any, state: Any, player: int, scenario: Scenario,
              types: Sequence[str] = ("EC", "ToM", "JP")) -> list[QAItem]:  # fmt: skip
    """EC, ToM and JP contrast sets for ``player`` in ``state`` (only ``types``)."""
    game = bundle.game
    cfg = game.config
    if game.is_terminal(state):
        return []
    base = f"overcooked/{cfg.layout}/s{scenario.seed}/t{state.timestep}/p{player}"
    items: list[QAItem] = []

    def rng(tag: int) -> np.random.Generator:  # one stream per template: any subset is the same
        return np.random.default_rng([scenario.seed, state.timestep, player, tag])

    def ctx(st: Any) -> str:
        return context_text(bundle, st, player)

    pot = int(rng(61).integers(len(state.pots)))
    name = f"c{pot}"
    full = ONIONS_PER_SOUP + (1 if cfg.cooking == "interact" else 0)
    combos = [
        tuple(int(x) for x in c) for c in itertools.product(range(full), repeat=len(state.pots))
    ]
    fills = [(f"pots={''.join(map(str, c))}", _pots(state, [(n, -1) for n in c])) for c in combos]

    def with_pot(n: int, tick: int) -> Any:
        pots = list(state.pots)
        pots[pot] = (n, tick)
        return _pots(state, pots)

    if "EC" in types:
        filling = [(f"{name}={n}", with_pot(n, -1)) for n in range(full)]
        items += situation_set(
            base, "EC", "onions_needed",
            f"How many more onions must be put in cooker {name} before it starts cooking?",
            "rules", scenario, filling, lambda st: ONIONS_PER_SOUP - st.pots[pot][0], str, ctx,
            rng(62),
        )  # fmt: skip
        need = ("an onion", "a plate, to load the soup", "nothing: the soup is still cooking")
        r = rng(63)
        stages = [
            (f"{name}=filling", with_pot(int(r.integers(ONIONS_PER_SOUP)), -1)),
            (f"{name}=ready", with_pot(ONIONS_PER_SOUP, cfg.cook_time)),
            (f"{name}=cooking", with_pot(ONIONS_PER_SOUP, int(r.integers(cfg.cook_time)))),
        ]

        def stage(st: Any) -> str:
            tick = st.pots[pot][1]
            return need[0] if tick < 0 else need[1] if tick >= cfg.cook_time else need[2]

        items += situation_set(
            base, "EC", "cooker_needs",
            f"What must a chef bring to cooker {name} for it to make progress now?",
            "rules", scenario, stages, stage, str, ctx, r,
        )  # fmt: skip
        items += situation_set(
            base, "EC", "onions_to_fill_all",
            "How many onions must still be put into cookers, in total, so that every cooker is "
            "full?",
            "rules", scenario, fills,
            lambda st: sum(ONIONS_PER_SOUP - n for n, _ in st.pots), str, ctx, rng(64),
        )  # fmt: skip
    if "ToM" in types:
        items += _partner_set(bundle, state, player, scenario, base)
    if "JP" in types:
        items += _jp_set(bundle, state, player, scenario, base, rng(65), ctx)
    return items


def steps_to_delivery(cfg: Any, state: Any, player: int, first: Any, limit: int) -> int:
    """Steps until the team's next delivery when ``player`` takes task ``first`` now and both
    chefs then take the nearest useful task (deterministic: ties and steps-aside resolved
    without randomness); ``limit`` when none happens within it."""
    from tom_envs.games.overcooked.midlevel import MidLevelController
    from tom_envs.games.overcooked.rules import OvercookedGame

    game = OvercookedGame(cfg)
    k = kitchen(cfg.kitchen)
    ctrls = [MidLevelController(cfg, p, rng=np.random.default_rng(p)) for p in (0, 1)]
    ctrls[player].set(first)
    acts = [0, 0]
    st = state
    for t in range(limit):
        for p in (0, 1):
            if ctrls[p].needs_choice(st):
                opts = mid_level_actions(k, st, p, cfg.cooking)
                ctrls[p].set(choose(k, cfg, st, p, opts, "any", ctrls[p].status, None))
            acts[p] = ctrls[p].primitive(st)
        st, reward, _ = game.transition(st, acts[0], acts[1])
        if reward > 0:
            return t + 1
    return limit


def _jp_set(bundle: Any, state: Any, player: int, scenario: Scenario, base: str,
            rng: np.random.Generator, ctx: Any) -> list[QAItem]:  # fmt: skip
    """JP ``best_task``: twins with other cooker contents (module docstring)."""
    cfg = bundle.game.config
    k = kitchen(cfg.kitchen)
    half = cfg.cook_time // 2
    stages = [(0, -1), (1, -1), (2, -1), (ONIONS_PER_SOUP, half), (ONIONS_PER_SOUP, cfg.cook_time)]
    combos = list(itertools.product(range(len(stages)), repeat=len(state.pots)))
    picks = rng.choice(len(combos), size=min(JP_EDITS, len(combos)), replace=False)
    edits = []
    for i in sorted(int(x) for x in picks):
        pots = [stages[j] for j in combos[i]]
        edits.append((f"pots={''.join(map(str, combos[i]))}", _pots(state, pots)))

    def tasks(st: Any) -> list[Any]:
        return [a for a in mid_level_actions(k, st, player, cfg.cooking) if a != MOVE_AWAY_ACTION]

    def best(st: Any) -> str | None:
        opts = tasks(st)
        if len(opts) < 2:
            return None
        steps = {a.text: steps_to_delivery(cfg, st, player, a, DELIVERY_LIMIT) for a in opts}
        ranked = sorted(steps.values())
        if ranked[0] >= DELIVERY_LIMIT or ranked[1] - ranked[0] < GAP:
            return None
        return min(steps, key=lambda t: steps[t])

    return situation_set(
        base, "JP", "best_task",
        "Assume your partner keeps taking the nearest useful task, and so will you after this "
        "one. Which task should you take on now so that the team delivers its next soup as "
        "soon as possible?",
        "planner", scenario, edits, best, str, ctx, rng,
        valid=lambda st, task: task in {a.text for a in tasks(st)},
    )  # fmt: skip


def blind(bundle: Any, state: Any, item: QAItem) -> int:
    """The partner-blind reasoner on a ToM twin: the task the greedy chef ("any") picks now."""
    game = bundle.game
    cfg = game.config
    k = kitchen(cfg.kitchen)
    other = 1 - item.scenario.player
    theirs = mid_level_actions(k, state, other, cfg.cooking)
    task = choose(k, cfg, state, other, theirs, "any", "", None).text
    return item.options.index(task) if task in item.options else 0
