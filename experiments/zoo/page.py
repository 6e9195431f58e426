"""The per-game section of ``docs/results/zoo.md``, rendered from the shipped manifest and a
cross-play matrix (``tom-envs zoo page GAME --crossplay FILE.json``): every figure comes from
those files, none is typed by hand."""

from __future__ import annotations

import csv
from typing import Any

from tom_experiments.zoo import DATA, load_manifest


def _curve_summary(game: str, entry: dict[str, Any]) -> str:
    """Training return at a quarter, half and the end of the run, from the shipped curve."""
    with (DATA / game / entry["train"]["curve"]).open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r.get("return_mean") not in (None, "")]
    if not rows:
        return "no training episodes logged"
    last = float(rows[-1]["global_step"])
    marks = []
    for frac in (0.25, 0.5, 1.0):
        row = next(r for r in rows if float(r["global_step"]) >= frac * last)
        marks.append(f"{float(row['return_mean']):.1f} at {float(row['global_step']) / 1e6:.2f}M")
    return "train return " + ", ".join(marks)


def members_table(game: str) -> str:
    """The members: name, kind, description, SHA-256 prefix, training record and curve."""
    from tom_envs import zoo

    data = load_manifest(game) or {"members": []}
    learned = {e["name"]: e for e in data["members"]}
    lines = ["| member | kind | description (generated) | sha256 | training (seed, steps, "
             "wall / CPU s of the command, final evaluation) | curve |", "|---|---|---|---|---|---|"]
    for m in zoo.members(game):
        if m.name not in learned:
            lines.append(f"| `{m.agent_spec}` | bot | {m.description} | | | |")
            continue
        e, t = learned[m.name], learned[m.name]["train"]
        ev = ", ".join(f"{k} {v:.2f}" for k, v in t.get("final_eval", {}).items()
                       if k in ("return_mean", "score", "team_score", "rounds", "turns",
                                "captured", "escaped"))  # fmt: skip
        lines.append(
            f"| `{m.agent_spec}` | learned | {e['description']} | `{e['sha256'][:12]}` | "
            f"seed {t['seed']}, {t['steps']:,} steps, {t['wall_s']:.0f} / {t['cpu_s']:.0f} s; "
            f"{ev} | {_curve_summary(game, e)} (`{t['curve']}`) |"
        )
    return "\n".join(lines)


def commands(game: str) -> str:
    """The training commands of the learned members, one per line."""
    data = load_manifest(game) or {"members": []}
    return "\n".join(e["train"]["command"] for e in data["members"])


def section(game: str, crossplay: str | None) -> str:
    """Members, training commands, and (given its JSON) the cross-play matrix and gaps."""
    from tom_experiments.zoo.crossplay import format_gaps, format_matrix, gaps, load_json

    parts = [f"## {game}", "", members_table(game), "", "```bash", commands(game), "```"]
    if crossplay:
        import json
        from pathlib import Path

        from tom_envs import zoo

        cp = load_json(crossplay)
        played = json.loads(Path(crossplay).read_text()).get("zoo_version")
        if played != zoo.version(game):
            raise ValueError(f"{crossplay} was played on zoo {played}, the zoo is now "
                             f"{zoo.version(game)}: play it again (tom-envs zoo crossplay)")  # fmt: skip
        better = "higher" if cp.higher_is_better else "lower"
        parts += ["", f"Cross-play on zoo `{played}`, {cp.metric} ({better} is better), seeds {cp.seeds[0]}.."
                  f"{cp.seeds[-1]} ({len(cp.seeds)}), game arguments {cp.env_kwargs}; "
                  f"fallback decisions {cp.fallbacks}:", "", format_matrix(cp), "",
                  format_gaps(gaps(cp))]  # fmt: skip
        for extra in cp.more:
            parts += ["", f"{extra}, the same episodes:", "", format_matrix(cp, extra)]
    return "\n".join(parts) + "\n"


__all__ = ["commands", "members_table", "section"]
