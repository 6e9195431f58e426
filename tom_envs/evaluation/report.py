"""The report of a run: markdown tables, PNG plots and a JSON of every figure.

Sections (each only when the config asks for it):

* **Matchups** — per seat mean return with 95% intervals, episode length, invalid actions and ToM
  probe accuracy.
* **Cross-play** — per game, the focal agent's (team) return with every partner, as a table and a
  heat map (``crossplay_<game>.png``).
* **Functional vs literal ToM** — per game, each agent's return against each member of a partner
  population beside a reference to that member that never depends on which agents were evaluated
  (:mod:`tom_envs.evaluation.references`): *exact* where the game computes it (the matrix games'
  dynamic programme over the partner's policy, the ``optimal_return`` metric; the solvers of
  :func:`tom_envs.references.reference_for`), a *bracket* where the solver bounds it, a
  *lower bound* (the best of the section's declared ``candidates``, chosen on ``selection_seeds``
  disjoint from the evaluation seeds), otherwise ``n/a`` (no regret printed). The gap is the
  functional regret (per episode with a paired 95% bootstrap interval, and per step). Beside it,
  the same agent's literal ToM: its next-action prediction accuracy (``tom_accuracy``) or its
  probe accuracy (``probe_acc/all``). Regret curves over the horizon (``regret_<game>.png``) are
  drawn only against exact per-step optima (the matrix games): the value lost by round t,
  ``V_T(s_1) - (R_t + V_{T-t}(s_t))``, averaged over the members, so the last point of each curve
  is exactly the table's mean regret.
* **Paper tables** — the markdown of the experiment functions the config names.
* **Learning curves** — plots of training CSVs (``learning_curves.png``).
* **Failed episodes** — cell, seed and reason; they are retried by the next run.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tom_envs.evaluation.config import Cell
from tom_envs.evaluation.plots import heatmap, line_plot, read_curve
from tom_envs.evaluation.references import (
    PairReference,
    candidate_reference,
    solver_reference,
    trained_spec,
)
from tom_envs.partners.regret import episode_regret
from tom_envs.records import Episode, mean_ci95

Stat = tuple[float, float]


def format_stat(
    v: Stat | float | None, digits: int = 2, missing: str = "n/a", bare_zero: bool = False
) -> str:
    """A table cell: ``m ± h`` for a (mean, 95% half-width) pair (``m`` alone when the half-width
    is NaN, or zero with ``bare_zero``), a plain value to ``digits`` decimals, ``missing`` for
    ``None`` or NaN."""
    if v is None:
        return missing
    if isinstance(v, tuple):
        m, h = v
        if math.isnan(m):
            return missing
        bare = math.isnan(h) or (bare_zero and h == 0)
        return f"{m:.{digits}f}" if bare else f"{m:.{digits}f} ± {h:.{digits}f}"
    return missing if math.isnan(v) else f"{v:.{digits}f}"


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


#: The env module of the games whose episodes carry an exact optimum (``optimal_return``).
_EXACT_MODULE = "tom_envs.games.matrix.env"


def exact_regret_curve(ep: Episode) -> np.ndarray | None:
    """The value the focal seat has lost against the exact optimum by each round.

    ``L_t = V_T(s_1) - (R_t + V_{T-t}(s_t))``: the optimal return of the episode minus the return
    collected in the first ``t`` rounds and the optimal value of the rest from the partner state
    those rounds led to (dynamic programming over the partner's policy,
    :mod:`tom_envs.games.matrix.planner`). ``L_0 = 0`` and ``L_T`` is the episode's regret
    ``optimal_return - return``. ``None`` for an episode of a game without an exact optimum.
    """
    if "optimal_return" not in ep.metrics or "focal_player" not in ep.metrics:
        return None
    from tom_envs.registration import game_spec

    spec = game_spec(ep.env_id)
    if spec.module != _EXACT_MODULE:
        return None
    from tom_envs.games.matrix.metrics import solver_for

    focal = int(ep.metrics["focal_player"])
    me, other = f"player_{focal}", f"player_{1 - focal}"
    partner = ep.members.get(other) or ep.agents[other].split("=", 1)[-1]
    config = spec.load().make_bundle(**{**spec.kwargs, **ep.env_kwargs}).game.config
    try:
        solver = solver_for(config, partner, focal)
    except KeyError:  # a partner that is no finite-state bot (an older file without members)
        return None  # the plot then says its curve is relative ("mixed" or "best known")
    mine = [s["action"] for s in ep.steps if s["agent"] == me]
    theirs = [s["action"] for s in ep.steps if s["agent"] == other]
    history = list(zip(mine, theirs, strict=True))
    t_total = len(history)
    best = solver.optimal_return(t_total)
    state, collected, lost = solver.partner.initial_state(), 0.0, []
    for t, (a, b) in enumerate(history, start=1):
        collected += float(solver.matrix[a, b])
        state = solver.partner.next_state(state, b, a)
        lost.append(best - collected - solver.value(t_total - t, state))
    return np.asarray(lost)


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


@dataclass
class _CellStats:
    """Per (agent, partner) cell of a functional-ToM table: what its episodes measured."""

    ret: dict[tuple[str, str], Stat] = field(default_factory=dict)
    exact: dict[str, list[float]] = field(default_factory=dict)  # per partner: exact optima
    length: dict[tuple[str, str], float] = field(default_factory=dict)
    literal: dict[tuple[str, str], tuple[str, Stat] | None] = field(default_factory=dict)
    curves: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    exact_curves: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)


def _cell_stats(res: Any, cells: Sequence[Any]) -> _CellStats:
    """Returns, lengths, exact optima, literal ToM and return curves of each cell."""
    st = _CellStats()
    for c in cells:
        eps = res.episodes.get(c.id, [])
        if not eps:
            continue
        key = (c.focal, c.partner)
        st.ret[key] = mean_ci95(focal_return(e, c.game.focal_seats) for e in eps)
        st.length[key] = float(np.mean([e.length for e in eps]))
        opt = _metric(eps, "optimal_return")
        if opt is not None:
            st.exact.setdefault(c.partner, []).extend(
                float(e.metrics["optimal_return"]) for e in eps
            )
        lit = None
        for name in ("tom_accuracy", "probe_acc/all"):
            v = _metric(eps, name)
            if v is not None:
                lit = (name, v)
                break
        st.literal[key] = lit
        st.curves[key] = _mean_padded([cumulative_curve(e, c.game.focal_seats) for e in eps])
        if opt is not None:
            lost = [exact_regret_curve(e) for e in eps]
            if all(x is not None for x in lost):
                st.exact_curves[key] = _mean_padded(lost)  # type: ignore[arg-type]
    return st


def _objective(game: Any) -> Any:
    """The game's functional objective ``U`` (None for a game that declares none)."""
    hook = getattr(game.spec.load(), "functional_objective", None)
    return hook(**{**game.spec.kwargs, **game.kwargs}) if hook is not None else None


def _u_by_seed(eps: Sequence[Episode], game: Any, objective: Any) -> dict[int, float]:
    """Per episode seed, the focal seats' ``U`` (their mean return for a game without one)."""
    seats = game.focal_seats
    if objective is None:
        return {int(e.seed): focal_return(e, seats) for e in eps}
    return {int(e.seed): float(objective(e, seats)) for e in eps}


def _reference(
    res: Any, cells: Sequence[Any], member: str, ft: Mapping[str, Any], objective: Any
) -> PairReference | None:
    """The reference of one partner: exact from the episodes' own optimum (matrix games), else
    the solver's, else the declared candidates' lower bound, else None. Never an evaluated
    agent's return (:mod:`tom_envs.evaluation.references`)."""
    mine = [c for c in cells if c.partner == member]
    eps = [e for c in mine for e in res.episodes.get(c.id, [])]
    if not eps:
        return None
    seeds = sorted({int(e.seed) for e in eps})
    if all(isinstance(e.metrics.get("optimal_return"), (int, float)) for e in eps):
        values = {int(e.seed): float(e.metrics["optimal_return"]) for e in eps}
        return PairReference("exact", values, "dynamic programme over the partner's policy")
    game = mine[0].game
    if len(game.focal_seats) == 1 and len(game.partner_seats) == game.num_players - 1:
        ref = solver_reference(game.game, member, game.focal_seats[0], seeds,
                               {**game.spec.kwargs, **game.kwargs})  # fmt: skip
        if ref is not None:
            return ref
    candidates = list(ft.get("candidates") or [])
    trained = None
    if len(game.focal_seats) == 1:  # a cached trained best response for this configuration
        trained = trained_spec(game.game, member, game.focal_seats[0],
                               {**game.spec.kwargs, **game.kwargs})  # fmt: skip
    if not candidates and trained is None:
        return None
    from tom_envs.agents import make_agent
    from tom_envs.runner import play_episode

    def play(candidate: str, on: Sequence[int]) -> dict[int, float]:
        seats = game.seating(candidate, f"={member}")
        out = {}
        for s in on:
            agents = [make_agent(x.lstrip("="), game.spec) for x in seats]
            out[int(s)] = _u_by_seed([play_episode(game.spec, agents, int(s), game.kwargs)],
                                     game, objective)[int(s)]  # fmt: skip
        return out

    return candidate_reference(play, candidates, ft.get("selection_seeds") or [], seeds, trained)


def functional_tom(res: Any, game: str, ft: Mapping[str, Any]) -> dict[str, Any]:
    """Returns, references, regrets and literal ToM for one game (see the module docs).

    The reference of each partner never depends on which agents were evaluated: exact where the
    game computes it, else the solver's bracket, else the best *declared* candidate chosen on
    selection seeds disjoint from the evaluation seeds (a lower bound), else none (``n/a``: no
    regret is printed for that partner)."""
    cells = [
        c
        for c in res.cells
        if c.section == "functional_tom" and c.game.label == game and c.focal in ft["agents"]
    ]
    members = list(dict.fromkeys(c.partner for c in cells))
    st = _cell_stats(res, cells)
    objective = _objective(cells[0].game) if cells else None
    refs = {m: _reference(res, cells, m, ft, objective) for m in members}
    best = {m: (r.mean, r.kind, r.source) for m, r in refs.items() if r is not None}
    rows = []
    for c in cells:
        eps = res.episodes.get(c.id, [])
        a, m = c.focal, c.partner
        ref = refs.get(m)
        if not eps or (a, m) not in st.ret:
            continue
        row: dict[str, Any] = {"agent": a, "partner": m, "return": st.ret[(a, m)],
                               "literal": st.literal.get((a, m)), "best": None,
                               "best_kind": "n/a", "regret": None, "regret_ci": None,
                               "regret_per_step": None}  # fmt: skip
        if ref is not None:
            mine = _u_by_seed(eps, c.game, objective)
            reg = episode_regret({s: ref.values[s] for s in mine}, mine, seed=len(rows))
            regret = reg["per_episode"][0]
            row.update(best=ref.mean, best_kind=ref.kind, regret=regret,
                       regret_ci=reg["per_episode"],
                       regret_per_step=regret / max(st.length[(a, m)], 1.0))  # fmt: skip
        rows.append(row)
    regret_curves, curve_kind = _regret_curves(ft["agents"], members, best, st)
    return {"members": members, "rows": rows, "best": best, "references": refs,
            "curves": regret_curves, "curve_kind": curve_kind}  # fmt: skip


def _regret_curves(
    agents: Sequence[str],
    members: Sequence[str],
    best: Mapping[str, tuple[float, str, str]],
    st: _CellStats,
) -> tuple[dict[str, np.ndarray], str]:
    """Each agent's regret curve against the exact optimum, averaged over the partners whose
    reference is exact (each curve then ends at the table's regret); ``"none"`` when no partner
    has an exact per-step optimum (no curve is drawn against anything else)."""
    regret_curves: dict[str, np.ndarray] = {}
    for a in agents:
        gaps = [st.exact_curves[(a, m)] for m in members
                if m in best and best[m][1] == "exact" and (a, m) in st.exact_curves]  # fmt: skip
        if gaps:
            regret_curves[a] = _mean_padded(gaps)
    return regret_curves, "exact" if regret_curves else "none"


def _mean_padded(curves: Sequence[np.ndarray]) -> np.ndarray:
    """The mean of curves of unequal length, each held at its last value past its end."""
    t = max(len(x) for x in curves)
    return np.mean([np.pad(x, (0, t - len(x)), mode="edge") for x in curves], axis=0)


# --------------------------------------------------------------------------- report
def _seat_table(res: Any, cells: Sequence[Cell]) -> list[str]:
    """Per matchup: returns, length in joint steps, and the game's own ``rounds`` (the unit of the
    papers' tables, e.g. bomb defusal's round of the last defusal) where the game records it."""
    paper = res.config.paper
    with_rounds = any(_metric(res.episodes.get(c.id, []), "rounds") for c in cells)
    rounds_head = " rounds |" if with_rounds else ""
    lines = [f"| game | seats | episodes | returns per seat | length (joint steps) |{rounds_head} "
             "invalid | valid % | fallback % | probe acc % | paper |",
             "|---|---|---|---|---|" + "---|" * (6 if with_rounds else 5)]  # fmt: skip
    for c in cells:
        eps = res.episodes.get(c.id, [])
        if not eps:
            lines.append(f"| {c.game.label} | {' / '.join(x.lstrip('=') for x in c.labels)} | 0 |"
                         + " |" * (8 if with_rounds else 7))  # fmt: skip
            continue
        agents = list(eps[0].returns)
        rets = " / ".join(format_stat(mean_ci95(e.returns[a] for e in eps)) for a in agents)
        inv = " / ".join(f"{np.mean([e.invalid[a] for e in eps]):.1f}" for a in agents)
        probe = _metric(eps, "probe_acc/all")
        rounds = f" {format_stat(_metric(eps, 'rounds'), 1)} |" if with_rounds else ""
        valid, fallback = decision_shares(eps)
        lines.append(
            f"| {c.game.label} | {' / '.join(x.lstrip('=') for x in c.labels)} | {len(eps)} | {rets} | "
            f"{format_stat(mean_ci95(e.length for e in eps), 1)} |{rounds} {inv} | "
            f"{' / '.join(f'{valid[a]:.1f}' for a in agents)} | "
            f"{' / '.join(f'{fallback[a]:.1f}' for a in agents)} | {format_stat(probe, 1)} | "
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
    from tom_envs.evaluation.tables import episodes_by_key, get_table

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
    from tom_envs.evaluation.tables import get_table

    title = entry.get("title") or get_table(entry["table"]).title
    source = (f"Table `{entry['table']}` with {entry.get('kwargs', {})}, rendered from the "
              "episodes of its cells in this run.")  # fmt: skip
    return [f"## {title}", "", source, "", _demote(table_markdown(res, entry))]


def _episode_counts(res: Any, section: str, game: str, agents: Sequence[str]) -> str:
    """The number of episodes per cell of a section's figure ("3", or "2-3" when some failed)."""
    counts = [len(res.episodes.get(c.id, [])) for c in res.cells
              if c.section == section and c.game.label == game and c.focal in agents]  # fmt: skip
    lo, hi = min(counts, default=0), max(counts, default=0)
    return str(lo) if lo == hi else f"{lo}-{hi}"


def _regret_words(game: str, members: int, n: str) -> tuple[str, str]:
    """Title and caption of a regret plot (always against the exact optimum)."""
    title = f"{game}: regret to the exact optimum, mean over {members} partners x {n} episodes"
    caption = (f"*Regret accumulated step by step against the exact optimum (dynamic programming "
               f"over the partner's policy), averaged over the {members} partners with an exact "
               f"reference, {n} episodes each. The last point of each curve is the agent's mean "
               "regret over those partners in the table.*")  # fmt: skip
    return title, caption


def shown_path(path: str | None) -> str | None:
    """``path`` as a page shows it: relative to the working folder when it lies inside it (a
    results page names ``experiments/configs/x.toml``, not one machine's checkout)."""
    if not path:
        return path
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path


def write_report(res: Any, out: Path, command: str = "") -> Path:
    """Write ``report.md``, ``results.json`` and plots into ``out``; return the report's path."""
    cfg = res.config
    out.mkdir(parents=True, exist_ok=True)
    figures: dict[str, Any] = {"name": cfg.name, "episodes_per_cell": cfg.episodes, "cells": {}}
    lines = [f"# Evaluation: {cfg.name}", ""]
    if cfg.description:
        lines += [cfg.description, ""]
    source = shown_path(cfg.source)
    lines += [
        f"Config: `{source}`. Command: `{command or 'tom-envs eval ' + str(source)}`. "
        f"Backend: {res.backend}. Episodes per cell: {cfg.episodes} (seeds {cfg.seed}.."
        f"{cfg.seed + cfg.episodes - 1}). Intervals are 95% (1.96 standard errors). "
        f"Episodes played now: {res.played}; loaded from an earlier run: {res.resumed}; "
        f"failed: {len(res.failures)}. Wall time: {res.wall_time_s:.1f} s.",
        "",
    ]
    figures["cells"] = _cell_figures(res)
    stopped = getattr(res, "budget_stopped", [])
    if stopped:
        lines += [f"**Stopped at the budget:** {len(stopped)} episode(s) not played; run the same "
                  "command again to continue (answered model calls are in the run's response "
                  "cache and are not paid again).", ""]  # fmt: skip
    lines += ["## Decisions: valid actions and fallbacks", "",
              "A fallback is a seeded random legal action played for an agent that failed to "
              f"decide (never counted as its own); an episode where a seat fell back on more than "
              f"{100 * cfg.max_fallback_share:.0f}% of its decisions is failed and left out.", "",
              *_decisions_table(res), ""]  # fmt: skip
    from tom_envs.evaluation.cost import usage_section, usage_summary

    usage = usage_section(res)  # LLM calls, tokens, latency and cost per cell and in total
    if usage:
        lines += [*usage, ""]
        figures["usage"] = usage_summary(res)
    estimate = getattr(res, "estimate", None)
    if estimate and estimate.get("agents"):
        lines += [f"Estimated before the first call (a dry run, answers assumed valid): "
                  f"~{estimate['calls']:,.0f} calls and ~{estimate['prompt_tokens']:,.0f} prompt "
                  f"tokens for the {estimate['episodes']} episodes played now.", ""]  # fmt: skip
        figures["estimate"] = estimate
    matchups = [c for c in res.cells if c.section == "matchups"]
    if matchups:
        lines += ["## Matchups", "", *_seat_table(res, matchups), ""]
    if cfg.crossplay:
        lines += _crossplay_section(res, out, figures)
    if cfg.functional_tom:
        lines += _functional_tom_section(res, out, figures)
    for t in cfg.tables:
        lines += [*table_section(res, t), ""]
        from tom_envs.evaluation.tables import write_figures

        write_figures(t, res.tables.get(t["table"], {}), out / "report.md")  # the table's pictures
    if cfg.learning_curves:
        lines += _learning_curves_section(cfg, out)
    if res.failures:
        lines += _failures_section(res, figures)
    report = out / "report.md"
    report.write_text("\n".join(lines))
    (out / "results.json").write_text(json.dumps(figures, indent=1, default=str))
    return report


def _cell_figures(res: Any) -> dict[str, Any]:
    """Per cell: game, seats, episodes, returns and decision shares (``results.json``)."""
    cells: dict[str, Any] = {}
    for c in res.cells:
        eps = res.episodes.get(c.id, [])
        cells[c.id] = {
            "game": c.game.game,
            "seats": list(c.labels),
            "episodes": len(eps),
            "returns": {
                a: mean_ci95(e.returns[a] for e in eps) for a in (eps[0].returns if eps else {})
            },
        }
        if eps:
            valid, fallback = decision_shares(eps)
            cells[c.id]["valid_action_pct"] = valid
            cells[c.id]["fallback_pct"] = fallback
    return cells


def _crossplay_section(res: Any, out: Path, figures: dict[str, Any]) -> list[str]:
    """The cross-play matrices (tables and heatmaps) of every cross-play game."""
    cfg = res.config
    lines = ["## Cross-play", "", "The focal agent (rows) in its seats, the partner (columns) "
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
                f"| {a} | " + " | ".join(format_stat(vals.get((a, b))) for b in agents) + " |"
            )
        n = _episode_counts(res, "crossplay", g, agents)
        png = heatmap(out / f"crossplay_{g}.png", agents, vals,
                      f"cross-play: {g}, mean of {n} episodes per cell")  # fmt: skip
        if png is not None:
            lines += ["", f"![cross-play {g}]({png.name})", "",
                      f"*Cross-play on {g}: mean return of the focal seats (colour and "
                      f"number), {n} episodes per cell; the intervals are in the table.*"]  # fmt: skip
        lines.append("")
        figures["crossplay"][g] = {f"{a}|{b}": v for (a, b), v in vals.items()}
    return lines


def _regret_cell(r: Mapping[str, Any]) -> str:
    if r["regret_ci"] is None:
        return "n/a"
    m, lo, hi = r["regret_ci"]
    return f"{m:.2f} [{lo:.2f}, {hi:.2f}]"


def _functional_tom_section(res: Any, out: Path, figures: dict[str, Any]) -> list[str]:
    """The functional-vs-literal ToM tables and regret curves of every game."""
    cfg = res.config
    lines = ["## Functional vs literal ToM", "",
              "Each agent against each member of a partner population. *Reference* is the value "
              "of the best response to that member, never taken from the evaluated agents: exact "
              "where the game computes it, the lower end of a bracket where a solver bounds it, "
              "a lower bound where it is the best declared candidate (chosen on selection seeds "
              "disjoint from the evaluation seeds), else n/a (no regret). Regret = reference − "
              "U per episode (paired 95% bootstrap interval over seeds) and per step. Literal "
              "ToM: next-action prediction accuracy (`tom_accuracy`) or ToM probe accuracy "
              "(`probe_acc/all`) of the same episodes.", ""]  # fmt: skip
    figures["functional_tom"] = {}
    for ft, g in [(f, g) for f in cfg.functional_tom for g in f["games"]]:
        data = functional_tom(res, g, ft)
        lines += [f"### {g} (population `{ft['population']}`)", "",
                  "| agent | partner | return | reference | reference is | regret [95%] | "
                  "regret/step | literal ToM |", "|---|---|---|---|---|---|---|---|"]  # fmt: skip
        for r in data["rows"]:
            lit = r["literal"]
            lit_s = f"{format_stat(lit[1], 1)} ({lit[0]})" if lit else "n/a (no predictions or probes)"
            best = "n/a" if r["best"] is None else f"{r['best']:.2f}"
            per_step = "n/a" if r["regret_per_step"] is None else f"{r['regret_per_step']:.4f}"
            lines.append(
                f"| {r['agent']} | {r['partner']} | {format_stat(r['return'])} | {best} | "
                f"{r['best_kind']} | {_regret_cell(r)} | {per_step} | {lit_s} |"
            )
        sources = [f"{m}: {v[1]} ({v[2]})" for m, v in data["best"].items()]
        missing = [m for m in data["members"] if m not in data["best"]]
        lines += ["", "References: " + ("; ".join(sources) or "none") + "."
                  + (f" No reference (n/a): {', '.join(missing)}." if missing else "")]  # fmt: skip
        lines += [
            "",
            "| agent | mean regret/step over partners | mean regret over partners | mean literal ToM |",
            "|---|---|---|---|",
        ]  # fmt: skip
        for a in ft["agents"]:
            rs = [r for r in data["rows"] if r["agent"] == a and r["regret"] is not None]
            if not rs:
                continue
            lits = [r["literal"][1][0] for r in rs if r["literal"]]
            lines.append(f"| {a} | {np.mean([r['regret_per_step'] for r in rs]):.4f} | "
                         f"{np.mean([r['regret'] for r in rs]):.2f} | "
                         f"{format_stat(float(np.mean(lits)), 1) if lits else 'n/a'} |")  # fmt: skip
        n = _episode_counts(res, "functional_tom", g, ft["agents"])
        if data["curves"]:
            members = sum(1 for v in data["best"].values() if v[1] == "exact")
            title, caption = _regret_words(g, members, n)
            png = line_plot(out / f"regret_{g}.png", data["curves"], title, "round",
                            "cumulative regret (return)")  # fmt: skip
            if png is not None:
                lines += ["", f"![regret {g}]({png.name})", "", caption]
        lines.append("")
        figures["functional_tom"][g] = [dict(r) for r in data["rows"]]
    return lines


def _learning_curves_section(cfg: Any, out: Path) -> list[str]:
    """The learning curves read from the configured CSV files, in one plot."""
    lines: list[str] = []
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
    return lines


def _failures_section(res: Any, figures: dict[str, Any]) -> list[str]:
    """The failed episodes (retried by the next run of the same config)."""
    lines = ["## Failed episodes", "", "Retried by the next run of the same config.", "",
              "| cell | seed | reason |", "|---|---|---|"]  # fmt: skip
    for f in res.failures:
        lines.append(
            f"| {f.job.cell_id} | {f.job.seed} | {str(f.error).replace('|', '/')[:300]} |"
        )
    lines.append("")
    figures["failed"] = [
        {"cell": f.job.cell_id, "seed": f.job.seed, "error": f.error} for f in res.failures
    ]
    return lines
