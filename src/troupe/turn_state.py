"""Keys in a session's state that troupe's runtime pieces share.

A plan step runs in a nested ADK run with its own session and invocation; the
guards must still count its model calls and tool calls against the turn that
started it. The step tool writes where that turn is (:data:`PARENT_TURN_KEY`)
into the state the nested session starts from, and the guards read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PARENT_TURN_KEY = "troupe.parent_turn"
"""State key: ``{"session": id, "invocation": id}`` of the turn a nested run belongs to."""


def parent_turn(state: Mapping[str, Any]) -> tuple[str, str] | None:
    """(session id, invocation id) of the turn ``state``'s run belongs to, if nested."""
    return turn_of(state.get(PARENT_TURN_KEY))


def turn_of(value: object) -> tuple[str, str] | None:
    """(session id, invocation id) from a :data:`PARENT_TURN_KEY` value, if it is one."""
    if not isinstance(value, dict):
        return None
    session, invocation = value.get("session"), value.get("invocation")
    if isinstance(session, str) and isinstance(invocation, str):
        return session, invocation
    return None


NOTE_AUTHOR = "troupe"
"""Author of the events troupe adds itself (not from a model)."""
OUTCOME_KEY = "troupe_outcome"
"""An event's ``custom_metadata`` key naming how troupe ended its turn (one of the trace
outcomes, :data:`troupe.stores.traces.OUTCOMES`)."""
