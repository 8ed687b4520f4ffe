"""Failure shapes of real models, one data entry each, replayed through every door.

A shape is a user request, the model's replies in order (the same script
drives the in-process :class:`~troupe.testing.ScriptedModel` and the
OpenAI-compatible fake server on 127.0.0.1), and what the user and the trace
must show afterwards. Adding a shape adds one test per door and model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Say:
    """A text reply, sent after ``delay`` seconds."""

    text: str
    delay: float = 0.0


@dataclass(frozen=True)
class Call:
    """A function call reply."""

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)


Reply = Say | Call


@dataclass(frozen=True)
class Shape:
    """One failure shape and what every door must make of it."""

    name: str
    script: tuple[Reply, ...]
    answer: str
    """Text the user-visible reply contains."""
    path: tuple[str, ...]
    """The trace's path through the agents."""
    outcome: str = "answered"
    """The trace's outcome."""
    repairs: tuple[tuple[str, str], ...] = ()
    """(bad name, agent) pairs the trace records."""
    hidden: str | None = None
    """Text the user must never see."""
    settings: Mapping[str, Any] = field(default_factory=dict)
    """Config file entries the shape needs (e.g. a time limit)."""
    within_s: float | None = None
    """Seconds the turn must end within, when the shape is about time."""
    request: str = "list the files here"


def transfer(agent: str) -> Call:
    return Call("transfer_to_agent", {"agent_name": agent})


SHAPES: tuple[Shape, ...] = (
    Shape(
        name="bad_agent_name_repaired",
        script=(transfer("filesystem_agent"), Say("Two files: notes.txt and a folder.")),
        answer="Two files: notes.txt",
        path=("orchestrator", "operator"),
        repairs=(("filesystem_agent", "operator"),),
    ),
    Shape(
        name="rejection_rerouted",
        script=(
            transfer("navigator"),
            Say("[REJECT] This task requires operator: it is a file task"),
            Call("fs_list", {"path": "."}),
            Say("Found notes.txt in the workspace."),
        ),
        answer="Found notes.txt in the workspace.",
        path=("orchestrator", "navigator", "operator"),
        hidden="[REJECT]",
    ),
    Shape(
        name="empty_turn_nudged",
        script=(transfer("operator"), Call("fs_list", {"path": "."}), Say(""), Say("")),
        answer="The last result, from fs_list",
        path=("orchestrator", "operator"),
        outcome="fallback",
    ),
    Shape(
        name="turn_timeout",
        # The reply would come long after the limit; the turn must not wait for it.
        script=(Say("far too late", delay=30.0),),
        answer="took longer than 2 seconds",
        path=(),
        outcome="timeout",
        hidden="far too late",
        settings={"turn_timeout_s": 2},
        within_s=15.0,
    ),
)
