"""Guandan reports: the paper's evaluation protocol and the legal-move cross-check/benchmark.

``protocol``: paper 001's evaluation (§4): for every pair of agents, 40 seeded games, the first 20
with agent A in seats 0/2 and B in seats 1/3, then the same 20 seeds with the seats swapped; the
win rate of A is the share of games its team won. A game is one deal (the default episode) or, with
``--match``, a whole match to A.

``legal``: the legal-play generator against the independent brute-force enumerator on random
positions (hands taken from random-play deals once they hold at most ``--max-cards`` cards, and
random hands of 1..``--max-cards`` cards with 0-2 wild cards, every level, leading and following),
checking every shape the engine realises; then legal-move generations per second on positions
from random-play deals (every hand size).

Run::

    python -m tom_envs.experiments.guandan protocol --games 40
    python -m tom_envs.experiments.guandan protocol --games 40 --match
    python -m tom_envs.experiments.guandan legal --positions 10000
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from tom_envs.agents import make_agent
from tom_envs.experiments.tables import PaperTable, TableCell
from tom_envs.registration import game_spec
from tom_envs.runner import Episode, play_episode

AGENTS = ("random", "bestp_lowv", "heuristic", "recommender")


@dataclass
class PairResult:
    """Agent ``a`` against agent ``b`` over ``games`` games (half in each seating)."""

    a: str
    b: str
    games: int
    wins_a: int
    wins_a_first: int
    wins_a_second: int
    draws: int
    return_a: float
    seconds: float

    @property
    def win_rate(self) -> float:
        """Share of games won by ``a``'s team."""
        return self.wins_a / self.games


def play_pair(a: str, b: str, games: int = 40, seed: int = 0, match: bool = False) -> PairResult:
    """The paper's protocol for one pairing: ``games / 2`` seeds, each in both seatings."""
    spec = game_spec("Guandan")
    kwargs = {"match": True} if match else {}
    env = spec.load().raw_env(**kwargs)
    half = games // 2
    wins = [0, 0]
    draws = 0
    ret = 0.0
    t0 = time.perf_counter()
    for swap in (0, 1):
        for s in range(seed, seed + half):
            team_a = [make_agent(a, spec) for _ in range(2)]
            team_b = [make_agent(b, spec) for _ in range(2)]
            first, second = (team_a, team_b) if not swap else (team_b, team_a)
            seats = [first[0], second[0], first[1], second[1]]
            ep = play_episode(spec, seats, s, env_kwargs=kwargs, env=env)
            r = ep.returns["player_1" if swap else "player_0"]
            if match:
                winner = env.unwrapped.game_state.winner
                won = winner == swap
                draws += winner == -1
            else:
                won = r > 0
            wins[swap] += int(won)
            ret += r
    return PairResult(
        a,
        b,
        2 * half,
        sum(wins),
        wins[0],
        wins[1],
        draws,
        ret / (2 * half),
        time.perf_counter() - t0,
    )


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson 95% interval of a proportion."""
    if n == 0:
        return (float("nan"), float("nan"))
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def protocol_report(
    agents: Sequence[str] = AGENTS,
    games: int = 40,
    seed: int = 0,
    match: bool = False,
    progress: Callable[[str], None] | None = None,
) -> tuple[str, list[PairResult]]:
    """Every pairing of ``agents``, played serially here; a markdown table and the results (the
    ``paper001`` table plays the same deals in the eval worker pool)."""
    results = []
    for a, b in itertools.combinations(agents, 2):
        r = play_pair(a, b, games, seed, match)
        results.append(r)
        if progress is not None:
            progress(f"{a} vs {b}: {r.wins_a}/{r.games} ({r.seconds:.0f}s)")
    return protocol_markdown(results, agents, match), results


def protocol_markdown(results: Sequence[PairResult], agents: Sequence[str], match: bool) -> str:
    """The head-to-head table and the win-rate grid."""
    unit = "matches (to A)" if match else "deals"
    lines = [
        f"| A | B | games ({unit}) | A wins | A win rate | 95% CI | A in seats 0/2 | "
        "A in seats 1/3 | A mean return | seconds |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lo, hi = wilson(r.wins_a, r.games)
        lines.append(
            f"| {r.a} | {r.b} | {r.games} | {r.wins_a} | {r.win_rate:.1%} | "
            f"[{lo:.0%}, {hi:.0%}] | {r.wins_a_first}/{r.games // 2} | "
            f"{r.wins_a_second}/{r.games // 2} | {r.return_a:+.2f} | {r.seconds:.0f} |"
        )
    if match:
        lines.append("")
        lines.append(f"Drawn matches (max_deals reached): {sum(r.draws for r in results)}.")
    names = list(agents)
    grid = ["| A \\ B | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    rate = {(r.a, r.b): r.win_rate for r in results}
    rate |= {(r.b, r.a): 1 - r.win_rate - r.draws / r.games for r in results}
    for x in names:
        cells = ["—" if x == y else f"{rate[(x, y)]:.0%}" for y in names]
        grid.append(f"| {x} | " + " | ".join(cells) + " |")
    return "\n".join(
        [*lines, "", "Win rate of the row agent against the column agent:", "", *grid]
    )




def table_cells(agents: Sequence[str] = AGENTS, games: int = 40, seed: int = 0) -> list[TableCell]:
    """Paper 001's protocol as cells: per pairing, ``games / 2`` seeds with A in seats 0/2 and
    the same seeds with A in seats 1/3 (one deal per game)."""
    half = games // 2
    cells = []
    for a, b in itertools.combinations(agents, 2):
        cells.append(TableCell(f"{a}-vs-{b}.A_first", "Guandan", (a, b, a, b), half, seed))
        cells.append(TableCell(f"{a}-vs-{b}.A_second", "Guandan", (b, a, b, a), half, seed))
    return cells


def render(
    played: Mapping[str, Sequence[Episode]],
    agents: Sequence[str] = AGENTS,
    games: int = 40,
    seed: int = 0,
) -> str:
    """The protocol table from the episodes of :func:`table_cells`."""
    results = []
    for a, b in itertools.combinations(agents, 2):
        first, second = played[f"{a}-vs-{b}.A_first"], played[f"{a}-vs-{b}.A_second"]
        r1 = [ep.returns["player_0"] for ep in first]
        r2 = [ep.returns["player_1"] for ep in second]
        wins = (sum(r > 0 for r in r1), sum(r > 0 for r in r2))
        n = len(r1) + len(r2)
        results.append(PairResult(a, b, n, sum(wins), wins[0], wins[1], 0, sum(r1 + r2) / n,
                                  sum(ep.wall_time_s for ep in [*first, *second])))  # fmt: skip
    return (
        f"{games} games per pairing (seeds {seed}..{seed + games // 2 - 1}, each in both "
        "seatings), one deal per game, played by the eval worker pool.\n\n"
        + protocol_markdown(results, agents, match=False)
    )


#: The table of ``tom-envs reproduce paper001`` (``[[tables]] table = "paper001"``).
TABLE = PaperTable("paper001", "Paper 001 protocol: head-to-head deals", table_cells, render)


# ------------------------------------------------------------------ legal-move check
def _game_positions(n_deals: int, seed: int) -> list[tuple[bytes, int, int | None]]:
    """``(hand, level, shape to beat or None)`` at every play decision of random-play deals."""
    from tom_envs.games.guandan.combos import SHAPE_BASE
    from tom_envs.games.guandan.rules import PLAY, GuandanConfig, GuandanGame

    out = []
    rng = np.random.default_rng(seed)
    for d in range(n_deals):
        level = int(rng.integers(13))
        game = GuandanGame(GuandanConfig(start_levels=(level, level)))
        state = game.initial_state(np.random.default_rng([seed, d]))
        while not game.is_terminal(state):
            p = state.to_act
            legal = game.legal_actions(state, p)
            if state.phase == PLAY:
                cur = None if state.lead is None else state.lead[1] - SHAPE_BASE
                out.append((state.hands[p], state.level, cur))
            state = game.step(state, {p: legal[rng.integers(len(legal))]}, rng).state
    return out


def _random_hand(rng: np.random.Generator, n: int, level: int) -> bytes:
    from tom_envs.games.guandan.cards import full_deck, hand_from_cards, wild_kind

    wk = wild_kind(level)
    wilds = int(rng.integers(0, min(2, n) + 1))
    deck = [c for c in full_deck() if c != wk]
    cards = list(rng.choice(deck, size=n - wilds, replace=False)) + [wk] * wilds
    return hand_from_cards(int(c) for c in cards)


def check_position(hand: bytes, level: int, current: int | None) -> list[str]:
    """Problems found at one position (empty when the generator is exact)."""
    from tom_envs.games.guandan.bruteforce import (
        enumerate_plays,
        legal_plays_bruteforce,
        shapes_of_cards,
        to_indices,
    )
    from tom_envs.games.guandan.combos import SHAPES, realize
    from tom_envs.games.guandan.legal import legal_plays, legal_plays_py

    problems = []
    plays = enumerate_plays(hand, level)
    if current is not None:
        shape = SHAPES[current]
        size_vector = (shape.size,) + (0,) * 14  # the brute force reads only the size from it
        to_beat = (int(shape.type), shape.key, size_vector, 0, shape.suit)
        plays = legal_plays_bruteforce(hand, level, to_beat, plays)
    expected, missing = to_indices(plays)
    if missing:
        problems.append(f"plays missing from the catalogue: {sorted(missing)[:3]}")
    got = set(legal_plays_py(hand, level, current))
    if legal_plays(hand, level, current).tolist() != sorted(got):
        problems.append("the numpy and pure-Python generators differ")
    if got != expected:
        problems.append(
            f"generator {sorted(got - expected)[:5]} extra, {sorted(expected - got)[:5]} missing"
        )
    for i in got:
        try:
            cards = realize(SHAPES[i], hand, level)
        except ValueError as exc:
            problems.append(f"cannot realise {SHAPES[i]}: {exc}")
            continue
        if i not in shapes_of_cards(list(cards), level):
            problems.append(f"realised cards {cards} are not {SHAPES[i]}")
    return problems


def legal_report(
    positions: int = 10_000,
    max_cards: int = 13,
    seed: int = 0,
    bench_seconds: float = 5.0,
    progress: Callable[[str], None] | None = None,
) -> str:
    """Cross-check on ``positions`` positions and the generation rate; markdown."""
    from tom_envs.games.guandan.bruteforce import enumerate_plays
    from tom_envs.games.guandan.legal import legal_plays, legal_plays_py

    rng = np.random.default_rng(seed)
    game_pos = [p for p in _game_positions(400, seed) if sum(p[0]) <= max_cards]
    rng.shuffle(game_pos)  # type: ignore[arg-type]
    n_game = min(len(game_pos), positions // 2)
    sample = game_pos[:n_game]
    while len(sample) < positions:
        level = int(rng.integers(13))
        hand = _random_hand(rng, int(rng.integers(1, max_cards + 1)), level)
        current = None
        if rng.random() < 0.6:  # follow a random shape some hand can play
            other = _random_hand(rng, int(rng.integers(1, 11)), level)
            options = legal_plays(other, level, None)
            if options.size:
                current = int(options[rng.integers(options.size)])
        sample.append((hand, level, current))
    t0 = time.perf_counter()
    bad = 0
    legal_total = 0
    examples: list[str] = []
    for i, (hand, level, current) in enumerate(sample):
        problems = check_position(hand, level, current)
        legal_total += len(legal_plays_py(hand, level, current))
        if problems:
            bad += 1
            if len(examples) < 5:
                examples.append(f"level {level}, hand {hand.hex()}, to beat {current}: {problems}")
        if progress is not None and (i + 1) % 1000 == 0:
            progress(f"checked {i + 1}/{len(sample)} positions, {bad} with problems")
    check_s = time.perf_counter() - t0
    # generation rate on full-game positions (every hand size)
    bench = _game_positions(200, seed + 1)
    lead = sum(1 for p in bench if p[2] is None)
    rate, per_gen = _rate(lambda p: legal_plays_py(*p), bench, bench_seconds)
    np_rate, _ = _rate(lambda p: legal_plays(*p), bench, bench_seconds)
    small = [p for p in bench if sum(p[0]) <= 10][:300]
    bf_rate, _ = _rate(lambda p: enumerate_plays(p[0], p[1]), small, min(bench_seconds, 3.0))
    sizes = [sum(p[0]) for p in bench]
    lines = [
        f"Positions checked: **{len(sample):,}** ({n_game:,} from random-play deals with at most "
        f"{max_cards} cards in hand, {len(sample) - n_game:,} random hands of 1-{max_cards} cards "
        "with 0-2 wild cards, every level, 40% leading / 60% following a random shape); "
        f"{legal_total:,} legal plays in all. Positions where the generator differs from the "
        f"brute force, a play is missing from the catalogue or a realised play is not its shape: "
        f"**{bad}**. Check time {check_s:.0f} s.",
        "",
        f"Generation rate (positions from 200 random-play deals, {len(bench):,} positions, hand "
        f"sizes {min(sizes)}-{max(sizes)}, {lead / len(bench):.0%} leading): "
        f"**{rate:,.0f} legal-move generations per second** with the engine's pure-Python "
        f"`legal.legal_plays_py` ({per_gen * 1e6:.0f} µs each), {np_rate:,.0f} per second with the "
        f"numpy `legal.legal_plays`; the brute force on hands of at most 10 cards: {bf_rate:,.1f} "
        f"per second. Machine load average during the run: {_load()}.",
    ]
    if examples:
        lines += ["", "Examples of problems:", *[f"- {e}" for e in examples]]
    return "\n".join(lines)


def _load() -> str:
    try:
        import os

        return " / ".join(f"{x:.1f}" for x in os.getloadavg()) + " (1/5/15 min, 2 cores)"
    except OSError:
        return "n/a"


def _rate(fn: Callable, items: list, seconds: float) -> tuple[float, float]:
    n = 0
    t0 = time.perf_counter()
    while True:
        for item in items:
            fn(item)
            n += 1
        dt = time.perf_counter() - t0
        if dt >= seconds:
            return n / dt, dt / n


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``protocol`` or ``legal``."""
    parser = argparse.ArgumentParser(prog="python -m tom_envs.experiments.guandan")
    sub = parser.add_subparsers(dest="cmd", required=True)
    pr = sub.add_parser("protocol", help="the paper's 40-game protocol for every pairing")
    pr.add_argument("--games", type=int, default=40)
    pr.add_argument("--seed", type=int, default=0)
    pr.add_argument("--match", action="store_true", help="games are whole matches to A")
    pr.add_argument("--agents", nargs="+", default=list(AGENTS))
    lg = sub.add_parser("legal", help="brute-force cross-check and generation rate")
    lg.add_argument("--positions", type=int, default=10_000)
    lg.add_argument("--max-cards", type=int, default=13)
    lg.add_argument("--seed", type=int, default=0)
    lg.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args(argv)

    def say(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    if args.cmd == "protocol":
        report, _ = protocol_report(args.agents, args.games, args.seed, args.match, say)
    else:
        report = legal_report(args.positions, args.max_cards, args.seed, args.seconds, say)
    print(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
