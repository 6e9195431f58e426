"""One command shape for the per-game benchmarks (parity with a peer engine, exhaustive checks,
speed beside the peers), which are not results of agents and so are not eval configs::

    .venv/bin/python benchmarks/<game>.py PART [options] [--runs DIR]   # one part -> DIR/<part>.json
    .venv/bin/python benchmarks/<game>.py report [--runs DIR] [--out PAGE]  # the page from the JSON

``DIR`` defaults to ``runs/bench/<game>`` (git-ignored); ``PAGE`` to
``docs/results/<game>_benchmarks.md``. Every JSON file records the command that wrote it, and the
page quotes it beside each figure. Speed is measured in one sitting beside the peers (ratios, not
absolute numbers, are the result); throughput of every game beside its peers in the shared loop is
``benchmarks/run.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Part:
    """One measurement of a game's benchmark script.

    Attributes:
        name: the sub-command.
        help: one line for ``--help``.
        run: the measurement, from the parsed arguments to JSON-able data.
        options: ``(flag, argparse keyword arguments)`` of the part.
        file: the JSON file's stem from the arguments (default: ``name``).
    """

    name: str
    help: str
    run: Callable[[argparse.Namespace], dict[str, Any]]
    options: tuple[tuple[str, dict[str, Any]], ...] = field(default=())
    file: Callable[[argparse.Namespace], str] | None = None


def load(runs: Path, name: str) -> dict[str, Any] | None:
    """The JSON a part wrote, or None."""
    path = runs / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def main(
    game: str,
    description: str,
    parts: Sequence[Part],
    report: Callable[[Path], str],
    argv: Sequence[str] | None = None,
) -> int:
    """Parse ``argv`` and run one part (its JSON under ``--runs``) or write the report page."""
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(
        prog=f"benchmarks/{game}.py", description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    ap.add_argument("--runs", type=Path, default=ROOT / "runs" / "bench" / game,
                    help="where the parts' JSON files are (default runs/bench/GAME)")  # fmt: skip
    sub = ap.add_subparsers(dest="part", required=True)
    for part in parts:
        p = sub.add_parser(part.name, help=part.help)
        for flag, kwargs in part.options:
            p.add_argument(flag, **kwargs)
    rp = sub.add_parser("report", help="the results page from the parts' JSON files")
    rp.add_argument("--out", type=Path, default=ROOT / "docs" / "results" / f"{game}_benchmarks.md")
    args = ap.parse_args(argv)
    if args.part == "report":
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report(args.runs))
        print(f"written: {args.out}")
        return 0
    part = next(p for p in parts if p.name == args.part)
    data = part.run(args)
    data["command"] = f"python benchmarks/{game}.py " + " ".join(
        a for i, a in enumerate(argv) if a != "--runs" and (i == 0 or argv[i - 1] != "--runs")
    )
    args.runs.mkdir(parents=True, exist_ok=True)
    path = args.runs / f"{part.file(args) if part.file else part.name}.json"
    path.write_text(json.dumps(data, indent=1))
    print(f"written: {path}")
    return 0
