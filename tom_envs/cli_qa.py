"""``tom-envs qa``: CoordinationQA suites (generate, verify, eval, suites) on the command line."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tom_envs import plugins
from tom_envs.progress import Progress
from tom_envs.registration import game_spec


def cmd_qa(args: argparse.Namespace) -> int:
    """CoordinationQA: generate, verify, evaluate, and keep the default suites up to date."""

    import numpy as np

    from tom_envs.qa import generate as qg
    from tom_envs.qa.items import read_suite, write_suite

    if args.qa_cmd == "suites":
        stale = []
        with Progress(len(qg.qa_games()), "qa suites", unit="games", every=1) as bar:
            for g in qg.qa_games():  # one game at a time, for the progress display
                stale += qg.write_default_suites([g], check=args.check)
                bar.update()
        if args.check:
            if stale:
                print(f"stale default suites: {stale}; run `tom-envs qa suites`", file=sys.stderr)
                return 1
            print("default suites up to date")
            return 0
        print(f"wrote {len(qg.qa_games())} suites to {qg.SUITES_DIR}")
        return 0
    if args.qa_cmd == "generate":
        games = [game_spec(g).name for g in args.games] or qg.qa_games()
        out = Path(args.out)
        for g in games:
            items = qg.generate(g, np.random.default_rng([args.seed, qg.stable_hash(g)]), args.n,
                                filters=args.filter or None)  # fmt: skip
            meta = qg.suite_meta(g, args.seed, args.n)
            path = write_suite(items, out / f"{g}.jsonl", meta)
            print(f"{g}: {len(items)} items -> {path}")
        return 0
    paths = [Path(p) for p in args.suites] or sorted(qg.SUITES_DIR.glob("*.jsonl"))
    items = [it for p in paths for it in read_suite(p)[1]]
    if args.qa_cmd == "verify":
        from tom_envs.qa.shortcuts import (
            BOUND,
            SHORTCUT_MIN_ITEMS,
            format_table,
            shortcut_table,
            violations,
        )

        bad = [it.id for it in items if not qg.verify(it)]
        print(f"{len(items) - len(bad)}/{len(items)} items verified by the engine")
        for b in bad[:20]:
            print(f"  FAILED {b}", file=sys.stderr)
        # the shortcut suite: answerers that do no reasoning, beside chance
        rows = shortcut_table(items)
        print(f"\nShortcut answerers (accuracy %, each must stay within {BOUND:.0f} points of "
              f"chance per game and ability):\n\n{format_table(rows)}")  # fmt: skip
        # a group of a few items cannot meet the bound (one item is 1/n of it): judged from 20 on
        over = violations([r for r in rows if r["items"] >= SHORTCUT_MIN_ITEMS])
        if any(r["items"] < SHORTCUT_MIN_ITEMS for r in rows):
            print(f"(groups under {SHORTCUT_MIN_ITEMS} items are shown, not judged)")
        for v in over:
            print(f"  SHORTCUT {v}", file=sys.stderr)
        return 1 if bad or over else 0
    from tom_envs.qa.evaluate import correlation, format_rows, run_answerer

    # everything that can fail is checked before the first answer is spent
    try:
        scores = read_agentic_scores(args.agentic) if args.agentic else None
    except ValueError as exc:
        print(f"error: --agentic: {exc}", file=sys.stderr)
        return 2
    if args.answerer == "random":
        rnd = qg.random_answerer(args.seed)
        answer, name = (lambda item, trial: rnd(item)), "random"
    elif args.answerer == "oracle":
        orc = qg.oracle_answerer()
        answer, name = (lambda item, trial: orc(item)), "oracle (engine)"
    else:
        try:
            answer, name = plugins.load("tom_envs.qa_answerers", args.answerer)(args)
        except (plugins.PluginError, ValueError) as exc:
            print(f"error: --answerer {args.answerer}: {exc}", file=sys.stderr)
            return 2
    from tom_envs.budget import BudgetExhausted
    from tom_envs.cli_cost import EXIT_BUDGET, CostGuard, qa_estimate

    guard = CostGuard(args)  # an LLM answerer: the estimate, the budget, the response cache
    if args.answerer not in ("random", "oracle"):
        guard.use_cache(Path("runs") / "qa" / "llm_cache")
        guard.announce(qa_estimate(items, args.trials, args))
    with guard.running(), Progress(len(items) * args.trials, f"qa eval {name}", unit="answers") as bar:
        try:
            res = run_answerer(items, bar.counting(answer), name, args.trials)
        except BudgetExhausted:
            print(guard.stopped_message("No accuracy is reported for a partial run."),
                  file=sys.stderr)  # fmt: skip
            return EXIT_BUDGET
    rows = res.table()
    text = f"# CoordinationQA: {name}, {args.trials} trials\n\n{format_rows(rows)}\n\n"
    text += f"Unparseable replies: {res.invalid_count()} of {len(items) * args.trials}"
    text += f" ({res.failure_summary()}).\n" if res.failures else ".\n"
    if scores is not None:
        pairs = {}
        for r in rows:
            if r["type"] == "all" and r["game"] in scores:
                pairs[r["game"]] = (r["accuracy"], float(scores[r["game"]]))
        rho, n = correlation(pairs)
        text += f"\nCorrelation of QA accuracy with agentic score over {n} games: r = {rho:.3f}\n"
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    if res.every_answer_failed():  # an answerer that failed every item has measured nothing
        print(f"error: every answer failed ({res.failure_summary()}); first: {res.first_failure}",
              file=sys.stderr)  # fmt: skip
        return 1
    # the failure policy of every driver: failures of the answerer itself (endpoint, context
    # overflow, exception; an unparseable reply is the model's own answer, scored wrong)
    broken = sum(v for k, v in res.failures.items() if k != "unparseable")
    total = len(items) * args.trials
    if total and broken / total > args.max_failure_share:
        print(f"error: {broken} of {total} answers failed ({res.failure_summary()}; more than "
              f"{100 * args.max_failure_share:.0f}%): the accuracy is not a result; first: "
              f"{res.first_failure}", file=sys.stderr)  # fmt: skip
        return 1
    return 0


def read_agentic_scores(path: str | Path) -> dict[str, float]:
    """``{game: agentic score}`` from a JSON file (ValueError naming what is wrong)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in data.values()
    ):
        raise ValueError(f"{path} must hold a JSON object {{game: number}}")
    return {str(k): float(v) for k, v in data.items()}


__all__ = ["cmd_qa", "read_agentic_scores"]
