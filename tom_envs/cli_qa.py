"""``tom-envs qa``: CoordinationQA suites (generate, verify, eval, suites) on the command line."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tom_envs import plugins
from tom_envs.progress import Progress
from tom_envs.registration import game_spec


def cmd_qa(args: argparse.Namespace) -> int:
    """CoordinationQA: generate, verify, evaluate, and keep the default suites up to date."""
    from tom_envs.qa import generate as qg
    from tom_envs.qa.items import read_suite

    if args.qa_cmd == "suites":
        return _suites(args)
    if args.qa_cmd == "generate":
        return _generate(args)
    paths = [Path(p) for p in args.suites] or sorted(qg.SUITES_DIR.glob("*.jsonl"))
    items = [it for p in paths for it in read_suite(p)[1]]
    if args.qa_cmd == "verify":
        return _verify(args, items)
    return _evaluate(args, items)


def _suites(args: argparse.Namespace) -> int:
    """``tom-envs qa suites [--check]``: regenerate (or check) the shipped default suites."""
    from tom_envs.qa import generate as qg

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


def _generate(args: argparse.Namespace) -> int:
    """``tom-envs qa generate``: seeded suites, one JSONL file per game."""
    import numpy as np

    from tom_envs.qa import generate as qg
    from tom_envs.qa.items import write_suite

    games = [game_spec(g).name for g in args.games] or qg.qa_games()
    out = Path(args.out)
    for g in games:
        items = qg.generate(g, np.random.default_rng([args.seed, qg.stable_hash(g)]), args.n,
                            filters=args.filter or None, skin=args.skin)  # fmt: skip
        meta = qg.suite_meta(g, args.seed, args.n, args.skin)
        path = write_suite(items, out / f"{g}.jsonl", meta)
        print(f"{g}: {len(items)} items -> {path}")
    return 0


def _answerer(args: argparse.Namespace) -> tuple[Any, str]:
    """``(answer(item, trial), name)`` of ``--answerer``: a built-in one or a plugin's
    (ValueError or :class:`~tom_envs.plugins.PluginError` when it cannot be had)."""
    from tom_envs.qa import generate as qg

    if args.answerer == "random":
        rnd = qg.random_answerer(args.seed)
        return (lambda item, trial: rnd(item)), "random"
    if args.answerer == "oracle":
        orc = qg.oracle_answerer()
        return (lambda item, trial: orc(item)), "oracle (engine)"
    if args.answerer == "blind":
        bld = qg.blind_answerer()
        return (lambda item, trial: bld(item)), "partner-blind reasoner"
    answer, name = plugins.load("tom_envs.qa_answerers", args.answerer)(args)
    return answer, name


def _evaluate(args: argparse.Namespace, items: list) -> int:
    """``tom-envs qa eval``: an answerer's accuracy per game and ability, under the cost guard
    and the failure policy."""
    from tom_envs.budget import BudgetExhausted
    from tom_envs.cli_cost import EXIT_BUDGET, CostGuard, qa_estimate
    from tom_envs.qa.evaluate import run_answerer

    # everything that can fail is checked before the first answer is spent
    try:
        scores = read_agentic_scores(args.agentic) if args.agentic else None
    except ValueError as exc:
        print(f"error: --agentic: {exc}", file=sys.stderr)
        return 2
    try:
        answer, name = _answerer(args)
    except (plugins.PluginError, ValueError) as exc:
        print(f"error: --answerer {args.answerer}: {exc}", file=sys.stderr)
        return 2
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
    text = _eval_report(res, name, args.trials, len(items), scores)
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    return _eval_failures(res, len(items) * args.trials, args.max_failure_share)


def _eval_report(res: Any, name: str, trials: int, n_items: int,
                 scores: dict[str, float] | None) -> str:  # fmt: skip
    """The markdown of ``qa eval``: accuracy rows, unparseable replies, the QA/agentic
    correlation when ``--agentic`` scores were given."""
    from tom_envs.qa.evaluate import correlation, format_rows

    rows = res.table()
    text = f"# CoordinationQA: {name}, {trials} trials\n\n{format_rows(rows)}\n\n"
    text += f"Unparseable replies: {res.invalid_count()} of {n_items * trials}"
    text += f" ({res.failure_summary()}).\n" if res.failures else ".\n"
    if scores is not None:
        pairs = {}
        for r in rows:
            if r["type"] == "all" and r["game"] in scores:
                pairs[r["game"]] = (r["accuracy"], float(scores[r["game"]]))
        rho, n = correlation(pairs)
        text += f"\nCorrelation of QA accuracy with agentic score over {n} games: r = {rho:.3f}\n"
    return text


def _eval_failures(res: Any, total: int, max_failure_share: float) -> int:
    """The failure policy of every driver, for an answerer: 1 (with the reason) when every answer
    failed, or when more than ``max_failure_share`` failed for the answerer's own reasons
    (endpoint, context overflow, exception; an unparseable reply is the model's own answer,
    scored wrong); else 0."""
    if res.every_answer_failed():  # an answerer that failed every item has measured nothing
        print(f"error: every answer failed ({res.failure_summary()}); first: {res.first_failure}",
              file=sys.stderr)  # fmt: skip
        return 1
    broken = sum(v for k, v in res.failures.items() if k != "unparseable")
    if total and broken / total > max_failure_share:
        print(f"error: {broken} of {total} answers failed ({res.failure_summary()}; more than "
              f"{100 * max_failure_share:.0f}%): the accuracy is not a result; first: "
              f"{res.first_failure}", file=sys.stderr)  # fmt: skip
        return 1
    return 0


def _verify(args: argparse.Namespace, items: list) -> int:
    """``tom-envs qa verify``: the engine recomputes every item; the learned adversaries (held-out
    folds, one game left out, a fresh suite) and the gate; the named shortcuts beside them; the
    known-groups answerers. Exit 1 when any of them fails."""
    import numpy as np

    from tom_envs.qa import generate as qg
    from tom_envs.qa.adversary import adversary_gate, format_known_groups, known_groups
    from tom_envs.qa.items import read_suite
    from tom_envs.qa.shortcuts import format_table, shortcut_table
    from tom_envs.validity import format_reports

    out: list[str] = []

    def say(text: str = "") -> None:
        print(text)
        out.append(text)

    bad = []
    with Progress(len(items), "qa verify: engine", unit="items") as bar:
        for it in items:
            if not qg.verify(it):
                bad.append(it.id)
            bar.update()
    say(f"{len(items) - len(bad)}/{len(items)} items verified by the engine")
    for b in bad[:20]:
        print(f"  FAILED {b}", file=sys.stderr)
    if args.fresh is not None and args.fresh:
        fresh = [it for p in args.fresh for it in read_suite(p)[1]]
        origin = f"{len(args.fresh)} suite files"
    else:
        games = sorted({it.game for it in items})
        fresh = []
        with Progress(len(games), "qa verify: fresh suite", unit="games", every=1) as bar:
            for g in games:
                rng = np.random.default_rng([args.fresh_seed, qg.stable_hash(g)])
                fresh += qg.generate(g, rng, args.fresh_per_type * len(qg.abilities(g)))
                bar.update()
        origin = f"generated with seed {args.fresh_seed}, {args.fresh_per_type} per game and ability"
    say(f"fresh suite: {len(fresh)} items ({origin})")
    reports, decision = adversary_gate(items, fresh, repeats=args.repeats)
    say("\n## Learned no-reasoning adversaries (held-out accuracy %, 95% Wilson interval)\n")
    say(format_reports(reports, pool_by="ability"))
    verdict = "PASS" if decision.passed else "FAIL"
    say(f"\nGate ({decision.checks} checks: no cell's interval wholly above chance + 5, every "
        f"ability pooled over games within 3 points of chance): {verdict}")  # fmt: skip
    for f in decision.failures:
        say(f"  GATE {f}")
    say("\n## Named shortcuts (explanations, fitted on the items they answer; accuracy %)\n")
    say(format_table(shortcut_table(items)))
    kg = known_groups(items)
    say(f"\n## Known groups on the {kg.sets} contrast sets (accuracy %)\n")
    say(format_known_groups(kg))
    say(f"\nKnown groups: {'PASS' if kg.passed else 'FAIL'} (the partner-blind reasoner right on "
        "exactly one twin of every set; the exact partner model right on every item)")  # fmt: skip
    for f in kg.failures[:20]:
        say(f"  KNOWN-GROUPS {f}")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text("\n".join(out) + "\n")
    return 1 if bad or not decision.passed or not kg.passed else 0


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
