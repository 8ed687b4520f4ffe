"""Every failure shape through every door (CLI, /run, /run_sse, A2A, adk run), with a
scripted model and with an OpenAI-compatible fake server: the same repair or
honest end, the same path, the time limit held, and a trace written."""

from __future__ import annotations

import time
from typing import Any

import pytest
from door_runs import DOORS, MODELS, spawns_process
from failure_shapes import SHAPES, Shape

from troupe.stores.traces import TraceStore


@pytest.mark.timeout(300)  # adk run in a new process, on a loaded machine
@pytest.mark.filterwarnings("ignore:.*EXPERIMENTAL.*:UserWarning")
@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("door", list(DOORS))
@pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])
def test_each_failure_shape_is_repaired_or_ended_the_same_way_through_every_door(
    shape: Shape, door: str, model: str, visit_for: Any
) -> None:
    visit = visit_for(model, shape)
    started = time.monotonic()
    reply = DOORS[door](visit)
    elapsed = time.monotonic() - started
    assert shape.answer in reply
    if shape.hidden is not None:
        assert shape.hidden not in reply
    traces = TraceStore(visit.data_dir / "traces.db").list(limit=5)
    assert len(traces) == 1
    trace = traces[0]
    assert tuple(trace.path) == shape.path
    assert trace.outcome == shape.outcome
    assert [tuple(r) for r in trace.repairs] == list(shape.repairs)
    if shape.within_s is not None:
        assert trace.duration_ms < shape.within_s * 1000
        if not spawns_process(door, visit):  # a new process spends seconds importing
            assert elapsed < shape.within_s
    if model == "openai_fake" and trace.model_calls:
        assert trace.tokens() > 0  # usage counted from the server's usage block
