"""Spec 000 (capability-based descriptions), checked on the ``classic`` topology.

000 is the requirements file for design note 003 and overrides 002 where they
disagree: the name rule becomes "NEVER invent or abbreviate agent names" and
sub-agent entries describe capabilities, never raw tool names.
"""

from __future__ import annotations

from typing import Any

from google.adk.agents import LlmAgent

import troupe
from fakes.agents import OPERATOR_TOOLS, instruction_of
from fakes.named_tools import (
    mentions,
    named_tree,
    routing_blocks,
    run_offline,
    sub_agent,
)
from troupe.testing import simplify

CLASSIC_TOOL_NAMES = [
    "exec_shell",
    "exec_run",
    "fs_read",
    "browser_navigate",
    "crypto_sign",
    "search_web",
    "rag_query",
    "memory_store",
    "reflect_summary",
]


def classic_tree(tool_names: list[str] = CLASSIC_TOOL_NAMES, **options: Any) -> LlmAgent:
    return named_tree(tool_names, topology="classic", **options)


# Requirement: Capability-based sub-agent descriptions


def test_executor_description_uses_capabilities_not_raw_tool_names() -> None:
    root = classic_tree(["exec_shell", "fs_read", "browser_navigate"])
    description = sub_agent(root, "executor").description

    assert "command execution, file operations, web browsing" in description
    assert "exec_shell" not in description
    assert "browser_navigate" not in description
    assert "fs_read" not in description


def test_duplicate_capabilities_are_deduplicated_in_the_description() -> None:
    root = classic_tree(["exec_shell", "exec_run"])
    description = sub_agent(root, "executor").description
    executor_entry = routing_blocks(instruction_of(root))["executor"]

    assert description.count("command execution") == 1
    assert executor_entry.count("command execution") == 1
    assert troupe.capability_description(["exec_shell", "exec_run"]) == "command execution"


def test_unknown_tool_prefix_falls_back_to_general_actions() -> None:
    assert troupe.tool_capability("weather_lookup") == "general actions"
    assert troupe.capability_description(["exec_shell", "weather_lookup"]) == (
        "command execution, general actions"
    )


# Requirement: Orchestrator instruction guides delegation-only execution (modified)


async def test_tool_requiring_task_is_delegated_using_the_exact_registered_name() -> None:
    root = troupe.build_agent_tree(
        troupe.Config(tools=OPERATOR_TOOLS, model="offline", topology="classic")
    )

    steps = simplify(await run_offline(root, "read the file notes.txt"))

    assert steps[0] == ("orchestrator", "transfer", "executor")
    assert steps[1] == ("executor", "tool_call", "fs_read")


async def test_agent_name_exactness_orchestrator_transfers_to_executor_not_an_abbreviation() -> (
    None
):
    root = troupe.build_agent_tree(
        troupe.Config(tools=OPERATOR_TOOLS, model="offline", topology="classic")
    )

    steps = simplify(await run_offline(root, "run `echo exact`"))
    targets = [name for _, kind, name in steps if kind == "transfer"]

    assert targets == ["executor"]
    # The instruction gives the model no abbreviation to copy.
    assert not mentions(instruction_of(root), "exec")
    assert not mentions(instruction_of(root), "browser")


def test_delegation_rules_by_sub_agent_role_name_each_classic_agent_with_its_role() -> None:
    blocks = routing_blocks(instruction_of(classic_tree()))

    assert list(blocks) == ["executor", "researcher", "planner", "memory_manager"]
    assert "actions" in blocks["executor"]
    assert "information" in blocks["researcher"].lower()
    assert "multi-step" in blocks["planner"]
    # memory-manager in the spec; memory_manager is its ADK-valid registered name.
    assert "memory operations" in blocks["memory_manager"]


def test_invalid_agent_name_prevention_contains_never_invent_or_abbreviate_agent_names() -> None:
    root = classic_tree(["exec_shell", "search_web"])
    instruction = instruction_of(root)

    assert "NEVER invent or abbreviate agent names" in instruction
    registered = [agent.name for agent in root.sub_agents]
    assert registered == ["executor", "researcher", "planner"]
    assert list(routing_blocks(instruction)) == registered
    assert "The only valid agent names are: executor, researcher, planner." in instruction
    assert not mentions(instruction, "memory_manager")


def test_orchestrator_instruction_avoids_words_that_look_like_agent_names() -> None:
    instruction = instruction_of(classic_tree())

    # browser_ and exec are tool prefixes a model turns into "browser_agent" or "exec".
    for word in ("browser", "browser_agent", "exec", "crypto", "rag"):
        assert not mentions(instruction, word), word


def test_sub_agent_descriptions_use_capabilities_not_tool_names() -> None:
    root = classic_tree()
    blocks = routing_blocks(instruction_of(root))

    assert "command execution, file operations" in blocks["executor"]
    for name, block in blocks.items():
        role_line = next(line for line in block.splitlines() if line.startswith("- Role:"))
        if name != "planner":  # the planner owns no tools, so it lists no capabilities
            assert "Capabilities:" in role_line
        for tool_name in CLASSIC_TOOL_NAMES:
            assert tool_name not in block
    for tool_name in CLASSIC_TOOL_NAMES:
        assert tool_name not in instruction_of(root)
