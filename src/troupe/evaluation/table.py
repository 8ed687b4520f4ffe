"""The evaluation report as rich tables for the terminal."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ..terminal_text import visible
from .report import METRIC_COLUMNS, format_cell, format_pct


def _shown(text: str) -> Text:
    """A label from the dataset or the model's route: no markup, controls escaped."""
    return Text(visible(text))


def score_table(report: dict[str, Any]) -> Table:
    """Per expected agent, then overall: accuracy, invalid names, repairs, costs."""
    table = Table(title=_shown(f"Routing evaluation: {report['model']}"), title_justify="left")
    table.add_column("Expected", no_wrap=True)
    for _, heading in METRIC_COLUMNS:
        table.add_column(heading, justify="right")
    for row in report["per_agent"]:
        table.add_row(_shown(row["name"]), *(format_cell(k, row[k]) for k, _ in METRIC_COLUMNS))
    overall = report["overall"]
    table.add_section()
    table.add_row(
        Text("overall", style="bold"),
        *(Text(format_cell(k, overall[k]), style="bold") for k, _ in METRIC_COLUMNS),
    )
    return table


def breakdown_table(title: str, rows: list[dict[str, Any]]) -> Table:
    """Requests and accuracy for each kind or language."""
    table = Table(title=title, title_justify="left")
    table.add_column("")
    table.add_column("Requests", justify="right")
    table.add_column("Correct", justify="right")
    table.add_column("Accuracy", justify="right")
    for row in rows:
        table.add_row(
            _shown(row["name"]),
            str(row["requests"]),
            str(row["correct"]),
            format_pct(row["accuracy"]),
        )
    return table


def confusion_table(report: dict[str, Any]) -> Table:
    """Expected label (rows) against the route taken (columns)."""
    matrix = report["confusion"]
    table = Table(title="Confusion matrix (rows: expected, columns: routed)", title_justify="left")
    table.add_column("", no_wrap=True)
    for column in matrix["routed"]:
        table.add_column(_shown(column), justify="right")
    for name, counts in zip(matrix["expected"], matrix["counts"], strict=True):
        cells = []
        for column, count in zip(matrix["routed"], counts, strict=True):
            style = "green" if column == name else ("red" if count else "dim")
            cells.append(Text(str(count), style=style))
        table.add_row(_shown(name), *cells)
    return table


def render_report(report: dict[str, Any]) -> RenderableType:
    """All tables of the report, ready for ``console.print``."""
    parts: list[RenderableType] = [
        score_table(report),
        breakdown_table("By kind", report["per_kind"]),
        breakdown_table("By language", report["per_language"]),
        confusion_table(report),
    ]
    if report["invalid_names"]:
        names = ", ".join(f"{n} ×{c}" for n, c in report["invalid_names"].items())
        parts.append(_shown(f"Invalid agent names: {names}"))
    return Group(*parts)
