"""Every protocol preset, end to end on its game, with the bundled SmolLM2-135M: the figures of
``docs/results/llm_presets.md`` (valid %, fallback %, calls, tokens and seconds per decision).

Run (the page's command; ``--max-tokens``/``--step-tokens`` cap the answer and intermediate-step
budgets for a small machine, and are printed with the table)::

    nice -n 10 .venv/bin/python -m tom_llm_agents.protocol_report --episodes 1 \
        --max-tokens 32 --step-tokens 24 --out docs/results/llm_presets.md

A 135M model plays these games at chance: the point of the table is what each protocol costs and
how often a small model's free-text answer is usable, not how well it plays.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tom_envs.agents import make_agent
from tom_envs.registration import game_spec
from tom_envs.runner import Episode, play_episode
from tom_llm_agents.agent import LLMAgent
from tom_llm_agents.client import BaseLLMClient
from tom_llm_agents.presets import PRESETS, Preset, departures_list, preset_table

#: Short episodes per game (the game's own horizon or ``max_cycles``), for tests and the table.
SHORT: dict[str, dict[str, Any]] = {
    "RockPaperScissors": {"horizon": 3},
    "BattleOfSexes": {"horizon": 3},
    "PrisonersDilemma": {"horizon": 3},
    "BombDefusal": {"max_cycles": 2},
    "Guandan": {"max_cycles": 3},
    "Hanabi": {"max_cycles": 2},
    "Overcooked": {"max_cycles": 6},
    "CollabEscape": {"max_cycles": 2},
    "CollabCapture": {"max_cycles": 2},
    "CoBlock": {"max_cycles": 2},
}

#: The partner each preset plays with (a deterministic bot, so the oracle presets have an oracle).
PARTNERS: dict[str, str] = {
    "RockPaperScissors": "always_0",
    "BattleOfSexes": "always_0",
    "PrisonersDilemma": "tit_for_tat",
}


def partner_for(game: str) -> str:
    """The partner bot for ``game``: :data:`PARTNERS`, else the game's first bot."""
    if game in PARTNERS:
        return PARTNERS[game]
    spec = game_spec(game)
    return spec.bots[0] if spec.bots else "random"


def run_preset(
    p: Preset,
    client: BaseLLMClient,
    seed: int = 0,
    env_kwargs: Mapping[str, Any] | None = None,
    **overrides: Any,
) -> tuple[Episode, LLMAgent]:
    """One episode of preset ``p`` in seat 0 of its game against :func:`partner_for` bots."""
    spec = game_spec(p.game)
    n = spec.load().make_bundle(**spec.kwargs).game.num_players
    partner = partner_for(p.game)
    extra: dict[str, Any] = dict(overrides)
    if "oracle" in p.settings["strategy"]:
        extra.setdefault("oracle_partner", partner)
    agent = LLMAgent(client, preset=p.name, **extra)
    others = [make_agent(partner, spec) for _ in range(n - 1)]
    kwargs = {**SHORT.get(p.game, {}), **p.env_kwargs, **(env_kwargs or {})}
    ep = play_episode(spec, [agent, *others], seed=seed, env_kwargs=kwargs)
    return ep, agent


def decision_stats(episodes: list[Episode], agent: str = "player_0") -> dict[str, Any]:
    """Per decision of ``agent``: valid %, fallback %, forced %, calls, tokens in/out, seconds."""
    steps = [s for ep in episodes for s in ep.steps if s["agent"] == agent]
    n = len(steps)
    if not n:
        return {"decisions": 0}
    usage = [s["info"].get("usage", {}) for s in steps]
    # the step record's own flags (the driver's), then the agent's: a mid-level Overcooked move
    # that carries out a fallback choice is flagged by the driver only
    fallbacks = sum(1 for s in steps if s.get("fallback") or s["info"].get("fallback"))
    kinds: dict[str, int] = {}
    for s in steps:
        failure = s.get("failure") or s["info"].get("failure")
        if failure:
            kinds[failure["kind"]] = kinds.get(failure["kind"], 0) + 1
    return {
        "decisions": n,
        "valid_pct": 100.0 * sum(1 for s in steps if s["valid"]) / n,
        "fallback_pct": 100.0 * fallbacks / n,
        "forced_pct": 100.0 * sum(1 for s in steps if s["info"].get("forced")) / n,
        "calls": sum(u.get("calls", 0) for u in usage) / n,
        "tokens_in": sum(u.get("tokens_in", 0) for u in usage) / n,
        "tokens_out": sum(u.get("tokens_out", 0) for u in usage) / n,
        "seconds": sum(s["latency_s"] for s in steps) / n,
        "failures": kinds,
    }


def report(
    client: BaseLLMClient,
    episodes: int = 1,
    seed: int = 0,
    on_row: Callable[[str, int], object] | None = None,
    only: Mapping[str, str] | None = None,
    **overrides: Any,
) -> str:
    """The markdown table: one row per preset; ``on_row(table so far, rows done)`` after each.
    With ``only`` (preset -> its existing row), presets not in ``only`` keep their row and are
    not played."""
    rows = [
        "| preset | game | return (seat 0) | decisions | valid % | fallback % (kinds) | forced % "
        "| calls / decision | tokens in / out per decision | s / decision |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p in PRESETS.values():
        if only is not None and p.name in only:
            rows.append(only[p.name])
            continue
        eps = [run_preset(p, client, seed + i, **overrides)[0] for i in range(episodes)]
        st = decision_stats(eps)
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(st.get("failures", {}).items()))
        ret = sum(ep.returns.get("player_0", 0.0) for ep in eps) / len(eps)
        rows.append(
            f"| `{p.name}` | {p.game} | {ret:g} | {st['decisions']} | {st['valid_pct']:.0f} | "
            f"{st['fallback_pct']:.0f}{f' ({kinds})' if kinds else ''} | {st['forced_pct']:.0f} | "
            f"{st['calls']:.1f} | {st['tokens_in']:.0f} / {st['tokens_out']:.0f} | "
            f"{st['seconds']:.2f} |"
        )
        if on_row is not None:
            on_row("\n".join(rows), len(rows) - 2)
    return "\n".join(rows)


def chance_table(samples: int = 20) -> str:
    """The adversary of the return column: a uniformly random agent in the preset's seat, same
    game, arguments and partners, over episode seeds 0 to ``samples - 1`` (the random agent
    draws from the episode seed, so each seed is one sample)."""
    rows = [
        f"| game (arguments) | partner | return of a random agent (mean of seeds 0-{samples - 1}) |",
        "|---|---|---|",
    ]
    seen: set[tuple[str, str]] = set()
    for p in PRESETS.values():
        kwargs = {**SHORT.get(p.game, {}), **p.env_kwargs}
        key = (p.game, repr(sorted(kwargs.items())))
        if key in seen:
            continue
        seen.add(key)
        spec = game_spec(p.game)
        n = spec.load().make_bundle(**spec.kwargs).game.num_players
        partner = partner_for(p.game)
        total = 0.0
        for seed in range(samples):
            seats = [make_agent("random", spec), *(make_agent(partner, spec) for _ in range(n - 1))]
            total += play_episode(spec, seats, seed=seed, env_kwargs=kwargs).returns["player_0"]
        args = ", ".join(f"{a}={v}" for a, v in kwargs.items())
        rows.append(f"| {p.game} ({args}) | {partner} | {total / samples:.3g} |")
    return "\n".join(rows)


def _between(doc: str, marker: str, text: str) -> str:
    """``doc`` with ``text`` between ``<!-- marker -->`` and ``<!-- /marker -->``."""
    start, end = f"<!-- {marker} -->", f"<!-- /{marker} -->"
    head, found, rest = doc.partition(start)
    if not found:
        return doc
    _, _, tail = rest.partition(end)
    return f"{head}{start}\n{text}\n{end}{tail}"


def main(argv: list[str] | None = None) -> int:
    """Print (or write into ``--out`` between markers) the per-preset table."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-tokens", type=int, default=None, help="cap every answer budget")
    parser.add_argument(
        "--step-tokens", type=int, default=None, help="cap intermediate steps and probe answers"
    )
    parser.add_argument("--out", default=None, help="a markdown file with the table markers")
    parser.add_argument(
        "--rerun",
        default=None,
        help="comma-separated presets to play again; the other rows are kept from --out",
    )
    parser.add_argument(
        "--cache-dir",
        default=None,
        help="disk cache of the model's answers (a re-run replays them: its seconds per "
        "decision then measure the cache, not the model)",
    )
    args = parser.parse_args(argv)
    from tom_llm_agents.local import LocalServer

    overrides: dict[str, Any] = {}
    if args.max_tokens:
        overrides["max_tokens"] = args.max_tokens
    if args.step_tokens:
        overrides["step_tokens"] = args.step_tokens
    caps = ", ".join(f"{k}={v}" for k, v in overrides.items()) or "none (the presets' own)"
    previous_wall = ""
    if args.rerun and args.out:
        found = re.search(r"Wall time for the table: \d+ s\.", Path(args.out).read_text())
        previous_wall = found.group(0) if found else ""
    t0 = time.perf_counter()

    def write(table: str, done: int) -> str:
        took = time.perf_counter() - t0
        status = "" if done == len(PRESETS) else f" (partial: {done} of {len(PRESETS)} presets)"
        wall = f"Wall time for the table: {took:.0f} s{status}."
        if args.rerun:
            wall = f"{previous_wall} Re-run of {args.rerun}: {took:.0f} s{status}."
        text = (
            f"{table}\n\nEpisodes per preset: {args.episodes} (seeds {args.seed}-"
            f"{args.seed + args.episodes - 1}); budget caps: {caps}. {wall}"
        )
        if args.out:  # written after every preset: nothing computed is lost
            path = Path(args.out)
            doc = _between(path.read_text(), "presets-table", text)
            doc = _between(doc, "protocols-table", preset_table())
            path.write_text(_between(doc, "departures", departures_list()))
        print(f"{done}/{len(PRESETS)} presets, {took:.0f} s", file=sys.stderr, flush=True)
        return text

    keep: dict[str, str] | None = None
    if args.rerun:
        rerun = set(args.rerun.split(","))
        unknown = rerun - set(PRESETS)
        if unknown or not args.out:
            parser.error(f"--rerun needs --out and known presets (unknown: {sorted(unknown)})")
        doc = Path(args.out).read_text()
        table_now = doc.partition("<!-- presets-table -->")[2].partition("<!-- /presets-table")[0]
        keep = {
            line.split("`")[1]: line
            for line in table_now.splitlines()
            if line.startswith("| `") and line.split("`")[1] not in rerun
        }
    with LocalServer() as server:
        # a long Chinese prompt takes minutes of prompt evaluation on a small, busy machine
        client = server.client(timeout=900.0, cache_dir=args.cache_dir)
        table = report(client, args.episodes, args.seed, on_row=write, only=keep, **overrides)
    text = write(table, len(PRESETS))
    if args.out:
        path = Path(args.out)
        path.write_text(_between(path.read_text(), "chance-table", chance_table()))
    print(text)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
