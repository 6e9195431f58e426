"""The room games' exact best-response matrix M (issue #35): do the zoo's members really differ?

``python -m tom_experiments.room_conventions [--game CollabCapture|CollabEscape] [--out FILE]``
builds, for every *Markov* zoo member of each room game (the rule bots that read only what the
exact planner's state keeps, ``optimal`` tabulated from the planner, ``random``, and the learned
members of a game whose views are a function of that state:
:func:`tom_envs.references.markov_partner`), the exact best response ``BR(x)`` at seat 0
(:func:`tom_envs.references.best_response_planner`) and plays it against every member ``y`` at
seat 1 through the same tables (``BR(x).outcome(against=BR(y))``: partner and chance enumerated,
no sampling). It prints ``U`` per (focal ``BR(x)``, partner ``y``) as the page defines it
(:func:`tom_envs.references.room_objective`: CollabCapture ``captured - turns/(H+1)``,
CollabEscape the escape probability within the turn limit), every focal that ties the column's
best in bold. The diagonal is each column's best by construction; the matrix shows which members'
best responses differ. Default game arguments (the functional-ToM page's). CollabCapture ~35 s,
CollabEscape ~55 s on one core.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tom_envs import zoo
from tom_envs.references import VIEW_OF_STATE, best_response_planner, markov_bots, room_objective
from tom_envs.registration import game_spec
from tom_experiments.conventions import best_focals, table

GAMES = ("CollabCapture", "CollabEscape")
#: Two exact values closer than this tie (the planner's own tie tolerance is of this order).
TIE = 1e-9


def markov_members(game: str) -> list[str]:
    """The zoo members of ``game`` that have an exact best response without the caller vouching
    for them (declared order)."""
    spec = game_spec(game)
    exact = {*markov_bots(spec), "optimal", "random"}
    return [m.agent_spec for m in zoo.members(game)
            if m.agent_spec in exact or (m.agent_spec.startswith("zoo/") and game in VIEW_OF_STATE)]  # fmt: skip


def u_of(outcome: dict[str, float], step_cost: float) -> float:
    """The page's ``U`` of an exact outcome: success minus the turns' cost (0 for CollabEscape)."""
    return float(outcome["success"] - step_cost * outcome["expected_turns"])


def matrix(game: str, members: Sequence[str]) -> dict[tuple[str, str], float]:
    """``{(x, y): U}``: the exact best response to ``x`` (seat 0) played against ``y`` (seat 1)."""
    spec = game_spec(game)
    config = spec.load().make_bundle(**spec.kwargs).game.config
    brs: dict[str, Any] = {m: best_response_planner(game, config, m, 0) for m in members}
    return {(x, y): u_of(brs[x].outcome(against=brs[y]), brs[x].step_cost)
            for x in members for y in members}  # fmt: skip


def best_responses(m: dict[tuple[str, str], float], members: Sequence[str]) -> dict[str, list[str]]:
    """Each partner's best focals: every ``x`` within :data:`TIE` of the column's maximum."""
    return best_focals(m, members, members, tie=TIE)


def render(
    game: str, m: dict[tuple[str, str], float], members: Sequence[str], seconds: float
) -> str:
    """The matrix as a markdown table (rows: ``BR(x)`` as focal; columns: the partner ``y``)."""
    spec = game_spec(game)
    objective = room_objective(spec, spec.load().make_bundle(**spec.kwargs).game)
    br = best_responses(m, members)
    lines = [f"{game}: exact U = {objective} ({len(members)} best responses x {len(members)} "
             f"partners, {seconds:.0f} s). Rows: the best response to x as focal (seat 0); "
             "columns: the partner y (seat 1); bold: every focal that ties the column's best.", "",
             *table(m, members, members, br, "BR(x) \\ partner y", 4, lambda x: f"BR({x})")]  # fmt: skip
    lines += ["", "Best focals per partner: "
              + "; ".join(f"{y} → " + ", ".join(f"`BR({x})`" for x in br[y]) for y in members)]  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Print each game's matrix (and write it to ``--out``)."""
    parser = argparse.ArgumentParser(prog="python -m tom_experiments.room_conventions",
                                     description="The room games' exact best-response matrix")  # fmt: skip
    parser.add_argument("--game", choices=GAMES, default=None, help="one game (default: both)")
    parser.add_argument("--out", type=Path, default=None, help="also write the tables here")
    args = parser.parse_args(argv)
    texts = []
    for game in [args.game] if args.game else GAMES:
        members = markov_members(game)
        t0 = time.perf_counter()
        m = matrix(game, members)
        texts.append(render(game, m, members, time.perf_counter() - t0))
        print(texts[-1])
    if args.out is not None:
        args.out.write_text("\n".join(texts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
