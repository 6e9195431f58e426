"""CoBlock tasks: two private goals and two private inventories, their type, a generator and the
built-in sets.

A :class:`Task` gives each agent a *goal* (a sub-structure of the target, made of named
components) and an *inventory* (a count per colour). The target is the union of the goals. Its
type (paper §2.2) is decided by :func:`classify` from the task itself:

* ``independent``: each goal can be built by its owner alone (its own colours suffice and it
  stands on the ground by itself);
* ``skill_dependent``: each goal stands by itself, but some agent lacks a colour of its own goal
  and needs the partner's blocks;
* ``goal_dependent``: some goal cannot stand without blocks of the partner's goal (the gravity
  rule orders the work), and, as in the paper, some agent also lacks a colour of its goal.

:func:`generate_task` composes base structures by a depth-first search with backtracking over
positions (paper App. A.1), splits them into goals, hands out inventories and keeps the task only
if :func:`validate` passes, which includes a joint plan found by
:func:`~tom_envs.games.coblock.planner.plan`. The built-in sets (24 per type: 4 hand-made after the
paper's figures, 20 generated) are data files in ``data/*.json``, written by
``python -m tom_envs.games.coblock.make_tasks --write`` and loaded by :func:`builtin_tasks`.
Skill-dependent tasks reuse the independent structures with other inventories, as in the paper.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from pathlib import Path

import numpy as np

from tom_envs.games.coblock import structures as S
from tom_envs.games.coblock.planner import plan
from tom_envs.games.coblock.structures import (
    COLOR_INDEX,
    COLORS,
    Block,
    Component,
    Pos,
    in_bounds,
    is_buildable,
    pos_of,
)

TASK_TYPES: tuple[str, ...] = ("independent", "skill_dependent", "goal_dependent")
#: The default world: x and z in 0..5, y (up) in 0..4 (room for the paper's arches: pillars of 4
#: and a top). Small on purpose: the action catalogue grows with 7 actions per cell.
DEFAULT_GRID: tuple[int, int, int] = (6, 5, 6)
#: Blocks of each held colour beyond what the whole target needs of it (room for mistakes).
SLACK = 3
#: Size of each built-in set.
BUILTIN_SIZE = 24


@dataclass(frozen=True)
class Goal:
    """One agent's goal: its components in build order (lower structures first)."""

    components: tuple[Component, ...]

    @cached_property
    def blocks(self) -> tuple[Block, ...]:
        """Every block of the goal."""
        return tuple(b for c in self.components for b in c.blocks)

    @property
    def description(self) -> str:
        """The components' descriptions, joined."""
        return "; ".join(c.description for c in self.components)


@dataclass(frozen=True)
class Task:
    """A collaboration task.

    Attributes:
        name: unique within its set (``"goal_dependent_07"``).
        type: one of :data:`TASK_TYPES`.
        goals: player_0's and player_1's goals.
        inventories: player_0's and player_1's counts per colour (indexed like ``COLORS``).
        source: ``"manual"`` (after the paper's figures) or ``"generated"``.
    """

    name: str
    type: str
    goals: tuple[Goal, Goal]
    inventories: tuple[tuple[int, ...], tuple[int, ...]]
    source: str = "generated"

    def __post_init__(self) -> None:
        if self.type not in TASK_TYPES:
            raise ValueError(f"task type must be one of {TASK_TYPES}, got {self.type!r}")
        if len(self.goals) != 2 or len(self.inventories) != 2:
            raise ValueError("a task has exactly two goals and two inventories")
        for inv in self.inventories:
            if len(inv) != len(COLORS) or any(n < 0 for n in inv):
                raise ValueError(f"an inventory is {len(COLORS)} non-negative counts, got {inv}")

    @cached_property
    def target(self) -> tuple[Block, ...]:
        """The target structure: the union of the goals (player_0's blocks first)."""
        return self.goals[0].blocks + self.goals[1].blocks

    @cached_property
    def target_cells(self) -> dict[Pos, int]:
        """Target cell -> colour."""
        return {pos_of(b): b[3] for b in self.target}

    def to_dict(self) -> dict:
        """JSON-ready form (colours by name)."""
        return {
            "name": self.name,
            "type": self.type,
            "source": self.source,
            "goals": [[c.to_dict() for c in g.components] for g in self.goals],
            "inventories": [
                {COLORS[c]: n for c, n in enumerate(inv) if n} for inv in self.inventories
            ],
        }

    @classmethod
    def from_dict(cls, data: dict) -> Task:
        """Inverse of :meth:`to_dict`."""
        goals = tuple(Goal(tuple(Component.from_dict(c) for c in g)) for g in data["goals"])
        invs = tuple(tuple(int(inv.get(name, 0)) for name in COLORS) for inv in data["inventories"])
        for inv in data["inventories"]:
            unknown = set(inv) - set(COLORS)
            if unknown:
                raise ValueError(f"unknown colours in an inventory: {sorted(unknown)}")
        return cls(data["name"], data["type"], goals, invs, data.get("source", "generated"))  # type: ignore[arg-type]


# ------------------------------------------------------------------------ classification
def colour_counts(blocks: Sequence[Block]) -> list[int]:
    """Blocks per colour."""
    out = [0] * len(COLORS)
    for b in blocks:
        out[b[3]] += 1
    return out


def self_supported(task: Task, player: int) -> bool:
    """Whether ``player``'s goal stands on the ground by itself (no partner block needed)."""
    return is_buildable(task.goals[player].blocks)


def self_sufficient(task: Task, player: int) -> bool:
    """Whether ``player``'s inventory holds every block of its own goal."""
    need = colour_counts(task.goals[player].blocks)
    return all(n <= have for n, have in zip(need, task.inventories[player], strict=True))


def classify(task: Task) -> str:
    """The task type the goals and inventories imply (see the module docstring)."""
    if not (self_supported(task, 0) and self_supported(task, 1)):
        return "goal_dependent"
    if self_sufficient(task, 0) and self_sufficient(task, 1):
        return "independent"
    return "skill_dependent"


def validate(task: Task, grid: Sequence[int] = DEFAULT_GRID) -> list[str]:
    """Every problem with ``task`` (an empty list when it is a well-formed, solvable task)."""
    problems = []
    cells: dict[Pos, int] = {}
    for p, goal in enumerate(task.goals):
        if not goal.blocks:
            problems.append(f"player_{p}'s goal is empty")
        for b in goal.blocks:
            pos = pos_of(b)
            if not in_bounds(pos, grid):
                problems.append(f"block {S.fmt_block(b)} is outside the grid {tuple(grid)}")
            if pos in cells:
                problems.append(f"two goal blocks share the cell {S.fmt_pos(pos)}")
            cells[pos] = p
    if not is_buildable(task.target):
        problems.append("the target cannot be built under the gravity rule")
    used = {b[3] for b in task.target}
    for p, inv in enumerate(task.inventories):
        held = {c for c, n in enumerate(inv) if n}
        if not held:
            problems.append(f"player_{p} holds no block")
        if held - used:
            extra = ", ".join(COLORS[c] for c in sorted(held - used))
            problems.append(f"player_{p} holds colours the target does not use: {extra}")
    kind = classify(task)
    if kind != task.type:
        problems.append(f"labelled {task.type} but its goals and inventories make it {kind}")
    if task.type == "goal_dependent" and self_sufficient(task, 0) and self_sufficient(task, 1):
        problems.append("a goal-dependent task must also depend on the partner's colours")
    if plan([g.blocks for g in task.goals], task.inventories) is None:
        problems.append("the planner finds no joint plan")
    return problems


# ------------------------------------------------------------------------------ generator
def _colour(rng: np.random.Generator, exclude: Sequence[int] = ()) -> int:
    choices = [c for c in range(len(COLORS)) if c not in exclude]
    return int(choices[rng.integers(len(choices))])


def _axis(rng: np.random.Generator) -> str:
    return "x" if rng.integers(2) == 0 else "z"


def _standalone(rng: np.random.Generator, x: int, z: int) -> Component:
    """One base structure standing on the ground, anchored at ``(x, 0, z)``."""
    kind = S.KINDS[int(rng.integers(len(S.KINDS)))]
    a = _colour(rng)
    if kind == "tower":
        colours = (a,) if rng.random() < 0.5 else (a, _colour(rng, (a,)))
        return S.tower(x, z, int(rng.integers(3, 6)), colours)
    if kind == "rectangle":
        if rng.random() < 0.5:
            return S.wall(x, z, int(rng.integers(3, 5)), int(rng.integers(2, 4)), _axis(rng), a)
        return S.slab(x, z, int(rng.integers(2, 4)), int(rng.integers(2, 4)), a)
    if kind == "symbol":
        letter = sorted(S.LETTERS)[int(rng.integers(len(S.LETTERS)))]
        return S.symbol(letter, x, z, _axis(rng), a)
    if kind == "arch":
        return S.whole(S.arch(x, z, 4, 4, _axis(rng), a, _colour(rng, (a,))))
    return S.whole(
        S.bridge(
            x, z, int(rng.integers(4, 6)), int(rng.integers(1, 3)), int(rng.integers(1, 3)),
            _axis(rng), a, _colour(rng, (a,)) if rng.random() < 0.7 else a,
        )
    )  # fmt: skip


def _cells(blocks: Sequence[Block]) -> set[Pos]:
    return {pos_of(b) for b in blocks}


def _touches(cells: set[Pos], other: set[Pos]) -> bool:
    for x, y, z in cells:
        for dx, dy, dz in S.NEIGHBOURS:
            if (x + dx, y + dy, z + dz) in other:
                return True
    return False


def _fits(comp: Component, grid: Sequence[int], mine: set[Pos], theirs: set[Pos]) -> bool:
    cells = _cells(comp.blocks)
    if not all(in_bounds(p, grid) for p in cells):
        return False
    if cells & mine or cells & theirs:
        return False
    return not _touches(cells, theirs)  # the two goals stay apart


def _dfs_place(
    rng: np.random.Generator,
    grid: Sequence[int],
    slots: Sequence[int],
    placed: list[list[Component]],
    depth: int = 0,
    tries: int = 12,
) -> bool:
    """Depth-first search: place one component per slot (slot = owning player), backtracking to
    the previous slot when no sampled component fits."""
    if depth == len(slots):
        return True
    p = slots[depth]
    mine = {c for comp in placed[p] for c in _cells(comp.blocks)}
    theirs = {c for comp in placed[1 - p] for c in _cells(comp.blocks)}
    for _ in range(tries):
        x, z = int(rng.integers(grid[0])), int(rng.integers(grid[2]))
        comp = _standalone(rng, x, z)
        if not _fits(comp, grid, mine, theirs):
            continue
        placed[p].append(comp)
        if _dfs_place(rng, grid, slots, placed, depth + 1, tries):
            return True
        placed[p].pop()
    return False


def _independent_structure(
    rng: np.random.Generator, grid: Sequence[int]
) -> tuple[Goal, Goal] | None:
    """Two separate goals of one or two standing components each (6 to 18 blocks per goal)."""
    slots = [0, 1] + [p for p in (0, 1) if rng.random() < 0.4]
    placed: list[list[Component]] = [[], []]
    if not _dfs_place(rng, grid, slots, placed):
        return None
    goals = (Goal(tuple(placed[0])), Goal(tuple(placed[1])))
    if any(not 6 <= len(g.blocks) <= 18 for g in goals):
        return None
    return goals


def _stacked(rng: np.random.Generator, grid: Sequence[int]) -> tuple[list, list] | None:
    """A lower structure and the structure resting on it: ``(lower parts, upper parts)``."""
    template = int(rng.integers(5))
    a = _colour(rng)
    b = _colour(rng, (a,))
    x, z = int(rng.integers(grid[0])), int(rng.integers(grid[2]))
    axis = _axis(rng)
    if template == 0:  # bridge: pillars below, deck above
        pillars, deck = S.bridge(
            x, z, int(rng.integers(4, 6)), int(rng.integers(1, 3)), int(rng.integers(1, 3)),
            axis, a, b,
        )  # fmt: skip
        return [pillars], [deck]
    if template == 1:  # arch: pillars below, top above
        pillars, top = S.arch(x, z, 4, 4, axis, a, b)
        return [pillars], [top]
    if template == 2:  # a rectangle with towers standing on it
        if rng.random() < 0.5:
            w, d = int(rng.integers(2, 4)), int(rng.integers(2, 4))
            base = S.slab(x, z, w, d, a)
            tops = [(x + i, z + j) for i in range(w) for j in range(d)]
        else:
            n, h = int(rng.integers(3, 5)), int(rng.integers(1, 3))
            base = S.wall(x, z, n, h, axis, a)
            tops = [(x + i, z) if axis == "x" else (x, z + i) for i in range(n)]
        top_y = max(blk[1] for blk in base.blocks) + 1
        k = 1 if len(tops) < 3 or rng.random() < 0.5 else 2
        picks = rng.choice(len(tops), size=k, replace=False)
        towers = [S.tower(*tops[int(i)], int(rng.integers(2, 4)), (b,), y=top_y) for i in picks]
        return [base], towers
    if template == 3:  # a wall with a letter standing on it
        n, h = int(rng.integers(3, 5)), int(rng.integers(1, 3))
        base = S.wall(x, z, n, h, axis, a)
        letter = sorted(S.LETTERS)[int(rng.integers(len(S.LETTERS)))]
        off = int(rng.integers(n - 2))
        sx, sz = (x + off, z) if axis == "x" else (x, z + off)
        sym = S.symbol(letter, sx, sz, axis, b, y=h)
        cells = _cells(base.blocks)
        if not any((p[0], p[1] - 1, p[2]) in cells for p in _cells(sym.blocks) if p[1] == h):
            return None
        return [base], [sym]
    # template 4: a chain - the lower agent's tower stands on the upper agent's deck
    span = int(rng.integers(4, 6))
    pillars, deck = S.bridge(x, z, span, 1, 1, axis, a, b)
    mid = span // 2
    tx, tz = (x + mid, z) if axis == "x" else (x, z + mid)
    t = S.tower(tx, tz, int(rng.integers(1, 3)), (_colour(rng, (b,)),), y=2)
    return [pillars, t], [deck]


def _goal_dependent_structure(
    rng: np.random.Generator, grid: Sequence[int]
) -> tuple[Goal, Goal] | None:
    """A stacked structure split between the agents, plus sometimes a standing extra component."""
    parts = _stacked(rng, grid)
    if parts is None:
        return None
    lower, upper = parts
    cells = [c for comp in lower + upper for c in _cells(comp.blocks)]
    if len(set(cells)) != len(cells) or not all(in_bounds(c, grid) for c in cells):
        return None
    low_p = int(rng.integers(2))
    placed: list[list[Component]] = [[], []]
    placed[low_p], placed[1 - low_p] = list(lower), list(upper)
    extra = [1 - low_p] if rng.random() < 0.6 else []
    if extra:
        # the extra component may touch nothing of the stacked structure
        mine = {c for comp in placed[extra[0]] for c in _cells(comp.blocks)}
        theirs = {c for comp in placed[low_p] for c in _cells(comp.blocks)}
        for _ in range(20):
            comp = _standalone(rng, int(rng.integers(grid[0])), int(rng.integers(grid[2])))
            if _fits(comp, grid, mine | theirs, mine | theirs) and len(comp.blocks) <= 10:
                placed[extra[0]].append(comp)
                break
    goals = (Goal(tuple(placed[0])), Goal(tuple(placed[1])))
    if any(not 3 <= len(g.blocks) <= 20 for g in goals):
        return None
    return goals


def assign_inventories(
    goals: Sequence[Goal], rng: np.random.Generator, skill_dependent: bool
) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """Hand out colours: each agent holds its own goal's colours (sometimes the partner's too);
    with ``skill_dependent`` one or two of an agent's own colours are held by the partner only.
    A holder gets every block of that colour in the target plus :data:`SLACK`."""
    own = [sorted({b[3] for b in g.blocks}) for g in goals]
    holders: dict[int, set[int]] = {}
    for p in (0, 1):
        for c in own[p]:
            holders.setdefault(c, set()).add(p)
    for c in sorted(holders):
        if rng.random() < 0.3:
            holders[c] = {0, 1}
    if skill_dependent:
        pairs = [(p, c) for p in (0, 1) for c in own[p]]
        k = 1 if len(pairs) < 3 or rng.random() < 0.6 else 2
        for i in rng.choice(len(pairs), size=k, replace=False):
            p, c = pairs[int(i)]
            holders[c] = {1 - p}
    total = [0] * len(COLORS)
    for g in goals:
        for b in g.blocks:
            total[b[3]] += 1
    invs = tuple(
        tuple(total[c] + SLACK if p in holders.get(c, ()) else 0 for c in range(len(COLORS)))
        for p in (0, 1)
    )
    if any(not any(inv) for inv in invs):
        return None
    return invs  # type: ignore[return-value]


def generate_task(
    task_type: str,
    rng: np.random.Generator,
    grid: Sequence[int] = DEFAULT_GRID,
    name: str = "generated",
    max_tries: int = 500,
) -> Task:
    """A random task of ``task_type`` that :func:`validate` accepts (structure by depth-first
    search, inventories by :func:`assign_inventories`, solvability by the planner).

    Raises:
        RuntimeError: no valid task was found in ``max_tries`` attempts (a grid too small).
    """
    if task_type not in TASK_TYPES:
        raise ValueError(f"task type must be one of {TASK_TYPES}, got {task_type!r}")
    for _ in range(max_tries):
        if task_type == "goal_dependent":
            goals = _goal_dependent_structure(rng, grid)
        else:
            goals = _independent_structure(rng, grid)
        if goals is None:
            continue
        task = _with_inventories(task_type, goals, rng, name)
        if task is not None and not validate(task, grid):
            return task
    raise RuntimeError(f"no valid {task_type} task found in {max_tries} tries on grid {grid}")


def _with_inventories(
    task_type: str, goals: tuple[Goal, Goal], rng: np.random.Generator, name: str
) -> Task | None:
    """Inventories for the structure that make it a task of ``task_type`` (``None`` if not)."""
    for _ in range(20):
        invs = assign_inventories(goals, rng, skill_dependent=task_type != "independent")
        if invs is None:
            continue
        task = Task(name, task_type, goals, invs)
        if classify(task) != task_type:
            continue
        if task_type == "goal_dependent" and self_sufficient(task, 0) and self_sufficient(task, 1):
            continue
        return task
    return None


# --------------------------------------------------------------------------- hand-made
def _inv(**counts: int) -> tuple[int, ...]:
    return tuple(counts.get(c, 0) for c in COLORS)


def manual_tasks() -> dict[str, list[Task]]:
    """Four hand-made tasks per type, after the paper's Figures 1-2 (names end in ``_m``)."""
    R, B, Y, G, K, P = (COLOR_INDEX[c] for c in COLORS)
    structures = [
        # two towers (Fig. 2, top)
        (Goal((S.tower(1, 1, 4, (R,)),)), Goal((S.tower(4, 4, 4, (B, Y)),))),
        # a wall and a letter
        (Goal((S.wall(0, 1, 4, 2, "x", Y),)), Goal((S.symbol("T", 2, 4, "x", G),))),
        # an arch and a bridge
        (
            Goal((S.whole(S.arch(1, 0, 4, 4, "z", R, K)),)),
            Goal((S.whole(S.bridge(4, 0, 5, 1, 1, "z", P, B)),)),
        ),
        # a floor and a letter beside it
        (Goal((S.slab(0, 0, 3, 3, G),)), Goal((S.symbol("H", 4, 2, "z", P),))),
    ]
    independent_inv = [
        (_inv(red=7), _inv(blue=5, yellow=5)),
        (_inv(yellow=11), _inv(green=8, yellow=11)),
        (_inv(red=11, black=8), _inv(purple=7, blue=8)),
        (_inv(green=12), _inv(purple=10)),
    ]
    skill_inv = [  # Fig. 2 middle: an agent needs the partner's colour for part of its goal
        (_inv(red=7, yellow=5), _inv(blue=5)),
        (_inv(yellow=11, green=8), _inv(yellow=11)),
        (_inv(red=11), _inv(purple=7, blue=8, black=8)),
        (_inv(green=12, purple=10), _inv(green=12)),
    ]
    pillar = S.tower(3, 3, 3, (Y,))  # Fig. 1: Bob's yellow pillar, Amy's top needs red
    beam = Component(
        "symbol", "whole", ((3, 3, 3, R), (2, 3, 3, R), (4, 3, 3, R), (3, 4, 3, B)), "a cross"
    )
    arch_p, arch_t = S.arch(1, 2, 4, 4, "x", G, Y)
    bridge_p, bridge_d = S.bridge(1, 5, 5, 2, 1, "x", P, B)
    base = S.slab(3, 0, 3, 2, K)
    goal_structs = [
        (Goal((beam,)), Goal((pillar,))),
        (Goal((arch_p,)), Goal((arch_t, S.tower(0, 5, 3, (R,))))),
        (Goal((bridge_d,)), Goal((bridge_p,))),
        (Goal((base, S.tower(0, 4, 3, (R,)))), Goal((S.tower(4, 0, 3, (G,), y=1),))),
    ]
    goal_inv = [
        (_inv(blue=4), _inv(yellow=6, red=6)),
        (_inv(green=11, yellow=8), _inv(red=6)),
        (_inv(blue=8, purple=7), _inv(blue=8)),
        (_inv(black=9, green=6), _inv(red=6)),
    ]
    out: dict[str, list[Task]] = {t: [] for t in TASK_TYPES}
    for i, (goals, inv) in enumerate(zip(structures, independent_inv, strict=True)):
        out["independent"].append(
            Task(f"independent_{i:02d}_m", "independent", goals, inv, "manual")
        )
    for i, (goals, inv) in enumerate(zip(structures, skill_inv, strict=True)):
        out["skill_dependent"].append(
            Task(f"skill_dependent_{i:02d}_m", "skill_dependent", goals, inv, "manual")
        )
    for i, (goals, inv) in enumerate(zip(goal_structs, goal_inv, strict=True)):
        out["goal_dependent"].append(
            Task(f"goal_dependent_{i:02d}_m", "goal_dependent", goals, inv, "manual")
        )
    return out


# --------------------------------------------------------------------------- built-in sets
#: Seed of each set's generator (task ``i`` of a set draws from ``default_rng([seed, i])``).
SET_SEEDS = {"independent": 3001, "skill_dependent": 3001, "goal_dependent": 3003}


def build_builtin_sets(grid: Sequence[int] = DEFAULT_GRID) -> dict[str, list[Task]]:
    """Recompute the built-in sets: the hand-made tasks, then generated ones up to 24 per type.

    Skill-dependent task ``i`` has the structure of independent task ``i`` (same seed) with
    other inventories.
    """
    out = manual_tasks()
    for task_type in TASK_TYPES:
        i = 0
        while len(out[task_type]) < BUILTIN_SIZE:
            n = len(out[task_type])
            name = f"{task_type}_{n:02d}"
            rng = np.random.default_rng([SET_SEEDS[task_type], i])
            i += 1
            if task_type == "skill_dependent":
                base = generate_task("independent", rng, grid, name)
                task = _with_inventories(task_type, base.goals, rng, name)
                if task is None or validate(task, grid):
                    continue
            else:
                task = generate_task(task_type, rng, grid, name)
            out[task_type].append(task)
    return out


def _data_dir() -> Path:
    return Path(str(resources.files("tom_envs.games.coblock") / "data"))


@cache
def builtin_tasks(task_type: str) -> tuple[Task, ...]:
    """The built-in set of ``task_type`` (read once from ``data/<task_type>.json``)."""
    if task_type not in TASK_TYPES:
        raise ValueError(f"task type must be one of {TASK_TYPES}, got {task_type!r}")
    text = (resources.files("tom_envs.games.coblock") / "data" / f"{task_type}.json").read_text()
    return tuple(Task.from_dict(d) for d in json.loads(text)["tasks"])


def write_builtin_sets(directory: Path | None = None) -> list[Path]:
    """Write ``data/<type>.json`` for every type (the files shipped with the package)."""
    directory = directory or _data_dir()
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for task_type, tasks in build_builtin_sets().items():
        path = directory / f"{task_type}.json"
        doc = {
            "about": f"CoBlock built-in {task_type} tasks; regenerate with "
            "`python -m tom_envs.games.coblock.make_tasks --write`",
            "grid": list(DEFAULT_GRID),
            "tasks": [t.to_dict() for t in tasks],
        }
        path.write_text(_dump(doc))
        paths.append(path)
    return paths


def _dump(doc: dict) -> str:
    """JSON with every innermost list or object on one line (one block per line: readable diffs)."""

    def collapse(m: re.Match) -> str:
        inner = re.sub(r"\s*\n\s*", " ", m.group(2).strip())
        return f"{m.group(1)}{inner}{m.group(3)}"

    text = json.dumps(doc, indent=1, ensure_ascii=False)
    text = re.sub(r"(\[)([^\[\]{}]*?)(\])", collapse, text)
    text = re.sub(r"(\{)([^\[\]{}]*?)(\})", collapse, text)
    return text + "\n"
