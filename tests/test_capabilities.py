"""Capabilities: the prefix -> phrase map, tool_capability and capability_description."""

from __future__ import annotations

import pytest

import troupe

SPECIFIED_PHRASES = {
    "exec": "command execution",
    "fs_": "file operations",
    "browser_": "web browsing",
    "crypto_": "cryptography",
    "secrets_": "secret management",
    "payment_": "blockchain payments (USDC on Base)",
}


def longest_prefix_capability(name: str) -> str:
    """Reference answer: the phrase of the longest matching prefix, whatever the map's order."""
    matches = [p for p in troupe.CAPABILITY_MAP if name.startswith(p)]
    if not matches:
        return troupe.GENERAL_ACTIONS
    return troupe.CAPABILITY_MAP[max(matches, key=len)]


@pytest.mark.parametrize(("prefix", "phrase"), SPECIFIED_PHRASES.items())
def test_capability_map_has_the_specified_phrase(prefix: str, phrase: str) -> None:
    assert troupe.CAPABILITY_MAP[prefix] == phrase


def test_capability_map_covers_every_prefix_of_every_built_in_agent() -> None:
    for topology in (troupe.DEFAULT_TOPOLOGY, troupe.CLASSIC_TOPOLOGY):
        for agent in topology.agents:
            for prefix in agent.prefixes:
                assert prefix in troupe.CAPABILITY_MAP, (topology.name, agent.name, prefix)


def test_capability_phrases_are_not_raw_tool_prefixes() -> None:
    for prefix, phrase in troupe.CAPABILITY_MAP.items():
        assert "_" not in phrase, prefix
        assert phrase.strip(), prefix


def test_tool_capability_of_each_prefix() -> None:
    for prefix, phrase in troupe.CAPABILITY_MAP.items():
        assert troupe.tool_capability(prefix + "thing") == phrase
        assert troupe.tool_capability(prefix) == phrase


@pytest.mark.parametrize(
    "name",
    [
        "create_skill_new",
        "list_skills",
        "skill_create",
        "save_knowledge_graph_node",
        "save_learning_exec",
        "exec_fs_read",
        "execute",
        "fs_exec",
        "graph_search_x",
        "search_graph_x",
        "memory_reflect",
        "reflect_memory",
    ],
)
def test_tool_capability_uses_the_longest_matching_prefix(name: str) -> None:
    assert troupe.tool_capability(name) == longest_prefix_capability(name)


def test_tool_capability_does_not_depend_on_where_the_prefix_sits_in_the_map() -> None:
    assert troupe.tool_capability("create_skill_new") == "skill creation"
    assert troupe.tool_capability("skill_create") == "skill execution"
    assert troupe.tool_capability("list_skills") == "skill catalogue"


@pytest.mark.parametrize("name", ["weather_lookup", "x", "browse_page", "ex", "fs"])
def test_tool_capability_of_unknown_prefix_is_general_actions(name: str) -> None:
    assert troupe.tool_capability(name) == "general actions"
    assert troupe.GENERAL_ACTIONS == "general actions"


def test_capability_description_joins_with_comma_in_first_seen_order() -> None:
    description = troupe.capability_description(["browser_open", "exec_shell", "fs_read"])

    assert description == "web browsing, command execution, file operations"


def test_capability_description_deduplicates() -> None:
    names = ["exec_shell", "fs_read", "exec_run", "fs_write", "exec"]

    assert troupe.capability_description(names) == "command execution, file operations"


def test_capability_description_lists_general_actions_once_for_unknown_tools() -> None:
    names = ["weather_now", "exec_shell", "stock_quote"]

    assert troupe.capability_description(names) == "general actions, command execution"


def test_capability_description_accepts_tool_objects() -> None:
    tools = [
        troupe.Tool(name="crypto_sign", description="Sign.", func=print),
        troupe.Tool(name="secrets_get", description="Get.", func=print),
        troupe.Tool(name="payment_send", description="Pay.", func=print),
    ]

    assert troupe.capability_description(tools) == (
        "cryptography, secret management, blockchain payments (USDC on Base)"
    )


def test_capability_description_of_no_tools_is_empty() -> None:
    assert troupe.capability_description([]) == ""
