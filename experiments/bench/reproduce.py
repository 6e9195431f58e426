"""``tom-envs bench --reproduce ROW``: play a row's suite again and check it cell by cell.

The row is untrusted input (:func:`~tom_experiments.bench.row.read_row` bounds and checks it): its
agent spec is rebuilt under :mod:`tom_envs.core.trust`'s rules (a game's bots, ``random``, the
installed agent kinds with plain options); a spec that names code, a file or a host is played
only when the same spec is given again on the command line (``--agent SPEC``). The suite must be
the shipped one with the row's SHA-256 (else refused); code and model differences are printed.

Every checked figure (per cell: return, invalid %, fallback %, re-asks, calls, tokens, cost; per
game: return and normalised score; the aggregate; QA accuracy) is compared: the new mean must lie
inside the row's 95% interval; where the row has no interval (fewer than two episodes, or all
equal), it must be equal. Wall time is printed, never checked (machines differ). For a
deterministic agent every figure must match; for a sampling one "new mean inside the old 95%
interval" holds for about 83% of unchanged figures (P(|Z| < 1.96/sqrt 2)), so a failing figure
is a signal to look at, not a proof.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from tom_experiments.bench.skin import figures as skin_figures

#: Figures compared per cell / game (paths into the cell or game object).
CELL_FIGURES = (
    ("return",),
    ("rules", "invalid_pct"),
    ("rules", "fallback_pct"),
    ("rules", "reprompts_per_decision"),
    ("cost", "calls", "per_episode"),
    ("cost", "tokens_in", "per_episode"),
    ("cost", "tokens_out", "per_episode"),
    ("cost", "cost_usd", "per_episode"),
)
GAME_FIGURES = (("return",), ("normalised",))
TOLERANCE = 1e-6


def _get(obj: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)
    return obj


def _inside(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> tuple[bool, str]:
    if old is None and new is None:
        return True, "absent in both"
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return False, "present in one row only"
    om, nm, lo, hi = old.get("mean"), new.get("mean"), old.get("lo"), old.get("hi")
    if om is None and nm is None:
        return True, "no value in either"
    if om is None or nm is None:
        return False, f"old {om}, new {nm}"
    if lo is None or hi is None or (isinstance(lo, float) and math.isnan(lo)):
        return abs(nm - om) <= TOLERANCE, f"old {om:.6g} (no interval), new {nm:.6g}"
    ok = lo - TOLERANCE <= nm <= hi + TOLERANCE
    return ok, f"old {om:.6g} [{lo:.6g}, {hi:.6g}], new {nm:.6g}"


def compare(old: Mapping[str, Any], new: Mapping[str, Any]) -> Iterator[tuple[str, bool, str]]:
    """``(figure, inside, detail)`` for every checked figure of two rows."""
    new_cells = {c["id"]: c for c in new.get("cells", [])}
    for cell in old.get("cells", []):
        other = new_cells.get(cell["id"])
        for path in CELL_FIGURES:
            ok, detail = _inside(_get(cell, path), _get(other, path) if other else None)
            yield f"{cell['id']} {'.'.join(path)}", ok, detail
    for game, g in old.get("games", {}).items():
        other = new.get("games", {}).get(game)
        for path in GAME_FIGURES:
            ok, detail = _inside(_get(g, path), _get(other, path) if other else None)
            yield f"{game} {'.'.join(path)}", ok, detail
    ok, detail = _inside(old.get("aggregate"), new.get("aggregate"))
    yield "aggregate", ok, detail
    for figure, was, now in skin_figures(old, new):  # the skinned cells, scores and gaps
        ok, detail = _inside(was, now)
        yield figure, ok, detail
    if "accuracy_pct" in old.get("qa", {}) or "accuracy_pct" in new.get("qa", {}):
        ok, detail = _inside(
            old.get("qa", {}).get("accuracy_pct"), new.get("qa", {}).get("accuracy_pct")
        )
        yield "qa accuracy_pct", ok, detail
    from tom_experiments.bench import tom  # v2: the ToM columns' figures

    yield from tom.compare(old, new, _inside)


def identity_notes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Differences of code, model and agent settings between the rows (printed, allowed)."""
    notes = []
    if old["code"].get("packages") != new["code"].get("packages"):
        notes.append(f"code differs: {old['code'].get('commit')} -> {new['code'].get('commit')}")
    om, nm = old["agent"].get("model"), new["agent"].get("model")
    if om != nm:
        notes.append(f"model differs: {om} -> {nm}")
    if old["agent"].get("settings") != new["agent"].get("settings"):
        notes.append("agent settings differ (see the rows' agent.settings)")
    return notes


__all__ = ["CELL_FIGURES", "GAME_FIGURES", "compare", "identity_notes"]
