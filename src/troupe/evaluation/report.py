"""The evaluation report as data: run details, scores and every result, written as JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .results import RequestResult
from .scoring import score


def build_report(
    results: Sequence[RequestResult],
    *,
    model: str,
    dataset: str,
    concurrency: int,
    wall_s: float,
) -> dict[str, Any]:
    """The report the JSON file, the HTML page and the terminal table all show."""
    from .. import __version__

    return {
        "model": model,
        "dataset": dataset,
        "requests": len(results),
        "concurrency": concurrency,
        "wall_s": round(wall_s, 2),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "troupe_version": __version__,
        **score(results),
        "results": [r.to_dict() for r in results],
    }


def write_json(report: dict[str, Any], path: Path) -> None:
    """Write ``report`` to ``path``, creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def format_pct(fraction: float) -> str:
    """An accuracy as the reports print it: ``87.5%``."""
    return f"{fraction * 100:.1f}%"


METRIC_COLUMNS: tuple[tuple[str, str], ...] = (
    ("requests", "Requests"),
    ("correct", "Correct"),
    ("accuracy", "Accuracy"),
    ("invalid_names", "Invalid"),
    ("repairs", "Repairs"),
    ("errors", "Errors"),
    ("model_calls_per_request", "Calls/req"),
    ("tokens_per_request", "Tokens/req"),
    ("latency_ms_p50", "ms p50"),
    ("latency_ms_p95", "ms p95"),
    ("router_coverage", "Router cov"),
    ("router_precision", "Router prec"),
)
"""The columns of a score row, in table order: (key, heading)."""


def format_cell(key: str, value: Any) -> str:
    """One score value as text, the same in the terminal and the HTML page."""
    if key in ("accuracy", "router_coverage", "router_precision"):
        return format_pct(float(value))
    if isinstance(value, float):
        return f"{value:.1f}" if key.startswith(("latency", "tokens")) else f"{value:.2f}"
    return str(value)
