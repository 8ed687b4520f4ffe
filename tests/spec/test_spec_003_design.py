"""Design note 003: the decisions it makes, checked through troupe's public API.

Decisions: (1) capability abstraction over raw tool names, (2) a single retry
with a correction message when the model names an agent that does not exist,
(3) run-and-collect split into a run that yields events and a collector.
Risks: a tool missing from the map degrades to "general actions"; troupe makes
the description order deterministic (first seen) where the Go map was not.
"""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.agents import LlmAgent

import troupe
from fakes.named_tools import make_tool, named_tree
from troupe.testing import ScriptedModel, call, simplify, system_text, user_texts

CLASSIC_TOOL_NAMES = ["exec_shell", "fs_read", "browser_navigate", "search_web", "memory_store"]
CLASSIC_AGENTS = ("executor", "researcher", "planner", "memory_manager")
# A name no repair can map to a real agent, so the retry path is what handles it.
BAD_NAME = "gizmo_agent"


def classic_tree(model: ScriptedModel | str = "offline", **options: Any) -> LlmAgent:
    return named_tree(CLASSIC_TOOL_NAMES, model=model, topology="classic", **options)


def retry_only_tree(model: ScriptedModel) -> LlmAgent:
    # troupe can also repair bad transfer targets in flight; switching that off
    # leaves exactly the mechanism 003 specifies: ADK fails, troupe retries once.
    return classic_tree(model, transfer_repair=False)


def correction(bad_name: str) -> str:
    return (
        f'[System: Agent "{bad_name}" does not exist. Valid agents: '
        f"{', '.join(CLASSIC_AGENTS)}. Please retry using one of the valid agent names "
        "listed above.]"
    )


# Decision 1: capability abstraction over tool names


async def test_capability_abstraction_model_sees_capabilities_not_raw_tool_names() -> None:
    model = ScriptedModel(replies=["Hello!"])
    await troupe.Assistant(classic_tree(model)).run_and_collect("s1", "hello")

    seen = system_text(model.requests[0])
    assert "command execution" in seen
    assert "web browsing" in seen
    for raw in CLASSIC_TOOL_NAMES:
        assert raw not in seen
    assert "browser" not in seen


def test_capability_abstraction_keeps_the_orchestrator_delegation_only() -> None:
    root = classic_tree()

    assert root.tools == []
    assert [agent.name for agent in root.sub_agents] == list(CLASSIC_AGENTS)


# Decision 2: single retry with a correction message


async def test_single_retry_with_correction_message_recovers_from_a_hallucinated_agent() -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name=BAD_NAME),
            call("transfer_to_agent", agent_name="executor"),
            "Listed the files.",
        ]
    )

    reply = await troupe.Assistant(retry_only_tree(model)).run_and_collect("s1", "list the files")

    assert reply == "Listed the files."
    retry = model.requests[1]
    assert user_texts(retry)[0] == "list the files"  # same session, history kept
    assert user_texts(retry)[-1] == correction(BAD_NAME)


async def test_single_retry_only_once_then_unknown_agent_error_names_bad_and_valid_agents() -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name=BAD_NAME),
            call("transfer_to_agent", agent_name="other_gizmo"),
            "never used",
        ]
    )

    with pytest.raises(troupe.UnknownAgentError) as caught:
        await troupe.Assistant(retry_only_tree(model)).run_and_collect("s1", "list the files")

    assert caught.value.agent_name == "other_gizmo"
    assert caught.value.valid_names == CLASSIC_AGENTS
    assert len(model.requests) == 2  # one attempt plus exactly one retry


async def test_single_retry_recognises_the_go_era_failed_to_find_agent_message() -> None:
    model = ScriptedModel(replies=[ValueError(f"failed to find agent: {BAD_NAME}"), "Recovered."])

    reply = await troupe.Assistant(retry_only_tree(model)).run_and_collect("s1", "list the files")

    assert reply == "Recovered."
    assert user_texts(model.requests[1])[-1] == correction(BAD_NAME)


# Decision 3: extract-then-retry, run and run_and_collect


async def test_run_yields_events_of_each_agent_in_order() -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="executor"),
            call("fs_read", request="notes.txt"),
            "The file says hello.",
        ]
    )
    events = [e async for e in troupe.Assistant(classic_tree(model)).run("s1", "read notes.txt")]

    assert simplify(events) == [
        ("orchestrator", "transfer", "executor"),
        ("executor", "tool_call", "fs_read"),
        ("executor", "tool_result", "fs_read"),
        ("executor", "text", None),
    ]


async def test_run_and_collect_returns_only_the_user_visible_text() -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="executor"),
            call("fs_read", request="notes.txt"),
            "The file says hello.",
        ]
    )

    reply = await troupe.Assistant(classic_tree(model)).run_and_collect("s1", "read notes.txt")

    assert reply == "The file says hello."


# Risks and trade-offs


def test_map_staleness_a_tool_missing_from_the_map_degrades_to_general_actions() -> None:
    assert troupe.tool_capability("teleport_now") == "general actions"
    root = troupe.build_agent_tree(
        troupe.Config(tools=[make_tool("teleport_now")], model="offline", topology="classic")
    )
    assert [agent.name for agent in root.sub_agents] == ["planner"]


def test_capability_description_order_is_deterministic_first_seen_not_map_order() -> None:
    first = troupe.capability_description(["memory_store", "exec_shell", "browser_open"])
    again = troupe.capability_description(["memory_store", "exec_shell", "browser_open"])

    assert first == again == "memory storage and recall, command execution, web browsing"
    assert troupe.capability_description(["browser_open", "memory_store"]) == (
        "web browsing, memory storage and recall"
    )
