"""Paper 002 (LLM-Coordination), Table 2: CollabCapture and CollabEscape beside exact baselines.

For every scenario it computes, with the exact joint planner (``tom_envs/games/joint_planner.py``), the
optimal turns to capture (CollabCapture, deterministic) and the optimal escape probability
(CollabEscape, exact over the killer's random moves, within the 30-turn limit and without a limit),
plays the paper's greedy baseline (our reading of it, ``greedy`` bots), the optimal bots and
uniformly random agents through the episode runner, and writes the figures beside Table 2.

Run: ``tom-envs reproduce paper002 --episodes 1000 --out docs/results/paper002_capture_escape.md``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from tom_envs.evaluation.report import format_stat
from tom_envs.evaluation.tables import PaperTable, TableCell
from tom_envs.games.collab_capture.rules import DOOR_STATE_SCENARIOS, CaptureConfig, CaptureGame
from tom_envs.games.collab_capture.rules import SCENARIOS as CAPTURE_SCENARIOS
from tom_envs.games.collab_capture.text import action_text as capture_action_text
from tom_envs.games.collab_escape.rules import SCENARIOS as ESCAPE_SCENARIOS
from tom_envs.games.collab_escape.rules import EscapeConfig, EscapeGame
from tom_envs.games.collab_escape.text import action_text as escape_action_text
from tom_envs.games.joint_planner import JointPlanner
from tom_envs.records import Episode, mean_ci95

#: Table 2 of the paper: agent -> (escape rate, escape avg turns, capture rate, capture avg turns).
#: The extracted header reads "Collab Escape | Collab Capture" over "Capture Rate, Avg. Turns,
#: Escape Rate, Avg. Turns"; the group headers and the text (the ToM step helps in CollabEscape:
#: 0.83 vs 0.50; "relatively low benefit" in CollabCapture: 1.00 vs 1.00) put Escape first.
PAPER_TABLE2: dict[str, tuple[float, float | None, float, float]] = {
    "GPT-4-turbo": (0.83, 4.60, 1.00, 3.5),
    "GPT-4-turbo (w/out ToM reasoning)": (0.50, 2.00, 1.00, 4.75),
    "GPT-4o": (0.67, 4.00, 1.00, 7.17),
    "GPT-3.5-turbo": (0.33, 2.50, 0.67, 8.38),
    "Mixtral-8x7b": (0.50, 7.67, 0.92, 7.55),
    "Greedy Baseline": (0.00, None, 0.50, 6.00),
}


@dataclass
class Played:
    """Episodes of one (game, scenario, agents) cell."""

    success: list[float]
    turns: list[float]
    regret: list[float]
    tom_accuracy: list[float]
    seconds: float

    @property
    def rate(self) -> tuple[float, float]:
        """Success rate with its 95% half-width."""
        return mean_ci95(self.success)

    @property
    def turns_given_success(self) -> tuple[float, float]:
        """Mean turns of the successful episodes with its 95% half-width."""
        won = [t for t, s in zip(self.turns, self.success, strict=True) if s]
        return mean_ci95(won) if won else (float("nan"), float("nan"))


def cross_play_section(episodes: int, log: Callable[[str], None], get: Callable[..., Played]) -> list[str]:
    """The optimal bot (Alice) with a greedy Bob: what assuming an optimal partner costs."""
    lines = [
        "## Cross-play: the optimal bot (Alice) with a greedy partner (Bob)",
        "",
        "The optimal bot plays its part of the optimal *joint* plan, i.e. it assumes an optimal "
        "partner; its prediction of Bob's move is Bob's part of that plan. With a greedy Bob the "
        "prediction (literal ToM, `tom_accuracy/player_0`) and the outcome (functional regret "
        "against the planner's value) both drop. CollabCapture is deterministic (1 episode); "
        f"CollabEscape: {episodes} episodes, 95% intervals.",
        "",
        "| game | scenario | success rate | turns when successful | regret | Alice's ToM accuracy % |",
        "|---|---|---|---|---|---|",
    ]
    for game, scenarios in (
        ("CollabCapture", CAPTURE_SCENARIOS),
        ("CollabEscape", ESCAPE_SCENARIOS),
    ):
        n = 1 if game == "CollabCapture" else episodes
        unit = "turns" if game == "CollabCapture" else "escape prob."
        for key in scenarios:
            log(f"cross-play {game} {key}")
            r = get(game, key, "optimal", n, partner="greedy")
            lines.append(
                f"| {game} | `{key}` | {_f(r.rate, 3)} | {_f(r.turns_given_success)} | "
                f"{_f(mean_ci95(r.regret))} {unit} | {_f(mean_ci95(r.tom_accuracy), 1)} |"
            )
    return lines


def _f(v: tuple[float, float] | float | None, digits: int = 2) -> str:
    """The paper's cells: "N.A." where missing, no "± 0.00"."""
    return format_stat(v, digits, missing="N.A.", bare_zero=True)


def capture_section(
    episodes: int, log: Callable[[str], None], get: Callable[..., Played]
) -> tuple[list[str], dict]:
    """Optimal and played figures for every CollabCapture scenario (Table 2's aggregate: the
    four door states)."""
    lines = [
        "## CollabCapture: optimal turns to capture per scenario",
        "",
        "Deterministic game: the optimal value is a number of turns, found by exhaustive search "
        "over every reachable (Alice, Bob, thief, doors) state; 30-turn limit. The four door "
        "states start as coded (Alice 1, Bob 6, thief 2); `pincer`, `enable` and `disable` "
        "(ours) start where App. E.1's challenge is required: their optimum is strictly worse "
        "without the named mechanism (the env docs give the planner's figures without it). The "
        "greedy and optimal bots are deterministic, so one episode each suffices; random agents: "
        f"{episodes} episodes.",
        "",
        "| scenario | door 1-2 | door 3-4 | starts (Alice, Bob, thief) | reachable states | "
        "optimal turns | optimal first move (Alice / Bob) | greedy: captured, turns | optimal "
        "bots: turns | random: capture rate, turns when captured |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    agg: dict[str, list[float]] = {k: [] for k in ("opt_turns", "greedy_cap", "greedy_turns")}
    for key, sc in CAPTURE_SCENARIOS.items():
        log(f"CollabCapture {key}")
        game = CaptureGame(CaptureConfig(scenario=key))
        planner = JointPlanner(game)
        start = game.initial_state(np.random.default_rng(0))
        t_opt = planner.turns_to_success(start)
        a, b = planner.best_joint_action(start)
        greedy = get("CollabCapture", key, "greedy", 1)
        optimal = get("CollabCapture", key, "optimal", 1)
        rand = get("CollabCapture", key, "random", episodes)
        captured = bool(greedy.success[0])
        if key in DOOR_STATE_SCENARIOS:
            agg["opt_turns"].append(t_opt)
            agg["greedy_cap"].append(float(captured))
            if captured:
                agg["greedy_turns"].append(greedy.turns[0])
        door = {True: "open", False: "closed"}
        lines.append(
            f"| `{key}` | {door[sc.doors_open[0]]} | {door[sc.doors_open[1]]} | "
            f"{', '.join(map(str, sc.starts))} | {planner.num_states} | {t_opt} | {capture_action_text(a, start.rooms[0])} / "
            f"{capture_action_text(b, start.rooms[1])} | "
            f"{'yes' if captured else 'no'}, {int(greedy.turns[0])} | {int(optimal.turns[0])} | "
            f"{_f(rand.rate)}, {_f(rand.turns_given_success, 1)} |"
        )
    return lines, agg


def escape_section(
    episodes: int, log: Callable[[str], None], get: Callable[..., Played]
) -> tuple[list[str], dict]:
    """Optimal and played figures for CollabEscape's two scenarios on both maps."""
    lines = [
        "## CollabEscape: optimal escape probability per scenario",
        "",
        "Exact over the killer's random moves: backward induction over every reachable (Alice, "
        "Bob, killer, generator progress, killer memory) state. `P*(30)` is the best escape "
        "probability within the 30-turn limit, `P*(inf)` without a limit (value iteration to "
        "convergence), `first k` the fewest turns with a non-zero chance to escape, `E[T]` the "
        "expected turns to escape of the optimal joint policy (exact propagation). Played columns: "
        f"{episodes} seeded self-play episodes each, 95% intervals.",
        "",
        "| scenario | map | reachable states | P*(30) | P*(inf) | first k | E[T] optimal | "
        "optimal first move (Alice / Bob) | optimal bots: escape rate, turns | greedy: escape "
        "rate, turns | random: escape rate |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    agg: dict[str, list[float]] = {
        k: [] for k in ("opt_p", "opt_turns", "greedy_rate", "greedy_turns", "greedy_esc")
    }
    for key in ESCAPE_SCENARIOS:
        for maze in ("coded", "prompt"):
            log(f"CollabEscape {key} {maze}")
            game = EscapeGame(EscapeConfig(scenario=key, map=maze))
            planner = JointPlanner(game)
            unbounded = JointPlanner(
                EscapeGame(EscapeConfig(scenario=key, map=maze, max_turns=None))
            )
            start = game.initial_state(np.random.default_rng(0))
            curve = planner.success_curve(start)
            first = int(np.flatnonzero(curve > 0)[0]) if (curve > 0).any() else None
            outcome = planner.policy_outcome(start)
            a, b = planner.best_joint_action(start)
            cells = [
                f"| `{key}` | {maze} | {planner.num_states} | {curve[-1]:.4f} | "
                f"{unbounded.value(start):.4f} | {first} | "
                f"{outcome['expected_turns_given_success']:.2f} | "
                f"{escape_action_text(a, start.rooms[0])} / "
                f"{escape_action_text(b, start.rooms[1])} |"
            ]
            if maze == "coded":
                opt = get("CollabEscape", key, "optimal", episodes)
                greedy = get("CollabEscape", key, "greedy", episodes)
                rand = get("CollabEscape", key, "random", episodes)
                agg["opt_p"].append(float(curve[-1]))
                agg["opt_turns"].append(outcome["expected_turns_given_success"])
                agg["greedy_rate"].append(greedy.rate[0])
                agg["greedy_esc"] += [
                    t for t, s in zip(greedy.turns, greedy.success, strict=True) if s
                ]
                cells.append(
                    f" {_f(opt.rate, 3)}, {_f(opt.turns_given_success)} | "
                    f"{_f(greedy.rate, 3)}, {_f(greedy.turns_given_success)} | "
                    f"{_f(rand.rate, 3)} |"
                )
            else:
                cells.append(" (not played) | | |")
            lines.append("".join(cells))
    return lines, agg


def _cell_key(game: str, scenario: str, agent: str, partner: str | None = None) -> str:
    return f"{game}.{scenario}.{agent}" + (f"+{partner}" if partner else "")


def table_cells(episodes: int = 200, seed: int = 0) -> list[TableCell]:
    """The played cells of every section (CollabCapture is deterministic: one episode)."""
    wanted = [("CollabCapture", k, a, 1 if a != "random" else episodes, None)
              for k in CAPTURE_SCENARIOS for a in ("greedy", "optimal", "random")]  # fmt: skip
    wanted += [("CollabEscape", k, a, episodes, None)
               for k in ESCAPE_SCENARIOS for a in ("optimal", "greedy", "random")]  # fmt: skip
    wanted += [("CollabCapture", k, "optimal", 1, "greedy") for k in CAPTURE_SCENARIOS]
    wanted += [("CollabEscape", k, "optimal", episodes, "greedy") for k in ESCAPE_SCENARIOS]
    return [
        TableCell(_cell_key(g, k, a, p), g, (a, p or a), n, seed, {"scenario": k})
        for g, k, a, n, p in wanted
    ]


def played_of(game: str, eps: Sequence[Episode]) -> Played:
    """A cell's figures from its episodes."""
    key = "captured" if game == "CollabCapture" else "escaped"
    regret = "turn_regret" if game == "CollabCapture" else "functional_regret"
    return Played(
        [e.metrics[key] for e in eps],
        [e.metrics["turns"] for e in eps],
        [e.metrics[regret] for e in eps],
        [e.metrics.get("tom_accuracy/player_0", math.nan) for e in eps],
        sum(e.wall_time_s for e in eps),
    )


def render(played: Mapping[str, Sequence[Episode]], episodes: int = 200, seed: int = 0) -> str:
    """Every section, from the episodes of :func:`table_cells`; returns the markdown page."""

    def get(game: str, scenario: str, agent: str, _n: int, partner: str | None = None) -> Played:
        return played_of(game, played[_cell_key(game, scenario, agent, partner)])

    def log(_: str) -> None:
        return None

    t0 = time.perf_counter()
    cap_lines, cap = capture_section(episodes, log, get)
    esc_lines, esc = escape_section(episodes, log, get)
    cross_lines = cross_play_section(episodes, log, get)
    greedy_cap_turns = float(np.mean(cap["greedy_turns"])) if cap["greedy_turns"] else math.nan
    greedy_esc_turns = float(np.mean(esc["greedy_esc"])) if esc["greedy_esc"] else None
    lines = [
        "# Paper 002, Table 2: CollabCapture and CollabEscape beside exact baselines",
        "",
        "Command: `tom-envs reproduce paper002 --episodes "
        f"{episodes} --out docs/results/paper002_capture_escape.md` (the `paper002` table, its "
        "cells played by the eval worker pool; "
        f"{sum(played_of(c.game, played[c.key]).seconds for c in table_cells(episodes, seed)):.0f} s "
        f"of play summed over episodes, {time.perf_counter() - t0:.0f} s of planning).",
        "",
        "## Table 2 beside ours",
        "",
        "The paper's rates and average turns are over 3 trials per scenario (App. E). Ours "
        "aggregate the same way over the scenarios: CollabCapture over its four door-state "
        "scenarios, CollabEscape over its two starts on the coded map; average turns are over "
        "successful episodes. The optimal rows are exact (no sampling); greedy CollabEscape is "
        f"measured over {episodes} episodes per scenario.",
        "",
        "| agent | Escape rate | Escape avg. turns | Capture rate | Capture avg. turns | source |",
        "|---|---|---|---|---|---|",
    ]
    for agent, (er, et, cr, ct) in PAPER_TABLE2.items():
        lines.append(f"| {agent} | {er:.2f} | {_f(et)} | {cr:.2f} | {ct:.2f} | paper |")
    lines.append(
        f"| **Optimal joint planner** | {np.mean(esc['opt_p']):.2f} | "
        f"{np.mean(esc['opt_turns']):.2f} | 1.00 | {np.mean(cap['opt_turns']):.2f} | ours, exact |"
    )
    lines.append(
        f"| **Greedy (ours)** | {np.mean(esc['greedy_rate']):.2f} | {_f(greedy_esc_turns)} | "
        f"{np.mean(cap['greedy_cap']):.2f} | {_f(greedy_cap_turns)} | ours |"
    )
    lines += ["", *cap_lines, "", *esc_lines, "", *cross_lines, "", *NOTES]
    return "\n".join(lines) + "\n"


NOTES = [
    "## Notes",
    "",
    '* **Which columns are which.** The extracted Table 2 header is garbled ("Collab Escape '
    'Collab Capture" over "Capture Rate, Avg. Turns, Escape Rate, Avg. Turns"). We read the '
    "first pair as CollabEscape and the second as CollabCapture: the group headers say so, and "
    "so does the text (the explicit ToM step helps in CollabEscape, 0.83 vs 0.50, and shows "
    '"relatively low benefit" in CollabCapture, 1.00 vs 1.00). Under that reading the paper\'s '
    "greedy baseline never escapes (0.00) and captures in half the trials (0.50, 6.00 turns).",
    "* **Greedy agents are our reading.** The authors' released code has the greedy-agent loop "
    "for CollabCapture (door 1-2 open, door 3-4 closed, same starts, 30 turns, same-room capture "
    "only) but not the greedy agent itself, and nothing for CollabEscape. Ours: CollabCapture "
    "greedy takes one shortest-path step toward the thief's current room and never presses a "
    "button; CollabEscape greedy repairs the nearest generator, then runs for the gate, ignoring "
    "the killer. The paper's greedy figures therefore need not match ours; the optimal rows are "
    "the reference that does not depend on such choices.",
    "* **Rules as coded.** The thief flees from the agents' planned next rooms using room-number "
    "differences and is caught on a swap too; with both doors open (and with door 3-4 closed) the "
    "optimum is 1 turn because Alice steps into room 2 while the thief, tied between rooms 1 and "
    "3, takes room 1 (first in listed order) and swaps with her. CollabEscape's killer and fixing "
    "rules are the coded ones; the coded map has two one-way passages (7 -> 3, 8 -> 7), the "
    'prompt\'s map (`map="prompt"`) is symmetric; both are reported.',
    "* **Scenarios.** CollabCapture's four door-state scenarios are App. E.1's with the coded "
    "starts (`door12_closed` is the coded LLM benchmark, `door34_closed` the coded greedy run); "
    "at those starts two are solved in one turn by a swap and none needs a door closed, so "
    "`pincer`, `enable` and `disable` (ours, found by searching every start with the planner) "
    "realise App. E.1's three named challenges; Table 2 above aggregates the four door states "
    "only, as the paper's four scenarios. "
    "CollabEscape's `together` is the coded start; `split` (Bob starts in the killer's sight) is "
    "ours: the second start of App. E.2 is not in the released code.",
    "* **Turn limits.** CollabCapture: 30 turns, as coded. CollabEscape has no limit in the code; "
    "we stop at 30 turns by default (`max_turns=None` removes it) and give `P*(inf)` too.",
    "* **Probes and regret.** The same planner is the ground truth of the ToM probes (the "
    "partner's part of the optimal joint plan, asked when unique) and of the episode metrics "
    "(`turn_regret`, `functional_regret`, per-seat `br_regret`, `tom_regret`); see the games' "
    "`metrics.py`.",
]


#: The table of ``tom-envs reproduce paper002`` (``[[tables]] table = "paper002"``).
TABLE = PaperTable(
    "paper002",
    "Paper 002, Table 2: CollabCapture and CollabEscape beside exact baselines",
    table_cells,
    render,
)
