"""``tom-envs zoo``: list, describe, cross-play and build the partner zoo (entry point of the group
``tom_envs.commands``; also ``python -m tom_experiments.zoo``).

::

    tom-envs zoo list Overcooked
    tom-envs zoo crossplay Overcooked --seeds 800000 800019 --json runs/zoo/crossplay_oc.json
    tom-envs zoo describe Hanabi
    tom-envs zoo build Overcooked [--train]
    tom-envs zoo br Overcooked zoo/mappo_s0 [--steps 1000000 --seed 0 --seat 0]
    tom-envs zoo br-table
"""

from __future__ import annotations

import argparse
from collections.abc import Callable


def command(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """The partner zoo: list a game's members, describe them from their play, play the
    cross-play matrix (the evidence that they differ), build the shipped learned members."""
    sub = parser.add_subparsers(dest="zoo_command", required=True)
    p = sub.add_parser("list", help="the members of a game's zoo")
    p.add_argument("game")
    p = sub.add_parser("describe", help="generate each member's line from its self-play")
    p.add_argument("game")
    p.add_argument("--members", nargs="*", default=None, help="members (default: all)")
    p = sub.add_parser("crossplay", help="every (focal, partner) pair on fixed seeds, 95%% CIs")
    p.add_argument("game")
    p.add_argument("--members", nargs="*", default=None, help="members (default: all)")
    p.add_argument("--seeds", nargs=2, type=int, default=None, metavar=("FIRST", "LAST"),
                   help="seed range, both ends included (default 800000 800019)")
    p.add_argument("--metric", default=None,
                   help="episode metric to compare (default: the game's team outcome)")
    p.add_argument("--kw", nargs="*", default=None,
                   help="game arguments (default: those the learned members were trained on)")
    p.add_argument("--json", default=None, help="also write the matrix (per-seed values) here")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p = sub.add_parser("page", help="a game's section of docs/results/zoo.md (Markdown)")
    p.add_argument("game")
    p.add_argument("--crossplay", default=None, help="a matrix written by crossplay --json")
    p = sub.add_parser("build", help="ship finished training runs as learned members")
    p.add_argument("game")
    p.add_argument("--train", action="store_true", help="first train the missing runs")
    p = sub.add_parser("br", help="train a best response to one fixed partner (a lower bound)")
    p.add_argument("game")
    p.add_argument("partner", help="the partner's agent spec: a bot or zoo/<member>")
    p.add_argument("--steps", type=int, default=None, help="learner steps (default: the recipe's)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--seat", type=int, default=0, help="the focal seat")
    p.add_argument("--no-train", action="store_true", help="ship an existing run only")
    p = sub.add_parser("br-table", help="the shipped trained best responses (Markdown)")
    p.add_argument("games", nargs="*")

    def run(args: argparse.Namespace) -> int:
        return _run(args)

    return run


def _kwargs(game: str, kw: list[str] | None) -> dict[str, object]:
    from tom_baselines.common import parse_kv
    from tom_experiments.zoo import env_kwargs

    return parse_kv(kw) if kw is not None else env_kwargs(game)


def _run_br(args: argparse.Namespace) -> int:
    """``br`` (train and ship one best response) and ``br-table`` (the page's rows)."""
    import json

    from tom_envs.registration import game_spec
    from tom_experiments.zoo.br import build, table

    if args.zoo_command == "br-table":
        print(table([game_spec(g).name for g in args.games] or None), end="")
        return 0
    entry = build(game_spec(args.game).name, args.partner, args.steps, args.seed, args.seat,
                  do_train=not args.no_train)  # fmt: skip
    print(json.dumps({k: entry[k] for k in ("name", "sha256", "evaluation")}, indent=1))
    return 0


def _run(args: argparse.Namespace) -> int:
    import json
    import sys

    from tom_envs import zoo
    from tom_envs.registration import game_spec

    if args.zoo_command in ("br", "br-table"):
        return _run_br(args)
    game = game_spec(args.game).name
    if args.zoo_command == "list":
        print(f"{zoo.version(game)}")
        for m in zoo.members(game):
            extra = f"  sha256 {m.sha256[:12]}" if m.sha256 else ""
            print(f"{m.agent_spec:<16} {m.kind:<10} {m.description}{extra}")
        return 0
    names = args.members if getattr(args, "members", None) else [m.name for m in zoo.members(game)]
    if args.zoo_command == "describe":
        from tom_experiments.zoo import env_kwargs
        from tom_experiments.zoo.describe import describe

        for name in names:
            print(f"{zoo.agent_spec(name, game):<16} {describe(zoo.agent_spec(name, game), game, env_kwargs(game))}")
        return 0
    if args.zoo_command == "crossplay":
        from tom_experiments.zoo.crossplay import (
            CROSSPLAY_SEEDS,
            format_gaps,
            format_matrix,
            gaps,
            play_matrix,
        )

        if args.seeds is not None and args.seeds[1] < args.seeds[0]:
            print("error: --seeds FIRST LAST needs FIRST <= LAST", file=sys.stderr)
            return 2
        seeds = list(range(args.seeds[0], args.seeds[1] + 1)) if args.seeds else list(CROSSPLAY_SEEDS)
        kwargs = _kwargs(game, args.kw)
        report = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
        cp = play_matrix(game, names, seeds, kwargs, args.metric, report)
        better = "higher" if cp.higher_is_better else "lower"
        print(f"{zoo.version(game)}: {cp.metric} ({better} is better), focal member in each seat "
              f"in turn, seeds {seeds[0]}..{seeds[-1]} ({len(seeds)}), game arguments {kwargs}; "
              f"mean ± 95% half-width over seeds; fallback decisions: {cp.fallbacks}\n")  # fmt: skip
        print(format_matrix(cp))
        print()
        print(format_gaps(gaps(cp)))
        for extra in cp.more:
            print(f"\n{extra} (the same episodes):\n")
            print(format_matrix(cp, extra))
        if args.json:
            from pathlib import Path

            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).write_text(json.dumps({
                "game": game, "zoo_version": zoo.version(game), "metric": cp.metric,
                "higher_is_better": cp.higher_is_better, "env_kwargs": kwargs, "seeds": seeds,
                "names": cp.names, "values": cp.values, "more": cp.more,
                "fallbacks": cp.fallbacks}) + "\n")  # fmt: skip
        return 0
    if args.zoo_command == "page":
        from tom_experiments.zoo.page import section

        print(section(game, args.crossplay), end="")
        return 0
    if args.zoo_command == "build":
        from tom_experiments.zoo.build import build, train_missing

        if args.train:
            train_missing(game)
        build(game)
        return 0
    return 2  # pragma: no cover - argparse requires a subcommand


__all__ = ["command"]
