"""CoBlock's best-response matrix M on the selection seeds (issue #35's known groups).

``python -m tom_experiments.coblock_conventions [--seeds N] [--out FILE]`` plays every zoo
member as focal (seat 0) against every member (seat 1) on the selection seeds ``10000..10000+N-1``
(the seeds the page's references are chosen on; never the known-groups check's ``20000..``) and
prints the mean ``U`` (success − rounds/61) per (candidate, partner), the column's best in bold,
then each partner's best candidate. It shows whether the zoo's two conventions (A and its mirror
B, :mod:`tom_envs.games.coblock.bots`) really have different best responses.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tom_envs import zoo
from tom_envs.agents import make_agent
from tom_envs.registration import game_spec
from tom_envs.runner import play_episode
from tom_experiments.conventions import best_focals, table

SELECTION_SEED = 10_000


def matrix(members: Sequence[str], seeds: Sequence[int]) -> dict[tuple[str, str], float]:
    """``{(candidate, partner): mean U}``: the candidate at seat 0, the partner at seat 1."""
    spec = game_spec("CoBlock")
    objective = spec.load().functional_objective(**spec.kwargs)
    out = {}
    for cand in members:
        for partner in members:
            us = [float(objective(play_episode(spec, [make_agent(cand, spec), make_agent(partner, spec)],
                                               s, env_kwargs=dict(spec.kwargs)), (0,)))
                  for s in seeds]  # fmt: skip
            out[cand, partner] = float(np.mean(us))
    return out


def best_responses(m: dict[tuple[str, str], float], members: Sequence[str]) -> dict[str, str]:
    """Each partner's best candidate (ties: the first declared, as the references choose)."""
    return {p: c for p, (c,) in best_focals(m, members, members).items()}


def render(m: dict[tuple[str, str], float], members: Sequence[str], seeds: Sequence[int],
           seconds: float) -> str:  # fmt: skip
    """The matrix as a markdown table (rows: candidates as focal; columns: partners)."""
    br = best_responses(m, members)
    lines = [f"M on selection seeds {min(seeds)}..{max(seeds)} (mean U, focal seat 0; "
             f"{len(members) ** 2 * len(seeds)} episodes, {seconds:.0f} s). Rows: the candidate "
             "as focal; columns: the partner; bold: the column's best.", "",
             *table(m, members, members, {p: [c] for p, c in br.items()},
                    "candidate \\ partner", 3)]  # fmt: skip
    lines += ["", "Best response per partner: " + ", ".join(f"{p} → `{c}`" for p, c in br.items())]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tom_experiments.coblock_conventions",
                                     description="CoBlock's best-response matrix on the selection seeds")  # fmt: skip
    parser.add_argument("--seeds", type=int, default=10, help="selection seeds from 10000 (default 10)")
    parser.add_argument("--out", type=Path, default=None, help="also write the table here")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error(f"--seeds must be >= 1, got {args.seeds}")
    members = [m.agent_spec for m in zoo.members("CoBlock")]
    seeds = range(SELECTION_SEED, SELECTION_SEED + args.seeds)
    t0 = time.perf_counter()
    text = render(matrix(members, seeds), members, seeds, time.perf_counter() - t0)
    print(text, end="")
    if args.out is not None:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
