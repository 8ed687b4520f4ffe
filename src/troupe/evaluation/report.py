"""The evaluation report as data: run details, scores and every result, written as JSON."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..topology import BUILTIN_TOPOLOGIES, Topology, resolve_topology
from .results import RequestResult
from .scoring import score


def team_summary(topology: str | Path | Topology | None, agents: Sequence[str]) -> dict[str, Any]:
    """Which team a report scores: its topology (a built-in name or the file it
    came from), a digest of the topology's content (SHA-256 of its fields, so
    the same team gives the same digest however the file is laid out), and
    the agents the tree holds (MCP-backed and remote ones included)."""
    resolved = resolve_topology(topology)
    if isinstance(topology, Topology):
        source = f"{resolved.name} (a Topology object)"
    elif topology is None or str(topology) in BUILTIN_TOPOLOGIES:
        source = resolved.name
    else:
        source = str(topology)
    content = json.dumps(asdict(resolved), sort_keys=True, default=str)
    return {
        "topology": source,
        "digest": hashlib.sha256(content.encode("utf-8")).hexdigest()[:16],
        "agents": list(agents),
    }


def build_report(
    results: Sequence[RequestResult],
    *,
    model: str,
    dataset: str,
    concurrency: int,
    wall_s: float,
    team: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The report the JSON file, the HTML page and the terminal table all show."""
    from .. import __version__

    return {
        "commit": source_commit(),
        "model": model,
        "team": team or {},
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
    ("done_share", "End to end"),
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
"""The columns of a score row, in table order: (key, heading). End to end
shows only in a report whose requests all ran to their end."""


def format_cell(key: str, value: Any) -> str:
    """One score value as text, the same in the terminal and the HTML page."""
    if key in ("accuracy", "done_share", "router_coverage", "router_precision"):
        return format_pct(float(value))
    if isinstance(value, float):
        return f"{value:.1f}" if key.startswith(("latency", "tokens")) else f"{value:.2f}"
    return str(value)


CODE_PATHS = (":(top)src/troupe", ":(top)bench", ":(top,exclude)bench/results")
"""What a result measures, as git pathspecs: troupe's code and the benchmark kit.
The results themselves, the docs and the tests are not the code measured."""


def source_commit(start: Path | None = None, paths: Sequence[str] = CODE_PATHS) -> str | None:
    """The git commit of the checkout troupe runs from (with ``+dirty`` when a
    tracked file of ``paths``, the code a result measures, differs from it), or
    None outside a checkout. A result just written (``bench/results/``) does
    not make the next run's commit dirty."""
    import subprocess

    where = start or Path(__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=10
        )
        if head.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", *paths],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def append_run_log(report: dict[str, Any], path: Path) -> None:
    """Append one line of ``report``'s figures to the JSONL file ``path``: when,
    at which commit, on which team and set, and the headline scores."""
    overall = report["overall"]
    line = {
        "created": report["created"],
        "commit": source_commit(),
        "model": report["model"],
        "team": report.get("team", {}),
        "dataset": report["dataset"],
        "requests": report["requests"],
        "accuracy": overall["accuracy"],
        **({"done_share": overall["done_share"]} if "done_share" in overall else {}),
        "router_coverage": overall["router_coverage"],
        "router_precision": overall["router_precision"],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(line, ensure_ascii=False) + "\n")
