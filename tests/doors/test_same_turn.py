"""``troupe serve`` and ``adk web`` show the same path and repairs as ``troupe chat``."""

from __future__ import annotations

from typing import Any

import pytest
from door_runs import DOORS, MODELS
from failure_shapes import Call, Say, Shape, transfer

from troupe.runtime.tracing import Trace, TraceStore

# A repaired name, then a rejection handed on, then a tool call and an answer.
MIXED = Shape(
    name="repair_then_rejection",
    script=(
        transfer("browser_agent"),
        Say("[REJECT] This task requires operator: it is about files"),
        Call("fs_list", {"path": "."}),
        Say("Found notes.txt."),
    ),
    answer="Found notes.txt.",
    path=("orchestrator", "navigator", "operator"),
    repairs=(("browser_agent", "navigator"),),
)


def _turn(door: str, model: str, visit_for: Any) -> Trace:
    visit = visit_for(model, MIXED)
    assert MIXED.answer in DOORS[door](visit)
    (trace,) = TraceStore(visit.data_dir / "traces.db").list(limit=5)
    return trace


def _shown(trace: Trace) -> tuple[Any, ...]:
    steps = tuple((s["author"], s["kind"], s["name"]) for s in trace.steps)
    return trace.path, trace.repairs, steps, trace.outcome


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("door", ["run", "adk_web"])
def test_serve_and_adk_web_show_the_same_path_and_repairs_as_chat(
    door: str, model: str, visit_for: Any
) -> None:
    chat = _turn("chat", model, visit_for)
    other = _turn(door, model, visit_for)
    assert tuple(chat.path) == MIXED.path
    assert [tuple(r) for r in chat.repairs] == list(MIXED.repairs)
    assert _shown(other) == _shown(chat)
