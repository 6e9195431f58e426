"""BombDefusal's best-response matrix on the selection seeds (issue #35): does each zoo member's
best response really differ?

``python -m tom_experiments.bomb_conventions`` plays every zoo member but ``random`` as focal
(seat 0) with every member in seats 1 and 2, on the references' selection seeds 10000..10009
(:data:`tom_envs.references.BOMB_SELECTION_SEEDS`, never the known-groups check's seeds 20000..),
with the functional-ToM page's game arguments, and prints the mean ``U = team_score - 0.3 x
rounds`` per (focal, partner) as a markdown table with each column's best focal in bold. About 900
episodes, ~1.5 CPU-minutes.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np

from tom_envs import zoo
from tom_envs.references import BOMB_SELECTION_SEEDS, _bomb_play
from tom_envs.registration import game_spec
from tom_experiments.conventions import best_focals, table

GAME = "BombDefusal"
#: The functional-ToM page's arguments for this game (its learned members were trained with them).
KWARGS = {"probes": "none", "shaping": True}


def matrix(seeds: Sequence[int] = BOMB_SELECTION_SEEDS) -> tuple[list[str], dict[tuple[str, str], float]]:
    """``(members, {(focal, partner): mean U})`` over ``seeds``."""
    spec = game_spec(GAME)
    members = [m.agent_spec for m in zoo.members(GAME)]
    out = {}
    for partner in members:
        for focal in (m for m in members if m != "random"):
            u = [_bomb_play(spec, KWARGS, focal, partner, 0, int(s))[0] for s in seeds]
            out[(focal, partner)] = float(np.mean(u))
    return members, out


def render(members: Sequence[str], m: dict[tuple[str, str], float]) -> str:
    """The markdown table (rows: focal; columns: partner; the column's best in bold)."""
    focals = [f for f in members if f != "random"]
    best = best_focals(m, focals, members)  # first of equal means
    lines = [*table(m, focals, members, best, "focal \\ partner", 1), ""]
    lines.append("Best focal per partner: " + ", ".join(f"{p}: {best[p][0]}" for p in members))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the matrix."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--seeds", type=int, default=len(BOMB_SELECTION_SEEDS),
                        help="the first N selection seeds (default: all ten)")  # fmt: skip
    args = parser.parse_args(argv)
    if not 1 <= args.seeds <= len(BOMB_SELECTION_SEEDS):
        parser.error(f"--seeds must be in 1..{len(BOMB_SELECTION_SEEDS)}")
    members, m = matrix(BOMB_SELECTION_SEEDS[: args.seeds])
    print(render(members, m))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
