"""The evaluation report as rich tables for the terminal."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ..terminal_text import visible
from .report import METRIC_COLUMNS, format_cell, format_pct

_CELL_EDGE = 3
"""Columns a cell adds to its text: a space each side and a border."""


def _shown(text: str) -> Text:
    """A label from the dataset or the model's route: no markup, controls escaped."""
    return Text(visible(text))


def score_tables(report: dict[str, Any], width: int = 200) -> list[Table]:
    """Per expected agent, then overall: accuracy, invalid names, repairs, costs.

    As many tables as it takes for every number to show whole within ``width``
    columns: the metrics are split into groups, each shown beside the agent
    names, rather than cut to ``9…``.
    """
    rows = [*report["per_agent"], report["overall"]]
    first = max(len("Expected"), *(len(row["name"]) for row in rows)) + _CELL_EDGE + 1
    groups: list[list[tuple[str, str]]] = [[]]
    used = first
    for key, heading in METRIC_COLUMNS:
        if key not in report["overall"]:
            continue
        needed = _column_width(heading, [format_cell(key, row[key]) for row in rows])
        if groups[-1] and used + needed > width:
            groups.append([])
            used = first
        groups[-1].append((key, heading))
        used += needed
    title = f"Routing evaluation: {report['model']}"
    if team := report.get("team"):
        title += f"; team {team['topology']} ({team['digest']}): {', '.join(team['agents'])}"
    return [
        _score_table(report, columns, title if i == 0 else None) for i, columns in enumerate(groups)
    ]


def _column_width(heading: str, cells: list[str]) -> int:
    """What a column needs: its longest cell, or its longest heading word."""
    return max(*(len(word) for word in heading.split()), *(len(c) for c in cells)) + _CELL_EDGE


def _score_table(
    report: dict[str, Any], columns: list[tuple[str, str]], title: str | None
) -> Table:
    table = Table(title=_shown(title) if title else None, title_justify="left")
    table.add_column("Expected", no_wrap=True)
    for key, heading in columns:
        cells = [format_cell(key, row[key]) for row in [*report["per_agent"], report["overall"]]]
        table.add_column(
            heading,
            justify="right",
            overflow="fold",
            min_width=_column_width(heading, cells) - _CELL_EDGE,
        )
    for row in report["per_agent"]:
        table.add_row(_shown(row["name"]), *(format_cell(k, row[k]) for k, _ in columns))
    overall = report["overall"]
    table.add_section()
    table.add_row(
        Text("overall", style="bold"),
        *(Text(format_cell(k, overall[k]), style="bold") for k, _ in columns),
    )
    return table


def breakdown_table(title: str, rows: list[dict[str, Any]]) -> Table:
    """Requests and accuracy for each kind or language."""
    table = Table(title=title, title_justify="left")
    table.add_column("")
    table.add_column("Requests", justify="right")
    table.add_column("Correct", justify="right")
    table.add_column("Accuracy", justify="right")
    end_to_end = all("done_share" in row for row in rows)
    if end_to_end:
        table.add_column("End to end", justify="right")
    for row in rows:
        table.add_row(
            _shown(row["name"]),
            str(row["requests"]),
            str(row["correct"]),
            format_pct(row["accuracy"]),
            *((format_pct(row["done_share"]),) if end_to_end else ()),
        )
    return table


def confusion_table(report: dict[str, Any]) -> Table:
    """Expected label (rows) against the route taken (columns)."""
    matrix = report["confusion"]
    table = Table(title="Confusion matrix (rows: expected, columns: routed)", title_justify="left")
    table.add_column("", no_wrap=True)
    for column in matrix["routed"]:
        # Agent names fold over two lines on a narrow terminal; counts stay whole.
        table.add_column(_shown(column), justify="right", overflow="fold", min_width=3)
    for name, counts in zip(matrix["expected"], matrix["counts"], strict=True):
        cells = []
        for column, count in zip(matrix["routed"], counts, strict=True):
            style = "green" if column == name else ("red" if count else "dim")
            cells.append(Text(str(count), style=style))
        table.add_row(_shown(name), *cells)
    return table


def render_report(report: dict[str, Any], width: int = 200) -> RenderableType:
    """All tables of the report, ready for ``console.print`` at ``width`` columns."""
    parts: list[RenderableType] = [
        *score_tables(report, width),
        breakdown_table("By kind", report["per_kind"]),
        breakdown_table("By language", report["per_language"]),
        confusion_table(report),
    ]
    if report["invalid_names"]:
        names = ", ".join(f"{n} ×{c}" for n, c in report["invalid_names"].items())
        parts.append(_shown(f"Invalid agent names: {names}"))
    return Group(*parts)
