"""The failure shapes real small models produce, as scripts with their expected outcome.

One row per shape, for any door that can run a turn with a scripted model
(the Assistant, the CLI, ``/run``, ``/run_sse``, ``adk run``, A2A): build the
tree with ``ScriptedModel(replies=list(shape.replies))`` over tools that
include an operator with ``fs_list`` and a navigator (``stub_tools()`` or
``builtin_tools()``), with ``max_delegation_rounds=shape.max_delegation_rounds``,
send ``shape.request``, then check

* the transfers in the events equal ``shape.transfers`` (hand-offs included),
* the tools that ran equal ``shape.tools``,
* every string of ``shape.answer_contains`` is in the visible reply,
* no visible text contains ``[REJECT]``,
* the model was called at most ``shape.max_model_calls`` times.

Each script holds more replies than the turn should use, so a repair that
fails shows up as extra model calls, not as an exhausted script.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from google.adk.events.event import Event

from troupe.runtime.events import steps
from troupe.testing import Reply, call

LIST_FILES = "list the files here"
ANSWER = "Files: a.txt, b/"
_TRANSFER_JSON = '{"name": "transfer_to_agent", "arguments": {"agent_name": "operator"}}'
_ECHO = "[REJECT] This task requires <agent>: <one-sentence reason>"
_SPARE = tuple(ANSWER for _ in range(8))
"""Replies past the expected end: using them means the repair did not hold."""


@dataclass(frozen=True)
class FailureShape:
    """One malformed-reply shape, its script and what the turn must come to."""

    name: str
    replies: tuple[Reply, ...]
    answer_contains: tuple[str, ...]
    max_model_calls: int
    transfers: tuple[str, ...] = ()
    """Agents transferred (or handed) to, in order."""
    tools: tuple[str, ...] = ()
    """Tools that ran, in order."""
    request: str = LIST_FILES
    max_delegation_rounds: int = 5


def _lists_files(name: str, *opening: Reply) -> FailureShape:
    """A shape whose turn, once repaired, reaches operator and lists the files."""
    return FailureShape(
        name=name,
        replies=(*opening, call("fs_list", path="."), ANSWER, *_SPARE),
        transfers=("operator",),
        tools=("fs_list",),
        answer_contains=(ANSWER,),
        max_model_calls=len(opening) + 2,
    )


def _passed_on_by_navigator(name: str, passing_on: Reply) -> FailureShape:
    """A shape misrouted to navigator, which passes the task to operator with ``passing_on``."""
    return FailureShape(
        name=name,
        replies=(
            call("transfer_to_agent", agent_name="navigator"),
            passing_on,
            call("fs_list", path="."),
            ANSWER,
            *_SPARE,
        ),
        transfers=("navigator", "operator"),
        tools=("fs_list",),
        answer_contains=(ANSWER,),
        max_model_calls=4,
    )


SHAPES: tuple[FailureShape, ...] = (
    _lists_files("agent_called_as_function", call("operator", command="ls")),
    _lists_files("agent_like_name_called_as_function", call("file_agent", path=".")),
    _lists_files("specialist_tool_called_by_orchestrator", call("fs_list", path=".")),
    _lists_files("transfer_as_json_text", _TRANSFER_JSON),
    _lists_files("transfer_in_fenced_json", f"```json\n{_TRANSFER_JSON}\n```"),
    _lists_files("transfer_as_python_text", 'transfer_to_agent(agent_name="operator")'),
    _lists_files("transfer_in_tool_call_tags", f"<tool_call>\n{_TRANSFER_JSON}\n</tool_call>"),
    FailureShape(
        name="tool_call_as_json_text_at_specialist",
        replies=(
            call("transfer_to_agent", agent_name="operator"),
            '```json\n{"name": "fs_list", "arguments": {"path": "."}}\n```',
            ANSWER,
            *_SPARE,
        ),
        transfers=("operator",),
        tools=("fs_list",),
        answer_contains=(ANSWER,),
        max_model_calls=3,
    ),
    _lists_files(
        "empty_json_block_then_a_decision",
        "```json\n```",
        call("transfer_to_agent", agent_name="operator"),
    ),
    FailureShape(
        name="empty_replies_end_fast",
        replies=("{}", "```json\n{}\n```", *_SPARE),
        answer_contains=("No answer was produced",),
        max_model_calls=2,
    ),
    FailureShape(
        name="orchestrator_echoes_reject",
        replies=(_ECHO, _ECHO, *_SPARE),
        answer_contains=("No answer was produced",),
        max_model_calls=2,
    ),
    _lists_files(
        "orchestrator_echoes_reject_naming_an_agent",
        "[REJECT] This task requires operator: it lists files.",
    ),
    # Misrouted to navigator, which calls operator by name: the runtime hands
    # the task to operator. No page is opened, so every door runs it.
    _passed_on_by_navigator(
        "specialist_calls_another_agent_as_function", call("operator", command="ls")
    ),
    FailureShape(
        name="same_unknown_agent_twice",
        replies=tuple(call("transfer_to_agent", agent_name="wizard") for _ in range(12)),
        answer_contains=("'wizard'", "operator", "navigator"),
        max_model_calls=6,
    ),
    FailureShape(
        name="same_unknown_agent_called_as_function_twice",
        replies=tuple(call("wizard", task="list files") for _ in range(12)),
        answer_contains=("'wizard'", "operator", "navigator"),
        max_model_calls=6,
    ),
    FailureShape(
        # operator passes to navigator (a rejection, handed on), navigator
        # passes back (refused twice: the orchestrator is asked), and every
        # attempt counts toward the three rounds.
        name="ping_pong_with_three_rounds",
        max_delegation_rounds=3,
        replies=(
            call("transfer_to_agent", agent_name="operator"),
            *(
                call("transfer_to_agent", agent_name=name)
                for _ in range(10)
                for name in ("navigator", "operator")
            ),
        ),
        transfers=("operator", "navigator"),
        tools=(),
        answer_contains=("3 delegation rounds",),
        max_model_calls=12,
    ),
    # Misrouted to navigator, which transfers to operator itself: that is a
    # [REJECT] naming operator, and the runtime hands the task on.
    _passed_on_by_navigator(
        "specialist_transfers_to_a_sibling", call("transfer_to_agent", agent_name="operator")
    ),
)
"""Every shape, by name; ``pytest.mark.parametrize("shape", SHAPES, ids=...)``."""


def shape_id(shape: FailureShape) -> str:
    """The test id of a shape: its name."""
    return shape.name


def check_outcome(shape: FailureShape, events: Iterable[Event], model_calls: int) -> None:
    """Assert that a turn's ``events`` and its ``model_calls`` match what ``shape`` expects."""
    all_steps = [s for e in events for s in steps(e)]
    reply = "\n".join(s.text for s in all_steps if s.kind == "text")
    assert tuple(s.name for s in all_steps if s.kind == "transfer") == shape.transfers
    assert tuple(s.name for s in all_steps if s.kind == "tool_call") == shape.tools
    for expected in shape.answer_contains:
        assert expected in reply
    assert "[REJECT]" not in reply
    assert model_calls <= shape.max_model_calls
