"""CoBlock (paper 003): the bots' table per task type (success, timesteps, workload balance γ).

Plays every built-in task (24 per type) with the cooperative pair, with the cooperative bot beside
each persona (both seatings: 48 episodes per type), and with two uniformly random agents; then the
cooperative pair on freshly generated tasks; the page is computed from those episodes, and its
pictures are drawn next to it (the round-5 picture from a cell's episode).

Run: ``tom-envs reproduce paper003 --out docs/results/coblock.md`` (the shipped config
``experiments/configs/paper003.toml``; ``--episodes N`` sets the number of generated tasks
per type, default 100).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tom_envs.evaluation.tables import PaperTable, TableCell, fmt_ci
from tom_envs.games.coblock.planner import plan
from tom_envs.games.coblock.tasks import TASK_TYPES, builtin_tasks
from tom_envs.records import Episode, mean_ci95

PERSONAS = ("helper", "egoist", "passive", "error_prone")
#: Issue 8's targets for the cooperative pair on the built-in tasks.
TARGET_SUCCESS = 1.0
TARGET_GAMMA_GAP = 0.05


@dataclass
class Row:
    """One (pair, task type) cell."""

    pair: str
    task_type: str
    episodes: list[Episode]

    def stat(self, key: str) -> tuple[float, float]:
        """Mean and 95% half-width of a metric over the episodes that have it."""
        return mean_ci95(ep.metrics[key] for ep in self.episodes if key in ep.metrics)

    def worst_gamma_gap(self) -> float:
        """Largest |γ - 0.5| over the episodes (NaN if γ was never defined)."""
        gaps = [abs(ep.metrics["gamma"] - 0.5) for ep in self.episodes if "gamma" in ep.metrics]
        return max(gaps) if gaps else float("nan")


def planner_rounds(task_type: str) -> tuple[float, float]:
    """Rounds of the planner's joint schedule (+1 round to exchange goals), over the set."""
    values = []
    for task in builtin_tasks(task_type):
        p = plan([g.blocks for g in task.goals], task.inventories)
        assert p is not None, f"{task.name} has no plan"
        values.append(p.makespan + 1)
    return mean_ci95(values)


def _table(rows: Sequence[Row], planner: dict[str, tuple[float, float]] | None = None) -> list[str]:
    head = "| pair | task type | episodes | success | timesteps (rounds) | actions | γ | max abs(γ - 0.5) |"
    lines = [head, "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r.pair} | {r.task_type} | {len(r.episodes)} | {fmt_ci(r.stat('success'))} | "
            f"{fmt_ci(r.stat('timesteps'), 1)} | {fmt_ci(r.stat('actions'), 1)} | "
            f"{fmt_ci(r.stat('gamma'), 3)} | {r.worst_gamma_gap():.3f} |"
        )
    return lines


#: The played rows: (pair label, [(seats, seed offset), ...]); personas play both seatings.
PAIRS: list[tuple[str, list[tuple[tuple[str, str], int]]]] = [
    ("cooperative + cooperative", [(("cooperative", "cooperative"), 0)]),
    *(
        (f"cooperative + {p}", [(("cooperative", p), 0), ((p, "cooperative"), 1000)])
        for p in PERSONAS
    ),
    ("random + random", [(("random", "random"), 0)]),
]


def _builtin_key(task_type: str, seats: tuple[str, str], index: int) -> str:
    return f"builtin.{task_type}.{seats[0]}+{seats[1]}.{index:02d}"


def table_cells(generated: int = 100) -> list[TableCell]:
    """One episode per built-in task, pair and seating (seed = offset + task index), and
    ``generated`` freshly generated tasks per type for the cooperative pair (seeds 0..)."""
    cells = [
        TableCell(_builtin_key(t, seats, i), "CoBlock", seats, 1, offset + i,
                  {"task_type": t, "task_index": i})
        for _, seatings in PAIRS
        for t in TASK_TYPES
        for seats, offset in seatings
        for i in range(len(builtin_tasks(t)))
    ]
    if generated:
        cells += [
            TableCell(f"generated.{t}", "CoBlock", ("cooperative", "cooperative"), generated, 0,
                      {"task_type": t, "generated": True})
            for t in TASK_TYPES
        ]
    return [*cells, PICTURE_CELL]


def render(played: Mapping[str, Sequence[Episode]], generated: int = 100) -> str:
    """The page from the episodes of :func:`table_cells`."""
    tables: dict[str, list[Row]] = {"builtin": [], "generated": []}
    for name, seatings in PAIRS:
        for task_type in TASK_TYPES:
            eps = [ep for seats, _ in seatings for i in range(len(builtin_tasks(task_type)))
                   for ep in played[_builtin_key(task_type, seats, i)]]  # fmt: skip
            tables["builtin"].append(Row(name, task_type, eps))
    if generated:
        for task_type in TASK_TYPES:
            eps = list(played[f"generated.{task_type}"])
            tables["generated"].append(Row("cooperative + cooperative", task_type, eps))
    seconds = sum(ep.wall_time_s for rows in tables.values() for r in rows for ep in r.episodes)
    return page(tables, generated, seconds)


def page(tables: Mapping[str, list[Row]], generated: int, seconds: float) -> str:
    """The markdown page of the rows."""
    coop = [r for r in tables["builtin"] if r.pair == "cooperative + cooperative"]
    met = all(
        r.stat("success")[0] >= TARGET_SUCCESS and r.worst_gamma_gap() <= TARGET_GAMMA_GAP
        for r in coop
    )
    planner = {t: planner_rounds(t) for t in TASK_TYPES}
    lines = [
        "# CoBlock (paper 003): the bots per task type",
        "",
        f"Command: `tom-envs reproduce paper003 --episodes {generated} --out "
        f"docs/results/coblock.md` (the `paper003` table, played by the eval worker pool with "
        f"resume; {seconds:.0f} s of play summed over episodes).",
        "",
        "Every built-in task (24 per type, `tom_envs/games/coblock/data/`), default settings "
        "(grid 6×5×6, 60 rounds, sparse reward, an agent's end_task ends the episode). Persona "
        "rows play both seatings (the persona as player_1, seeds 0-23, then as player_0, seeds "
        "1000-1023), so 48 episodes per type. Intervals are 95% (1.96 standard errors over "
        "episodes). **success**: share of episodes with every target block in place (Eq. 1). "
        "**timesteps**: rounds played (both agents act once per round). **actions**: actions other "
        "than wait, both agents. **γ**: workload balance (Eq. 2-3) from the agents' place/break "
        "actions and Alg. 1's optimal block counts; 0.5 is optimal; averaged over the episodes "
        "where it is defined. **max abs(γ - 0.5)**: the worst episode.",
        "",
        "## Built-in tasks",
        "",
        *_table(tables["builtin"]),
        "",
        f"Issue 8's target for the cooperative pair (100% success on every built-in task, γ "
        f"within {TARGET_GAMMA_GAP} of 0.5): **{'met' if met else 'NOT met'}**.",
        "",
        "Planner reference (the joint schedule of `planner.plan` plus one round to exchange "
        "goals; the cooperative pair follows it): "
        + ", ".join(f"{t} {fmt_ci(planner[t], 1)} rounds" for t in TASK_TYPES)
        + ".",
    ]
    if generated:
        lines += [
            "",
            f"## Freshly generated tasks ({generated} per type, `generated=True`, seeds "
            f"0-{generated - 1})",
            "",
            *_table(tables["generated"]),
        ]
    lines += [
        "",
        "## Reading the table",
        "",
        "* The cooperative pair tells each other goal and inventory in round 1, then both compute "
        "the same Alg. 1 assignment (each keeps its own goal's blocks first among the shared "
        "colours) and place one block per round, waiting only when the gravity rule makes them; "
        "γ is exactly 0.5 because each places exactly its Alg. 1 count.",
        "* `helper` builds the partner's goal and ignores its own until asked; `passive` does "
        "nothing until asked: the cooperative bot notices the stall (two idle rounds with work "
        "available), takes over what it can and asks for the rest. Success stays high, but the "
        "work and the rounds shift towards the cooperative bot (γ below 0.5).",
        "* `egoist` never helps: whenever the cooperative bot's goal needs the egoist's colours "
        "(skill- and goal-dependent tasks), the task fails at the round limit.",
        "* `error_prone` places 1 block in 5 wrongly; the cooperative bot breaks wrong blocks on "
        "target cells, at the cost of extra actions and rounds.",
        "* The paper reports LLM agents only (Figures 6-7, no numeric tables), so there is no "
        "paper figure to set beside these rows.",
        *pictures_section(),
    ]
    return "\n".join(lines).rstrip() + "\n"


#: The pictures of the page: (file suffix, task, caption); the round-5 picture is drawn from the
#: ``picture.arch_round5`` cell's episode (the cooperative pair, 5 rounds, seed 0).
PICTURES = (
    ("fig1_target", ("goal_dependent", 0),
     "the target of goal_dependent_00_m (paper Fig. 1: a yellow pillar and a red-and-blue top "
     "that rests on it)"),
    ("arch_round5", ("goal_dependent", 1),
     "goal_dependent_01_m after 5 rounds of the cooperative pair: the pillars rise, the arch top "
     "(outlined) waits for them"),
)  # fmt: skip
PICTURE_CELL = TableCell("picture.arch_round5", "CoBlock", ("cooperative", "cooperative"), 1, 0,
                         {"task_type": "goal_dependent", "task_index": 1, "max_rounds": 5})


def pictures_section() -> list[str]:
    """The page's pictures (drawn by :func:`figures` next to the page)."""
    lines = ["", "## Pictures (`tom_envs.games.coblock.picture`)", ""]
    for suffix, _, caption in PICTURES:
        lines += [f"![{caption}](coblock_{suffix}.png)", "", f"*{caption}.*", ""]
    return lines


def figures(played: Mapping[str, Sequence[Episode]], page: Path, generated: int = 100) -> list[Path]:
    """Draw :data:`PICTURES` as PNG files next to ``page`` (nothing without matplotlib)."""
    try:
        from tom_envs.games.coblock import picture
    except ImportError:  # matplotlib is optional
        return []
    from tom_envs.games.coblock.metrics import replay
    from tom_envs.games.coblock.rules import CoBlockConfig, CoBlockGame

    written = []
    for suffix, (task_type, index), _ in PICTURES:
        task = builtin_tasks(task_type)[index]
        if suffix == "fig1_target":
            grid = CoBlockConfig(task=task).grid
            data = picture.render_png(task.target, grid, title=f"{task.name}: target ({task.type})")
        else:
            (episode,) = played[PICTURE_CELL.key]
            cfg = CoBlockConfig(task=task, max_rounds=PICTURE_CELL.kwargs["max_rounds"])
            data = picture.state_png(replay(CoBlockGame(cfg), episode.seed, episode.steps), cfg.grid)
        written.append(picture.save_png(data, page.parent / f"coblock_{suffix}.png"))
    return written


#: The table of ``tom-envs reproduce paper003`` (``[[tables]] table = "paper003"``).
TABLE = PaperTable("paper003", "Paper 003: metrics per task type", table_cells, render, figures)
