"""Routing evaluation: a labelled request set run through the orchestrator.

``troupe eval`` loads the set (:func:`load_cases`), checks its labels against
the team the configuration builds (:func:`check_labels`), sends every request
to that team's orchestrator in a fresh session (:func:`run_evaluation`),
scores the decisions and the steps that ran (:func:`score`) and writes a
terminal table, JSON and an HTML page that name the team
(:func:`team_summary`).
"""

from __future__ import annotations

from .dataset import CANNOT, DIRECT, KINDS, RoutingCase, load_cases, spread
from .report import build_report, team_summary, write_json
from .results import NO_ROUTE, RequestResult, ToolRun, declines_request, says_cannot
from .runner import (
    EvaluationAbortedError,
    build_eval_tree,
    check_labels,
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
    "ToolRun",
    "build_eval_tree",
    "build_report",
    "check_labels",
    "confusion_matrix",
    "declines_request",
    "eval_tree",
    "evaluate_case",
    "evaluate_cases",
    "group_score",
    "load_cases",
    "run_evaluation",
    "says_cannot",
    "score",
    "spread",
    "team_summary",
    "write_json",
]
