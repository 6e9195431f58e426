"""Joint plans for CoBlock: the optimal workload assignment (paper Alg. 1) and a round schedule.

A *joint plan* says which agent places which target block (the assignment) and, round by round,
what each agent places (the schedule; ``None`` = wait). The planner is the solvability check of
the task generator (a task is kept only if a plan exists), the source of ``N*`` in the workload
balance γ (Eq. 2-3), and the policy of the cooperative partner bot.

**Assignment** (:func:`optimal_assignment`) follows Alg. 1: blocks of a colour only one agent
holds go to that agent; blocks of a colour both hold ("mutual") go one by one, in build order, to
the agent with fewer blocks so far (ties to player_0, the paper's "Agent 1"). Two additions, both
documented choices: the count of a colour in an inventory is respected (a block never goes to an
agent that has run out of that colour), and among the mutual blocks each agent keeps blocks of its
own goal first (the *number* each agent gets is exactly Alg. 1's, so ``N*`` is unchanged).
``first="partner"`` is the *mirror* convention (the ``mirror`` partner bots): the same counts, but
each agent takes the blocks of its *partner's* goal first among the mutual blocks, so the two
conventions give the same agent different cells wherever both goals hold a mutual colour.

**Schedule** (:func:`schedule`): every round, each agent places the first block of its assignment
(in build order) that is placeable in the world as it was at the start of the round; the round's
placements are simultaneous, so neither relies on the other's block of the same round. Because the
target is connected to the ground, some unplaced block is always placeable, so the schedule never
deadlocks; it fails only if the target itself cannot be built.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from tom_envs.games.coblock.structures import Block, Pos, build_order, pos_of, supported

Goals = Sequence[Sequence[Block]]
Inventories = Sequence[Sequence[int]]


@dataclass(frozen=True)
class JointPlan:
    """A complete plan for the two agents.

    Attributes:
        assignment: the target blocks each agent places, in build order.
        rounds: per round, the block each agent places (``None``: that agent waits).
    """

    assignment: tuple[tuple[Block, ...], tuple[Block, ...]]
    rounds: tuple[tuple[Block | None, Block | None], ...]

    @property
    def makespan(self) -> int:
        """Number of building rounds."""
        return len(self.rounds)

    @property
    def counts(self) -> tuple[int, int]:
        """Blocks per agent (``N*`` of the workload balance)."""
        return (len(self.assignment[0]), len(self.assignment[1]))


def target_blocks(goals: Goals) -> tuple[Block, ...]:
    """The union of the goals, in build order."""
    return build_order(b for g in goals for b in g)


#: Which goal's mutual blocks each agent takes first: ``"own"`` (Alg. 1 as the cooperative bots
#: play it) or ``"partner"`` (the mirror convention).
FIRSTS = ("own", "partner")


def optimal_assignment(
    goals: Goals, inventories: Inventories, first: str = "own"
) -> tuple[tuple[Block, ...], tuple[Block, ...]] | None:
    """Alg. 1 (count-aware; among mutual blocks each agent takes its own goal's first, or its
    partner's with ``first="partner"``); ``None`` if colours run short."""
    if first not in FIRSTS:
        raise ValueError(f"first must be one of {FIRSTS}, got {first!r}")
    target = target_blocks(goals)
    owner = {pos_of(b): g for g, goal in enumerate(goals) for b in goal}
    remaining = [list(inv) for inv in inventories]
    unique: list[list[Block]] = [[], []]
    mutual: list[Block] = []
    for b in target:
        c = b[3]
        holds = (inventories[0][c] > 0, inventories[1][c] > 0)
        if holds[0] and holds[1]:
            mutual.append(b)
        elif holds[0] or holds[1]:
            p = 0 if holds[0] else 1
            remaining[p][c] -= 1
            if remaining[p][c] < 0:
                return None
            unique[p].append(b)
        else:
            return None
    counts = [len(unique[0]), len(unique[1])]
    alg1: list[list[Block]] = [[], []]
    left = [list(r) for r in remaining]
    for b in mutual:
        c = b[3]
        p = 0 if counts[0] <= counts[1] else 1
        if left[p][c] <= 0:
            p = 1 - p
        if left[p][c] <= 0:
            return None
        left[p][c] -= 1
        counts[p] += 1
        alg1[p].append(b)
    if first == "partner":  # the mirror: each agent's "own" blocks are its partner's goal
        owner = {pos: 1 - g for pos, g in owner.items()}
    split = _own_goal_first(mutual, owner, (len(alg1[0]), len(alg1[1])), remaining) or alg1
    order = {b: i for i, b in enumerate(target)}
    return (
        tuple(sorted([*unique[0], *split[0]], key=order.__getitem__)),
        tuple(sorted([*unique[1], *split[1]], key=order.__getitem__)),
    )


def _own_goal_first(
    mutual: Sequence[Block],
    owner: dict[Pos, int],
    k: tuple[int, int],
    remaining: Sequence[Sequence[int]],
) -> list[list[Block]] | None:
    """Give each agent ``k[p]`` mutual blocks, its own goal's (lowest) first; ``None`` if this
    would exceed a colour count."""
    own = [[b for b in mutual if owner[pos_of(b)] == p] for p in (0, 1)]
    out: list[list[Block]] = [own[0][: k[0]], own[1][: k[1]]]
    out[1] += own[0][k[0] :]
    out[0] += own[1][k[1] :]
    for p in (0, 1):
        need = [0] * len(remaining[p])
        for b in out[p]:
            need[b[3]] += 1
        if any(n > r for n, r in zip(need, remaining[p], strict=True)):
            return None
    return out


def optimal_counts(goals: Goals, inventories: Inventories) -> tuple[int, int] | None:
    """``(N*_0, N*_1)``: the number of blocks Alg. 1 assigns to each agent."""
    assignment = optimal_assignment(goals, inventories)
    return None if assignment is None else (len(assignment[0]), len(assignment[1]))


def next_placement(
    assigned: Sequence[Block], occupied: Collection[Pos], done: Collection[Block] = ()
) -> Block | None:
    """The first block of ``assigned`` that is not ``done``, whose cell is free and placeable."""
    for b in assigned:
        p = pos_of(b)
        if b in done or p in occupied:
            continue
        if supported(p, occupied):
            return b
    return None


def schedule(
    assignment: Sequence[Sequence[Block]], world: Collection[Pos] = ()
) -> tuple[tuple[Block | None, Block | None], ...] | None:
    """Rounds of simultaneous placements completing the assignment from ``world``; ``None`` if it
    stalls (the blocks cannot all be placed)."""
    occupied = set(world)
    todo = sum(1 for part in assignment for b in part if pos_of(b) not in occupied)
    rounds: list[tuple[Block | None, Block | None]] = []
    while todo:
        picks = (
            next_placement(assignment[0], occupied),
            next_placement(assignment[1], occupied),
        )
        if picks == (None, None):
            return None
        for b in picks:
            if b is not None:
                occupied.add(pos_of(b))
                todo -= 1
        rounds.append(picks)
    return tuple(rounds)


def plan(goals: Goals, inventories: Inventories) -> JointPlan | None:
    """A joint plan completing the goals from the empty world, or ``None`` if none is found."""
    assignment = optimal_assignment(goals, inventories)
    if assignment is None:
        return None
    rounds = schedule(assignment)
    if rounds is None:
        return None
    return JointPlan(assignment, rounds)
