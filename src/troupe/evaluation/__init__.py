"""Routing evaluation: a labelled request set run through the orchestrator.

``troupe eval`` loads the set (:func:`load_cases`), sends every request to the
orchestrator of the default topology over the built-in tools of the user's
configuration in a fresh session (:func:`run_evaluation`), scores the
decisions and the steps that ran (:func:`score`) and writes a terminal table,
JSON and an HTML page.
"""

from __future__ import annotations

from .dataset import CANNOT, DIRECT, KINDS, RoutingCase, load_cases, spread
from .report import build_report, write_json
from .results import NO_ROUTE, RequestResult, says_cannot
from .runner import (
    EvaluationAbortedError,
    build_eval_tree,
    eval_tree,
    evaluate_case,
    evaluate_cases,
    run_evaluation,
)
from .scoring import confusion_matrix, group_score, score

__all__ = [
    "CANNOT",
    "DIRECT",
    "KINDS",
    "NO_ROUTE",
    "EvaluationAbortedError",
    "RequestResult",
    "RoutingCase",
    "build_eval_tree",
    "build_report",
    "confusion_matrix",
    "eval_tree",
    "evaluate_case",
    "evaluate_cases",
    "group_score",
    "load_cases",
    "run_evaluation",
    "says_cannot",
    "score",
    "spread",
    "write_json",
]
