"""Guandan (paper 001): the paper's evaluation protocol for every pairing of the rule-based agents.

Paper 001's evaluation (§4): for every pair of agents, 40 seeded games, the first 20 with agent A in
seats 0/2 and B in seats 1/3, then the same 20 seeds with the seats swapped; the win rate of A is
the share of games its team won. A game is one deal (the default episode); with ``matches`` the
table also plays whole matches to A.

Run: ``tom-envs reproduce paper001 --out docs/results/guandan.md`` (the shipped config
``experiments/configs/paper001.toml``; ``--episodes N`` sets the deals per pairing). The
legal-move check against the brute force and its speed are ``benchmarks/guandan.py``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tom_envs.evaluation.tables import PaperTable, TableCell
from tom_envs.records import Z_NORMAL, Episode, wilson

AGENTS = ("random", "bestp_lowv", "heuristic", "recommender")
#: The most deals of a match (``GuandanConfig.max_deals``): a match that reaches it is a draw.
MAX_DEALS = 100


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


def protocol_markdown(results: Sequence[PairResult], agents: Sequence[str], match: bool) -> str:
    """The head-to-head table and the win-rate grid."""
    unit = "matches (to A)" if match else "deals"
    lines = [
        f"| A | B | games ({unit}) | A wins | A win rate | 95% CI | A in seats 0/2 | "
        "A in seats 1/3 | A mean return | seconds |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lo, hi = wilson(r.wins_a, r.games, z=Z_NORMAL)  # the page as first written: z = 1.96
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


def table_cells(
    agents: Sequence[str] = AGENTS, games: int = 40, seed: int = 0, matches: int = 0
) -> list[TableCell]:
    """Paper 001's protocol as cells: per pairing, ``games / 2`` seeds with A in seats 0/2 and
    the same seeds with A in seats 1/3 (one deal per game); the same for ``matches`` whole
    matches when it is not 0."""
    cells = []
    for a, b in itertools.combinations(agents, 2):
        for kind, n, kwargs in (("", games, {}), (".match", matches, {"match": True})):
            if n:
                cells.append(TableCell(f"{a}-vs-{b}{kind}.A_first", "Guandan", (a, b, a, b),
                                       n // 2, seed, kwargs))  # fmt: skip
                cells.append(TableCell(f"{a}-vs-{b}{kind}.A_second", "Guandan", (b, a, b, a),
                                       n // 2, seed, kwargs))  # fmt: skip
    return cells


def match_outcome(ep: Episode, seat: str) -> int:
    """+1 if ``seat``'s team won the match, -1 if it lost, 0 for a draw (``MAX_DEALS`` deals
    without passing A). A deal ends on the only steps with rewards; the match's last deal is won
    by the team that passed A."""
    deals = [s["rewards"] for s in ep.steps if any(s.get("rewards", {}).values())]
    if not deals or len(deals) >= MAX_DEALS:
        return 0
    return 1 if deals[-1][seat] > 0 else -1


def _results(
    played: Mapping[str, Sequence[Episode]], agents: Sequence[str], kind: str
) -> list[PairResult]:
    results = []
    for a, b in itertools.combinations(agents, 2):
        first, second = played[f"{a}-vs-{b}{kind}.A_first"], played[f"{a}-vs-{b}{kind}.A_second"]
        r1 = [ep.returns["player_0"] for ep in first]
        r2 = [ep.returns["player_1"] for ep in second]
        if kind:
            o1 = [match_outcome(ep, "player_0") for ep in first]
            o2 = [match_outcome(ep, "player_1") for ep in second]
        else:
            o1 = [1 if r > 0 else -1 for r in r1]
            o2 = [1 if r > 0 else -1 for r in r2]
        wins = (o1.count(1), o2.count(1))
        n = len(r1) + len(r2)
        results.append(PairResult(a, b, n, sum(wins), wins[0], wins[1], (o1 + o2).count(0),
                                  sum(r1 + r2) / n,
                                  sum(ep.wall_time_s for ep in [*first, *second])))  # fmt: skip
    return results


def render(
    played: Mapping[str, Sequence[Episode]],
    agents: Sequence[str] = AGENTS,
    games: int = 40,
    seed: int = 0,
    matches: int = 0,
) -> str:
    """The page from the episodes of :func:`table_cells`."""
    command = f"tom-envs reproduce paper001 --episodes {games} --out docs/results/guandan.md"
    lines = [
        "# Guandan (paper 001): the evaluation protocol",
        "",
        'Paper 001 (Yim et al., "Evaluating and enhancing LLMs agent based on Theory of Mind in Guandan")',
        'evaluates agents by **40 seeded games per pairing with position swapping**: the investigated agent',
        'plays seats 0/2 for 20 seeds, then the same 20 seeds with the seats swapped (§4, "variable random',
        'seeding" and "position swapping"). Its rule-based baselines are \'random\' and \'bestP_lowV\'; its',
        'upper bound is DanZero+ (an RL model whose weights are not public, so it is not reproduced here).',
        "The paper's tables report LLM agents only against those baselines; the figures below are the",
        'baselines and our two stronger rule-based agents against each other, which is what an LLM agent',
        "will be measured against. The issue's check, rule-based vs random far above 50%, holds: 88-100%.",
        '',
        'Agents (`tom_envs/games/guandan/bots.py`): `random` (uniform legal action), `bestp_lowv` (best',
        'pattern priority, then fewest wild cards, then lowest value; never overtakes its teammate; bombs',
        'only when the opponent on the table has 6 cards or fewer), `heuristic` (hand decomposition and the',
        "competition agents' rules, specs §4.8), `recommender` (plays the top action of the action",
        "recommender, `recommender.py`, the LLM agents' top-k tool).",
        "",
        f"Generated by `{command}` (the `paper001` table, `experiments/guandan.py`; its "
        "episodes are played by the eval worker pool, with resume; seconds are play time summed "
        "over a pairing's episodes). The legal-move check against the brute force and its speed: "
        "`docs/results/guandan_benchmarks.md`.",
        "",
        "## Protocol, one deal per game (the default episode)",
        "",
        f"Seeds {seed}-{seed + games // 2 - 1}, each played in both seatings; a game is won by the "
        "team of the first player out. \"A mean return\" is the mean deal reward of A's seats "
        "(±3/±2/±1).",
        "",
        protocol_markdown(_results(played, agents, ""), agents, match=False),
    ]
    if matches:
        lines += [
            "",
            "## Protocol, one match to A per game",
            "",
            f"{matches} games per pairing (seeds {seed}-{seed + matches // 2 - 1}, each in both "
            "seatings). Whole matches (`match=True`): deals with tribute, level advance, passing "
            "A with 1st+2nd or 1st+3rd; \"A mean return\" is the sum of A's deal rewards over "
            "the match.",
            "",
            protocol_markdown(_results(played, agents, ".match"), agents, match=True),
        ]
    return "\n".join(lines) + "\n"


#: The table of ``tom-envs reproduce paper001`` (``[[tables]] table = "paper001"``).
TABLE = PaperTable("paper001", "Paper 001 protocol: head-to-head deals and matches", table_cells,
                   render)  # fmt: skip
