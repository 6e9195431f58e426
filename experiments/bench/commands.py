"""What ``tom-envs bench`` does (the parser is :mod:`tom_experiments.bench.cli`)."""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from tom_experiments.bench import reproduce as rep
from tom_experiments.bench import skin as skin_mod
from tom_experiments.bench.forfeit import rules_of
from tom_experiments.bench.row import RowError, read_row, write_row
from tom_experiments.bench.run import (
    Protocol,
    ProtocolError,
    bench_spec,
    build_anchors,
    build_row,
    check_failures,
    git_commit,
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
    from tom_envs.evaluation.config import ConfigError

    try:
        if args.list_suites:
            for name in SUITE_NAMES:
                print(load_suite(name).describe())
            return 0
        if args.build_anchors:
            return _anchors(args)
        if args.reproduce:
            return _reproduce(args)
        suite = load_suite(args.suite)
        protocol = Protocol(args.legal_actions, args.on_invalid)
        if getattr(args, "agents_file", None):
            per_game = read_agents_file(args.agents_file, suite)
            label = f"per-game:{Path(args.agents_file).name}"
            return score(suite, label, protocol, args, trusted=True, per_game=per_game)
        if not args.agent:
            return _err(
                "give an agent spec (tom-envs bench AGENT), --agents-file F.toml, --reproduce "
                "ROW, or --list-suites"
            )
        return score(suite, args.agent, protocol, args, trusted=True)
    except (SuiteError, ProtocolError, RowError, ConfigError) as exc:
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
    per_game: dict[str, str] | None = None,
) -> int:
    """Play ``suite`` with ``spec`` (or the game's spec of ``per_game``; ``spec`` is then its
    label) resuming what is on disk, and write its row."""
    from tom_envs.budget import BudgetExhausted
    from tom_envs.cli_cost import EXIT_BUDGET, CostGuard
    from tom_envs.evaluation.cost import usage_of

    suite.check_zoo()
    commit = git_commit()  # the code this run starts with (a later commit is not what ran)
    played_spec: str | dict[str, str] = (
        {g: bench_spec(s, protocol) for g, s in per_game.items()}
        if per_game
        else bench_spec(spec, protocol)
    )
    out = (
        Path(args.run_dir)
        if args.run_dir
        else run_dir(suite, played_spec, protocol, run_root or Path("runs/bench"))
    )
    jobs = suite_jobs(suite, played_spec, out, trusted)
    skin, skin_source = skin_mod.resolve(suite, getattr(args, "skin", None))
    if skin:  # every cell again in the disguise: same partners, same seeds
        jobs += skin_mod.skinned_jobs(suite, played_spec, out, trusted, skin)
    text = is_text_agent(spec) and not per_game
    n_qa = len(qa_items(suite)) * (2 if skin else 1)
    print(
        f"bench {suite.key}: {len(jobs)} episodes in {len({j.cell_id for j in jobs})} cells "
        f"({len(suite.games)} games{', canonical and skin ' + skin if skin else ''})"
        f"{', ' + str(n_qa) + ' CoordinationQA calls' if text else ''} -> {out}",
        file=sys.stderr,
    )
    if args.estimate:
        return _estimate(jobs, text, suite, args, n_qa)
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
            qa = run_qa(suite, str(played_spec), trusted, out) if text else None
            qa_skin = run_qa(suite, str(played_spec), trusted, out, skin) if text and skin else None
    except BudgetExhausted:
        print(guard.stopped_message("Finished episodes are kept."), file=sys.stderr)
        return EXIT_BUDGET
    wall = time.perf_counter() - t0
    print(f"resumed {resumed} episode(s), played {played}", file=sys.stderr)
    failure = check_failures(outcomes)
    if failure:
        return _err(f"{spec}: {failure}", 1)
    guard.spent(usage_of([o.episode for o in outcomes if o.ok]))
    run = {
        "dir": str(out),
        "resumed": resumed,
        "played": played,
        "command": _command(),
        "commit": commit,
    }
    canonical, skinned = skin_mod.split(outcomes)
    row = build_row(suite, spec, played_spec, protocol, canonical, qa, wall, run)
    row["skin"] = skin_mod.block(suite, skin, skin_source, canonical, skinned, qa, qa_skin)
    if protocol.on_invalid == "forfeit" and is_text_agent(spec):
        row["protocol"]["forfeit_rules"] = rules_of([g.game for g in suite.games])
    _write(row, out_row or args.out or f"rows/{suite.key}-{out.name.split('-')[-1]}.json")
    return 0


def _write(row: dict[str, Any], dest: str) -> None:
    """Write the row and print its aggregate (and skin gap)."""
    write_row(row, dest)
    agg = row["aggregate"]
    print(f"aggregate {agg['mean']} [{agg['lo']}, {agg['hi']}] over {agg['games']} games -> {dest}")
    if row["skin"].get("key"):
        gap = row["skin"]["aggregate"]["gap"]
        print(
            f"skin gap ({row['skin']['key']}, canonical - skinned) {gap['mean']} "
            f"[{gap['lo']}, {gap['hi']}]"
        )


def _command() -> str:
    """The command line, when the process is ``tom-envs bench ...`` (else empty)."""
    if sys.argv[1:2] != ["bench"]:
        return ""
    return "tom-envs " + " ".join(shlex.quote(a) for a in sys.argv[1:])


def _estimate(jobs: list[Any], text: bool, suite: Any, args: argparse.Namespace, n_qa: int) -> int:
    """``--estimate``: the calls and tokens of the episodes still to play; nothing is played."""
    from tom_envs.cli_cost import CostGuard
    from tom_envs.evaluation.backends import pending
    from tom_envs.evaluation.cost import estimate_jobs

    done, todo = pending(jobs)
    CostGuard(args, stream=sys.stdout).announce(estimate_jobs(todo))
    if text:
        print(
            f"  plus CoordinationQA: {n_qa} calls (one per item and skin, <= 64 answer tokens "
            "each)"
        )
    print(f"{len(done)} episode(s) already finished (not played again), {len(todo)} to play")
    return 0


def _anchors(args: argparse.Namespace) -> int:
    suite = load_suite(args.build_anchors)
    command = f"tom-envs bench --build-anchors {args.build_anchors}"
    where = Path(args.run_dir or "runs/bench/anchors") / suite.key
    if suite.objective == "U":  # v2: the best-response references (experiments/bench/tom.py)
        from tom_experiments.bench import tom
        from tom_experiments.bench.run import _play_plain, _players

        anchors = tom.build_anchors(suite, where, _play_plain, _players)
    else:
        anchors = build_anchors(suite, where, args.workers, command)
    path = suite_path(args.build_anchors)
    write_anchors(path, anchors, command)
    print(f"anchors of {suite.key} written to {path}")
    return 0


def read_agents_file(path: str | Path, suite: Any) -> dict[str, str]:
    """``[agents]`` game = spec for every game of the suite (agents that act on action indices:
    bots, checkpoints, rmax; an LLM plays every game from one spec)."""
    import tomllib

    try:
        data = tomllib.loads(Path(path).read_text())
    except tomllib.TOMLDecodeError as exc:
        raise SuiteError(f"--agents-file {path}: not TOML: {exc}") from exc
    agents = data.get("agents")
    games = [g.game for g in suite.games]
    if not isinstance(agents, dict) or not all(isinstance(v, str) for v in agents.values()):
        raise SuiteError(f'--agents-file {path}: expected an [agents] table of game = "spec"')
    if set(agents) != set(games):
        raise SuiteError(
            f"--agents-file {path}: needs exactly the suite's games {games}; missing "
            f"{sorted(set(games) - set(agents))}, unknown {sorted(set(agents) - set(games))}"
        )
    text = [g for g, s in agents.items() if is_text_agent(s)]
    if text:
        raise SuiteError(f"--agents-file {path}: {text} seat an llm agent; give it as AGENT")
    return {g: agents[g] for g in games}


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
    per_game = old["agent"].get("per_game")
    again = getattr(args, "agent_again", None)
    trusted = bool(again) and again == spec
    if again and not trusted:
        return _err(f"--agent {again!r} is not the row's agent {spec!r}")
    if per_game is not None:
        if not isinstance(per_game, dict) or set(per_game) != {g.game for g in suite.games}:
            return _err("the row's per-game agents do not cover its suite's games")
        given = getattr(args, "agents_file", None)
        trusted = bool(given) and read_agents_file(given, suite) == per_game
        if given and not trusted:
            return _err(f"--agents-file {given} is not the row's per-game agents")
    args.skin = (old.get("skin") or {}).get("key") or skin_mod.OFF  # the row's own skinned run
    proto = old.get("protocol", {})
    protocol = Protocol(proto.get("legal_actions", "listed"), proto.get("on_invalid", "reprompt"))
    if not is_text_agent(spec):
        protocol = Protocol()
    new_path = Path(args.out or str(Path(args.reproduce).with_suffix("")) + ".reproduced.json")
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    args.run_dir = args.run_dir or str(Path("runs/bench/reproduce") / f"{new_path.stem}-{stamp}")
    code = score(
        suite, spec, protocol, args, trusted=trusted, out_row=str(new_path), per_game=per_game
    )
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
