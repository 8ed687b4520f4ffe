"""Drive one built-in tool through ADK's real Runner with a scripted model.

``run_tool`` scripts three model turns (the orchestrator transfers to the
specialist, the specialist calls the tool, then answers) and returns what the
model was shown as the tool's result, so every test sees exactly what would
reach a real model. Dangerous tools are approved automatically.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from google.adk.events.event import Event
from google.adk.sessions.base_session_service import BaseSessionService

from troupe import Assistant, Config, Tool, build_agent_tree, builtin_tools
from troupe.routing.partition import owner_of
from troupe.runtime.approvals import run_with_approvals
from troupe.runtime.tracing import TraceStore
from troupe.testing import ScriptedModel, call
from troupe.topology import DEFAULT_TOPOLOGY


@dataclass
class ToolRun:
    """One tool call made through the runner."""

    response: dict[str, Any]
    """The tool's result as the model received it."""
    events: list[Event]
    model: ScriptedModel


RunTool = Callable[..., Awaitable[ToolRun]]


def shown_result(model: ScriptedModel, tool: str) -> dict[str, Any]:
    """The last result of ``tool`` in the requests the model received."""
    for request in reversed(model.requests):
        for content in reversed(request.contents):
            for part in content.parts or []:
                response = part.function_response
                if response is not None and response.name == tool:
                    return dict(response.response or {})
    raise AssertionError(f"the model was never shown a result of {tool}")


async def call_tool(
    tools: Sequence[Tool],
    tool: str,
    args: dict[str, Any] | None = None,
    *,
    session_service: BaseSessionService | None = None,
    user_id: str = "user",
    session_id: str = "s1",
    trace_store: TraceStore | None = None,
) -> ToolRun:
    """Call ``tool`` with ``args`` through the orchestrator and its owner."""
    agent = owner_of(tool, DEFAULT_TOPOLOGY)
    assert agent is not None, f"{tool} has no owner"
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name=agent),
            call(tool, **(args or {})),
            # A dangerous tool pauses the turn for approval, and the pause costs
            # a model call of its own; spare answers cover it.
            "Reported the result.",
            "Reported the result.",
        ]
    )
    root = build_agent_tree(Config(tools=list(tools), model=model))
    assistant = Assistant(root, session_service, user_id=user_id, trace_store=trace_store)
    events = [
        event
        async for event in run_with_approvals(
            assistant, session_id, f"please use {tool}", policy="auto"
        )
    ]
    return ToolRun(shown_result(model, tool), events, model)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace folder."""
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """Where the stores live for this test."""
    return tmp_path / "data"


@pytest.fixture
def tools(workspace: Path, data_dir: Path) -> list[Tool]:
    """Every built-in tool, on this test's workspace and data directory."""
    return builtin_tools(workspace=workspace, data_dir=data_dir)


@pytest.fixture
def run_tool(tools: list[Tool]) -> RunTool:
    """``await run_tool("save_knowledge", {"text": ...})`` -> ToolRun."""

    async def run(tool: str, args: dict[str, Any] | None = None, **options: Any) -> ToolRun:
        return await call_tool(tools, tool, args, **options)

    return run


@pytest.fixture
def run_with() -> Callable[..., Awaitable[ToolRun]]:
    """``await run_with(tools, "tool", {...})``: like run_tool, on a tool list of your own."""
    return call_tool
