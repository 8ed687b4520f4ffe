"""Call one tool through ADK's real Runner with a scripted model, as a model would.

:func:`call_tool` scripts three model turns (the orchestrator transfers to the
specialist, the specialist calls the tool, then answers) and returns what the
model was shown as the tool's result. Approvals follow ``policy`` (``auto``
unless a test says otherwise), so every test sees exactly what would reach a
real model under that policy.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from google.adk.events.event import Event
from google.adk.sessions.base_session_service import BaseSessionService

from troupe import Assistant, Config, Tool, build_agent_tree
from troupe.mcp import McpServer, approve_unjailed_start, close_toolsets, waiting_for_approval
from troupe.routing.partition import owner_of
from troupe.runtime.approvals import ApprovalPolicy, AskUser, run_with_approvals
from troupe.settings import Settings
from troupe.stores.traces import TraceStore
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


def _one_call(agent: str, tool: str, args: dict[str, Any] | None) -> ScriptedModel:
    """A model that routes to ``agent``, calls ``tool`` with ``args`` and answers."""
    return ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name=agent),
            call(tool, **(args or {})),
            # A dangerous tool pauses the turn for approval, and the pause costs
            # a model call of its own; spare answers cover it.
            "Reported the result.",
            "Reported the result.",
        ]
    )


async def call_tool(
    tools: Sequence[Tool],
    tool: str,
    args: dict[str, Any] | None = None,
    *,
    session_service: BaseSessionService | None = None,
    user_id: str = "user",
    session_id: str = "s1",
    trace_store: TraceStore | None = None,
    policy: ApprovalPolicy = "auto",
    ask: AskUser | None = None,
) -> ToolRun:
    """Call ``tool`` with ``args`` through the orchestrator and its owner.

    ``ask`` answers approval requests under the ``ask`` policy."""
    agent = owner_of(tool, DEFAULT_TOPOLOGY)
    assert agent is not None, f"{tool} has no owner"
    model = _one_call(agent, tool, args)
    root = build_agent_tree(Config(tools=list(tools), model=model))
    assistant = Assistant(root, session_service, user_id=user_id, trace_store=trace_store)
    events = [
        event
        async for event in run_with_approvals(
            assistant, session_id, f"please use {tool}", policy=policy, ask=ask
        )
    ]
    return ToolRun(shown_result(model, tool), events, model)


def everything_shown(run: ToolRun) -> str:
    """Every text the model was sent during ``run`` (to assert something never leaked)."""
    return "\n".join(str(request.model_dump(mode="json")) for request in run.model.requests)


async def call_server_tool(
    server: McpServer,
    agent: str,
    tool: str,
    args: dict[str, Any] | None = None,
    *,
    policy: ApprovalPolicy = "auto",
) -> ToolRun:
    """Call ``tool`` of the MCP ``server`` (placed with ``agent``) through the runner.

    Where the jail is not active the server starts only with a person's yes;
    these calls test what holds after that yes (each call still asks first),
    so the start is approved here (tests/security/test_mcp_start.py covers
    the server nobody allowed to start)."""
    model = _one_call(agent, tool, args)
    root = build_agent_tree(Config(model=model, mcp_servers=[server]))
    for toolset in waiting_for_approval(root):
        approve_unjailed_start(toolset)
    try:
        events = [
            event
            async for event in run_with_approvals(
                Assistant(root), "s1", f"please use {tool}", policy=policy
            )
        ]
    finally:
        await close_toolsets(root)
    return ToolRun(shown_result(model, tool), events, model)


def served_tool_responses(settings: Settings, tool: str, text: str) -> tuple[list[Any], list[Any]]:
    """One ``/run`` turn on ``text`` through ``troupe serve``'s app on a new session.

    Returns what ``tool`` answered (each ``functionResponse.response``) and every part
    of the turn's events; fails unless ``/run`` answered 200.
    """
    from fastapi.testclient import TestClient

    from troupe.server import ServeOptions, build_app

    sid = f"served-{uuid.uuid4().hex[:8]}"
    with TestClient(build_app(settings, ServeOptions()), base_url="http://127.0.0.1:8000") as web:
        web.post("/apps/troupe/users/u1/sessions", json={"session_id": sid})
        run = web.post(
            "/run",
            json={
                "app_name": "troupe",
                "user_id": "u1",
                "session_id": sid,
                "new_message": {"role": "user", "parts": [{"text": text}]},
            },
        )
    assert run.status_code == 200, run.text
    parts = [part for event in run.json() for part in event["content"]["parts"]]
    responses = [
        part["functionResponse"]["response"]
        for part in parts
        if "functionResponse" in part and part["functionResponse"]["name"] == tool
    ]
    return responses, parts
