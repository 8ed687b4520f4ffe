"""The evaluation report as one self-contained HTML page (inline CSS, no scripts)."""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from .report import METRIC_COLUMNS, format_cell, format_pct

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 72rem; color: #1d2433;
       padding: 0 1rem; }
h1 { font-size: 1.5rem; margin-bottom: .25rem; }
h2 { font-size: 1.15rem; margin-top: 2rem; }
.meta { color: #5b6478; }
.headline { font-size: 2.2rem; font-weight: 600; margin: .5rem 0; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { padding: .3rem .6rem; border: 1px solid #d8dce6; }
th { background: #f3f5f9; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.overall td, tr.overall th { font-weight: 700; border-top: 2px solid #1d2433; }
td.hit { background: rgba(34, 139, 34, var(--a)); }
td.miss { background: rgba(200, 40, 40, var(--a)); }
td.zero { color: #b3b9c6; }
td.text { max-width: 36rem; }
"""


def _team_line(team: dict[str, Any]) -> str:
    """Which team the report scores (topology, digest, agents), when it says."""
    if not team:
        return ""
    agents = ", ".join(escape(str(a)) for a in team.get("agents", []))
    return (
        f'<p class="meta">Team: {escape(str(team["topology"]))} '
        f"(digest {escape(str(team['digest']))}): {agents}.</p>"
    )


def _metrics_table(table_id: str, rows: list[dict[str, Any]], overall: dict[str, Any]) -> str:
    columns = [(k, h) for k, h in METRIC_COLUMNS if k in overall]
    head = "".join(f"<th>{escape(h)}</th>" for _, h in columns)
    body = []
    for row, css in [*((r, "") for r in rows), (overall, "overall")]:
        cells = "".join(
            f'<td class="num" data-key="{k}">{escape(format_cell(k, row[k]))}</td>'
            for k, _ in columns
        )
        body.append(f'<tr class="{css}"><th>{escape(row["name"])}</th>{cells}</tr>')
    return f'<table id="{table_id}"><tr><th>Expected</th>{head}</tr>{"".join(body)}</table>'


def _breakdown_table(table_id: str, heading: str, rows: list[dict[str, Any]]) -> str:
    body = "".join(
        f"<tr><th>{escape(r['name'])}</th>"
        f'<td class="num" data-key="requests">{r["requests"]}</td>'
        f'<td class="num" data-key="correct">{r["correct"]}</td>'
        f'<td class="num" data-key="accuracy">{format_pct(r["accuracy"])}</td></tr>'
        for r in rows
    )
    return (
        f'<table id="{table_id}"><tr><th>{escape(heading)}</th><th>Requests</th>'
        f"<th>Correct</th><th>Accuracy</th></tr>{body}</table>"
    )


def _confusion_table(matrix: dict[str, Any]) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in matrix["routed"])
    body = []
    for name, counts in zip(matrix["expected"], matrix["counts"], strict=True):
        total = sum(counts) or 1
        cells = []
        for column, count in zip(matrix["routed"], counts, strict=True):
            css = "zero" if not count else ("hit" if column == name else "miss")
            shade = f' style="--a: {0.15 + 0.6 * count / total:.2f}"' if count else ""
            cells.append(f'<td class="num {css}"{shade}>{count}</td>')
        body.append(f"<tr><th>{escape(name)}</th>{''.join(cells)}</tr>")
    return (
        f'<table id="confusion"><tr><th>expected \\ routed</th>{head}</tr>{"".join(body)}</table>'
    )


def _counts_list(title: str, counts: dict[str, int]) -> str:
    if not counts:
        return f"<h2>{escape(title)}</h2><p>None.</p>"
    items = "".join(f"<li><code>{escape(k)}</code> × {v}</li>" for k, v in counts.items())
    return f"<h2>{escape(title)}</h2><ul>{items}</ul>"


def _misrouted(results: list[dict[str, Any]]) -> str:
    wrong = [r for r in results if not r["correct"]]
    if not wrong:
        return "<h2>Misrouted requests</h2><p>None.</p>"
    rows = "".join(
        f'<tr><td class="text">{escape(r["text"])}</td><td>{escape(r["kind"])}</td>'
        f"<td>{escape(r['lang'])}</td><td>{escape(' or '.join(r['expected']))}</td>"
        f"<td>{escape(r['routed'] or '(none)')}</td>"
        f"<td>{escape(', '.join(r['invalid_names']))}</td>"
        f"<td>{escape(r['error'] or '')}</td></tr>"
        for r in wrong
    )
    return (
        f'<h2>Misrouted requests ({len(wrong)})</h2><table id="misrouted"><tr><th>Request</th>'
        "<th>Kind</th><th>Lang</th><th>Expected</th><th>Routed</th><th>Invalid names</th>"
        f"<th>Error</th></tr>{rows}</table>"
    )


def render_html(report: dict[str, Any]) -> str:
    """The whole page for ``report``."""
    overall = report["overall"]
    model = escape(report["model"])
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f"<title>troupe routing evaluation: {model}</title><style>{_STYLE}</style></head><body>"
        f"<h1>Routing evaluation: {model}</h1>"
        f'<p class="meta">{report["requests"]} requests from {escape(report["dataset"])}, '
        f"{report['concurrency']} at a time, {report['wall_s']} s, {escape(report['created'])}, "
        f"troupe {escape(report['troupe_version'])}.</p>"
        + _team_line(report.get("team") or {})
        + f'<p class="headline" id="overall-accuracy">{format_pct(overall["accuracy"])}</p>'
        f'<p class="meta">{overall["correct"]} of {overall["requests"]} routed as expected. '
        "A request routed correctly after a repaired agent name counts as correct "
        "and as a repair.</p>"
        "<h2>Per expected agent</h2>"
        + _metrics_table("per-agent", report["per_agent"], overall)
        + "<h2>Confusion matrix</h2>"
        + _confusion_table(report["confusion"])
        + '<p class="meta">Rows: the expected agent; columns: where the orchestrator routed. '
        "A request with several acceptable agents sits in the row of the first one, and "
        "routing to any of them counts as correct.</p>"
        + "<h2>By kind</h2>"
        + _breakdown_table("per-kind", "Kind", report["per_kind"])
        + "<h2>By language</h2>"
        + _breakdown_table("per-language", "Language", report["per_language"])
        + _counts_list("Invalid agent names", report["invalid_names"])
        + _counts_list("Repairs", report["repairs"])
        + _misrouted(report["results"])
        + "</body></html>\n"
    )


def write_html(report: dict[str, Any], path: Path) -> None:
    """Write the page for ``report`` to ``path``, creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(report), encoding="utf-8")
