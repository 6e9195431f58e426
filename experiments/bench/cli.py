"""The ``tom-envs bench`` and ``tom-envs leaderboard`` subcommands (group ``tom_envs.commands``).

::

    tom-envs bench AGENT --suite small --out rows/NAME.json     # play the suite, write one row
    tom-envs bench AGENT --suite small --estimate                # the calls and tokens, nothing played
    tom-envs bench --reproduce rows/NAME.json [--agent SPEC]     # replay, check cell by cell
    tom-envs bench --build-anchors small                         # (suite maintainers) freeze anchors
    tom-envs bench --list-suites
    tom-envs leaderboard rows/*.json --md board.md --html board.html

Exit codes: 0 done; 1 a failed reproduction or an agent that played nothing; 2 bad input (a
refused protocol, an unknown suite, a row of another suite); 3 stopped by the budget (rerun to
continue).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def bench_command(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """Score an agent on a fixed, versioned suite: one JSON row with intervals and a manifest.

    AGENT is any agent spec that plays every game (random, rmax, a bot, checkpoint:path=...,
    llm:local=true, llm:model=M:base_url=U, module:Class). Partners are each game's zoo members
    (tom_envs.zoo); seeds and episode counts are the suite's (--list-suites)."""
    from tom_envs.cli_cost import add_cost_args
    from tom_experiments.bench.run import LEGAL_ACTIONS, ON_INVALID
    from tom_experiments.bench.suite import SUITE_NAMES

    parser.add_argument("agent", nargs="?", help="the agent spec to score")
    parser.add_argument("--suite", default="small", choices=SUITE_NAMES)
    parser.add_argument(
        "--agents-file",
        metavar="F.toml",
        help='[agents] Game = "spec" for every game (game-specific agents: bots, '
        "checkpoints); the row's agent is the whole map",
    )
    parser.add_argument(
        "--legal-actions",
        default="listed",
        choices=LEGAL_ACTIONS,
        help="legal actions listed in the prompt, hidden, or offered on request (tool: a "
        "reply LIST gets them, a counted call)",
    )
    parser.add_argument(
        "--on-invalid",
        default="reprompt",
        choices=ON_INVALID,
        help="an illegal answer is re-asked (reprompt), replaced by a recorded "
        "random move (fallback), or loses the turn (forfeit: the game's no-op; a game without "
        "one loses the episode, scored 0)",
    )
    parser.add_argument(
        "--skin",
        metavar="s<k>|none",
        help="also play every cell and the QA items in this disguise (same partners and seeds) "
        "and report the gap canonical - skinned; default: the suite's skin key (none in v1); "
        "none: no skinned run",
    )
    parser.add_argument("--out", help="the row file (default rows/<suite>-<run key>.json)")
    parser.add_argument("--run-dir", help="where episodes are kept (default runs/bench/<key>)")
    parser.add_argument("--workers", type=int, default=None, help="worker processes")
    parser.add_argument("--estimate", action="store_true", help="print the cost, play nothing")
    parser.add_argument("--reproduce", metavar="ROW", help="replay a row and check it")
    parser.add_argument(
        "--agent",
        metavar="SPEC",
        dest="agent_again",
        help="with --reproduce: the row's agent spec typed again, needed when it "
        "names code, a file or a host (a row never chooses what to import)",
    )
    parser.add_argument(
        "--build-anchors",
        metavar="SUITE",
        choices=SUITE_NAMES,
        help="measure and freeze a suite's anchors (suite maintainers)",
    )
    parser.add_argument("--list-suites", action="store_true")
    add_cost_args(parser)

    def run(args: argparse.Namespace) -> int:
        from tom_experiments.bench import commands

        return commands.bench(args)

    return run


def leaderboard_command(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """A markdown table and one self-contained HTML page from bench rows (nothing else read).

    Rows of different suites are refused; rows of different protocols go to separate tables."""
    parser.add_argument("rows", nargs="+", help="row files (tom-envs bench --out)")
    parser.add_argument("--md", help="write the markdown here (default: print it)")
    parser.add_argument("--html", help="write the HTML page here")
    parser.add_argument("--command", default="", help="the command line to print under the table")
    parser.add_argument(
        "--by-suite",
        action="store_true",
        help="rows of several suites: one section per suite (never one table), one HTML page",
    )

    def run(args: argparse.Namespace) -> int:
        from tom_experiments.bench import leaderboard as lb
        from tom_experiments.bench.row import RowError, read_row

        try:
            groups = (
                lb.group_by_suite([read_row(p) for p in args.rows])
                if args.by_suite
                else [lb.load_rows(args.rows)]
            )
        except (lb.MixedSuites, RowError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        md = "\n".join(lb.render_md(g, args.command if len(groups) == 1 else "") for g in groups)
        if args.md:
            Path(args.md).write_text(md)
        else:
            print(md)
        if args.html:
            Path(args.html).write_text(lb.render_page(groups))
        return 0

    return run


__all__ = ["bench_command", "leaderboard_command"]
