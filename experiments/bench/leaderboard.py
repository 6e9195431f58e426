"""The leaderboard: a markdown table and one self-contained HTML page, from row files only.

Rows of different suites (name, version or SHA-256) are refused together (:class:`MixedSuites`):
their numbers are not comparable. Rows of different protocols (legal actions, illegal-answer
cost) go to separate tables. The HTML page loads nothing from anywhere (no CDN, no fonts, no
remote script): a short inline script sorts the columns, the score-against-cost plot is an
inline SVG drawn here, and every string from a row is HTML-escaped (``html.escape``); the rows'
JSON is embedded as ``<script type="application/json">`` with ``<`` written ``\\u003c``.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tom_experiments.bench import tom
from tom_experiments.bench.row import read_row
from tom_experiments.bench.skin import leaderboard_cell as skin_gap


class MixedSuites(ValueError):
    """Rows of different suites given to one leaderboard."""


def load_rows(paths: Sequence[str | Path]) -> list[dict[str, Any]]:
    """Read rows; refuse a mix of suites (the message lists the groups)."""
    rows = [read_row(p) for p in paths]
    groups: dict[tuple[Any, Any, Any], list[str]] = {}
    for p, r in zip(paths, rows, strict=True):
        s = r["suite"]
        groups.setdefault((s["name"], s["version"], s["sha256"]), []).append(str(p))
    if len(groups) > 1:
        listed = "; ".join(
            f"{n}-v{v} ({h[:12]}): {', '.join(ps)}" for (n, v, h), ps in groups.items()
        )
        raise MixedSuites(f"rows of different suites cannot share a table: {listed}")
    return rows


def _proto(row: Mapping[str, Any]) -> str:
    p = row.get("protocol", {})
    return f"legal actions: {p.get('legal_actions')}; illegal answer: {p.get('on_invalid')}"


_iv = tom.fmt_interval


def _num(x: Any) -> float:
    return float(x) if isinstance(x, (int, float)) and math.isfinite(x) else float("nan")


def _agent(row: Mapping[str, Any]) -> str:
    a = row["agent"]
    model = (a.get("model") or {}).get("reported") or []
    return str(a["spec"]) + (f" ({', '.join(map(str, model))})" if model else "")


def columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The games of the rows' suite, in the suite's order."""
    seen: list[str] = []
    for r in rows:
        for c in r["cells"]:
            if c["game"] not in seen:
                seen.append(c["game"])
    return seen


def table(rows: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[list[tuple[str, float]]]]:
    """Header and cells ``(text, sort key)`` of one protocol group, best aggregate first."""
    games = columns(rows)
    head = [
        "agent",
        "aggregate [95%]",
        *games,
        "QA acc %",
        "invalid %",
        "fallback %",
        "calls",
        "tokens in",
        "tokens out",
        "USD",
        "wall s",
        "functional ToM",
        "literal ToM",
        "skin gap",
    ]
    body = []
    for r in rows:
        g = r["games"]
        qa = r.get("qa", {}).get("accuracy_pct")
        rules = r.get("rules") or {}
        cost = r.get("cost") or {}
        text = bool(r["agent"].get("text"))

        def tot(k: str, c: Mapping[str, Any] = cost) -> tuple[str, float]:
            v = (c.get(k) or {}).get("total")
            return (f"{v:,.0f}" if isinstance(v, (int, float)) else "n/a", _num(v))

        line = [(_agent(r), 0.0), (_iv(r["aggregate"]), _num(r["aggregate"].get("mean")))]
        line += [
            (
                _iv(g.get(x, {}).get("normalised")) + tom.above_bound(g.get(x, {})),
                _num(g.get(x, {}).get("normalised", {}).get("mean")),
            )
            for x in games
        ]
        line.append((_iv(qa, 1) if qa else "n/a", _num((qa or {}).get("mean"))))
        for k in ("invalid_pct", "fallback_pct"):
            if k == "invalid_pct" and not text:
                line.append(("n/a (acts on indices)", float("nan")))
            else:
                line.append((_iv(rules.get(k), 1), _num((rules.get(k) or {}).get("mean"))))
        line += [tot("calls"), tot("tokens_in"), tot("tokens_out")]
        usd = (cost.get("cost_usd") or {}).get("total")
        line.append((f"{usd:.4f}" if isinstance(usd, (int, float)) else "n/a", _num(usd)))
        wall = cost.get("command_wall_s")
        line.append((f"{wall:.0f}" if isinstance(wall, (int, float)) else "n/a", _num(wall)))
        line += tom.row_cells(r)
        line.append(skin_gap(r))
        body.append(line)
    body.sort(key=lambda ln: -ln[1][1] if math.isfinite(ln[1][1]) else math.inf)
    return head, body


def _groups(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    out: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        out.setdefault(_proto(r), []).append(r)
    return out


def _md_cell(text: str) -> str:
    return html.escape(text, quote=False).replace("|", "\\|").replace("\n", " ")


def render_md(rows: Sequence[Mapping[str, Any]], command: str = "") -> str:
    """One markdown table per protocol (cells escaped: no row string becomes markup)."""
    s = rows[0]["suite"]
    out = [
        f"Suite **{_md_cell(str(s['name']))}-v{_md_cell(str(s['version']))}** "
        f"(sha256 `{_md_cell(str(s['sha256'])[:12])}`). Scores: {_md_cell(tom.scale_text(rows[0]))}; "
        "aggregate = mean over games; [95% bootstrap interval over episodes].",
        "",
    ]
    for proto, group in _groups(rows).items():
        head, body = table(group)
        out += [
            f"### {_md_cell(proto)}",
            "",
            "| " + " | ".join(head) + " |",
            "|" + "---|" * len(head),
        ]
        out += ["| " + " | ".join(_md_cell(t) for t, _ in line) + " |" for line in body]
        out.append("")
        for caption, thead, tbody in tom.game_tables(group):
            out += [f"{_md_cell(caption)}", "", "| " + " | ".join(thead) + " |",
                    "|" + "---|" * len(thead)]  # fmt: skip
            out += ["| " + " | ".join(_md_cell(t) for t in ln) + " |" for ln in tbody] + [""]
    if command:
        out += ["```", command, "```", ""]
    return "\n".join(out)


SORT_JS = """
document.querySelectorAll('table.board').forEach(function (t) {
  t.querySelectorAll('th').forEach(function (th, i) {
    th.addEventListener('click', function () {
      var body = t.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var dir = th.dataset.dir === 'desc' ? 1 : -1; th.dataset.dir = dir === 1 ? 'asc' : 'desc';
      rows.sort(function (a, b) {
        var x = parseFloat(a.cells[i].dataset.k), y = parseFloat(b.cells[i].dataset.k);
        if (isNaN(x) && isNaN(y)) { return a.cells[i].textContent.localeCompare(b.cells[i].textContent) * dir; }
        if (isNaN(x)) { return 1; } if (isNaN(y)) { return -1; }
        return (x - y) * dir;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
"""


def plot_svg(rows: Sequence[Mapping[str, Any]], width: int = 560, height: int = 320) -> str:
    """Aggregate score (y, with its interval) against model calls (x, log scale), inline SVG."""
    pts = []
    for r in rows:
        agg = r["aggregate"]
        calls = ((r.get("cost") or {}).get("calls") or {}).get("total") or 0
        if agg.get("mean") is None:
            continue
        pts.append(
            (
                math.log10(1 + float(calls)),
                float(agg["mean"]),
                agg.get("lo"),
                agg.get("hi"),
                _agent(r),
            )
        )
    pad = 50
    parts = [
        f'<svg width="{width}" height="{height}" '
        'role="img" aria-label="aggregate score against model calls">',
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#fff"/>',
    ]
    if not pts:
        parts.append('<text x="20" y="30">no row with an aggregate</text></svg>')
        return "".join(parts)
    xs = [p[0] for p in pts]
    ys = [v for p in pts for v in (p[1], p[2], p[3]) if isinstance(v, (int, float))]
    x0, x1 = min(xs), max(xs) + 1e-9
    y0, y1 = min([*ys, 0.0]), max([*ys, 1.0])

    def X(v: float) -> float:
        return pad + (v - x0) / (x1 - x0 or 1) * (width - 2 * pad) if x1 > x0 else width / 2

    def Y(v: float) -> float:
        return height - pad - (v - y0) / (y1 - y0 or 1) * (height - 2 * pad)

    parts.append(
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="#000"/>'
    )
    parts.append(f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="#000"/>')
    parts.append(
        f'<text x="{width / 2:.0f}" y="{height - 12}" text-anchor="middle">log10(1 + model calls)</text>'
    )
    parts.append(
        f'<text x="14" y="{height / 2:.0f}" transform="rotate(-90 14 {height / 2:.0f})" '
        'text-anchor="middle">aggregate score</text>'
    )
    for v in (y0, (y0 + y1) / 2, y1):
        parts.append(
            f'<text x="{pad - 4}" y="{Y(v) + 4:.1f}" text-anchor="end" font-size="10">{v:.2f}</text>'
        )
    for x, y, lo, hi, name in pts:
        if isinstance(lo, (int, float)) and isinstance(hi, (int, float)):
            parts.append(
                f'<line x1="{X(x):.1f}" y1="{Y(lo):.1f}" x2="{X(x):.1f}" y2="{Y(hi):.1f}" stroke="#555"/>'
            )
        parts.append(
            f'<circle cx="{X(x):.1f}" cy="{Y(y):.1f}" r="4" fill="#1f77b4"><title>'
            f"{html.escape(name)}</title></circle>"
        )
        parts.append(
            f'<text x="{X(x) + 6:.1f}" y="{Y(y) - 6:.1f}" font-size="10">{html.escape(name[:40])}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def group_by_suite(rows: Sequence[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    """Rows grouped by suite (name, version, SHA-256), newest version first: each group is one
    section of a page, never one table."""
    groups: dict[tuple[Any, Any, Any], list[Mapping[str, Any]]] = {}
    for r in rows:
        s = r["suite"]
        groups.setdefault((s["name"], s["version"], s["sha256"]), []).append(r)
    return [groups[k] for k in sorted(groups, key=lambda k: (-int(k[1]), str(k[0])))]


def render_html(rows: Sequence[Mapping[str, Any]]) -> str:
    """One static page: the tables (sortable), the plot, the rows' JSON; nothing loaded."""
    return render_page([rows])


def render_page(groups: Sequence[Sequence[Mapping[str, Any]]]) -> str:
    """One static page with a section per suite (:func:`group_by_suite`), each with its own
    tables and plot; one style and one script for the page."""
    title = html.escape(
        "tom-envs bench: "
        + ", ".join(f"{g[0]['suite']['name']}-v{g[0]['suite']['version']}" for g in groups)
    )
    body = [f"<h1>{title}</h1>"]
    for rows in groups:
        body += _section(rows, len(groups) > 1)
    data = json.dumps([r for g in groups for r in g], sort_keys=True)
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    style = (
        "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:3px 6px;font-size:13px}th{cursor:pointer;"
        "background:#eee}"
    )
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
        f"<title>{title}</title><style>{style}</style></head><body>"
        + "\n".join(body)
        + f'<script type="application/json" id="rows">{data}</script>'
        + f"<script>{SORT_JS}</script></body></html>\n"
    )


def _section(rows: Sequence[Mapping[str, Any]], heading: bool) -> list[str]:
    """One suite's part of the page: its tables (one per protocol) and its plot."""
    s = rows[0]["suite"]
    name = html.escape(f"{s['name']}-v{s['version']}")
    body = [f"<h2>Suite {name}</h2>"] if heading else []
    body += [
        f"<p>suite sha256 <code>{html.escape(str(s['sha256']))}</code>. "
        f"{html.escape(tom.scale_text(rows[0]))}; [95% bootstrap interval over "
        "episodes]. Click a column to sort.</p>",
    ]
    for proto, group in _groups(rows).items():
        head, lines = table(group)
        body.append(
            f'<h2>{html.escape(proto)}</h2><table class="board"><thead><tr>'
            + "".join(f"<th>{html.escape(h)}</th>" for h in head)
            + "</tr></thead><tbody>"
        )
        for line in lines:
            body.append(
                "<tr>"
                + "".join(
                    f'<td data-k="{k if math.isfinite(k) else "nan"}">{html.escape(t)}</td>'
                    for t, k in line
                )
                + "</tr>"
            )
        body.append("</tbody></table>")
        for caption, thead, tbody in tom.game_tables(group):
            body.append(f"<h4>{html.escape(caption)}</h4><table class=\"board\"><thead><tr>"
                        + "".join(f"<th>{html.escape(h)}</th>" for h in thead) + "</tr></thead><tbody>"
                        + "".join("<tr>" + "".join(f'<td data-k="nan">{html.escape(t)}</td>' for t in ln)
                                  + "</tr>" for ln in tbody) + "</tbody></table>")  # fmt: skip
    body.append(f"<h3>Score against cost ({name})</h3>" + plot_svg(rows))
    return body


__all__ = [
    "MixedSuites",
    "group_by_suite",
    "load_rows",
    "plot_svg",
    "render_html",
    "render_md",
    "render_page",
    "table",
]
