"""The repair shapes of ``tests/fakes/shapes.py`` (agent called as a function, calls
written as text, an echoed ``[REJECT]``, a persistent bad name, ping-pong, a
specialist calling another agent) hold through every door, with a scripted
model and with LiteLLM against an OpenAI-compatible fake server on 127.0.0.1."""

from __future__ import annotations

import pytest
from door_models import Visits
from door_runs import DOORS, MODELS

from fakes.shapes import SHAPES, FailureShape
from troupe.prompts import REJECT_MARKER, TRANSFER_TOOL
from troupe.stores.traces import TraceStore


@pytest.mark.filterwarnings("ignore:.*EXPERIMENTAL.*:UserWarning")
@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("door", list(DOORS))
@pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])
def test_each_repair_shape_holds_through_every_door(
    shape: FailureShape, door: str, model: str, visit_for: Visits
) -> None:
    settings = {"max_delegation_rounds": shape.max_delegation_rounds}
    visit = visit_for.replies(model, shape.replies, settings, shape.request)
    reply = DOORS[door](visit)
    for expected in shape.answer_contains:
        assert expected in reply
    assert REJECT_MARKER not in reply
    assert visit_for.model_calls() <= shape.max_model_calls
    (trace,) = TraceStore(visit.data_dir / "traces.db").list(limit=5)
    if shape.transfers:
        assert tuple(trace.path) == ("orchestrator", *shape.transfers)
    ran = tuple(c["tool"] for c in trace.tool_calls if c["tool"] != TRANSFER_TOOL)
    assert ran == shape.tools
    assert len(trace.model_calls) == visit_for.model_calls()
