"""Conflict-Based Search for the bomb-defusal mission (paper 000, §5.2), and its exhaustive check.

A *centralised, full-information* planner: it reads the whole mission (bomb rooms and sequences),
which no player sees. It is the paper's "CBS Planner" baseline, an upper bound for decentralised
teams, not a fair partner.

The problem. Every phase ``j`` of every bomb ``b`` is a *task*: a cut with colour
``sequences[b][j]`` in the bomb's room, after phase ``j-1`` (and, when several bombs share a room,
after the lower-numbered bombs there are defused, since tools act on the room's lowest active
bomb). Player ``i`` acts at global times ``i, i+N, i+2N, ...`` (turns alpha → bravo → charlie,
every action applied at once), moves one hallway per action and may wait (inspect, or use a tool
where no bomb is). The objective is the team return (the paper's 10 × phases per defused bomb) and
then the fewest rounds: best-first on (return, makespan).

The search (Sharon et al. 2015, adapted as in the paper to task assignment with precedence and
temporal constraints):

* high level: every assignment of tasks to players holding the task's colour is a root of a
  constraint tree; a node holds per-task time windows. Nodes are expanded best-first on
  (−return, makespan, total cut time). A node's plans are checked for precedence conflicts (a task
  scheduled no later than its predecessor); the first conflict at times ``t_pred >= t_succ``
  branches into "successor at ``>= t_pred + 1``" and "predecessor at ``<= t_pred - 1``" (binary
  constraint tree), which keeps every valid joint plan in exactly one subtree.
* low level: for one player, its tasks and their windows, the schedule (order and times) with the
  earliest last cut, exactly: all orders for up to 6 tasks, dynamic programming over subsets beyond
  (waiting is free, so arriving earlier never hurts and earliest times are optimal).

Because the low level is exact and constraints only remove plans, the first conflict-free node
popped is optimal in return and then makespan: :func:`plan_mission` returns the fewest rounds any
plan can achieve. :func:`exhaustive_optimum` checks this independently: breadth-first search over
the joint state (every player's room × every bomb's progress × whose turn), vectorised with numpy.

``bombs_per_subtask`` reproduces the paper's hyper-parameter: bombs sorted by distance from the
start are planned in chunks, each chunk after the previous one (faster, no longer optimal; the
paper's setting gave 6.0 rounds). ``None`` (the default) plans the whole mission as one subtask.

Use from Python::

    plan = plan_mission(game, state)          # state: the full BombState (privileged)
    plan.rounds, plan.return_, plan.actions   # per-player action lists
    exhaustive_optimum(game, state)           # fewest rounds by brute force (small missions)
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from tom_envs.games.bomb_defusal.rules import BombGame
from tom_envs.games.bomb_defusal.state import BombState

# A plan step for one player: ("move", room index), ("use", colour) or ("wait", None).
Step = tuple[str, int | None]


@dataclass(frozen=True)
class Task:
    """Cut phase ``phase`` of ``bomb`` with ``color`` in ``room``."""

    bomb: int
    phase: int
    color: int
    room: int


@dataclass(frozen=True)
class Problem:
    """What the planner needs, read from a (full) state.

    Attributes:
        num_agents: players N.
        distance: hallway distances between room indices.
        neighbors: adjacency (room indices).
        tools: each player's colours.
        start_rooms: each player's room now.
        first_action: each player's next action index (its k-th action is at global time k N + i).
        tasks: the phases still to cut.
        precedences: ``(before, after)`` task-index pairs.
        eligible: per task, the players holding its colour.
        values: per bomb, points when defused.
        limit: first global time past the round limit.
    """

    num_agents: int
    distance: tuple[tuple[int, ...], ...]
    neighbors: tuple[tuple[int, ...], ...]
    tools: tuple[tuple[int, ...], ...]
    start_rooms: tuple[int, ...]
    first_action: tuple[int, ...]
    tasks: tuple[Task, ...]
    precedences: tuple[tuple[int, int], ...]
    eligible: tuple[tuple[int, ...], ...]
    values: tuple[int, ...]
    limit: int

    @classmethod
    def from_state(cls, game: BombGame, state: BombState) -> Problem:
        """The remaining problem from ``state`` (privileged: reads every bomb's sequence)."""
        m = state.mission
        n_agents = game.num_players
        now = (state.round - 1) * n_agents + state.turn
        first = tuple(max(0, -(-(now - i) // n_agents)) for i in range(n_agents))
        tasks: list[Task] = []
        index: dict[tuple[int, int], int] = {}
        for b in range(m.num_bombs):
            if not state.active(b):
                continue
            for j in range(state.progress[b], len(m.sequences[b])):
                index[(b, j)] = len(tasks)
                tasks.append(Task(b, j, m.sequences[b][j], m.bomb_rooms[b]))
        prec = []
        for (b, j), t in index.items():
            if (b, j - 1) in index:
                prec.append((index[(b, j - 1)], t))
        for room in set(m.bomb_rooms):  # tools act on a room's lowest active bomb
            here = [b for b in range(m.num_bombs) if m.bomb_rooms[b] == room and state.active(b)]
            for lo, hi in itertools.pairwise(here):
                last = (lo, len(m.sequences[lo]) - 1)
                prec.append((index[last], index[(hi, state.progress[hi])]))
        eligible = tuple(tuple(i for i in range(n_agents) if t.color in m.tools[i]) for t in tasks)
        if any(not e for e in eligible):
            raise ValueError("a phase needs a colour no player holds")
        return cls(
            n_agents,
            m.game_map.distance,
            m.game_map.neighbors,
            m.tools,
            state.locations,
            first,
            tuple(tasks),
            tuple(prec),
            eligible,
            tuple(m.value(b) for b in range(m.num_bombs)),
            game.config.max_rounds * n_agents,
        )


@dataclass
class Plan:
    """A joint plan.

    Attributes:
        times: per task (index into ``problem.tasks``), ``(player, global time)`` of its cut.
        actions: per player, its actions from its next action on (ending with its last cut).
        makespan: global time of the last cut (``-1`` if nothing to do).
        rounds: the round of the last cut (1-based).
        return_: points earned within the round limit.
        nodes: constraint-tree nodes expanded; ``roots``: assignments considered.
        seconds: planning wall time; ``cpu_seconds``: planning CPU time of this process.
    """

    problem: Problem
    times: dict[int, tuple[int, int]]
    actions: list[list[Step]]
    makespan: int
    rounds: int
    return_: int
    nodes: int = 0
    roots: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0


# ------------------------------------------------------------------------------ low level
Window = tuple[int, int]  # (earliest, latest) global time of a task's cut


_Schedule = tuple[int, int, dict[int, int]]  # finish, sum of times, {task: time}
_CutIndex = Callable[[int, int], int | None]  # (action index, task) -> first index in its window


class _Search(NamedTuple):
    """What :func:`_schedule`'s two searches read: the problem, the agent, its tasks and their
    predecessors among them, the window rule and the start (room, action index)."""

    problem: Problem
    agent: int
    tasks: tuple[int, ...]
    preds: dict[int, list[int]]
    cut_index: _CutIndex
    room0: int
    k0: int


def _schedule(
    problem: Problem,
    agent: int,
    tasks: tuple[int, ...],
    windows: dict[int, Window],
    start: tuple[int, int] | None = None,
) -> tuple[int, int, dict[int, int]] | None:
    """Earliest-finishing schedule of ``tasks`` for ``agent``: (finish, sum, {task: time}) or None.

    ``start`` overrides the player's (room, first action index).
    """
    if not tasks:
        return (-1, 0, {})
    n = problem.num_agents
    room0, k0 = (
        start if start is not None else (problem.start_rooms[agent], problem.first_action[agent])
    )
    mine = set(tasks)
    preds = {t: [a for a, b in problem.precedences if b == t and a in mine] for t in tasks}

    def cut_index(k: int, task: int) -> int | None:
        lo, hi = windows.get(task, (0, math.inf))
        if k * n + agent < lo:
            k = -(-(lo - agent) // n)
        return None if k * n + agent > hi else k

    # few tasks: depth-first over the orders, pruned by the best finish so far; else over subsets
    search = _Search(problem, agent, tasks, preds, cut_index, room0, k0)
    return _schedule_dfs(search) if len(tasks) <= 7 else _schedule_dp(search)


def _schedule_dfs(search: _Search) -> _Schedule | None:
    """:func:`_schedule` for a few tasks: depth-first over the orders, pruned by the best finish
    so far."""
    problem, agent, tasks, preds, cut_index, room0, k0 = search
    n = problem.num_agents
    dist = problem.distance
    bit = {t: 1 << i for i, t in enumerate(tasks)}
    need = {t: sum(bit[p] for p in preds[t]) for t in tasks}
    rooms = {t: problem.tasks[t].room for t in tasks}
    full = (1 << len(tasks)) - 1
    best: list = [math.inf, math.inf, None]
    order: list[tuple[int, int]] = []

    def dfs(k: int, room: int, done: int, total: int) -> None:
        if done == full:
            finish = order[-1][1]
            if (finish, total) < (best[0], best[1]):
                best[0], best[1], best[2] = finish, total, dict(order)
            return
        for t in tasks:
            if done & bit[t] or need[t] & ~done:
                continue
            kk = cut_index(k + dist[room][rooms[t]], t)
            if kk is None:
                continue
            g = kk * n + agent
            if g > best[0]:
                continue
            order.append((t, g))
            dfs(kk + 1, rooms[t], done | bit[t], total + g)
            order.pop()

    dfs(k0, room0, 0, 0)
    return None if best[2] is None else (best[0], best[1], best[2])


def _schedule_dp(search: _Search) -> _Schedule | None:
    """:func:`_schedule` for many tasks: dynamic programming over subsets, E[(mask, last)] = the
    earliest cut index of ``last``."""
    problem, agent, tasks, preds, cut_index, room0, k0 = search
    n = problem.num_agents
    dist = problem.distance
    idx = {t: i for i, t in enumerate(tasks)}
    full = (1 << len(tasks)) - 1
    table: dict[tuple[int, int], tuple[int, tuple[int, int] | None]] = {}
    for t in tasks:
        if preds[t]:
            continue
        kk = cut_index(k0 + dist[room0][problem.tasks[t].room], t)
        if kk is not None:
            table[(1 << idx[t], t)] = (kk, None)
    for mask in range(1, full + 1):
        for last in tasks:
            entry = table.get((mask, last))
            if entry is None:
                continue
            k_last = entry[0]
            room = problem.tasks[last].room
            for t in tasks:
                bit = 1 << idx[t]
                if mask & bit or any(not mask & (1 << idx[p]) for p in preds[t]):
                    continue
                kk = cut_index(k_last + 1 + dist[room][problem.tasks[t].room], t)
                if kk is None:
                    continue
                key = (mask | bit, t)
                if key not in table or kk < table[key][0]:
                    table[key] = (kk, (mask, last))
    ends = [(v[0], t) for (mask, t), v in table.items() if mask == full]
    if not ends:
        return None
    _, last = min(ends)
    times = {}
    key: tuple[int, int] | None = (full, last)
    while key is not None:
        k, prev = table[key]
        times[key[1]] = k * n + agent
        key = prev
    return max(times.values()), sum(times.values()), times


# ----------------------------------------------------------------------------- high level
@dataclass(order=True)
class _Node:
    key: tuple
    assignment: tuple[int, ...] = field(compare=False)
    windows: tuple[dict[int, Window], ...] = field(compare=False)  # per agent
    schedules: tuple[tuple[int, int, dict[int, int]], ...] = field(compare=False)


def _return(problem: Problem, times: dict[int, int]) -> int:
    last: dict[int, int] = {}
    for t, g in times.items():
        b = problem.tasks[t].bomb
        last[b] = max(last.get(b, -1), g)
    bombs = {task.bomb for task in problem.tasks}
    return sum(problem.values[b] for b in bombs if last.get(b, math.inf) < problem.limit)


def _node(
    problem: Problem,
    assignment: tuple[int, ...],
    windows: tuple[dict[int, Window], ...],
    schedules: list,
) -> _Node:
    times = {t: g for s in schedules for t, g in s[2].items()}
    finish = max((s[0] for s in schedules), default=-1)
    total = sum(s[1] for s in schedules)
    ret = _return(problem, times)
    return _Node((-ret, finish, total), assignment, windows, tuple(schedules))


def _conflict(problem: Problem, times: dict[int, int]) -> tuple[int, int] | None:
    """The earliest precedence violation ``(before, after)``, if any."""
    worst = None
    for a, b in problem.precedences:
        if times[b] <= times[a] and (worst is None or times[b] < times[worst[1]]):
            worst = (a, b)
    return worst


def _search(
    problem: Problem, max_nodes: int, release: dict[int, int] | None = None
) -> tuple[dict[int, tuple[int, int]], int, int]:
    """Best-first over the constraint trees of every assignment (``release``: earliest times)."""
    cache: dict = {}

    def low(agent: int, assignment: tuple[int, ...], win: dict[int, Window]):
        mine = tuple(t for t, a in enumerate(assignment) if a == agent)
        key = (agent, mine, tuple(sorted(win.items())))
        if key not in cache:
            cache[key] = _schedule(problem, agent, mine, win)
        return cache[key]

    heap: list[_Node] = []
    roots = 0
    release = release or {}
    for assignment in itertools.product(*problem.eligible):
        windows = tuple(
            {t: (g, math.inf) for t, g in release.items() if assignment[t] == i}
            for i in range(problem.num_agents)
        )
        schedules = [low(i, assignment, windows[i]) for i in range(problem.num_agents)]
        if any(s is None for s in schedules):
            continue
        roots += 1
        heapq.heappush(heap, _node(problem, assignment, windows, schedules))
    expanded = 0
    while heap:
        node = heapq.heappop(heap)
        expanded += 1
        times = {t: g for s in node.schedules for t, g in s[2].items()}
        conflict = _conflict(problem, times)
        if conflict is None or expanded >= max_nodes:
            plan = {t: (node.assignment[t], g) for t, g in times.items()}
            return plan, expanded, roots
        before, after = conflict
        t_before = times[before]
        for task, bound in ((after, (t_before + 1, None)), (before, (None, t_before - 1))):
            agent = node.assignment[task]
            win = dict(node.windows[agent])
            lo, hi = win.get(task, (0, math.inf))
            lo = max(lo, bound[0]) if bound[0] is not None else lo
            hi = min(hi, bound[1]) if bound[1] is not None else hi
            if lo > hi:
                continue
            win[task] = (lo, hi)
            sched = low(agent, node.assignment, win)
            if sched is None:
                continue
            windows = tuple(win if i == agent else w for i, w in enumerate(node.windows))
            schedules = [sched if i == agent else s for i, s in enumerate(node.schedules)]
            heapq.heappush(heap, _node(problem, node.assignment, windows, schedules))
    raise RuntimeError("no feasible plan (the round limit may be too short)")


# ---------------------------------------------------------------------------- public API
def _chunks(problem: Problem, bombs_per_subtask: int | None) -> list[list[int]]:
    """Bombs grouped into subtasks (sorted by distance from the players' rooms, then id)."""
    bombs = sorted({t.bomb for t in problem.tasks})
    if bombs_per_subtask is None or bombs_per_subtask >= len(bombs):
        return [bombs]
    room_of = {t.bomb: t.room for t in problem.tasks}
    starts = problem.start_rooms
    bombs.sort(key=lambda b: (min(problem.distance[s][room_of[b]] for s in starts), b))
    return [bombs[i : i + bombs_per_subtask] for i in range(0, len(bombs), bombs_per_subtask)]


def _sub_problem(
    problem: Problem, bombs: list[int], rooms: tuple[int, ...], first: tuple[int, ...]
) -> tuple[Problem, list[int]]:
    keep = [i for i, t in enumerate(problem.tasks) if t.bomb in bombs]
    pos = {t: i for i, t in enumerate(keep)}
    prec = tuple((pos[a], pos[b]) for a, b in problem.precedences if a in pos and b in pos)
    sub = Problem(
        problem.num_agents,
        problem.distance,
        problem.neighbors,
        problem.tools,
        rooms,
        first,
        tuple(problem.tasks[i] for i in keep),
        prec,
        tuple(problem.eligible[i] for i in keep),
        problem.values,
        problem.limit,
    )
    return sub, keep


def solve(problem: Problem, bombs_per_subtask: int | None = None, max_nodes: int = 200_000) -> Plan:
    """Plan ``problem`` (see the module docstring); subtasks are planned one after another."""
    t0, c0 = time.perf_counter(), time.process_time()
    times: dict[int, tuple[int, int]] = {}
    rooms, first = problem.start_rooms, problem.first_action
    nodes = roots = 0
    n = problem.num_agents
    for chunk in _chunks(problem, bombs_per_subtask):
        sub, keep = _sub_problem(problem, chunk, rooms, first)
        # precedence with earlier subtasks (bombs sharing a room) becomes a release time
        extra: dict[int, int] = {}
        for a, b in problem.precedences:
            if a in times and b in keep:
                extra[keep.index(b)] = max(extra.get(keep.index(b), 0), times[a][1] + 1)
        plan, expanded, r = _search(sub, max_nodes, extra)
        nodes += expanded
        roots += r
        for t, (agent, g) in plan.items():
            times[keep[t]] = (agent, g)
        new_rooms, new_first = list(rooms), list(first)
        for agent in range(n):
            mine = [(g, keep[t]) for t, (a, g) in plan.items() if a == agent]
            if mine:
                g, t = max(mine)
                new_rooms[agent] = problem.tasks[t].room
                new_first[agent] = (g - agent) // n + 1
        rooms, first = tuple(new_rooms), tuple(new_first)
    plan = _finish(problem, times, nodes, roots, time.perf_counter() - t0)
    plan.cpu_seconds = time.process_time() - c0
    return plan


def _finish(
    problem: Problem, times: dict[int, tuple[int, int]], nodes: int, roots: int, seconds: float
) -> Plan:
    n = problem.num_agents
    actions: list[list[Step]] = []
    for agent in range(n):
        mine = sorted((g, t) for t, (a, g) in times.items() if a == agent)
        steps: list[Step] = []
        room, k = problem.start_rooms[agent], problem.first_action[agent]
        for g, t in mine:
            task = problem.tasks[t]
            cut_k = (g - agent) // n
            while room != task.room:
                room = _next_hop(problem, room, task.room)
                steps.append(("move", room))
                k += 1
            while k < cut_k:
                steps.append(("wait", None))
                k += 1
            steps.append(("use", task.color))
            k += 1
        actions.append(steps)
    makespan = max((g for _, g in times.values()), default=-1)
    only = {t: g for t, (_, g) in times.items()}
    return Plan(
        problem,
        times,
        actions,
        makespan,
        makespan // n + 1 if makespan >= 0 else 0,
        _return(problem, only),
        nodes,
        roots,
        seconds,
    )


def _next_hop(problem: Problem, i: int, j: int) -> int:
    d = problem.distance
    return min(k for k in problem.neighbors[i] if d[k][j] == d[i][j] - 1)


def plan_mission(game: BombGame, state: BombState, bombs_per_subtask: int | None = None) -> Plan:
    """CBS plan from ``state`` (privileged: reads the full state)."""
    return solve(Problem.from_state(game, state), bombs_per_subtask)


def check_plan(problem: Problem, plan: Plan) -> list[str]:
    """Violations of a plan's timing and precedence (empty when valid); used by the tests."""
    errors = []
    n = problem.num_agents
    for t, task in enumerate(problem.tasks):
        if t not in plan.times:
            errors.append(f"task {t} unplanned")
            continue
        agent, g = plan.times[t]
        if g % n != agent:
            errors.append(f"task {t} at time {g} is not player {agent}'s turn")
        if task.color not in problem.tools[agent]:
            errors.append(f"player {agent} lacks colour {task.color} for task {t}")
    for a, b in problem.precedences:
        if a in plan.times and b in plan.times and plan.times[b][1] <= plan.times[a][1]:
            errors.append(f"task {b} at {plan.times[b][1]} not after task {a}")
    return errors


# ------------------------------------------------------------------------- exhaustive search
def _action_tables(
    game: BombGame,
    state: BombState,
    codes: np.ndarray,
    strides: np.ndarray,
    real: np.ndarray,
    alive: np.ndarray,
) -> tuple[dict[int, np.ndarray], np.ndarray]:
    """:func:`exhaustive_optimum`'s tables over progress codes: per colour, the code after a cut
    in each room (``[room, code]``; unchanged where the cut does nothing), and per player whether
    waiting is possible (``[agent, room, code]``)."""
    m = state.mission
    n_agents = game.num_players
    n = m.game_map.num_rooms
    n_prog = len(codes)
    lengths = [len(s) for s in m.sequences]
    cut_tables = {}
    noop = np.zeros((n_agents, n, n_prog), dtype=bool)
    for c in range(game.config.num_colors):
        table = np.tile(codes, (n, 1))
        for room in range(n):
            bombs = [b for b in range(len(lengths)) if m.bomb_rooms[b] == room]
            if not bombs:
                continue
            first = np.full(n_prog, -1)
            for b in reversed(bombs):
                first = np.where(alive[:, b], b, first)
            for b in bombs:
                sel = first == b
                phase = np.minimum(real[:, b], lengths[b] - 1)
                right = np.array(m.sequences[b])[phase] == c
                ok = sel & right
                table[room, ok] = codes[ok] + strides[b]
        cut_tables[c] = table
    for room in range(n):
        bombs = [b for b in range(len(lengths)) if m.bomb_rooms[b] == room]
        has_bomb = alive[:, bombs].any(axis=1) if bombs else np.zeros(n_prog, dtype=bool)
        for a in range(n_agents):
            noop[a, room] = has_bomb | bool(m.tools[a])
    return cut_tables, noop


def exhaustive_optimum(
    game: BombGame, state: BombState, max_states: int = 20_000_000
) -> int | None:
    """Fewest rounds to defuse every bomb from ``state``, by breadth-first search.

    The joint state is every player's room × every bomb's progress; the search runs action by
    action (whose turn is the depth modulo N). A player may move to a neighbour, cut with one of its
    colours (only the room's lowest active bomb, only if the colour is right: a wrong colour is a
    wait, or an explosion, never useful) or wait (inspect, or use a tool where no bomb is; possible
    unless it has no tool and its room no bomb). Returns ``None`` if the round limit is too short.
    """
    m = state.mission
    n_agents = game.num_players
    n = m.game_map.num_rooms
    lengths = [len(s) for s in m.sequences]
    radix = [1 if not state.active(b) else L + 1 for b, L in enumerate(lengths)]
    strides = np.cumprod([1, *radix[:-1]]).astype(np.int64)
    n_prog = int(np.prod(radix))
    size = n**n_agents * n_prog
    if size > max_states:
        raise ValueError(f"{size} joint states exceed max_states={max_states}")
    prog0 = sum(
        (state.progress[b] if state.active(b) else 0) * int(strides[b]) for b in range(len(lengths))
    )
    goal = sum(
        (lengths[b] if state.active(b) else 0) * int(strides[b]) for b in range(len(lengths))
    )
    # progress digits of every progress code, and the lowest active bomb of every room
    codes = np.arange(n_prog, dtype=np.int64)
    digits = np.stack([(codes // strides[b]) % radix[b] for b in range(len(lengths))], axis=1)
    offset = np.array([state.progress[b] if state.active(b) else 0 for b in range(len(lengths))])
    real = digits + offset  # phases cut
    active = np.array([state.active(b) for b in range(len(lengths))])
    alive = (real < np.array(lengths)) & active  # (n_prog, B)
    cut_tables, noop = _action_tables(game, state, codes, strides, real, alive)
    deg = max(len(x) for x in m.game_map.neighbors)
    nbr = np.full((n, deg), -1, dtype=np.int64)
    for i, x in enumerate(m.game_map.neighbors):
        nbr[i, : len(x)] = x
    loc_code = sum(state.locations[a] * n**a for a in range(n_agents))
    start = loc_code * n_prog + prog0
    now = (state.round - 1) * n_agents + state.turn
    if prog0 == goal:
        return 0
    visited = [np.zeros(size, dtype=bool) for _ in range(n_agents)]
    frontier = np.array([start], dtype=np.int64)
    visited[state.turn][start] = True
    limit = game.config.max_rounds * n_agents
    for depth in range(limit - now):
        a = (state.turn + depth) % n_agents
        stride_a = n**a * n_prog
        loc = (frontier // n_prog // n**a) % n
        prog = frontier % n_prog
        nxt = []
        for slot in range(deg):
            dest = nbr[loc, slot]
            ok = dest >= 0
            nxt.append(frontier[ok] + (dest[ok] - loc[ok]) * stride_a)
        nxt.append(frontier[noop[a, loc, prog]])
        for c in m.tools[a]:
            new = cut_tables[c][loc, prog]
            ok = new != prog
            nxt.append(frontier[ok] + new[ok] - prog[ok])
        cand = np.unique(np.concatenate(nxt))
        if np.any(cand % n_prog == goal):
            steps = now + depth  # global time of the last cut
            return steps // n_agents + 1
        phase = (state.turn + depth + 1) % n_agents
        cand = cand[~visited[phase][cand]]
        visited[phase][cand] = True
        frontier = cand
        if frontier.size == 0:
            return None
    return None
