"""The report of a run: markdown tables, PNG plots and a JSON of every figure.

Sections (each only when the config asks for it):

* **Matchups** — per seat mean return with 95% intervals, episode length, invalid actions and ToM
  probe accuracy.
* **Cross-play** — per game, the focal agent's (team) return with every partner, as a table and a
  heat map (``crossplay_<game>.png``).
* **Functional vs literal ToM** — per game, each agent's return against each member of a partner
  population beside the best response to that member: *exact* where the game computes it (the
  matrix games' dynamic programme over the partner's policy, the ``optimal_return`` metric),
  otherwise the *best known* return, the best of the evaluated agents against that member. The
  gap is the functional regret (per episode and per step). Beside it, the same agent's literal ToM:
  its next-action prediction accuracy (``tom_accuracy``) or its probe accuracy (``probe_acc/all``).
  Regret curves over the horizon (``regret_<game>.png``) plot the cumulative return gap to the
  best known agent against each member, step by step.
* **Paper tables** — the markdown of the experiment functions the config names.
* **Learning curves** — plots of training CSVs (``learning_curves.png``).
* **Failed episodes** — cell, seed and reason; they are retried by the next run.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tom_envs.evaluation.config import Cell
from tom_envs.runner import Episode, mean_ci95

Stat = tuple[float, float]


def _fmt(v: Stat | float | None, digits: int = 2) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, tuple):
        m, h = v
        if math.isnan(m):
            return "n/a"
        return f"{m:.{digits}f}" if math.isnan(h) else f"{m:.{digits}f} ± {h:.{digits}f}"
    return "n/a" if math.isnan(v) else f"{v:.{digits}f}"


def focal_return(ep: Episode, seats: Sequence[int]) -> float:
    """Mean return of the given seats (a team's return in team games)."""
    agents = list(ep.returns)
    return float(np.mean([ep.returns[agents[s]] for s in seats]))


def cumulative_curve(ep: Episode, seats: Sequence[int]) -> np.ndarray:
    """The seats' mean cumulative return after each joint step."""
    agents = list(ep.returns)
    names = [agents[s] for s in seats]
    rewards = [
        float(np.mean([st["rewards"][a] for a in names])) for st in ep.steps if st.get("rewards")
    ]
    return np.cumsum(rewards) if rewards else np.zeros(1)


def _metric(eps: Sequence[Episode], key: str) -> Stat | None:
    vals = [float(e.metrics[key]) for e in eps if isinstance(e.metrics.get(key), (int, float))]
    return mean_ci95(vals) if vals and len(vals) == len(eps) else None


# --------------------------------------------------------------------------- figures
def crossplay_matrix(
    res: Any, game: str, agents: Sequence[str]
) -> tuple[list[str], dict[tuple[str, str], Stat]]:
    """Agents and ``{(focal, partner): (mean, ci)}`` of the focal seats' return on one game."""
    agents = list(agents)
    out: dict[tuple[str, str], Stat] = {}
    for cell in res.cells:
        if (
            cell.section == "crossplay"
            and cell.game.label == game
            and cell.focal in agents
            and cell.partner in agents
        ):
            eps = res.episodes.get(cell.id, [])
            if eps:
                out[(cell.focal, cell.partner)] = mean_ci95(
                    focal_return(e, cell.game.focal_seats) for e in eps
                )
    return agents, out


def functional_tom(res: Any, game: str, ft: Mapping[str, Any]) -> dict[str, Any]:
    """Returns, best responses, regrets and literal ToM for one game (see the module docs)."""
    cells = [
        c
        for c in res.cells
        if c.section == "functional_tom" and c.game.label == game and c.focal in ft["agents"]
    ]
    members = list(dict.fromkeys(c.partner for c in cells))
    ret: dict[tuple[str, str], Stat] = {}
    exact: dict[str, list[float]] = {}
    length: dict[tuple[str, str], float] = {}
    literal: dict[tuple[str, str], tuple[str, Stat] | None] = {}
    curves: dict[tuple[str, str], np.ndarray] = {}
    for c in cells:
        eps = res.episodes.get(c.id, [])
        if not eps:
            continue
        key = (c.focal, c.partner)
        ret[key] = mean_ci95(focal_return(e, c.game.focal_seats) for e in eps)
        length[key] = float(np.mean([e.length for e in eps]))
        opt = _metric(eps, "optimal_return")
        if opt is not None:
            exact.setdefault(c.partner, []).extend(float(e.metrics["optimal_return"]) for e in eps)
        lit = None
        for name in ("tom_accuracy", "probe_acc/all"):
            v = _metric(eps, name)
            if v is not None:
                lit = (name, v)
                break
        literal[key] = lit
        cs = [cumulative_curve(e, c.game.focal_seats) for e in eps]
        t = max(len(x) for x in cs)
        curves[key] = np.mean([np.pad(x, (0, t - len(x)), mode="edge") for x in cs], axis=0)
    best: dict[str, tuple[float, str]] = {}
    for m in members:
        if m in exact:
            best[m] = (float(np.mean(exact[m])), "exact")
        else:
            cands = [(ret[(a, m)][0], a) for a in ft["agents"] if (a, m) in ret]
            if cands:
                v, who = max(cands)
                best[m] = (v, f"best known ({who})")
    rows = []
    for a in ft["agents"]:
        for m in members:
            if (a, m) not in ret or m not in best:
                continue
            regret = best[m][0] - ret[(a, m)][0]
            rows.append(
                {
                    "agent": a,
                    "partner": m,
                    "return": ret[(a, m)],
                    "best": best[m][0],
                    "best_kind": best[m][1],
                    "regret": regret,
                    "regret_per_step": regret / max(length[(a, m)], 1.0),
                    "literal": literal.get((a, m)),
                }
            )
    regret_curves: dict[str, np.ndarray] = {}
    for a in ft["agents"]:
        gaps = []
        for m in members:
            if (a, m) not in curves:
                continue
            best_agent = max(
                (x for x in ft["agents"] if (x, m) in ret), key=lambda x: ret[(x, m)][0]
            )
            ref, mine = curves[(best_agent, m)], curves[(a, m)]
            t = max(len(ref), len(mine))
            ref = np.pad(ref, (0, t - len(ref)), mode="edge")
            mine = np.pad(mine, (0, t - len(mine)), mode="edge")
            gaps.append(ref - mine)
        if gaps:
            t = max(len(g) for g in gaps)
            regret_curves[a] = np.mean(
                [np.pad(g, (0, t - len(g)), mode="edge") for g in gaps], axis=0
            )
    return {"members": members, "rows": rows, "best": best, "curves": regret_curves}


# --------------------------------------------------------------------------- plots
def _plt() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # plots are optional: the tables are the report
        return None
    return plt


def heatmap(
    path: Path, agents: Sequence[str], values: Mapping[tuple[str, str], Stat], title: str
) -> Path | None:
    """A focal x partner heat map of mean returns."""
    plt = _plt()
    if plt is None:
        return None
    grid = np.full((len(agents), len(agents)), np.nan)
    for (a, b), (m, _) in values.items():
        grid[agents.index(a), agents.index(b)] = m
    fig, ax = plt.subplots(figsize=(1.2 + 0.9 * len(agents), 1.0 + 0.8 * len(agents)))
    im = ax.imshow(grid, cmap="viridis")
    ax.set_xticks(range(len(agents)), agents, rotation=45, ha="right")
    ax.set_yticks(range(len(agents)), agents)
    ax.set_xlabel("partner")
    ax.set_ylabel("focal agent")
    for i in range(len(agents)):
        for j in range(len(agents)):
            if not math.isnan(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.1f}", ha="center", va="center", color="w", fontsize=8)
    fig.colorbar(im, ax=ax)
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def line_plot(path: Path, series: Mapping[str, np.ndarray], title: str, xlabel: str, ylabel: str,
              x: Mapping[str, np.ndarray] | None = None) -> Path | None:  # fmt: skip
    """Curves by label."""
    plt = _plt()
    if plt is None or not series:
        return None
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for label, y in series.items():
        xs = x[label] if x is not None else np.arange(1, len(y) + 1)
        ax.plot(xs, y, label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def read_curve(
    csv_path: str | Path, xcol: str, ycols: Sequence[str]
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Columns of a training ``curve.csv`` (rows lacking a column are skipped for it)."""
    import csv

    with open(csv_path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    out = {}
    for y in ycols:
        pts = [
            (float(r[xcol]), float(r[y]))
            for r in rows
            if r.get(y) not in (None, "") and r.get(xcol)
        ]
        if pts:
            xs, ys = zip(*pts, strict=True)
            out[y] = (np.asarray(xs), np.asarray(ys))
    return out


# --------------------------------------------------------------------------- report
def _seat_table(res: Any, cells: Sequence[Cell]) -> list[str]:
    paper = res.config.paper
    lines = ["| game | seats | episodes | returns per seat | length | invalid | valid % | fallback % "
             "| probe acc % | paper |", "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for c in cells:
        eps = res.episodes.get(c.id, [])
        if not eps:
            lines.append(
                f"| {c.game.label} | {' / '.join(x.lstrip('=') for x in c.labels)} | 0 | | | | | | | |"
            )
            continue
        agents = list(eps[0].returns)
        rets = " / ".join(_fmt(mean_ci95(e.returns[a] for e in eps)) for a in agents)
        inv = " / ".join(f"{np.mean([e.invalid[a] for e in eps]):.1f}" for a in agents)
        probe = _metric(eps, "probe_acc/all")
        valid, fallback = decision_shares(eps)
        lines.append(
            f"| {c.game.label} | {' / '.join(x.lstrip('=') for x in c.labels)} | {len(eps)} | {rets} | "
            f"{_fmt(mean_ci95(e.length for e in eps), 1)} | {inv} | "
            f"{' / '.join(f'{valid[a]:.1f}' for a in agents)} | "
            f"{' / '.join(f'{fallback[a]:.1f}' for a in agents)} | {_fmt(probe, 1)} | "
            f"{paper.get(c.id, '')} |"
        )
    return lines


def decision_shares(eps: Sequence[Episode]) -> tuple[dict[str, float], dict[str, float]]:
    """Per seat, over all decisions of the episodes: valid-action % and fallback %."""
    valid: dict[str, list[int]] = {}
    for e in eps:
        for a in e.returns:
            n = e.decisions.get(a)
            if n is None:  # a schema 1 trajectory: count from its steps
                mine = [s for s in e.steps if s["agent"] == a]
                n, bad = len(mine), sum(not s.get("valid", True) for s in mine)
            else:
                bad = e.fallbacks.get(a, 0)
            t = valid.setdefault(a, [0, 0])
            t[0] += n
            t[1] += bad
    pct_valid = {a: 100.0 * (n - b) / n if n else float("nan") for a, (n, b) in valid.items()}
    pct_fb = {a: 100.0 * b / n if n else float("nan") for a, (n, b) in valid.items()}
    return pct_valid, pct_fb


def _decisions_table(res: Any) -> list[str]:
    """Every cell's valid-action % and fallback % per seat, and the failure kinds."""
    lines = ["| cell | episodes | valid % per seat | fallback % per seat | failures by kind |",
             "|---|---|---|---|---|"]  # fmt: skip
    for c in res.cells:
        eps = res.episodes.get(c.id, [])
        if not eps:
            continue
        agents = list(eps[0].returns)
        valid, fallback = decision_shares(eps)
        kinds: dict[str, int] = {}
        for e in eps:
            for per in e.failures.values():
                for k, v in per.items():
                    kinds[k] = kinds.get(k, 0) + v
        lines.append(
            f"| {c.id} | {len(eps)} | {' / '.join(f'{valid[a]:.1f}' for a in agents)} | "
            f"{' / '.join(f'{fallback[a]:.1f}' for a in agents)} | "
            f"{', '.join(f'{k} {v}' for k, v in sorted(kinds.items())) or '-'} |"
        )
    return lines


def _demote(markdown: str) -> str:
    return "\n".join(
        ("##" + line) if line.startswith("#") else line for line in markdown.splitlines()
    )


def table_markdown(res: Any, entry: Mapping[str, Any]) -> str:
    """One ``[[tables]]`` entry's markdown, rendered from the episodes its cells played in this
    run (or resumed from disk); nothing is replayed."""
    from tom_envs.experiments.tables import episodes_by_key, get_table

    kwargs = entry.get("kwargs", {})
    table = get_table(entry["table"])
    cells = table.cells(**kwargs)
    played = episodes_by_key(cells, res.tables.get(entry["table"], {}))
    missing = [c.key for c in cells if len(played[c.key]) < c.episodes]
    if missing:  # failed episodes: the table would rest on fewer seeds than it says
        return (f"Not rendered: {len(missing)} cell(s) lack episodes that failed "
                f"({', '.join(missing[:5])}); see Failed episodes and run the config again.")  # fmt: skip
    return table.render(played, **kwargs)


def table_section(res: Any, entry: Mapping[str, Any]) -> list[str]:
    """The report section of one ``[[tables]]`` entry."""
    from tom_envs.experiments.tables import get_table

    title = entry.get("title") or get_table(entry["table"]).title
    source = (f"Table `{entry['table']}` with {entry.get('kwargs', {})}, rendered from the "
              "episodes of its cells in this run.")  # fmt: skip
    return [f"## {title}", "", source, "", _demote(table_markdown(res, entry))]


def write_report(res: Any, out: Path, command: str = "") -> Path:
    """Write ``report.md``, ``results.json`` and plots into ``out``; return the report's path."""
    cfg = res.config
    out.mkdir(parents=True, exist_ok=True)
    figures: dict[str, Any] = {"name": cfg.name, "episodes_per_cell": cfg.episodes, "cells": {}}
    lines = [f"# Evaluation: {cfg.name}", ""]
    if cfg.description:
        lines += [cfg.description, ""]
    lines += [
        f"Config: `{cfg.source}`. Command: `{command or 'tom-envs eval ' + str(cfg.source)}`. "
        f"Backend: {res.backend}. Episodes per cell: {cfg.episodes} (seeds {cfg.seed}.."
        f"{cfg.seed + cfg.episodes - 1}). Intervals are 95% (1.96 standard errors). "
        f"Episodes played now: {res.played}; loaded from an earlier run: {res.resumed}; "
        f"failed: {len(res.failures)}. Wall time: {res.wall_time_s:.1f} s.",
        "",
    ]
    for c in res.cells:
        eps = res.episodes.get(c.id, [])
        figures["cells"][c.id] = {
            "game": c.game.game,
            "seats": list(c.labels),
            "episodes": len(eps),
            "returns": {
                a: mean_ci95(e.returns[a] for e in eps) for a in (eps[0].returns if eps else {})
            },
        }
        if eps:
            valid, fallback = decision_shares(eps)
            figures["cells"][c.id]["valid_action_pct"] = valid
            figures["cells"][c.id]["fallback_pct"] = fallback
    lines += ["## Decisions: valid actions and fallbacks", "",
              "A fallback is a seeded random legal action played for an agent that failed to "
              f"decide (never counted as its own); an episode where a seat fell back on more than "
              f"{100 * cfg.max_fallback_share:.0f}% of its decisions is failed and left out.", "",
              *_decisions_table(res), ""]  # fmt: skip
    matchups = [c for c in res.cells if c.section == "matchups"]
    if matchups:
        lines += ["## Matchups", "", *_seat_table(res, matchups), ""]
    if cfg.crossplay:
        lines += ["## Cross-play", "", "The focal agent (rows) in its seats, the partner (columns) "
                  "in the partner seats; mean (team) return of the focal seats.", ""]  # fmt: skip
        figures["crossplay"] = {}
        for sec, g in [(c, g) for c in cfg.crossplay for g in c["games"]]:
            agents, vals = crossplay_matrix(res, g, sec["agents"])
            entry = cfg.games[g]
            lines += [f"### {g} (focal seats {list(entry.focal_seats)}, partner seats "
                      f"{list(entry.partner_seats)}{', others: ' + entry.others if entry.others else ''})", ""]  # fmt: skip
            lines.append("| focal \\ partner | " + " | ".join(agents) + " |")
            lines.append("|---|" + "---|" * len(agents))
            for a in agents:
                lines.append(
                    f"| {a} | " + " | ".join(_fmt(vals.get((a, b))) for b in agents) + " |"
                )
            png = heatmap(out / f"crossplay_{g}.png", agents, vals, f"cross-play: {g}")
            if png is not None:
                lines += ["", f"![cross-play {g}]({png.name})"]
            lines.append("")
            figures["crossplay"][g] = {f"{a}|{b}": v for (a, b), v in vals.items()}
    if cfg.functional_tom:
        lines += ["## Functional vs literal ToM", "",
                  "Each agent against each member of a partner population. *Best* is "
                  "the best response's return to that member: exact where the game computes it, "
                  "else the best of the evaluated agents (named). Regret = best − return (per "
                  "episode and per step). Literal ToM: next-action prediction accuracy "
                  "(`tom_accuracy`) or ToM probe accuracy (`probe_acc/all`) of the same episodes.",
                  ""]  # fmt: skip
        figures["functional_tom"] = {}
        for ft, g in [(f, g) for f in cfg.functional_tom for g in f["games"]]:
            data = functional_tom(res, g, ft)
            lines += [f"### {g} (population `{ft['population']}`)", "", "| agent | partner | return | best | best is | regret | regret/step | literal ToM |",
                      "|---|---|---|---|---|---|---|---|"]  # fmt: skip
            for r in data["rows"]:
                lit = r["literal"]
                lit_s = f"{_fmt(lit[1], 1)} ({lit[0]})" if lit else "n/a (no predictions or probes)"
                lines.append(
                    f"| {r['agent']} | {r['partner']} | {_fmt(r['return'])} | {r['best']:.2f} | "
                    f"{r['best_kind']} | {r['regret']:.2f} | {r['regret_per_step']:.4f} | {lit_s} |"
                )
            lines += [
                "",
                "| agent | mean regret/step over partners | mean literal ToM |",
                "|---|---|---|",
            ]
            for a in ft["agents"]:
                rs = [r for r in data["rows"] if r["agent"] == a]
                if not rs:
                    continue
                lits = [r["literal"][1][0] for r in rs if r["literal"]]
                lines.append(f"| {a} | {np.mean([r['regret_per_step'] for r in rs]):.4f} | "
                             f"{_fmt(float(np.mean(lits)), 1) if lits else 'n/a'} |")  # fmt: skip
            png = line_plot(out / f"regret_{g}.png", data["curves"], f"cumulative return gap to the best known agent: {g}",
                            "joint step", "regret (cumulative)")  # fmt: skip
            if png is not None:
                lines += ["", f"![regret {g}]({png.name})"]
            lines.append("")
            figures["functional_tom"][g] = [{k: v for k, v in r.items()} for r in data["rows"]]
    for t in cfg.tables:
        lines += [*table_section(res, t), ""]
    if cfg.learning_curves:
        series, xs = {}, {}
        for lc in cfg.learning_curves:
            curves = read_curve(lc["csv"], lc.get("x", "global_step"), lc.get("y", ["return_mean"]))
            for y, (x, v) in curves.items():
                label = f"{lc.get('label', Path(lc['csv']).parent.name)}: {y}"
                series[label], xs[label] = v, x
        png = line_plot(
            out / "learning_curves.png", series, "learning curves", "env steps", "value", xs
        )
        lines += ["## Learning curves", ""]
        lines += (
            [f"![learning curves]({png.name})"]
            if png is not None
            else ["(matplotlib not installed)"]
        )
        lines.append("")
    if res.failures:
        lines += ["## Failed episodes", "", "Retried by the next run of the same config.", "",
                  "| cell | seed | reason |", "|---|---|---|"]  # fmt: skip
        for f in res.failures:
            lines.append(
                f"| {f.job.cell_id} | {f.job.seed} | {str(f.error).replace('|', '/')[:300]} |"
            )
        lines.append("")
        figures["failed"] = [
            {"cell": f.job.cell_id, "seed": f.job.seed, "error": f.error} for f in res.failures
        ]
    report = out / "report.md"
    report.write_text("\n".join(lines))
    (out / "results.json").write_text(json.dumps(figures, indent=1, default=str))
    return report
