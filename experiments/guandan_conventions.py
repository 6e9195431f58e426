"""Guandan's best-response matrix ``M`` on selection seeds (issue #35, known groups).

``M[c][p]`` is the mean ``U`` (the team's deal reward, -3..+3) of candidate ``c`` played as the
focal (seat 0) with zoo member ``p`` as its teammate (seat 2), ``heuristic`` opponents (seats 1
and 3, as on the functional-ToM page), one deal per seed on the selection seeds ``10000..``
(never the known-groups check's seeds ``20000..``). Per partner it prints the best candidate
and the paired 95% bootstrap interval of (best - second best) over the same deals: a best
response "differs" between two partners only where those intervals lie above 0.

    python -m tom_experiments.guandan_conventions --seeds 60
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np

from tom_envs.known_groups import GroupsPlan, play_u
from tom_envs.records import bootstrap_ci

SELECTION_SEED = 10_000
#: The candidates as focal and the partners (the zoo's members; random only as a candidate).
#: Round 8 added the signalling conventions (``signal_pair``/``signal_single``) and their
#: matching openers (``pair_opener``/``single_opener``).
PARTNERS = ("bestp_lowv", "heuristic", "recommender", "leader", "supporter",
            "signal_pair", "signal_single", "pair_opener", "single_opener")  # fmt: skip
CANDIDATES = (*PARTNERS, "random")


def _plan(n: int) -> GroupsPlan:
    return GroupsPlan("Guandan", {}, ("{focal}", "heuristic", "{partner}", "heuristic"), (0,),
                      {}, "heuristic", lambda: None, "none", 1, n)  # type: ignore[arg-type,return-value]  # fmt: skip


def matrix(seeds: Sequence[int], candidates: Sequence[str] = CANDIDATES,
           partners: Sequence[str] = PARTNERS) -> dict[tuple[str, str], np.ndarray]:  # fmt: skip
    """``{(candidate, partner): U per seed}`` (the same deals for every pair)."""
    plan = _plan(len(seeds))
    return {(c, p): np.asarray(play_u(plan, c, p, list(seeds)), dtype=float)
            for p in partners for c in candidates}  # fmt: skip


def best_per_partner(m: dict[tuple[str, str], np.ndarray], seed: int = 35) -> dict[str, dict]:
    """Per partner: the best and second-best candidates and the paired interval of their gap."""
    out: dict[str, dict] = {}
    for p in dict.fromkeys(p for _, p in m):
        order = sorted((c for c, q in m if q == p), key=lambda c: -float(m[(c, p)].mean()))
        first, second = order[0], order[1]
        gap = bootstrap_ci(list(m[(first, p)] - m[(second, p)]), seed)
        out[p] = {"best": first, "second": second, "gap": gap}
    return out


def _ci(ci: tuple[float, float, float]) -> str:
    return f"{ci[0]:.2f} [{ci[1]:.2f}, {ci[2]:.2f}]"


def render(m: dict[tuple[str, str], np.ndarray], seeds: Sequence[int]) -> str:
    """The matrix (mean U [95%]) and the best candidate per partner, as markdown."""
    cands = list(dict.fromkeys(c for c, _ in m))
    parts = list(dict.fromkeys(p for _, p in m))
    lines = [f"Selection seeds {min(seeds)}..{max(seeds)} ({len(seeds)} deals per cell); rows: "
             "candidate as focal, columns: teammate; mean U [95%].", "",
             "| focal \\ teammate | " + " | ".join(parts) + " |", "|---|" + "---|" * len(parts)]  # fmt: skip
    for c in cands:
        cells = [_ci(bootstrap_ci(list(m[(c, p)]), 35)) for p in parts]
        lines.append(f"| {c} | " + " | ".join(cells) + " |")
    lines += ["", "| teammate | best | second | best − second (paired) |", "|---|---|---|---|"]
    for p, r in best_per_partner(m).items():
        lines.append(f"| {p} | {r['best']} | {r['second']} | {_ci(r['gap'])} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the matrix on ``--seeds`` selection seeds."""
    ap = argparse.ArgumentParser(description="Guandan's best-response matrix on selection seeds")
    ap.add_argument("--seeds", type=int, default=60, help="deals per cell (from 10000)")
    args = ap.parse_args(argv)
    if args.seeds < 2:
        ap.error("--seeds must be at least 2")
    seeds = list(range(SELECTION_SEED, SELECTION_SEED + args.seeds))
    print(render(matrix(seeds), seeds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
