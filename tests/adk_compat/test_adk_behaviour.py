"""Each piece of ``troupe/_adk_compat.py`` against the installed ADK.

These tests run plain ADK (its Runner, agents, tools, session services and
API server, with a scripted model) and no troupe runtime, so when an ADK
release changes a private name, an error's wording or an instruction it
injects, the failure names the piece here before anything else breaks.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.artifacts.in_memory_artifact_service import InMemoryArtifactService
from google.adk.auth.credential_service.in_memory_credential_service import (
    InMemoryCredentialService,
)
from google.adk.cli.api_server import ApiServer
from google.adk.cli.utils.base_agent_loader import BaseAgentLoader
from google.adk.events.event import Event
from google.adk.memory.in_memory_memory_service import InMemoryMemoryService
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools.mcp_tool.mcp_session_manager import StdioConnectionParams
from google.adk.tools.mcp_tool.mcp_tool import McpTool
from google.adk.tools.mcp_tool.mcp_toolset import McpToolset
from google.genai import types
from mcp import StdioServerParameters

from troupe import _adk_compat as compat
from troupe.testing import ScriptedModel, call

FAKE_MCP_SERVER = str(Path(__file__).parents[1] / "fakes" / "mcp_server.py")


async def _run(
    agent: LlmAgent, text: str = "hello", plugins: list[BasePlugin] | None = None
) -> list[Event]:
    runner = Runner(
        app_name="pin",
        agent=agent,
        session_service=InMemorySessionService(),
        plugins=plugins or [],
        auto_create_session=True,
    )
    message = types.Content(role="user", parts=[types.Part(text=text)])
    events = [e async for e in runner.run_async(user_id="u", session_id="s", new_message=message)]
    await runner.close()
    return events


def _lookup(query: str) -> dict[str, str]:
    """Looks something up."""
    return {"answer": f"found {query}"}


# -- callbacks -----------------------------------------------------------------


class _EndsBeforeModel(BasePlugin):
    def __init__(self, end: bool) -> None:
        super().__init__(name="ends")
        self.end = end

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        if self.end:
            compat.end_invocation(callback_context)
        return LlmResponse(error_code="STOP", error_message="stopped")


@pytest.mark.parametrize("end", [True, False])
async def test_ending_the_invocation_from_a_callback_skips_the_agents_after_callback(
    end: bool,
) -> None:
    after: list[str] = []

    async def after_agent(callback_context: CallbackContext) -> None:
        after.append(callback_context.agent_name)

    agent = LlmAgent(name="solo", model=ScriptedModel(replies=[]), after_agent_callback=after_agent)
    events = await _run(agent, plugins=[_EndsBeforeModel(end)])
    assert [e.error_code for e in events if e.error_code] == ["STOP"]
    assert after == ([] if end else ["solo"])


class _EnqueuesNote(BasePlugin):
    def __init__(self) -> None:
        super().__init__(name="enqueues")
        self.run_ctx: InvocationContext | None = None
        self.sent: bool | None = None

    async def before_run_callback(self, *, invocation_context: InvocationContext) -> None:
        self.run_ctx = invocation_context

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        assert self.run_ctx is not None
        note = Event(
            author="note",
            invocation_id=self.run_ctx.invocation_id,
            content=types.Content(role="model", parts=[types.Part(text="from a timer")]),
        )
        self.sent = compat.enqueue_event_nowait(self.run_ctx, note)
        return None


async def test_an_event_put_on_the_runners_queue_reaches_the_caller() -> None:
    plugin = _EnqueuesNote()
    agent = LlmAgent(name="solo", model=ScriptedModel(replies=["the answer"]))
    events = await _run(agent, plugins=[plugin])
    assert plugin.sent is True
    authors = [(e.author, e.content.parts[0].text) for e in events if e.content and e.content.parts]
    assert ("note", "from a timer") in authors
    assert ("solo", "the answer") in authors


async def test_the_ids_adk_gives_calls_are_kept_from_the_model() -> None:
    tool = compat.NamedFunctionTool(_lookup, name="lib_lookup", description="Finds facts.")
    model = ScriptedModel(replies=[call("lib_lookup", query="owls"), "done"])
    events = await _run(LlmAgent(name="solo", model=model, tools=[tool]))
    ids = [c.id for e in events for c in e.get_function_calls()]
    assert ids and all(str(i).startswith(compat.CLIENT_CALL_ID_PREFIX) for i in ids)
    seen = [
        (part.function_call or part.function_response).id  # type: ignore[union-attr]
        for content in model.requests[-1].contents
        for part in content.parts or []
        if part.function_call or part.function_response
    ]
    assert len(seen) == 2 and seen == [None, None]


# -- tools ---------------------------------------------------------------------


def test_a_named_function_tool_is_declared_under_its_name_and_description() -> None:
    tool = compat.NamedFunctionTool(_lookup, name="lib_lookup", description="Finds facts.")
    request = LlmRequest()
    request.append_tools([tool])
    assert request.tools_dict == {"lib_lookup": tool}
    tools = request.config.tools or []
    assert isinstance(tools[0], types.Tool)
    (decl,) = tools[0].function_declarations or []
    assert (decl.name, decl.description) == ("lib_lookup", "Finds facts.")
    schema = decl.parameters_json_schema or (
        decl.parameters.model_dump(exclude_none=True) if decl.parameters else {}
    )
    assert list(schema["properties"]) == ["query"]


async def test_a_named_function_tool_is_offered_and_called_under_its_name() -> None:
    tool = compat.NamedFunctionTool(_lookup, name="lib_lookup", description="Finds facts.")
    model = ScriptedModel(replies=[call("lib_lookup", query="owls"), "done"])
    events = await _run(LlmAgent(name="solo", model=model, tools=[tool]))
    declared = [
        d.name
        for t in model.requests[0].config.tools or []
        if isinstance(t, types.Tool)
        for d in t.function_declarations or []
    ]
    assert declared == ["lib_lookup"]
    results = [r.response for e in events for r in e.get_function_responses()]
    assert results == [{"answer": "found owls"}]


@pytest.fixture
async def mcp_toolset() -> AsyncIterator[McpToolset]:
    toolset = McpToolset(
        connection_params=StdioConnectionParams(
            server_params=StdioServerParameters(command=sys.executable, args=[FAKE_MCP_SERVER]),
            timeout=20,
        )
    )
    yield toolset
    await toolset.close()


async def test_the_mcp_toolset_lists_plain_mcp_tools_that_a_subclass_can_adopt(
    mcp_toolset: McpToolset,
) -> None:
    class Adopted(McpTool):
        extra: str = "troupe"

        def server_name(self) -> str:
            return self.raw_mcp_tool.name

    tools = await mcp_toolset.get_tools()
    assert tools and all(type(t) is McpTool for t in tools)
    tool = tools[0]
    assert isinstance(tool, McpTool)
    before = LlmRequest()
    before.append_tools([tool])
    adopted = compat.adopt_mcp_tool(tool, Adopted)
    assert adopted is tool and type(tool) is Adopted
    assert adopted.server_name() == adopted.name and adopted.extra == "troupe"
    after = LlmRequest()
    after.append_tools([adopted])
    assert after.config.tools == before.config.tools


def test_adopting_refuses_a_subclass_with_its_own_state() -> None:
    class WithInit(McpTool):
        def __init__(self) -> None:  # pragma: no cover - never called
            pass

    class Slotted(McpTool):
        __slots__ = ("x",)

    tool = McpTool.__new__(McpTool)
    with pytest.raises(TypeError, match="without __init__"):
        compat.adopt_mcp_tool(tool, WithInit)
    with pytest.raises(TypeError, match="__slots__"):
        compat.adopt_mcp_tool(tool, Slotted)


# -- the API server ------------------------------------------------------------


class _OneAgent(BaseAgentLoader):
    def __init__(self, agent: LlmAgent) -> None:
        self.agent = agent

    def load_agent(self, agent_name: str) -> LlmAgent:
        return self.agent

    def list_agents(self) -> list[str]:
        return [self.agent.name]


class _MarkedRunner(Runner):
    pass


async def test_the_api_server_builds_each_runner_with_the_given_factory(tmp_path: Path) -> None:
    made: list[tuple[str, Any]] = []

    def make(server: Any, app: Any, app_name: str) -> Runner:
        made.append((app_name, server))
        return _MarkedRunner(
            app=app,
            app_name=app_name,
            session_service=server.session_service,
            artifact_service=server.artifact_service,
            memory_service=server.memory_service,
            credential_service=server.credential_service,
        )

    from google.adk.evaluation.local_eval_set_results_manager import (
        LocalEvalSetResultsManager,
    )
    from google.adk.evaluation.local_eval_sets_manager import LocalEvalSetsManager

    server_cls = compat.server_with_runner(ApiServer, make, name="MarkedApiServer")
    server = server_cls(
        agent_loader=_OneAgent(LlmAgent(name="solo", model=ScriptedModel(replies=[]))),
        session_service=InMemorySessionService(),
        memory_service=InMemoryMemoryService(),
        artifact_service=InMemoryArtifactService(),
        credential_service=InMemoryCredentialService(),
        eval_sets_manager=LocalEvalSetsManager(agents_dir=str(tmp_path)),
        eval_set_results_manager=LocalEvalSetResultsManager(agents_dir=str(tmp_path)),
        agents_dir=str(tmp_path),
    )
    runner = await server.get_runner_async("solo")
    assert isinstance(runner, _MarkedRunner)
    assert made == [("solo", server)]
    assert server_cls.__name__ == "MarkedApiServer"
    await runner.close()


# -- A2A -----------------------------------------------------------------------


def test_an_unauthenticated_a2a_message_runs_as_the_user_named_by_its_context() -> None:
    from fastapi.testclient import TestClient
    from google.adk.a2a.utils.agent_to_a2a import to_a2a

    agent = LlmAgent(name="solo", model=ScriptedModel(replies=["hi"]))
    sessions = InMemorySessionService()
    runner = Runner(app_name="pin", agent=agent, session_service=sessions)
    app = to_a2a(agent, runner=runner)
    message = {
        "role": "ROLE_USER",
        "messageId": "m-1",
        "contextId": "ctx-pin",
        "parts": [{"text": "hello"}],
    }
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    with TestClient(app) as client:
        reply = client.post("/", json=rpc, headers={"A2A-Version": "1.0"})
    assert reply.status_code == 200, reply.text
    import asyncio

    found = asyncio.run(
        sessions.get_session(
            app_name="pin", user_id=compat.a2a_user_id("ctx-pin"), session_id="ctx-pin"
        )
    )
    assert found is not None and found.events


# -- sessions ------------------------------------------------------------------


def test_the_sqlite_session_service_keeps_the_path_it_was_opened_on(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    assert compat.sqlite_session_path(SqliteSessionService(str(path))) == str(path)


async def test_a_stale_session_reloaded_in_place_with_its_marker_can_be_written(
    tmp_path: Path,
) -> None:
    service = DatabaseSessionService(f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}")
    await service.create_session(app_name="a", user_id="u", session_id="s")
    mine = await service.get_session(app_name="a", user_id="u", session_id="s")
    theirs = await service.get_session(app_name="a", user_id="u", session_id="s")
    assert mine is not None and theirs is not None
    assert compat.storage_marker(mine) is not None

    def said(text: str) -> Event:
        return Event(
            author="user", content=types.Content(role="user", parts=[types.Part(text=text)])
        )

    await service.append_event(theirs, said("theirs"))
    with pytest.raises(ValueError):
        await service.append_event(mine, said("stale"))
    fresh = await service.get_session(app_name="a", user_id="u", session_id="s")
    assert fresh is not None
    assert compat.storage_marker(fresh) != compat.storage_marker(mine)
    mine.events[:] = fresh.events
    mine.last_update_time = fresh.last_update_time
    compat.set_storage_marker(mine, compat.storage_marker(fresh))
    await service.append_event(mine, said("mine"))
    stored = await service.get_session(app_name="a", user_id="u", session_id="s")
    assert stored is not None
    assert [e.content.parts[0].text for e in stored.events if e.content and e.content.parts] == [
        "theirs",
        "mine",
    ]
    await service.close()


# -- ADK's words ---------------------------------------------------------------


async def test_an_unknown_transfer_target_is_read_from_adks_error() -> None:
    model = ScriptedModel(replies=[call("transfer_to_agent", agent_name="nobody")])
    helper = LlmAgent(name="helper", model=model, description="Helps.")
    root = LlmAgent(name="root", model=model, sub_agents=[helper])
    with pytest.raises(Exception) as caught:
        await _run(root)
    assert compat.unknown_agent_name(caught.value) == "nobody"


async def test_the_transfer_list_adk_appends_is_taken_out_whole() -> None:
    model = ScriptedModel(replies=["hi"])
    helper = LlmAgent(name="helper", model=model, description="Helps with owls.")
    root = LlmAgent(name="root", model=model, instruction="ROOT RULES.", sub_agents=[helper])
    await _run(root)
    si = model.requests[0].config.system_instruction
    assert isinstance(si, str) and "Helps with owls." in si
    trimmed = compat.without_transfer_list(si)
    assert "ROOT RULES." in trimmed
    assert "Helps with owls." not in trimmed
    assert "transfer_to_agent" not in trimmed
    assert "Agent name:" not in trimmed


async def test_adks_lead_in_to_a_failed_mcp_connection_is_taken_off() -> None:
    toolset = McpToolset(
        connection_params=StdioConnectionParams(
            server_params=StdioServerParameters(
                command=sys.executable, args=[FAKE_MCP_SERVER, "--fail"]
            ),
            timeout=10,
        )
    )
    try:
        with pytest.raises(BaseException) as caught:
            await toolset.get_tools()
    finally:
        await toolset.close()
    messages: list[str] = []
    current: BaseException | None = caught.value
    while current is not None:
        if isinstance(current, BaseExceptionGroup) and current.exceptions:
            current = current.exceptions[0]
            continue
        messages.append(str(current))
        current = current.__cause__
    led = [m for m in messages if m.startswith("Failed to create MCP session: ")]
    assert led, messages
    assert not any(compat.without_mcp_session_prefix(m).startswith("Failed to create") for m in led)


async def test_a_tool_result_adk_relays_to_the_next_agent_is_read_back() -> None:
    model = ScriptedModel(
        replies=[
            call("lib_lookup", query="owls"),
            call("transfer_to_agent", agent_name="helper"),
            "helped",
        ]
    )
    tool = compat.NamedFunctionTool(_lookup, name="lib_lookup", description="Finds facts.")
    helper = LlmAgent(name="helper", model=model, description="Helps.")
    root = LlmAgent(name="root", model=model, tools=[tool], sub_agents=[helper])
    await _run(root, text="find owls")
    relayed = [
        part.text
        for content in model.requests[-1].contents
        if content.role == "user"
        for part in content.parts or []
        if part.text
    ]
    assert relayed[0] == "find owls" and not compat.is_relayed_context(relayed[0])
    assert all(compat.is_relayed_context(text) for text in relayed[1:])
    results = [r for text in relayed for r in compat.relayed_tool_results(text)]
    assert results[0][0] == "lib_lookup" and "found owls" in results[0][1]
    assert [tool for tool, _ in results] == ["lib_lookup", "transfer_to_agent"]
