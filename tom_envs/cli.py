"""The ``tom-envs`` command.

tom-envs list [TEXT] [--ids|--bots]    games, ids, bots, populations, single-agent views
tom-envs info GAME                     a game's arguments (types, defaults, bounds), seats, bots, ids
tom-envs run GAME --agents A B ...     play agents, print a summary, write JSONL trajectories
tom-envs demo                          built-in agents on every game, one results table
tom-envs eval CONFIG                   a declarative experiment (TOML or shipped name; --list)
tom-envs reproduce NAME                a results page's tables: its shipped eval config
                                       (paper000-004, hanabi, overcooked: tom_experiments)
tom-envs qa generate|verify|eval|suites   CoordinationQA suites and answerer accuracy
tom-envs probes verify [--game GAME]   is a game's ToM probe set a valid measure (known groups,
                                       a learned adversary on every team's probes; the gate)
tom-envs serve                         play any seat of any game in the browser (console)
tom-envs study validate|links|serve|status|export|verify   human studies (docs/study.md)
tom-envs docs [--check]                regenerate docs/ from the env docstrings (or verify)
tom-envs train ALGO GAME ...           train a trainer plugin (mappo, ppo; rl extra)

Installed packages add subcommands through the ``tom_envs.commands`` entry points
(:mod:`tom_envs.plugins`).

Game arguments are ``--kw key=value ...`` on every command (``tom-envs info GAME`` lists them);
``--env-kwargs`` is an older spelling, still read. ``tom-envs --version`` prints the version.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tom_envs import plugins
from tom_envs.agents import make_agent
from tom_envs.cli_args import (
    check_agent_endpoints,
    cmd_info,
    cmd_list,
    find_local_modules,
    kw_items,
    parse_kw,
    positive_int,
    seed_int,
    skin_arg,
    split_env_level,
    version_text,
    workers_int,
)
from tom_envs.cli_cost import add_cost_args
from tom_envs.cli_qa import cmd_qa
from tom_envs.cli_study import add_parsers
from tom_envs.core.agents import with_required_env_kwargs
from tom_envs.progress import Progress
from tom_envs.registration import GAMES, game_spec
from tom_envs.runner import (
    Episode,
    OutputWriteError,
    RunningSummary,
    format_table,
    iter_run,
    run,
    summarize,
)


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a share in [0, 1], got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a share in [0, 1], got {text!r}")
    return value


def report_failures(episodes: Sequence[Episode], out: Path | None) -> int:
    """Print what failed (to stderr); 1 if an agent failed on every decision or an episode failed."""
    totals = RunningSummary()
    for ep in episodes:
        totals.add(ep)
    return report_totals(totals, out)


def report_totals(totals: RunningSummary, out: Path | None) -> int:
    """:func:`report_failures` from running totals."""
    every, failed = totals.failure_report()
    failed_count = totals.failed_count
    for line in every:
        print(f"error: {line}", file=sys.stderr)
    if failed:
        where = f" (trajectories in {out / 'failed'}/)" if out is not None else ""
        print(f"{failed_count} failed episode(s), not counted as results{where}:", file=sys.stderr)
        for line in failed[:20]:
            print(f"  {line}", file=sys.stderr)
    return 1 if every or failed else 0


def cmd_run(args: argparse.Namespace) -> int:
    """Play the given agents and report."""
    from tom_envs.driver import FailurePolicy
    from tom_envs.identity import config_hash
    from tom_envs.runner import run_config

    spec = game_spec(args.game)
    kwargs = parse_kw(kw_items(args))
    module = spec.load()
    game_kwargs, env_level = split_env_level(kwargs)
    if env_level:
        from tom_envs.core.contract import MAX_CYCLES

        kwargs.update({k: MAX_CYCLES.parse(v) for k, v in env_level.items()})
    bundle = module.make_bundle(**{**spec.kwargs, **game_kwargs})
    n = bundle.game.num_players
    from tom_envs.runner import check_seeds

    check_seeds(args.seed, args.episodes, "run")  # ValueError: exit 2 naming the ranges
    specs = list(args.agents)
    find_local_modules(specs)
    if len(specs) == 1 and n > 1:
        specs = specs * n
    if len(specs) != n:
        print(f"error: {spec.name} has {n} seats; give 1 or {n} agents", file=sys.stderr)
        return 2
    policy = FailurePolicy(max_fallback_share=args.max_fallback_share)
    # the command line's own specs: they may name code (tom_envs.core.trust)
    factories = [lambda s=s: make_agent(s, spec, bundle, trusted=True) for s in specs]
    agents = [f() for f in factories]  # fail fast on bad specs and input files, before any episode
    try:  # the game arguments the agents' protocols need (paper 001's language=zh ...)
        kwargs = with_required_env_kwargs(spec, agents, kwargs)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not args.no_endpoint_check:
        check_agent_endpoints(specs)  # before the first call
    cfg = run_config(spec, agents, kwargs, {"text": args.text, "observations": False})
    out = (
        Path(args.out)
        if args.out
        else Path("runs")
        / spec.name
        / (
            "-".join(s.replace(":", "_").replace("/", "_") for s in specs)[:120]
            + f"-seed{args.seed}-{config_hash(cfg)[:8]}"
        )
    )
    guard = _run_estimate(args, spec, specs, factories, kwargs, out)  # before the first call
    from tom_envs.budget import BudgetExhausted
    from tom_envs.evaluation.cost import usage_of

    totals = RunningSummary()  # episodes are streamed to disk; only running sums stay in memory
    spent = usage_of([])  # and what their model calls used
    try:
        with guard.running(), Progress(args.episodes, f"run {spec.name}") as bar:
            for ep in iter_run(spec, factories, args.episodes, args.seed, out, kwargs, args.text,
                               bar, policy=policy):  # fmt: skip
                totals.add(ep)
                for k, v in usage_of([ep]).items():
                    spent[k] += v
    except OutputWriteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except BudgetExhausted:
        print(guard.stopped_message(f"Finished episodes are in {out}/."), file=sys.stderr)
        return 3
    guard.spent(spent)
    cols = ["metric", "mean ± 95% CI"]
    rows = [{"metric": k, "mean ± 95% CI": v} for k, v in totals.summary().items()]
    print(
        f"{spec.id}: {' vs '.join(specs)}, {totals.ok} episodes, seeds {args.seed}.."
        + (f" ({totals.failed_count} failed)" if totals.failed_count else "")
    )
    if rows:
        print(format_table(rows, cols))
    print(f"trajectories: {out}/")
    return report_totals(totals, out)


def _run_estimate(args: argparse.Namespace, spec: Any, specs: Sequence[str], factories: Any,
                  kwargs: Any, out: Path) -> Any:  # fmt: skip
    """``run``'s cost estimate (printed), budget and response cache (``OUT/llm_cache``)."""
    from tom_envs.cli_cost import CostGuard
    from tom_envs.evaluation.cost import estimate_run

    guard = CostGuard(args)
    seeds = [s for s in range(args.seed, args.seed + args.episodes)
             if not (out / f"episode_{s:06d}.jsonl").exists()]  # fmt: skip
    estimate = estimate_run(spec, factories, list(specs), seeds, kwargs)  # fresh agents
    if estimate.agents:
        guard.use_cache(out / "llm_cache")
    guard.announce(estimate)
    return guard


def cmd_demo(args: argparse.Namespace) -> int:
    """Built-in agents on every registered game; one table."""
    rows = []
    for spec in GAMES:
        agents = list(spec.demo_agents) or ["random"]
        module = spec.load()
        bundle = module.make_bundle(**spec.kwargs)
        n = bundle.game.num_players
        agents = (agents * n)[:n] if len(agents) < n else agents
        factories = [lambda s=s, g=spec, b=bundle: make_agent(s, g, b) for s in agents]
        t0 = time.perf_counter()
        with Progress(args.episodes, f"demo {spec.name}", every=args.episodes) as bar:
            out = Path(args.out) / spec.name if args.out else None
            eps = run(spec, factories, args.episodes, args.seed, out, progress=bar)
        s = summarize(eps)
        row = {
            "game": spec.name,
            "agents": " vs ".join(agents),
            "episodes": len(eps),
            "return player_0": s["return/player_0"],
            "return player_1": s.get("return/player_1", ""),
            "ΔFunctional/T": s.get("functional_regret", ""),
            "ToM %": s.get("tom_accuracy", ""),
            "seconds": round(time.perf_counter() - t0, 2),
        }
        rows.append(row)
    cols = [
        "game",
        "agents",
        "episodes",
        "return player_0",
        "return player_1",
        "ΔFunctional/T",
        "ToM %",
        "seconds",
    ]
    print(format_table(rows, cols))
    if args.out:
        print(f"trajectories: {args.out}/")
    if not args.no_llm:
        _plugin_demos(args.seed)
    return 0


def _plugin_demos(seed: int) -> None:
    """Further demo sections from installed plugins (group ``tom_envs.demos``: the suite's own
    plays one LLM game on the bundled local model)."""
    for name in plugins.names("tom_envs.demos"):
        try:
            section = plugins.load("tom_envs.demos", name)(seed)
        except plugins.PluginError as exc:
            print(f"\ndemo {name!r} skipped: {exc}")
            continue
        print("\n" + section)


def reproducible() -> list[str]:
    """The shipped configs ``reproduce`` runs: those with ``[[tables]]`` (with ``tom_experiments``
    installed: paper000-004, hanabi, overcooked)."""
    import tomllib

    from tom_envs.evaluation import shipped_configs

    return [name for name, path in shipped_configs().items()
            if tomllib.loads(path.read_text()).get("tables")]  # fmt: skip


def cmd_reproduce(args: argparse.Namespace) -> int:
    """A paper's shipped eval config by name: its sections and its tables, played in the worker
    pool with resume; the tables' markdown is printed (and written to ``--out``)."""
    from tom_envs.evaluation import ConfigError, load_config
    from tom_envs.evaluation.config import agents_from_cli, config_file
    from tom_envs.evaluation.report import table_section

    find_local_modules([a.partition("=")[2] for a in args.agent])
    try:  # the shipped file itself, never a file of that name in the current folder
        cfg = load_config(config_file(args.paper), out=args.run_dir,
                          agents=agents_from_cli(args.agent))  # fmt: skip
        _check_added(cfg, args.agent)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not cfg.tables:
        print(f"error: the shipped config {args.paper!r} has no tables to reproduce (run it with "
              f"`tom-envs eval {args.paper}`); with tables: {', '.join(reproducible())}",
              file=sys.stderr)  # fmt: skip
        return 2
    if args.episodes is not None:
        from tom_envs.evaluation.tables import get_table

        for t in cfg.tables:  # each table's own budgets; the sections keep the config's
            params = get_table(t["table"]).parameters()
            kwargs = t.setdefault("kwargs", {})
            budgets = [p for p in ("episodes", "games", "generated", "matches") if p in params]
            for budget in budgets[:1] + [b for b in budgets[1:] if kwargs.get(b)]:
                kwargs[budget] = args.episodes
    if args.validate:
        return _validate_only(cfg, args)
    res, code = _evaluate(cfg, args)
    if res is None:
        return code
    print("\n".join(line for t in cfg.tables for line in table_section(res, t)))
    if args.out:  # the tables' own pages (docs/results/...), without the report's framing
        _write_pages(cfg, res, Path(args.out))
    return code


def _check_added(cfg: Any, items: list[str]) -> None:
    """``reproduce --agent LABEL=SPEC``: each label must join a table (its ``optional_agents``)
    or a section of the shipped config; one that joins nothing is an error, not a silent no-op."""
    from tom_envs.evaluation import ConfigError
    from tom_envs.evaluation.config import TRUSTED_AGENTS

    joined = {x for t in cfg.tables for x in t.get("kwargs", {}).get(TRUSTED_AGENTS, [])}
    for sec in (*cfg.crossplay, *cfg.functional_tom):
        joined |= set(sec.get("agents", []))
    for _game, seats in cfg.matchups:
        joined |= set(seats)
    unused = [item.partition("=")[0] for item in items if item.partition("=")[0] not in joined]
    if unused:
        raise ConfigError(f"--agent: {unused} join nothing in {cfg.name} (a label joins a table "
                          "through its optional_agents, e.g. `llm` in functional_tom)")  # fmt: skip


def _validate_only(cfg: Any, args: argparse.Namespace) -> int:
    """``reproduce --validate``: check the config, print what it would play and the calls,
    tokens and price it expects (episodes already on disk left out); play nothing."""
    from tom_envs.cli_cost import validate_estimate
    from tom_envs.evaluation import ConfigError, validate

    try:
        cells = validate(cfg, check_endpoints=not args.no_endpoint_check)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{cfg.name}: valid; {len(cells)} section cells x {cfg.episodes} episodes and "
          f"{len(cfg.tables)} table(s)")  # fmt: skip
    validate_estimate(cfg, cells, args)
    return 0


def _write_pages(cfg: Any, res: Any, out: Path) -> None:
    """The tables' markdown at ``out`` and their pictures next to it."""
    from tom_envs.evaluation.report import table_markdown
    from tom_envs.evaluation.tables import write_figures

    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(table_markdown(res, t) for t in cfg.tables))
    print(f"written: {out}", file=sys.stderr)
    for t in cfg.tables:  # the tables' pictures, next to the page
        for path in write_figures(t, res.tables.get(t["table"], {}), out):
            print(f"written: {path}", file=sys.stderr)


def cmd_docs(args: argparse.Namespace) -> int:
    """Regenerate docs/ from the env docstrings, or check they are current."""
    from tom_envs.docs import write_animations, write_docs

    if args.animations and not args.check:  # each game page's GIF of a seeded bot episode
        for path in write_animations(Path(args.dir)):
            print(f"written: {path}", file=sys.stderr)
    stale = write_docs(Path(args.dir), check=args.check)
    if args.check and stale:
        print(
            "docs are stale (run `tom-envs docs`): " + ", ".join(map(str, stale)), file=sys.stderr
        )
        return 1
    print("docs up to date" if args.check else f"docs written to {args.dir}/")
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    """Train with a trainer plugin (group ``tom_envs.trainers``: MAPPO, baselines/mappo.py, or SB3
    PPO, baselines/ppo_sb3.py) on a game; ``--kw key=value ...`` are game arguments."""
    try:
        main_fn = plugins.load("tom_envs.trainers", args.algo)
    except plugins.PluginError as exc:
        print(f"error: --algo: {exc}", file=sys.stderr)
        return 2
    options = []
    for opt in args.options:  # one flag name everywhere: --kw (the trainers read --env-kwargs)
        if opt == "--env-kwargs" or opt.startswith("--env-kwargs="):
            print("note: --env-kwargs is now --kw", file=sys.stderr)
        options.append("--env-kwargs" + opt[4:] if opt == "--kw" or opt.startswith("--kw=")
                       else opt)  # fmt: skip
    return int(main_fn(["--game", args.game, *options]))


def cmd_probes(args: argparse.Namespace) -> int:
    """``tom-envs probes verify``: the probe report (:mod:`tom_envs.probe_report`)."""
    from tom_envs.probe_report import verify

    report = verify(args.game, args.teams or None, args.episodes, args.seed, args.fresh_seed,
                    parse_kw(args.kw), progress=lambda m: print(m, file=sys.stderr))  # fmt: skip
    print(report.text)
    if args.out:
        Path(args.out).write_text(report.text)
    return 0 if report.passed else 1


def cmd_eval(args: argparse.Namespace) -> int:
    """Run a declarative experiment (see :mod:`tom_envs.evaluation`)."""
    from tom_envs.evaluation import ConfigError, load_config
    from tom_envs.evaluation.config import agents_from_cli, config_file

    find_local_modules([a.partition("=")[2] for a in args.agent])
    if args.list or args.config is None:
        for name in plugins.names("tom_envs.configs"):
            try:
                lines = config_file(name).read_text().splitlines()
            except ConfigError:  # its package is missing: say so, list the others
                print(f"{name:<16} (cannot be loaded: `tom-envs eval {name}` says why)")
                continue
            first = next((ln for ln in lines if ln.startswith("description")), "")
            print(f"{name:<16} {first.partition('=')[2].strip().strip(chr(34))}")
        return 0 if args.list else 2
    try:
        cfg = load_config(
            args.config, episodes=args.episodes, agents=agents_from_cli(args.agent), out=args.out
        )
        if args.max_fallback_share is not None:
            cfg.max_fallback_share = args.max_fallback_share
        if args.validate:
            from tom_envs.evaluation import validate

            cells = validate(cfg, check_endpoints=not args.no_endpoint_check)
            print(f"{cfg.name}: valid; {len(cells)} cells x {cfg.episodes} episodes")
            from tom_envs.cli_cost import validate_estimate

            validate_estimate(cfg, cells, args)  # calls, tokens and price it would spend
            return 0
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    res, code = _evaluate(cfg, args)
    if res is not None:
        from tom_envs.evaluation import write_outputs

        command = "tom-envs eval " + " ".join(sys.argv[2:]) if len(sys.argv) > 2 else ""
        try:
            report = write_outputs(res, command)
        except OSError as exc:
            print(f"error: cannot write the report in {cfg.out_dir()}: {exc.strerror or exc}; "
                  "every episode is on disk: run the same command again to write it",
                  file=sys.stderr)  # fmt: skip
            return 1
        print(report.read_text())
        print(f"\nreport: {report}  (trajectories and plots in {report.parent})")
    return code


def _evaluate(cfg: Any, args: argparse.Namespace) -> tuple[Any, int]:
    """Play a loaded config with progress lines; (results, exit code), results None on a config
    error. Failed episodes are listed and make the exit code 1; a run stopped by its budget
    exits with 3 (rerun to continue)."""
    from tom_envs.cli_cost import EXIT_BUDGET, CostGuard
    from tom_envs.evaluation import ConfigError, evaluate

    guard = CostGuard(args)  # the estimate before the first call, the budget, the cache
    if guard.budget is not None and args.backend == "ray":
        print("error: --max-calls/--max-cost are kept on the local backend only", file=sys.stderr)
        return None, 2
    try:
        with guard.running(), Progress(label=f"eval {cfg.name}") as bar:  # episodes, LLM calls
            res = evaluate(cfg, args.backend, args.workers, bar,
                           check_endpoints=not args.no_endpoint_check, on_plan=guard.plan_eval,
                           concurrency=args.concurrency)  # fmt: skip
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None, 2
    res.estimate = guard.estimate.to_dict() if guard.estimate is not None else None  # report
    from tom_envs.evaluation.cost import usage_summary

    guard.spent(usage_summary(res)["total"])
    if res.stopped:  # nothing more could be written: the finished episodes are on disk
        kept = sum(len(v) for v in res.episodes.values()) + sum(
            len(v) for t in res.tables.values() for v in t.values())  # fmt: skip
        print(f"error: {res.stopped}; the run stopped. The {kept} finished episode(s) are kept "
              f"in {cfg.out_dir()}/; free space and run the same command again to resume",
              file=sys.stderr)  # fmt: skip
        return None, 1
    if res.budget_stopped:
        print(guard.stopped_message(f"{len(res.budget_stopped)} episode(s) not played; the "
                                    f"finished ones are in {cfg.out_dir()}/."),
              file=sys.stderr)  # fmt: skip
    if res.failures:
        print(f"error: {len(res.failures)} failed episode(s), not counted as results:",
              file=sys.stderr)  # fmt: skip
        for o in res.failures[:20]:
            print(f"  {o.job.cell_id} seed {o.job.seed}: {o.error}", file=sys.stderr)
    return res, EXIT_BUDGET if res.budget_stopped else 1 if res.failures else 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and docs)."""
    p = argparse.ArgumentParser(
        prog="tom-envs", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--version", action="version", version=version_text())
    sub = p.add_subparsers(dest="cmd", required=True)
    _add_browse(sub)
    _add_play(sub)
    _add_tools(sub)
    _add_qa(sub)
    _add_probes(sub)
    _add_eval(sub)
    add_plugin_commands(sub)
    return p


def _add_browse(sub: Any) -> None:
    """The ``list`` and ``info`` commands."""
    ls = sub.add_parser("list", help="games, agents and ids (filter: tom-envs list hanabi)")
    ls.add_argument("query", nargs="?", help="only games whose id or summary holds this text")
    only = ls.add_mutually_exclusive_group()
    only.add_argument("--ids", action="store_true", help="only the ids (PettingZoo, Gymnasium)")
    only.add_argument("--bots", action="store_true", help="only the agents and bots")
    ls.set_defaults(fn=cmd_list)
    inf = sub.add_parser("info", help="a game's arguments, bounds, seats, agents and ids")
    inf.add_argument("game")
    inf.set_defaults(fn=cmd_info)


def _add_play(sub: Any) -> None:
    """The ``run``, ``demo`` and ``reproduce`` commands."""
    r = sub.add_parser("run", help="play agents on a game")
    r.add_argument("game")
    r.add_argument(
        "--agents",
        nargs="+",
        default=["random"],
        help="one spec per seat (or one for all): random, a bot, population:NAME, rmax, "
        "NAME:key=value",
    )
    r.add_argument("--episodes", type=positive_int, default=10)
    r.add_argument("--seed", type=seed_int, default=0)
    r.add_argument("--out", help="trajectory directory (default runs/GAME/AGENTS-seedS-CONFIGHASH)")
    r.add_argument("--text", action="store_true", help="record text observations")
    r.add_argument("--kw", nargs="*", default=[],
                   help="game arguments, key=value (tom-envs info GAME lists them)")  # fmt: skip
    r.add_argument("--env-kwargs", nargs="*", default=[], help=argparse.SUPPRESS)  # old spelling
    r.add_argument("--max-fallback-share", type=_share, default=0.2,
                   help="an episode where a seat fell back on more than this share of its "
                   "decisions is failed, not a result (default 0.2)")  # fmt: skip
    r.add_argument("--no-endpoint-check", action="store_true", help="skip LLM endpoint checks")
    add_cost_args(r)
    r.set_defaults(fn=cmd_run)
    d = sub.add_parser("demo", help="built-in agents on every game")
    d.add_argument("--episodes", type=positive_int, default=20)
    d.add_argument("--seed", type=seed_int, default=0)
    d.add_argument("--out", help="also write trajectories here")
    d.add_argument("--no-llm", action="store_true", help="skip the LLM agent game")
    d.set_defaults(fn=cmd_demo)
    rp = sub.add_parser("reproduce", help="a results page's tables: its shipped eval config")
    rp.add_argument("paper", metavar="NAME", help="a shipped config with tables: paper000-004, "
                    "hanabi, overcooked (the tom_experiments package)")  # fmt: skip
    rp.add_argument("--episodes", type=positive_int, help="the tables' budget: episodes per cell (paper001: "
                    "deals and matches per pairing, paper003: generated tasks; default: the config's)")  # fmt: skip
    rp.add_argument("--backend", choices=["local", "ray"], default="local")
    rp.add_argument("--workers", type=workers_int, help="parallel episodes (default: CPU count)")
    rp.add_argument("--run-dir", help="trajectories (default runs/eval/NAME-CONFIGHASH; resumes)")
    rp.add_argument("--no-endpoint-check", action="store_true", help="skip LLM endpoint checks")
    rp.add_argument("--out", help="also write the tables' markdown here")
    rp.add_argument("--agent", action="append", default=[], metavar="LABEL=SPEC",
                    help="add an agent the config names in optional_agents (functional_tom: "
                    "llm=llm:model=M:base_url=U adds an LLM row to every game)")  # fmt: skip
    rp.add_argument("--validate", action="store_true",
                    help="check, print the calls, tokens and price expected; play nothing")  # fmt: skip
    add_cost_args(rp, concurrency=True)
    rp.set_defaults(fn=cmd_reproduce)


def _add_tools(sub: Any) -> None:
    """The ``docs``, ``train``, ``serve`` and ``study`` commands."""
    dc = sub.add_parser("docs", help="generate docs/ from env docstrings")
    dc.add_argument("--dir", default="docs")
    dc.add_argument("--check", action="store_true", help="fail if docs/ is stale")
    dc.add_argument("--animations", action="store_true",
                    help="also regenerate each game page's animation (docs/games/media/*.gif)")
    dc.set_defaults(fn=cmd_docs)
    tr = sub.add_parser("train", help="train MAPPO or SB3 PPO on a game (needs the rl extra)")
    tr.add_argument("algo", help="a trainer plugin: " + ", ".join(plugins.names("tom_envs.trainers")))
    tr.add_argument("game")
    tr.add_argument("options", nargs=argparse.REMAINDER,
                    help="settings (--kw key=value: game arguments); GAME --help lists them")  # fmt: skip
    tr.set_defaults(fn=cmd_train)
    add_parsers(sub, _share)  # serve, study (tom_envs/cli_study.py)


def _add_qa(sub: Any) -> None:
    """The ``qa`` command and its subcommands (generate, verify, eval, suites)."""
    qa = sub.add_parser("qa", help="CoordinationQA: generated EC / ToM / JP question suites")
    qs = qa.add_subparsers(dest="qa_cmd", required=True)
    qgen = qs.add_parser("generate", help="generate seeded suites (JSONL, one per game)")
    qgen.add_argument("games", nargs="*", help="games (default: every game with a generator)")
    qgen.add_argument("--n", type=positive_int, default=60, help="items per game")
    qgen.add_argument("--seed", type=seed_int, default=0)
    qgen.add_argument("--filter", nargs="*", default=[], help="scenario filters (see each qa.py)")
    qgen.add_argument("--out", default="runs/qa", help="output directory")
    qgen.add_argument("--skin", type=skin_arg, default="canonical",
                      help="a disguise: s<k> renames the games' symbols (same items, ids, keys "
                      "and option positions; tom_envs.core.skin)")  # fmt: skip
    qv = qs.add_parser("verify", help="recompute every item with the engine; the adversary gate")
    qv.add_argument("suites", nargs="*", help="suite files (default: the shipped suites)")
    qv.add_argument("--fresh", nargs="*", help="suite files of a fresh suite (default: generated)")
    qv.add_argument("--fresh-seed", type=int, default=4049, help="seed of the generated fresh suite")
    qv.add_argument("--fresh-per-type", type=int, default=60,
                    help="items per game and ability of the generated fresh suite")  # fmt: skip
    qv.add_argument("--repeats", type=int, default=5, help="adversary fits averaged per accuracy")
    qv.add_argument("--out", help="also write the markdown report here")
    qe = qs.add_parser("eval", help="accuracy of an answerer (LLM endpoint, random, oracle)")
    qe.add_argument("suites", nargs="*", help="suite files (default: the shipped suites)")
    qe.add_argument("--answerer", default="llm",
                    help="random, oracle, blind or an answerer plugin: "
                    + ", ".join(plugins.names("tom_envs.qa_answerers")))  # fmt: skip
    qe.add_argument("--model", help="model name of the endpoint")
    qe.add_argument("--base-url", help="OpenAI-compatible endpoint (default: OPENAI_BASE_URL)")
    qe.add_argument("--local", action="store_true", help="the bundled SmolLM2 model")
    qe.add_argument("--temperature", type=float, default=0.7)
    qe.add_argument("--trials", type=positive_int, default=3)
    qe.add_argument("--seed", type=seed_int, default=0)
    qe.add_argument("--max-failure-share", type=_share, default=0.2,
                    help="fail when more than this share of answers failed for the answerer's "
                    "own reasons (endpoint, context overflow, exception)")  # fmt: skip
    qe.add_argument("--agentic", help="JSON {game: agentic score} for the QA/agentic correlation")
    qe.add_argument("--out", help="also write the markdown report here")
    qe.add_argument("--price-in", type=float, help="USD per million prompt tokens of the model")
    qe.add_argument("--price-out", type=float, help="USD per million completion tokens")
    add_cost_args(qe)
    qsu = qs.add_parser("suites", help="regenerate the shipped default suites")
    qsu.add_argument("--check", action="store_true", help="fail if a shipped suite is stale")
    qa.set_defaults(fn=cmd_qa)


def _add_probes(sub: Any) -> None:
    """The ``probes`` command (verify)."""
    pb = sub.add_parser("probes", help="ToM probes: is a game's probe set a valid measure")
    pbs = pb.add_subparsers(dest="probes_cmd", required=True)
    pv = pbs.add_parser("verify", help="known groups and a learned adversary on every team's "
                        "probes; exit 1 when the gate fails")  # fmt: skip
    pv.add_argument("--game", default="BombDefusal")
    pv.add_argument("--teams", nargs="*", help="bot names (and 'text', the LLM-like text "
                    "agent); default: every team the game ships")  # fmt: skip
    pv.add_argument("--episodes", type=positive_int, default=100,
                    help="missions per set (fit, held out, fresh)")  # fmt: skip
    pv.add_argument("--seed", type=int, default=0)
    pv.add_argument("--fresh-seed", type=int, default=1_000_000)
    pv.add_argument("--kw", nargs="*", default=[], help="game arguments, key=value")
    pv.add_argument("--out", help="also write the markdown report here")
    pb.set_defaults(fn=cmd_probes)


def _add_eval(sub: Any) -> None:
    """The ``eval`` command."""
    ev = sub.add_parser("eval", help="run a declarative experiment (TOML config or shipped name)")
    ev.add_argument("config", nargs="?", help="a .toml file or a shipped config name (--list)")
    ev.add_argument("--list", action="store_true", help="list the shipped configs")
    ev.add_argument("--backend", choices=["local", "ray"], default="local")
    ev.add_argument("--workers", type=workers_int, help="parallel episodes (default: CPU count)")
    ev.add_argument("--episodes", type=positive_int, help="episodes per cell (overrides the config)")
    ev.add_argument(
        "--agent", action="append", default=[], help="LABEL=SPEC: add or replace an agent"
    )
    ev.add_argument("--out", help="output directory (default runs/eval/NAME-CONFIGHASH)")
    ev.add_argument("--validate", action="store_true", help="check the config, run nothing")
    ev.add_argument("--no-endpoint-check", action="store_true", help="skip LLM endpoint checks")
    ev.add_argument("--max-fallback-share", type=_share, default=None,
                    help="fail episodes where a seat fell back on more than this share of its "
                    "decisions (default: the config's max_fallback_share, else 0.2)")  # fmt: skip
    add_cost_args(ev, concurrency=True)
    ev.set_defaults(fn=cmd_eval)


def add_plugin_commands(sub: Any) -> None:
    """The subcommands installed packages add (group ``tom_envs.commands``): each plugin is a
    function ``command(parser) -> run`` that adds its arguments to its own subparser (named as
    its entry point) and returns ``run(args) -> exit code``; its docstring's first line is the
    help. A built-in command keeps its name; a plugin that cannot be loaded says why when it is
    called."""
    for name in plugins.names("tom_envs.commands"):
        if name in sub.choices:
            print(f"warning: tom_envs.commands plugin {name!r} ignored: a built-in command has "
                  "that name", file=sys.stderr)  # fmt: skip
            continue
        try:
            command = plugins.load("tom_envs.commands", name)
        except plugins.PluginError as exc:
            broken = sub.add_parser(name, help="(plugin: cannot be loaded; run it to see why)")
            broken.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
            broken.set_defaults(fn=lambda _args, exc=exc: _broken_plugin(exc))
            continue
        lines = (command.__doc__ or "").strip().splitlines()
        parser = sub.add_parser(name, help=lines[0] if lines else f"plugin command {name}",
                                description=(command.__doc__ or "").strip() or None)  # fmt: skip
        parser.set_defaults(fn=command(parser))


def _broken_plugin(exc: Exception) -> int:
    print(f"error: {exc}", file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tom-envs`` console script."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.fn(args))
    except (KeyError, ValueError) as exc:
        text = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc  # no repr quotes
        print(f"error: {text}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file that cannot be read or written: one line, never a traceback
        where = f" {exc.filename}" if exc.filename else ""
        print(f"error: cannot use{where}: {exc.strerror or exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
