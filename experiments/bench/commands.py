"""What ``tom-envs bench`` does (the parser is :mod:`tom_experiments.bench.cli`)."""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from tom_experiments.bench import reproduce as rep
from tom_experiments.bench.row import RowError, read_row, write_row
from tom_experiments.bench.run import (
    Protocol,
    ProtocolError,
    bench_spec,
    build_anchors,
    build_row,
    check_failures,
    is_text_agent,
    play,
    qa_items,
    run_dir,
    run_qa,
    suite_jobs,
)
from tom_experiments.bench.suite import (
    SUITE_NAMES,
    SuiteError,
    load_suite,
    suite_path,
    write_anchors,
)


def _err(msg: str, code: int = 2) -> int:
    print(f"error: {msg}", file=sys.stderr)
    return code


def bench(args: argparse.Namespace) -> int:
    """Dispatch on the mode: list, anchors, reproduce, or score an agent."""
    try:
        if args.list_suites:
            for name in SUITE_NAMES:
                print(load_suite(name).describe())
            return 0
        if args.build_anchors:
            return _anchors(args)
        if args.reproduce:
            return _reproduce(args)
        if not args.agent:
            return _err(
                "give an agent spec (tom-envs bench AGENT), --reproduce ROW, or --list-suites"
            )
        suite = load_suite(args.suite)
        return score(
            suite, args.agent, Protocol(args.legal_actions, args.on_invalid), args, trusted=True
        )
    except (SuiteError, ProtocolError, RowError) as exc:
        return _err(str(exc))


def score(
    suite: Any,
    spec: str,
    protocol: Protocol,
    args: argparse.Namespace,
    *,
    trusted: bool,
    out_row: str | None = None,
    run_root: Path | None = None,
) -> int:
    """Play ``suite`` with ``spec`` (resuming what is on disk) and write its row."""
    from tom_envs.budget import BudgetExhausted
    from tom_envs.cli_cost import EXIT_BUDGET, CostGuard
    from tom_envs.evaluation.cost import estimate_jobs, usage_of

    suite.check_zoo()
    played_spec = bench_spec(spec, protocol)
    out = (
        Path(args.run_dir)
        if args.run_dir
        else run_dir(suite, played_spec, protocol, run_root or Path("runs/bench"))
    )
    jobs = suite_jobs(suite, played_spec, out, trusted)
    text = is_text_agent(spec)
    print(
        f"bench {suite.key}: {len(jobs)} episodes in {len({j.cell_id for j in jobs})} cells "
        f"({len(suite.games)} games){', ' + str(len(qa_items(suite))) + ' QA items' if text else ''}"
        f" -> {out}",
        file=sys.stderr,
    )
    if args.estimate:
        from tom_envs.evaluation.backends import pending

        done, todo = pending(jobs)
        est = estimate_jobs(todo)
        CostGuard(args, stream=sys.stdout).announce(est)
        if text:
            print(
                f"  plus CoordinationQA: {len(qa_items(suite))} calls (one per item, <= 64 "
                "answer tokens each)"
            )
        print(f"{len(done)} episode(s) already finished (not played again), {len(todo)} to play")
        return 0
    guard = CostGuard(args)
    t0 = time.perf_counter()
    try:
        with guard.running():
            outcomes, resumed, played = play(jobs, guard, args.workers)
            stopped = [o for o in outcomes if o.budget_stopped]
            if stopped:
                print(
                    guard.stopped_message(f"{len(outcomes) - len(stopped)} episodes kept."),
                    file=sys.stderr,
                )
                return EXIT_BUDGET
            qa = run_qa(suite, played_spec, trusted, out) if text else None
    except BudgetExhausted:
        print(guard.stopped_message("Finished episodes are kept."), file=sys.stderr)
        return EXIT_BUDGET
    wall = time.perf_counter() - t0
    print(f"resumed {resumed} episode(s), played {played}", file=sys.stderr)
    failure = check_failures(outcomes)
    if failure:
        return _err(f"{spec}: {failure}", 1)
    guard.spent(usage_of([o.episode for o in outcomes if o.ok]))
    command = (
        "tom-envs " + " ".join(shlex.quote(a) for a in sys.argv[2:])
        if sys.argv[1:2] == ["bench"]
        else ""
    )
    row = build_row(
        suite,
        spec,
        played_spec,
        protocol,
        outcomes,
        qa,
        wall,
        {"dir": str(out), "resumed": resumed, "played": played, "command": command},
    )
    dest = out_row or args.out or f"rows/{suite.key}-{out.name.split('-')[-1]}.json"
    write_row(row, dest)
    agg = row["aggregate"]
    print(f"aggregate {agg['mean']} [{agg['lo']}, {agg['hi']}] over {agg['games']} games -> {dest}")
    return 0


def _anchors(args: argparse.Namespace) -> int:
    suite = load_suite(args.build_anchors)
    command = f"tom-envs bench --build-anchors {args.build_anchors}"
    anchors = build_anchors(
        suite, Path(args.run_dir or "runs/bench/anchors") / suite.key, args.workers, command
    )
    path = suite_path(args.build_anchors)
    write_anchors(path, anchors, command)
    print(f"anchors of {suite.key} written to {path}")
    return 0


def _reproduce(args: argparse.Namespace) -> int:
    old = read_row(args.reproduce)
    name, version = old["suite"]["name"], old["suite"]["version"]
    suite = load_suite(str(name), int(version))
    if suite.sha256 != old["suite"]["sha256"]:
        return _err(
            f"the row's suite {name}-v{version} (sha256 {old['suite']['sha256'][:12]}) is "
            f"not the installed one ({suite.sha256[:12]}): it cannot be replayed here"
        )
    spec = old["agent"]["spec"]
    trusted = bool(args.agent) and args.agent == spec
    if args.agent and not trusted:
        return _err(f"--agent {args.agent!r} is not the row's agent {spec!r}")
    proto = old.get("protocol", {})
    protocol = Protocol(proto.get("legal_actions", "listed"), proto.get("on_invalid", "reprompt"))
    if not is_text_agent(spec):
        protocol = Protocol()
    new_path = Path(args.out or str(Path(args.reproduce).with_suffix("")) + ".reproduced.json")
    args.run_dir = args.run_dir or str(Path("runs/bench/reproduce") / new_path.stem)
    code = score(suite, spec, protocol, args, trusted=trusted, out_row=str(new_path))
    if code != 0:
        return code
    new = read_row(new_path)
    for note in rep.identity_notes(old, new):
        print(f"note: {note}")
    results = list(rep.compare(old, new))
    bad = [r for r in results if not r[1]]
    for figure, ok, detail in results:
        print(f"{'inside ' if ok else 'OUTSIDE'} {figure}: {detail}")
    print(
        f"wall time (not checked): old {old['cost'].get('command_wall_s')} s, new "
        f"{new['cost'].get('command_wall_s')} s"
    )
    print(
        f"{len(results) - len(bad)} of {len(results)} figures inside the row's 95% intervals "
        "(a deterministic agent must have all; a sampling one about 83% of unchanged figures)"
    )
    return 1 if bad else 0


__all__ = ["bench", "score"]
