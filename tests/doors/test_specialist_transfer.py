"""A specialist's own ``transfer_to_agent`` to a sibling follows the reject protocol: it
is that specialist's ``[REJECT]``, re-routed by the runtime and counted as a round.
(The re-route itself runs at every door as the ``specialist_transfers_to_a_sibling``
shape of ``tests/fakes/shapes.py``.)"""

from __future__ import annotations

import pytest
from door_models import Visits
from door_runs import DOORS

from troupe.prompts import REJECT_MARKER
from troupe.stores.traces import TraceStore
from troupe.testing import ScriptedModel, call


@pytest.mark.parametrize("door", ["chat", "run"])
def test_specialist_transfer_to_a_sibling_counts_toward_the_delegation_rounds(
    door: str, visit_for: Visits
) -> None:
    # One round: the orchestrator's transfer uses it, so navigator's hand-off
    # cannot happen, and the orchestrator's next transfer ends the turn.
    transfers = [call("transfer_to_agent", agent_name=n) for n in ("navigator", "operator")]
    model = ScriptedModel(replies=[*transfers, transfers[-1], *["unused"] * 6])
    visit = visit_for.scripted(model, {"max_delegation_rounds": 1}, "list the files here")

    reply = DOORS[door](visit)

    assert "all 1 delegation rounds" in reply
    assert REJECT_MARKER not in reply
    (trace,) = TraceStore(visit.data_dir / "traces.db").list(limit=5)
    assert (tuple(trace.path), trace.rejections) == (("orchestrator", "navigator"), ["navigator"])
    assert len(trace.model_calls) == 3
