"""Spec 001 (the final six-agent topology), checked on troupe's ``default`` topology."""

from __future__ import annotations

from collections import Counter
from dataclasses import fields
from typing import Any

import pytest
from google.adk.agents import LlmAgent

import troupe
from fakes.agents import OPERATOR_TOOLS, instruction_of, tool_names
from fakes.named_tools import (
    counting_adapter,
    make_tools,
    mentions,
    named_tree,
    routing_blocks,
    run_offline,
    sub_agent,
)
from troupe.testing import simplify

SIX_AGENTS = ["operator", "navigator", "vault", "librarian", "planner", "chronicler"]
ROLE_FIELDS = [*SIX_AGENTS, "unmatched"]
TOOLS_BY_ROLE = {
    "operator": ["exec_shell", "fs_read", "skill_deploy"],
    "navigator": ["browser_navigate", "browser_screenshot"],
    "vault": ["crypto_sign", "secrets_get", "payment_send"],
    "librarian": [
        "search_web",
        "rag_query",
        "graph_traverse",
        "save_knowledge_item",
        "create_skill_x",
        "list_skills",
    ],
    "chronicler": ["memory_store", "observe_event", "reflect_summary"],
}
ALL_ROUTED = [name for names in TOOLS_BY_ROLE.values() for name in names]


def default_tree(tool_names: list[str], **options: Any) -> LlmAgent:
    return named_tree(tool_names, **options)


def names_of(tools: list[troupe.Tool]) -> list[str]:
    return [tool.name for tool in tools]


# Requirement: Hierarchical agent tree with sub-agents


def test_multi_agent_mode_enabled_creates_orchestrator_without_tools_and_six_sub_agents() -> None:
    root = default_tree(ALL_ROUTED, multi_agent=True)

    assert root.name == "orchestrator"
    assert root.tools == []
    assert [agent.name for agent in root.sub_agents] == SIX_AGENTS


def test_orchestrator_has_no_direct_tools_and_each_tool_is_adapted_exactly_once() -> None:
    adapt, calls = counting_adapter()
    root = default_tree(ALL_ROUTED, adapt_tool=adapt)

    assert root.tools == []
    assert calls == Counter(ALL_ROUTED)
    for role, expected in TOOLS_BY_ROLE.items():
        assert tool_names(sub_agent(root, role)) == expected


def test_single_agent_fallback_creates_one_flat_agent_with_all_tools() -> None:
    names = [*ALL_ROUTED, "weather_lookup"]
    root = default_tree(names, multi_agent=False)

    assert root.sub_agents == []
    assert sorted(tool_names(root)) == sorted(names)


# Requirement: Tool partitioning by prefix


def assert_only(result: troupe.RoleToolSet, role: str, expected: list[str]) -> None:
    assert names_of(getattr(result, role)) == expected
    for other in ROLE_FIELDS:
        if other != role:
            assert getattr(result, other) == [], other


def test_operator_gets_shell_file_and_skill_tools() -> None:
    names = ["exec_shell", "fs_read", "skill_deploy"]

    assert_only(troupe.partition_tools(make_tools(names)), "operator", names)


def test_navigator_gets_browser_tools() -> None:
    names = ["browser_navigate", "browser_screenshot"]

    assert_only(troupe.partition_tools(make_tools(names)), "navigator", names)


def test_vault_gets_crypto_secrets_and_payment_tools() -> None:
    names = ["crypto_sign", "secrets_get", "payment_send"]

    assert_only(troupe.partition_tools(make_tools(names)), "vault", names)


def test_librarian_gets_search_rag_graph_and_skill_management_tools() -> None:
    names = TOOLS_BY_ROLE["librarian"]

    assert_only(troupe.partition_tools(make_tools(names)), "librarian", names)


def test_chronicler_gets_memory_tools() -> None:
    names = ["memory_store", "observe_event", "reflect_summary"]

    assert_only(troupe.partition_tools(make_tools(names)), "chronicler", names)


def test_unmatched_tools_tracked_separately_and_not_assigned_to_any_sub_agent() -> None:
    result = troupe.partition_tools(make_tools(["exec_shell", "weather_lookup"]))
    root = default_tree(["exec_shell", "weather_lookup"])

    assert names_of(result.unmatched) == ["weather_lookup"]
    assert all("weather_lookup" not in names_of(tools) for tools in result.by_agent.values())
    held = [name for agent in root.sub_agents for name in tool_names(agent)]
    assert held == ["exec_shell"]


def test_librarian_prefix_priority_over_operator() -> None:
    result = troupe.partition_tools(make_tools(["save_knowledge_data", "create_skill_new"]))

    assert names_of(result.librarian) == ["save_knowledge_data", "create_skill_new"]
    assert result.operator == []
    assert troupe.DEFAULT_TOPOLOGY.match_order == (
        "librarian",
        "chronicler",
        "navigator",
        "vault",
        "operator",
    )


# Requirement: Conditional Sub-Agent Creation


def test_all_tool_categories_have_tools_so_all_six_sub_agents_are_created() -> None:
    root = default_tree(ALL_ROUTED)

    assert [agent.name for agent in root.sub_agents] == SIX_AGENTS


def test_partial_tools_only_operator_and_librarian_creates_operator_librarian_and_planner() -> None:
    root = default_tree(["exec_shell", "fs_read", "search_web"])

    assert [agent.name for agent in root.sub_agents] == ["operator", "librarian", "planner"]


def test_no_tools_at_all_creates_only_the_planner() -> None:
    root = default_tree([])

    assert [agent.name for agent in root.sub_agents] == ["planner"]


def test_unmatched_only_tools_create_only_the_planner_and_adapt_no_tool() -> None:
    adapt, calls = counting_adapter()
    root = default_tree(["weather_lookup", "stock_quote"], adapt_tool=adapt)

    assert [agent.name for agent in root.sub_agents] == ["planner"]
    assert calls == Counter()


# Requirement: Capability-based sub-agent descriptions


def test_operator_description_uses_capabilities() -> None:
    root = default_tree(["exec_shell", "fs_read"])
    description = sub_agent(root, "operator").description

    assert "command execution, file operations" in description
    assert "exec_shell" not in description
    assert "fs_read" not in description


def test_vault_description_uses_capabilities() -> None:
    root = default_tree(["crypto_sign", "secrets_get", "payment_send"])
    description = sub_agent(root, "vault").description

    assert "cryptography, secret management, blockchain payments (USDC on Base)" in description
    for raw in ("crypto_sign", "secrets_get", "payment_send"):
        assert raw not in description


def test_duplicate_capabilities_are_deduplicated() -> None:
    root = default_tree(["exec_shell", "exec_run"])

    assert sub_agent(root, "operator").description.count("command execution") == 1
    assert routing_blocks(instruction_of(root))["operator"].count("command execution") == 1


def test_capability_map_has_entries_for_secrets_create_skill_and_list_skills() -> None:
    assert troupe.CAPABILITY_MAP["secrets_"] == "secret management"
    assert "create_skill" in troupe.CAPABILITY_MAP
    assert "list_skills" in troupe.CAPABILITY_MAP


# Requirement: Orchestrator instruction guides delegation-only execution


async def test_agent_name_exactness_orchestrator_transfers_to_operator_not_an_abbreviation() -> (
    None
):
    root = troupe.build_agent_tree(troupe.Config(tools=OPERATOR_TOOLS, model="offline"))

    steps = simplify(await run_offline(root, "run `echo exact`"))

    assert [name for _, kind, name in steps if kind == "transfer"] == ["operator"]
    assert ("operator", "tool_call", "exec_shell") in steps
    assert not mentions(instruction_of(root), "exec")
    assert not mentions(instruction_of(root), "browser")


def test_invalid_agent_name_prevention_contains_never_invent_or_abbreviate_agent_names() -> None:
    instruction = instruction_of(default_tree(ALL_ROUTED))

    assert "NEVER invent or abbreviate agent names" in instruction
    assert "The only valid agent names are: " + ", ".join(SIX_AGENTS) + "." in instruction


def test_sub_agent_descriptions_use_capabilities_not_tool_names() -> None:
    root = default_tree(ALL_ROUTED)
    blocks = routing_blocks(instruction_of(root))

    assert list(blocks) == SIX_AGENTS
    for name, block in blocks.items():
        if name != "planner":
            assert "Capabilities:" in block
        for raw in ALL_ROUTED:
            assert raw not in block
    for agent in root.sub_agents:
        for raw in ALL_ROUTED:
            assert raw not in agent.description, (agent.name, raw)


# Requirement: RoleToolSet has six roles plus Unmatched


def test_role_tool_set_structure_has_six_roles_plus_unmatched() -> None:
    result = troupe.partition_tools(make_tools([*ALL_ROUTED, "weather_lookup"]))

    list_fields = [f.name for f in fields(result) if isinstance(getattr(result, f.name), list)]
    assert list_fields == ROLE_FIELDS
    placed = [tool.name for role in ROLE_FIELDS for tool in getattr(result, role)]
    assert sorted(placed) == sorted([*ALL_ROUTED, "weather_lookup"])


@pytest.mark.parametrize(
    "tool_names",
    [[], ALL_ROUTED, ["planner_tool", "plan_trip", "weather_lookup"]],
    ids=["empty", "every-role", "plan-like-names"],
)
def test_planner_tools_always_empty(tool_names: list[str]) -> None:
    result = troupe.partition_tools(make_tools(tool_names))

    assert result.planner == []
    assert result.by_agent["planner"] == []
