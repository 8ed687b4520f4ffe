"""End to end through ADK's Runner: troupe.Assistant driving a scripted model."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from google.adk.sessions.in_memory_session_service import InMemorySessionService

from fakes.scripted import scripted_assistant, turn_events
from troupe import Assistant, Config, Tool, UnknownAgentError, build_agent_tree
from troupe._adk_compat import unknown_agent_name
from troupe.builtins import Workspace, operator_tools
from troupe.runtime.events import steps
from troupe.testing import (
    ScriptedModel,
    ScriptExhaustedError,
    call,
    declared_tools,
    simplify,
    user_texts,
)

# The retry tests build the tree with transfer_repair=False: the in-flight
# repair guard would otherwise answer a bad transfer inside the run, and the
# Assistant's specified retry (correction message, then UnknownAgentError) is
# what they check.
VALID_AGENTS = ("operator", "navigator", "vault", "planner")
CORRECTION = (
    '[System: Agent "operater" does not exist. Valid agents: operator, navigator, vault, '
    "planner. Please retry using one of the valid agent names listed above.]"
)


def browser_open(url: str) -> dict[str, str]:
    """Open a web page and return its title."""
    return {"title": f"page at {url}"}


def secrets_get(name: str) -> dict[str, str]:
    """Read a stored secret by name."""
    return {"name": name, "value": "***"}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("remember the milk\n", encoding="utf-8")
    (tmp_path / "src").mkdir()
    return tmp_path


@pytest.fixture
def tools(workspace: Path) -> list[Tool]:
    # Tools for three specialists, so the tree has operator, navigator, vault
    # and the always-present planner.
    return [
        *operator_tools(Workspace(workspace)),
        Tool.from_function(browser_open),
        Tool.from_function(secrets_get),
    ]


DELEGATION = [
    ("orchestrator", "transfer", "operator"),
    ("operator", "tool_call", "fs_list"),
    ("operator", "tool_result", "fs_list"),
    ("operator", "text", None),
]


async def test_delegation_runs_orchestrator_then_operator_tool_then_answer(
    tools: list[Tool],
) -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="operator"),
            call("fs_list", path="."),
            "The workspace holds notes.txt and src/.",
        ]
    )
    events = await turn_events(scripted_assistant(model, tools), "list the files here")

    assert simplify(events) == DELEGATION
    result = next(s for e in events for s in steps(e) if s.kind == "tool_result")
    assert json.loads(result.text)["entries"] == ["notes.txt", "src/"]
    assert model.remaining == 0


async def test_orchestrator_sees_only_transfer_and_operator_sees_its_own_tools(
    tools: list[Tool],
) -> None:
    model = ScriptedModel(
        replies=[call("transfer_to_agent", agent_name="operator"), call("fs_list"), "done"]
    )
    await turn_events(scripted_assistant(model, tools), "list the files here")

    orchestrator_request, operator_request, _ = model.requests
    assert declared_tools(orchestrator_request) == ["transfer_to_agent"]
    operator_names = {t.name for t in tools if t.name.startswith(("fs_", "exec"))}
    assert {"fs_list", "exec_shell"} <= operator_names
    assert set(declared_tools(operator_request)) == operator_names


async def test_run_and_collect_returns_only_the_user_visible_text(tools: list[Tool]) -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="operator"),
            call("fs_list", path="."),
            "The workspace holds notes.txt and src/.",
        ]
    )
    reply = await scripted_assistant(model, tools).run_and_collect("s1", "list the files here")

    assert reply == "The workspace holds notes.txt and src/."


async def test_greeting_is_answered_directly_without_a_transfer(tools: list[Tool]) -> None:
    model = ScriptedModel(replies=["Hello! What can I do for you?"])
    events = await turn_events(scripted_assistant(model, tools), "hello")

    assert simplify(events) == [("orchestrator", "text", None)]
    assert len(model.requests) == 1


async def test_single_agent_mode_calls_tools_itself_without_transfers(
    tools: list[Tool],
) -> None:
    model = ScriptedModel(
        replies=[call("fs_read", path="notes.txt"), "It says: remember the milk."]
    )
    assistant = scripted_assistant(model, tools, multi_agent=False)
    events = await turn_events(assistant, "read notes.txt")

    assert simplify(events) == [
        ("assistant", "tool_call", "fs_read"),
        ("assistant", "tool_result", "fs_read"),
        ("assistant", "text", None),
    ]
    declared = declared_tools(model.requests[0])
    assert "transfer_to_agent" not in declared
    assert {"fs_read", "exec_shell", "browser_open", "secrets_get"} <= set(declared)


async def test_unknown_agent_is_corrected_once_in_the_same_session(
    tools: list[Tool], caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="operater"),
            call("transfer_to_agent", agent_name="operator"),
            call("fs_list", path="."),
            "The workspace holds notes.txt and src/.",
        ]
    )
    assistant = scripted_assistant(model, tools, transfer_repair=False)
    with caplog.at_level(logging.WARNING, logger="troupe.runtime"):
        events = await turn_events(assistant, "list the files here")

    assert simplify(events)[-4:] == DELEGATION
    retry_request = model.requests[1]
    texts = user_texts(retry_request)
    assert texts[0] == "list the files here"  # same session: the history is kept
    assert texts[-1] == CORRECTION
    assert any("operater" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)


async def test_second_unknown_agent_raises_unknown_agent_error(tools: list[Tool]) -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="operater"),
            call("transfer_to_agent", agent_name="opperator"),
            "never reached",
        ]
    )
    with pytest.raises(UnknownAgentError) as caught:
        await turn_events(
            scripted_assistant(model, tools, transfer_repair=False), "list the files here"
        )

    assert caught.value.agent_name == "opperator"
    assert caught.value.valid_names == VALID_AGENTS
    assert "opperator" in str(caught.value)
    assert len(model.requests) == 2  # retried exactly once


async def test_other_errors_are_raised_without_a_retry(tools: list[Tool]) -> None:
    model = ScriptedModel(replies=[RuntimeError("quota exceeded"), "never reached"])
    with pytest.raises(RuntimeError, match="quota exceeded"):
        await turn_events(scripted_assistant(model, tools), "list the files here")

    assert len(model.requests) == 1


@pytest.mark.parametrize(
    "message",
    [
        "Transfer target agent 'operater' not found.",
        "Agent operater not found in the agent tree.",
        "failed to find agent: operater",
    ],
    ids=["adk-2.13", "adk-older", "go"],
)
async def test_each_unknown_agent_error_format_triggers_the_correction(
    tools: list[Tool], message: str
) -> None:
    model = ScriptedModel(replies=[ValueError(message), "Sorry, here is my answer."])
    reply = await scripted_assistant(model, tools, transfer_repair=False).run_and_collect(
        "s1", "list the files here"
    )

    assert reply == "Sorry, here is my answer."
    assert user_texts(model.requests[1])[-1] == CORRECTION


async def test_session_is_created_on_first_use_and_kept_between_turns(
    tools: list[Tool],
) -> None:
    sessions = InMemorySessionService()
    model = ScriptedModel(replies=["Hi there.", "Still here."])
    assistant = Assistant(build_agent_tree(Config(tools=tools, model=model)), sessions)
    found = await sessions.get_session(
        app_name=assistant.app_name, user_id=assistant.user_id, session_id="new"
    )
    assert found is None

    await assistant.run_and_collect("new", "hello")
    await assistant.run_and_collect("new", "are you there?")

    session = await sessions.get_session(
        app_name=assistant.app_name, user_id=assistant.user_id, session_id="new"
    )
    assert session is not None
    assert user_texts(model.requests[1]) == ["hello", "are you there?"]


@pytest.mark.parametrize(
    ("message", "name"),
    [
        ("Transfer target agent 'web_agent' not found.", "web_agent"),
        ("Agent web_agent not found in the agent tree.", "web_agent"),
        ("Agent 'web_agent' not found in the agent tree.", "web_agent"),
        ("failed to find agent: web_agent", "web_agent"),
        ("run failed: failed to find agent: web_agent", "web_agent"),
    ],
)
def test_unknown_agent_name_is_read_from_each_error_format(message: str, name: str) -> None:
    assert unknown_agent_name(ValueError(message)) == name


@pytest.mark.parametrize(
    "message",
    ["Transfer failed.", "Agent tree is empty.", "Tool 'fs_list' not found."],
)
def test_unrelated_errors_name_no_agent(message: str) -> None:
    assert unknown_agent_name(RuntimeError(message)) is None


async def test_scripted_model_accepts_tuples_and_says_when_its_script_runs_out(
    tools: list[Tool],
) -> None:
    model = ScriptedModel(replies=[("transfer_to_agent", {"agent_name": "operator"})])

    with pytest.raises(ScriptExhaustedError, match="only 1 replies"):
        await turn_events(scripted_assistant(model, tools), "list the files here")

    assert len(model.requests) == 2
    assert model.remaining == 0
