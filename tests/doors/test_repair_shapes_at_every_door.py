"""The repair shapes of ``tests/fakes/shapes.py`` (agent called as a function, calls
written as text, an echoed ``[REJECT]``, a persistent bad name, ping-pong) hold
through every door, not only through the Assistant."""

from __future__ import annotations

import pytest
from door_models import Visits
from door_runs import DOORS

from fakes.shapes import SHAPES, FailureShape
from troupe.prompts import REJECT_MARKER, TRANSFER_TOOL
from troupe.runtime.tracing import TraceStore
from troupe.testing import ScriptedModel

# A shape that opens a web page needs the network; the door tests have none.
OFFLINE = [s for s in SHAPES if not any(t.startswith("browser_") for t in s.tools)]


@pytest.mark.filterwarnings("ignore:.*EXPERIMENTAL.*:UserWarning")
@pytest.mark.parametrize("door", list(DOORS))
@pytest.mark.parametrize("shape", OFFLINE, ids=[s.name for s in OFFLINE])
def test_each_repair_shape_holds_through_every_door(
    shape: FailureShape, door: str, visit_for: Visits
) -> None:
    model = ScriptedModel(replies=list(shape.replies))
    settings = {"max_delegation_rounds": shape.max_delegation_rounds}
    visit = visit_for.scripted(model, settings, shape.request)
    reply = DOORS[door](visit)
    for expected in shape.answer_contains:
        assert expected in reply
    assert REJECT_MARKER not in reply
    assert len(model.requests) <= shape.max_model_calls
    (trace,) = TraceStore(visit.data_dir / "traces.db").list(limit=5)
    if shape.transfers:
        assert tuple(trace.path) == ("orchestrator", *shape.transfers)
    ran = tuple(c["tool"] for c in trace.tool_calls if c["tool"] != TRANSFER_TOOL)
    assert ran == shape.tools
