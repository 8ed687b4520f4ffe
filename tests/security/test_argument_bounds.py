"""Arguments nested too deeply or too large get a tool error; the turn goes on.

A hostile model sends a 900-level nested argument (which once ended the turn
with RecursionError) or an oversized one, through the real runner and through
``troupe serve``'s ``/run``; the model is shown a clear error and answers.
"""

from __future__ import annotations

import typing
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import Field

from fakes.scripted import scripted_assistant, turn_events
from fakes.tool_runs import call_tool, everything_shown, served_tool_responses, shown_result
from troupe import Tool
from troupe.models.bounded import BoundedModel
from troupe.models.resilient import TransientModelError
from troupe.settings import load_settings
from troupe.testing import ScriptedModel, call
from troupe.tool_arguments import MAX_ARGUMENT_DEPTH, MAX_ARGUMENTS_BYTES, argument_problem


def _nested(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = {"k": value}
    return value


async def test_900_level_nested_arguments_get_a_tool_error_and_the_turn_goes_on(
    tools: list[Tool],
) -> None:
    run = await call_tool(tools, "fs_write", {"path": "a.txt", "content": _nested(900)})

    assert run.response["error"] == (
        f"fs_write was not run: its arguments nested deeper than {MAX_ARGUMENT_DEPTH} levels."
    )
    last = run.events[-1].content
    assert last is not None and last.parts
    assert last.parts[0].text == "Reported the result."
    assert "RecursionError" not in everything_shown(run)


async def test_arguments_larger_than_the_bound_get_a_tool_error(
    tools: list[Tool], workspace: Path
) -> None:
    pieces = ["x" * 1_000_000] * (MAX_ARGUMENTS_BYTES // 1_000_000 + 1)

    run = await call_tool(tools, "fs_write", {"path": "b.txt", "content": pieces})

    assert run.response["error"] == (
        f"fs_write was not run: its arguments larger than {MAX_ARGUMENTS_BYTES} bytes."
    )
    assert not (workspace / "b.txt").exists()


async def test_moderately_nested_arguments_still_reach_the_tool(tools: list[Tool]) -> None:
    run = await call_tool(tools, "fs_write", {"path": "c.txt", "content": _nested(3)})

    assert "was not run" not in run.response.get("error", "")


def test_run_answers_200_with_the_error_for_deeply_nested_arguments(
    workspace: Path, tmp_path: Path
) -> None:
    settings = load_settings(
        workspace=workspace, data_dir=tmp_path / "data", session_store="memory://"
    )
    settings.config.model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="operator"),
            call("fs_read", path=_nested(900)),
            "Could not do it.",
        ]
    )
    responses, parts = served_tool_responses(settings, "fs_read", "read it")

    errors = [response["error"] for response in responses]
    assert errors == [
        f"fs_read was not run: its arguments nested deeper than {MAX_ARGUMENT_DEPTH} levels."
    ]
    assert parts[-1].get("text") == "Could not do it."


async def test_a_retried_reply_with_deep_arguments_gets_the_same_tool_error(
    tools: list[Tool],
) -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="operator"),
            TransientModelError(503, "overloaded"),  # the retry asks the model again
            call("fs_read", path=_nested(900)),
            "Reported the result.",
        ]
    )
    assistant = scripted_assistant(model, tools)

    events = await turn_events(assistant, "read it")

    assert shown_result(model, "fs_read")["error"] == (
        f"fs_read was not run: its arguments nested deeper than {MAX_ARGUMENT_DEPTH} levels."
    )
    last = events[-1].content
    assert last is not None and last.parts and last.parts[0].text == "Reported the result."


class _StreamingModel(BaseLlm):
    """Yields two replies and records when its stream is closed."""

    model: str = "streaming-fake"
    closed: list[str] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        try:
            for text in ("one", "two"):
                content = types.Content(role="model", parts=[types.Part(text=text)])
                yield LlmResponse(content=content)
        finally:
            self.closed.append("closed")


async def test_the_bounded_model_closes_the_models_stream_when_its_own_is_closed() -> None:
    inner = _StreamingModel()
    replies = BoundedModel.around(inner).generate_content_async(LlmRequest())

    await anext(replies)
    await replies.aclose()

    # Closed then and there, not left to the event loop's finalizer (which cost
    # every turn a wake-up of the loop and kept the stream alive until then).
    assert inner.closed == ["closed"]


def test_a_tools_annotations_are_read_once_however_often_it_is_called(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def count_lines(path: str, limit: int = 10) -> int:
        return limit

    reads: list[object] = []
    real = typing.get_type_hints

    def counted(target: Any) -> dict[str, Any]:
        reads.append(target)
        return real(target)

    monkeypatch.setattr(typing, "get_type_hints", counted)
    for _ in range(3):
        assert argument_problem(count_lines, {"path": "a.txt", "limit": 5}) is None
    refused = argument_problem(count_lines, {"path": ["a.txt"]})

    assert refused is not None and "path" in refused.message
    assert reads == [count_lines]
