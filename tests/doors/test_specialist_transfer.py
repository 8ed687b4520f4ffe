"""A specialist's own ``transfer_to_agent`` to a sibling follows the reject protocol: it
is that specialist's ``[REJECT]``, re-routed by the runtime and counted as a round."""

from __future__ import annotations

import pytest
from door_models import Visits
from door_runs import DOORS

from troupe.prompts import REJECT_MARKER
from troupe.runtime.tracing import Trace, TraceStore
from troupe.testing import ScriptedModel, call


def _turn(door: str, visits: Visits, rounds: int, *replies: object) -> tuple[str, Trace]:
    model = ScriptedModel(replies=[*replies, *["unused"] * 6])
    visit = visits.scripted(model, {"max_delegation_rounds": rounds}, "list the files here")
    reply = DOORS[door](visit)
    (trace,) = TraceStore(visit.data_dir / "traces.db").list(limit=5)
    return reply, trace


@pytest.mark.parametrize("door", ["chat", "run"])
def test_specialist_transfer_to_a_sibling_is_rerouted_as_its_rejection(
    door: str, visit_for: Visits
) -> None:
    reply, trace = _turn(
        door,
        visit_for,
        5,
        call("transfer_to_agent", agent_name="navigator"),
        call("transfer_to_agent", agent_name="operator"),
        call("fs_list", path="."),
        "Found notes.txt.",
    )

    assert "Found notes.txt." in reply
    assert REJECT_MARKER not in reply
    assert (tuple(trace.path), trace.rejections) == (
        ("orchestrator", "navigator", "operator"),
        ["navigator"],
    )
    ran = [(c["agent"], c["tool"]) for c in trace.tool_calls if c["tool"] == "fs_list"]
    assert ran == [("operator", "fs_list")]
    assert len(trace.model_calls) == 4


@pytest.mark.parametrize("door", ["chat", "run"])
def test_specialist_transfer_to_a_sibling_counts_toward_the_delegation_rounds(
    door: str, visit_for: Visits
) -> None:
    # One round: the orchestrator's transfer uses it, so the hand-off cannot
    # happen, and the orchestrator's next transfer ends the turn.
    reply, trace = _turn(
        door,
        visit_for,
        1,
        call("transfer_to_agent", agent_name="navigator"),
        call("transfer_to_agent", agent_name="operator"),
        call("transfer_to_agent", agent_name="operator"),
    )

    assert "all 1 delegation rounds" in reply
    assert REJECT_MARKER not in reply
    assert tuple(trace.path) == ("orchestrator", "navigator")
    assert len(trace.model_calls) == 3
