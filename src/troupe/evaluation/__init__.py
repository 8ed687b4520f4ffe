"""Routing evaluation: a labelled request set run through the orchestrator.

``troupe eval`` loads the set (:func:`load_cases`), sends every request to the
orchestrator of the default topology in a fresh session
(:func:`run_evaluation`), scores the decisions (:func:`score`) and writes a
terminal table, JSON and an HTML page.
"""

from __future__ import annotations

from .dataset import DIRECT, KINDS, RoutingCase, load_cases, spread
from .report import build_report, write_json
from .results import NO_ROUTE, RequestResult
from .runner import (
    EvaluationAbortedError,
    build_eval_tree,
    evaluate_case,
    evaluate_cases,
    run_evaluation,
)
from .scoring import confusion_matrix, group_score, score

__all__ = [
    "DIRECT",
    "KINDS",
    "NO_ROUTE",
    "EvaluationAbortedError",
    "RequestResult",
    "RoutingCase",
    "build_eval_tree",
    "build_report",
    "confusion_matrix",
    "evaluate_case",
    "evaluate_cases",
    "group_score",
    "load_cases",
    "run_evaluation",
    "score",
    "spread",
    "write_json",
]
