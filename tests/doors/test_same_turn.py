"""``troupe serve`` and ``adk web`` show the same path and repairs as ``troupe chat``."""

from __future__ import annotations

from typing import Any

import pytest
from door_runs import DOORS, MODELS
from failure_shapes import Call, Say, Shape, transfer

from troupe.stores.traces import Trace, TraceStore

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


def _turn(door: str, model: str, visit_for: Any) -> tuple[str, Trace]:
    visit = visit_for(model, MIXED)
    reply = DOORS[door](visit)
    (trace,) = TraceStore(visit.data_dir / "traces.db").list(limit=5)
    return reply, trace


def _shown(reply: str, trace: Trace) -> dict[str, Any]:
    """Everything a user or a trace reader sees of the turn, except ids and timings."""
    return {
        "reply": reply,
        "path": trace.path,
        "repairs": trace.repairs,
        "invalid_names": trace.invalid_names,
        "rejections": trace.rejections,
        "reached": trace.reached,
        "steps": [(s["author"], s["kind"], s["name"], s["text"]) for s in trace.steps],
        "tools": [(c["agent"], c["tool"]) for c in trace.tool_calls],
        "model_calls": [c["agent"] for c in trace.model_calls],
        "outcome": trace.outcome,
        "stop_reason": trace.stop_reason,
    }


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("door", ["run", "run_sse", "adk_web"])
def test_serve_and_adk_web_show_the_same_path_and_repairs_as_chat(
    door: str, model: str, visit_for: Any
) -> None:
    chat = _turn("chat", model, visit_for)
    other = _turn(door, model, visit_for)
    assert MIXED.answer in chat[0]
    assert tuple(chat[1].path) == MIXED.path
    assert [tuple(r) for r in chat[1].repairs] == list(MIXED.repairs)
    assert _shown(*other) == _shown(*chat)
