"""Spec 002 (first delegation-only design), checked on the ``classic`` topology.

002 names four sub-agents: executor, researcher, planner and memory-manager.
ADK requires agent names to be Python identifiers, so the classic topology
registers the memory agent as ``memory_manager`` (see the spec README).
Where 000 later overrides 002, the test checks the overriding text.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from google.adk.agents import LlmAgent

import troupe
from fakes.agents import OPERATOR_TOOLS, instruction_of, tool_names
from fakes.named_tools import counting_adapter, named_tree, run_offline
from troupe.testing import simplify

CLASSIC_AGENTS = ["executor", "researcher", "planner", "memory_manager"]
# One tool for each classic role that owns tools (the planner owns none).
CLASSIC_TOOL_NAMES = ["exec_shell", "fs_read", "search_web", "memory_store"]


def classic_tree(tool_names: list[str] = CLASSIC_TOOL_NAMES, **options: Any) -> LlmAgent:
    return named_tree(tool_names, topology="classic", **options)


def routing_block(instruction: str, agent: str) -> str:
    """The routing-table entry of ``agent``: from its ``### name`` line to the next heading."""
    match = re.search(rf"^### {re.escape(agent)}\n(.*?)(?=^#{{2,3}} |\Z)", instruction, re.M | re.S)
    assert match, f"no routing entry for {agent!r}"
    return match.group(1)


# Requirement: Hierarchical agent tree with sub-agents


def test_multi_agent_mode_enabled_creates_orchestrator_without_tools_and_four_sub_agents() -> None:
    root = classic_tree(multi_agent=True)

    assert root.name == "orchestrator"
    assert root.tools == []
    assert [agent.name for agent in root.sub_agents] == CLASSIC_AGENTS


def test_orchestrator_has_no_direct_tools_and_each_tool_is_adapted_exactly_once() -> None:
    adapt, calls = counting_adapter()
    root = classic_tree(adapt_tool=adapt)

    assert root.tools == []
    assert calls == Counter(CLASSIC_TOOL_NAMES)
    held = [name for agent in root.sub_agents for name in tool_names(agent)]
    assert sorted(held) == sorted(CLASSIC_TOOL_NAMES)


def test_single_agent_fallback_creates_one_flat_agent_with_all_tools() -> None:
    names = [*CLASSIC_TOOL_NAMES, "weather_lookup"]  # the last one matches no prefix
    root = classic_tree(names, multi_agent=False)

    assert root.sub_agents == []
    assert sorted(tool_names(root)) == sorted(names)


# Requirement: Orchestrator instruction guides delegation-only execution


async def test_tool_requiring_task_is_delegated_to_the_sub_agent_by_its_exact_registered_name() -> (
    None
):
    root = troupe.build_agent_tree(
        troupe.Config(tools=OPERATOR_TOOLS, model="offline", topology="classic")
    )

    steps = simplify(await run_offline(root, "list the files here"))

    assert steps[0] == ("orchestrator", "transfer", "executor")
    assert ("executor", "tool_call", "fs_list") in steps
    registered = {agent.name for agent in root.sub_agents}
    assert {name for _, kind, name in steps if kind == "transfer"} <= registered


def test_delegation_rules_by_sub_agent_role_name_each_classic_agent_with_its_role() -> None:
    instruction = instruction_of(classic_tree())

    assert "actions" in routing_block(instruction, "executor")
    assert "information" in routing_block(instruction, "researcher").lower()
    assert "multi-step" in routing_block(instruction, "planner")
    # memory-manager in the spec; memory_manager is its ADK-valid registered name.
    assert "memory operations" in routing_block(instruction, "memory_manager")


def test_invalid_agent_name_prevention_text_and_only_registered_names_are_listed() -> None:
    # Only executor and planner exist here: researcher and memory_manager own no tools.
    instruction = instruction_of(classic_tree(["exec_shell"]))

    # 002 asks for "NEVER invent agent names"; 000 overrides it with the longer
    # "NEVER invent or abbreviate agent names", which is what is checked here.
    assert "NEVER invent or abbreviate agent names" in instruction
    valid_line = re.search(r"The only valid agent names are: (.*)\.", instruction)
    assert valid_line is not None
    assert valid_line.group(1).split(", ") == ["executor", "planner"]
    for absent in ("researcher", "memory_manager", "memory-manager"):
        assert absent not in instruction


# Requirement: Orchestrator Short-Circuit for Simple Queries


async def test_simple_greeting_is_answered_by_the_orchestrator_without_delegation() -> None:
    root = classic_tree()

    steps = simplify(await run_offline(root, "hello"))

    assert steps == [("orchestrator", "text", None)]


def test_short_circuit_rule_tells_orchestrator_to_answer_simple_queries_directly() -> None:
    instruction = instruction_of(classic_tree())

    rules = instruction.split("## Delegation rules", 1)[1]
    assert "Answer greetings, opinions and general-knowledge questions yourself" in rules
    assert "without delegating" in rules


async def test_task_requiring_tools_is_delegated_to_the_appropriate_sub_agent() -> None:
    root = troupe.build_agent_tree(
        troupe.Config(tools=OPERATOR_TOOLS, model="offline", topology="classic")
    )

    steps = simplify(await run_offline(root, "run `echo spec`"))

    assert steps[:2] == [
        ("orchestrator", "transfer", "executor"),
        ("executor", "tool_call", "exec_shell"),
    ]


# Requirement: Max Delegation Rounds


def test_config_has_max_delegation_rounds_field_defaulting_to_zero() -> None:
    assert troupe.Config().max_delegation_rounds == 0


def test_default_max_rounds_of_5_is_used_when_max_delegation_rounds_is_zero_or_unset() -> None:
    unset = instruction_of(classic_tree())
    zero = instruction_of(classic_tree(max_delegation_rounds=0))

    for instruction in (unset, zero):
        assert "at most 5 delegation rounds" in instruction


def test_configured_max_delegation_rounds_appears_in_the_orchestrator_prompt() -> None:
    instruction = instruction_of(classic_tree(max_delegation_rounds=3))

    assert "at most 3 delegation rounds" in instruction
    assert "at most 5 delegation rounds" not in instruction


# Requirement: Sub-Agent Result Reporting


def sub_agent_instruction(agent: str) -> str:
    root = classic_tree()
    found = [a for a in root.sub_agents if a.name == agent]
    assert found, f"{agent} was not created"
    return instruction_of(found[0])


def test_executor_result_reporting_guides_it_to_provide_results_clearly() -> None:
    assert "provide results clearly" in sub_agent_instruction("executor")


def test_researcher_result_reporting_guides_it_to_summarize_findings_clearly() -> None:
    assert "summarize findings clearly" in sub_agent_instruction("researcher")


def test_planner_result_reporting_guides_it_to_present_the_plan_for_review() -> None:
    assert "present the plan for review" in sub_agent_instruction("planner")


def test_memory_manager_result_reporting_guides_it_to_report_what_was_stored_or_retrieved() -> None:
    assert "report what was stored or retrieved" in sub_agent_instruction("memory_manager")
