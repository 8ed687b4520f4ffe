"""Scores routing results: accuracy per agent, kind and language, and a confusion matrix."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..topology import DEFAULT_TOPOLOGY
from .dataset import CANNOT, DIRECT, KINDS
from .results import NO_ROUTE, RequestResult

ROUTE_ORDER: tuple[str, ...] = (*DEFAULT_TOPOLOGY.agent_names(), DIRECT, CANNOT)
"""Rows and columns come in this order; other names follow alphabetically."""
SHARE_DIGITS = 6
"""Shares are kept to six places, so printing one as a percentage rounds once
(53 of 54 is 98.1%; kept to four places, 0.9815, it printed 98.2%)."""


def _ordered(names: Iterable[str], order: Sequence[str]) -> list[str]:
    present = set(names)
    known = [n for n in order if n in present]
    return known + sorted(present - set(order))


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile of ``values`` (0.0 for none)."""
    if not values:
        return 0.0
    ranked = sorted(values)
    index = max(0, math.ceil(fraction * len(ranked)) - 1)
    return ranked[index]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def group_score(name: str, results: Sequence[RequestResult]) -> dict[str, Any]:
    """Accuracy and costs over ``results``: one row of a table."""
    count = len(results)
    correct = sum(r.correct for r in results)
    latencies = [r.latency_ms for r in results]
    decided = [r for r in results if r.router_decided]
    done = [r.done for r in results]
    # Only when every request ran to its end: a share of some is no figure.
    end_to_end: dict[str, Any] = {}
    if count and all(d is not None for d in done):
        finished = sum(bool(d) for d in done)
        end_to_end = {"done": finished, "done_share": round(finished / count, SHARE_DIGITS)}
    return {
        "name": name,
        "requests": count,
        "correct": correct,
        "accuracy": round(correct / count, SHARE_DIGITS) if count else 0.0,
        "routing": round(sum(r.routed_right for r in results) / count, SHARE_DIGITS)
        if count
        else 0.0,
        "invalid_names": sum(len(r.invalid_names) for r in results),
        "repairs": sum(len(r.repairs) for r in results),
        "errors": sum(r.error is not None for r in results),
        "model_calls_per_request": round(_mean([r.model_calls for r in results]), 2),
        "tokens_per_request": round(_mean([r.total_tokens for r in results]), 1),
        "latency_ms_p50": round(percentile(latencies, 0.5), 1),
        "latency_ms_p95": round(percentile(latencies, 0.95), 1),
        "router_coverage": round(len(decided) / count, SHARE_DIGITS) if count else 0.0,
        "router_precision": (
            round(sum(r.routed_right for r in decided) / len(decided), SHARE_DIGITS)
            if decided
            else 0.0
        ),
        **end_to_end,
    }


def _grouped(
    results: Sequence[RequestResult],
    key: Callable[[RequestResult], str],
    order: Sequence[str],
) -> list[dict[str, Any]]:
    groups: dict[str, list[RequestResult]] = {}
    for result in results:
        groups.setdefault(key(result), []).append(result)
    return [group_score(name, groups[name]) for name in _ordered(groups, order)]


def confusion_matrix(results: Sequence[RequestResult]) -> dict[str, Any]:
    """Counts of expected label (rows) against the route taken (columns).

    A request with several acceptable routes is counted in the row of its
    first one; a request that reached no decision in the ``(none)`` column.
    """
    pairs = Counter((r.label, r.routed or NO_ROUTE) for r in results)
    rows = _ordered((label for label, _ in pairs), ROUTE_ORDER)
    columns = _ordered((routed for _, routed in pairs), (*ROUTE_ORDER, NO_ROUTE))
    return {
        "expected": rows,
        "routed": columns,
        "counts": [[pairs[(row, column)] for column in columns] for row in rows],
    }


def score(results: Sequence[RequestResult]) -> dict[str, Any]:
    """Everything the reports show: overall, per agent, per kind, per language,
    the confusion matrix and how often each invalid name and repair occurred."""
    languages = _ordered({r.lang for r in results} - {"en"}, ())
    return {
        "overall": group_score("overall", results),
        "per_agent": _grouped(results, lambda r: r.label, ROUTE_ORDER),
        "per_kind": _grouped(results, lambda r: r.kind, KINDS),
        "per_language": _grouped(results, lambda r: r.lang, ("en", *languages)),
        "confusion": confusion_matrix(results),
        "invalid_names": dict(Counter(n for r in results for n in r.invalid_names).most_common()),
        "repairs": dict(
            Counter(f"{bad} -> {good}" for r in results for bad, good in r.repairs).most_common()
        ),
    }
