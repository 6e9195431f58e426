"""Matrix-game benchmark: PPO and MAPPO against each partner, ΔFunctional/T beside RMax's.

For each game (RPS, IBS, IPD) and each training partner (``population:single_action``, one
``always_k`` drawn per episode, and ``tit_for_tat``), train the learner in seat 0, then evaluate the
trained policy with the suite's runner against the population, each ``always_k`` on its own and
``tit_for_tat``; ΔFunctional/T is the exact metric of ``tom_envs/games/matrix/planner.py``. The
RMax columns are read from ``docs/results/paper004_rmax.md``: the paper's learner (plain RMax) and
our tuned RMax, each its own column.

Run (each algorithm can run in its own process; results are cached per cell in ``--out``)::

    python -m tom_baselines.matrix_report --algos ppo --steps 300000
    python -m tom_baselines.matrix_report --algos mappo --steps 300000
    python -m tom_baselines.matrix_report --report-only --markdown docs/results/baselines_rl.md
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from tom_baselines.common import evaluate, seat_agents
from tom_envs.agents import make_agent
from tom_envs.registration import game_spec

GAMES = ("RockPaperScissors", "BattleOfSexes", "PrisonersDilemma")
TRAIN_PARTNERS = ("population:single_action", "tit_for_tat")


def eval_partners(game: str) -> list[str]:
    """The training partners plus every single-action bot on its own."""
    n = game_spec(game).load().make_bundle(**game_spec(game).kwargs).game.num_actions
    return ["population:single_action", *(f"always_{k}" for k in range(n)), "tit_for_tat"]


def train_cell(algo: str, game: str, partner: str, steps: int, out: Path, seed: int) -> Path:
    """Train one policy (skipped when its checkpoint exists); returns the checkpoint path."""
    if algo == "ppo":
        from tom_baselines import ppo_sb3

        path = out / "model.zip"
        if not path.exists():
            ppo_sb3.train(ppo_sb3.Args(game=game, partners=[partner], total_steps=steps, seed=seed,
                                       out=str(out), eval_episodes=20, progress=False))  # fmt: skip
        return path
    from tom_baselines import mappo

    path = out / "checkpoint.pt"
    if not path.exists():
        mappo.train(mappo.Args(game=game, partners=[f"1={partner}"], total_steps=steps, seed=seed,
                               out=str(out), eval_every=25, eval_episodes=20, progress=False))  # fmt: skip
    return path


def run_cells(algos: list[str], steps: int, episodes: int, out: Path, seed: int) -> None:
    """Train and evaluate every (algorithm, game, training partner) cell; one JSON per cell."""
    for algo in algos:
        for game in GAMES:
            for partner in TRAIN_PARTNERS:
                cell = out / f"{algo}-{game}-{partner.replace(':', '_')}"
                result = cell / "eval.json"
                if result.exists():
                    continue
                t0 = time.perf_counter()
                ckpt = train_cell(algo, game, partner, steps, cell, seed)
                train_s = time.perf_counter() - t0
                spec = game_spec(game)
                rows = {}
                for against in eval_partners(game):
                    factories = seat_agents(
                        spec,
                        lambda c=ckpt, g=spec: make_agent(f"checkpoint:path={c}", g, trusted=True),
                        {1: against},
                        2,
                    )
                    ev = evaluate(spec, factories, episodes, seed=0, learners=[0])
                    rows[against] = {
                        k: ev.get(k)
                        for k in ("functional_regret", "return/player_0", "optimal_return")
                    }
                    print(f"{algo} {game} trained vs {partner}, eval vs {against}: {rows[against]}")
                curve = cell / "curve.csv"
                result.write_text(json.dumps({
                    "algo": algo, "game": game, "partner": partner, "steps": steps,
                    "train_s": train_s, "episodes": episodes, "eval": rows, "curve": str(curve),
                }, indent=1))  # fmt: skip


#: Row labels of the paper-004 results page, and the column each goes to here.
RMAX_LABELS = {"paper's learner (plain RMax)": "paper", "tuned RMax (ours)": "tuned"}


def rmax_rows(path: Path) -> dict[tuple[str, str, str], str]:
    """``(label, game, partner) -> "ΔFunctional/T ± ci"`` for the RMax rows of the paper-004 page.

    ``label`` is ``"paper"`` (the paper's learner) or ``"tuned"`` (ours).
    """
    out = {}
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) > 3 and cells[2] in RMAX_LABELS:
            out[(RMAX_LABELS[cells[2]], cells[0], cells[1])] = cells[3]
    return out


def report(out: Path, rmax_path: Path) -> str:
    """The markdown table of every cell found in ``out``."""
    rmax = rmax_rows(rmax_path) if rmax_path.exists() else {}
    cells = [json.loads(p.read_text()) for p in sorted(out.glob("*/eval.json"))]
    lines = [
        "| game | trained vs | evaluated vs | PPO ΔF/T | MAPPO ΔF/T | RMax (paper's) ΔF/T | "
        "RMax (tuned) ΔF/T | PPO return | MAPPO return | optimal return |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    by = {(c["algo"], c["game"], c["partner"]): c for c in cells}
    for game in GAMES:
        for partner in TRAIN_PARTNERS:
            for against in eval_partners(game):
                if against.startswith("always_") and partner != "population:single_action":
                    continue
                if against == "tit_for_tat" and partner != "tit_for_tat":
                    continue
                if against == "population:single_action" and partner != against:
                    continue
                vals: dict[str, Any] = {}
                for algo in ("ppo", "mappo"):
                    c = by.get((algo, game, partner))
                    vals[algo] = c["eval"].get(against) if c else None

                def fmt(v: Any, key: str) -> str:
                    return "" if v is None or v.get(key) is None else f"{v[key]:.3f}"

                short = against.removeprefix("population:")
                opt = next((v["optimal_return"] for v in vals.values() if v), None)
                both = short in ("single_action", "tit_for_tat")
                paper_rmax = rmax.get(("paper", game, short), "") if both else ""
                tuned_rmax = rmax.get(("tuned", game, short), "") if both else ""
                lines.append(
                    f"| {game} | {partner.removeprefix('population:')} | {short} | "
                    f"{fmt(vals['ppo'], 'functional_regret')} | "
                    f"{fmt(vals['mappo'], 'functional_regret')} | {paper_rmax} | {tuned_rmax} | "
                    f"{fmt(vals['ppo'], 'return/player_0')} | {fmt(vals['mappo'], 'return/player_0')} | "
                    f"{'' if opt is None else f'{opt:.1f}'} |"
                )
    info = [
        f"{c['algo']} {c['game']} vs {c['partner']}: {c['steps']} steps, {c['train_s']:.0f} s"
        for c in cells
    ]
    return "\n".join(lines) + "\n\nTraining runs: " + "; ".join(info) + "\n"


def main() -> int:
    """Command line (see the module docstring)."""
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    p.add_argument("--algos", nargs="+", default=["ppo", "mappo"], choices=["ppo", "mappo"])
    p.add_argument("--steps", type=int, default=300_000)
    p.add_argument("--episodes", type=int, default=200, help="evaluation episodes per partner")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/matrix_report")
    p.add_argument("--rmax", default="docs/results/paper004_rmax.md")
    p.add_argument("--report-only", action="store_true")
    p.add_argument("--markdown", help="also write the table here")
    a = p.parse_args()
    out = Path(a.out)
    if not a.report_only:
        run_cells(a.algos, a.steps, a.episodes, out, a.seed)
    table = report(out, Path(a.rmax))
    print(table)
    if a.markdown:
        Path(a.markdown).write_text(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
