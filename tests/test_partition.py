"""partition_tools: tools split among a topology's agents by name prefix."""

from __future__ import annotations

from pathlib import Path

import pytest

import troupe

ROLE_FIELDS = ["operator", "navigator", "vault", "librarian", "planner", "chronicler", "unmatched"]


def tool(name: str) -> troupe.Tool:
    return troupe.Tool(name=name, description=f"Tool {name}.", func=print)


def tools(*names: str) -> list[troupe.Tool]:
    return [tool(n) for n in names]


def names(tool_list: list[troupe.Tool]) -> list[str]:
    return [t.name for t in tool_list]


def test_default_partition_assigns_each_tool_to_its_role() -> None:
    result = troupe.partition_tools(
        tools(
            "fs_read",
            "browser_open",
            "crypto_hash",
            "search_web",
            "memory_store",
            "weather_now",
            "exec_shell",
        )
    )

    assert names(result.operator) == ["fs_read", "exec_shell"]
    assert names(result.navigator) == ["browser_open"]
    assert names(result.vault) == ["crypto_hash"]
    assert names(result.librarian) == ["search_web"]
    assert names(result.chronicler) == ["memory_store"]
    assert names(result.planner) == []
    assert names(result.unmatched) == ["weather_now"]


def test_partition_keeps_the_callers_tool_order_within_an_agent() -> None:
    result = troupe.partition_tools(tools("fs_write", "exec_shell", "fs_read", "skill_run"))

    assert names(result.operator) == ["fs_write", "exec_shell", "fs_read", "skill_run"]


def test_partition_places_every_tool_exactly_once() -> None:
    given = tools("fs_read", "browser_open", "rag_query", "reflect_day", "odd_one", "payment_send")

    result = troupe.partition_tools(given)

    placed = [t for role in ROLE_FIELDS for t in getattr(result, role)]
    assert sorted(names(placed)) == sorted(names(given))


def test_partition_by_agent_is_keyed_by_every_agent_in_tree_order() -> None:
    result = troupe.partition_tools(tools("fs_read"))

    assert list(result.by_agent) == troupe.DEFAULT_TOPOLOGY.agent_names()
    assert names(result["operator"]) == ["fs_read"]
    assert result["vault"] == []


def test_classic_partition_uses_the_four_agents_and_leaves_role_fields_empty() -> None:
    result = troupe.partition_tools(
        tools("fs_read", "browser_open", "search_web", "memory_store", "odd_one"), "classic"
    )

    assert list(result.by_agent) == ["executor", "researcher", "planner", "memory_manager"]
    assert names(result["executor"]) == ["fs_read", "browser_open"]
    assert names(result["researcher"]) == ["search_web"]
    assert names(result["memory_manager"]) == ["memory_store"]
    assert result["planner"] == []
    assert names(result.unmatched) == ["odd_one"]
    for role in ROLE_FIELDS[:-1]:
        assert getattr(result, role) == [], role


def test_partition_accepts_a_topology_object() -> None:
    result = troupe.partition_tools(tools("save_knowledge_x"), troupe.CLASSIC_TOPOLOGY)

    assert names(result["researcher"]) == ["save_knowledge_x"]


def test_partition_accepts_a_yaml_topology_path(tmp_path: Path) -> None:
    path = tmp_path / "pair.yaml"
    path.write_text(
        "agents:\n  - name: left\n    prefixes: [l_]\n  - name: right\n    prefixes: [r_]\n",
        encoding="utf-8",
    )

    result = troupe.partition_tools(tools("r_one", "l_two", "m_three"), path)

    assert names(result["left"]) == ["l_two"]
    assert names(result["right"]) == ["r_one"]
    assert names(result.unmatched) == ["m_three"]


def test_match_order_wins_over_tree_order_for_overlapping_prefixes() -> None:
    topology = troupe.Topology(
        name="overlap",
        agents=(
            troupe.AgentSpec(name="broad", description="b", prefixes=("data_",)),
            troupe.AgentSpec(name="narrow", description="n", prefixes=("data_secret",)),
        ),
        match_order=("narrow", "broad"),
    )

    result = troupe.partition_tools(tools("data_secret_key", "data_table"), topology)

    assert names(result["narrow"]) == ["data_secret_key"]
    assert names(result["broad"]) == ["data_table"]


def test_without_match_order_prefixes_are_tried_in_tree_order() -> None:
    topology = troupe.Topology(
        name="overlap",
        agents=(
            troupe.AgentSpec(name="broad", description="b", prefixes=("data_",)),
            troupe.AgentSpec(name="narrow", description="n", prefixes=("data_secret",)),
        ),
    )

    result = troupe.partition_tools(tools("data_secret_key"), topology)

    assert names(result["broad"]) == ["data_secret_key"]


def test_agent_left_out_of_match_order_still_gets_its_tools() -> None:
    topology = troupe.Topology(
        name="partial",
        agents=(
            troupe.AgentSpec(name="alpha", description="a", prefixes=("a_",)),
            troupe.AgentSpec(name="beta", description="b", prefixes=("b_",)),
        ),
        match_order=("beta",),
    )

    result = troupe.partition_tools(tools("a_one", "b_two"), topology)

    assert names(result["alpha"]) == ["a_one"]
    assert names(result["beta"]) == ["b_two"]
    assert result.unmatched == []


@pytest.mark.parametrize("name", ["save_knowledge_data", "create_skill_new", "list_skills"])
def test_librarian_prefixes_are_matched_before_operator(name: str) -> None:
    result = troupe.partition_tools(tools(name))

    assert names(result.librarian) == [name]
    assert result.operator == []


def test_prefix_match_is_case_sensitive_and_from_the_start() -> None:
    result = troupe.partition_tools(tools("my_fs_read", "run_exec"))

    assert names(result.unmatched) == ["my_fs_read", "run_exec"]


def test_planner_is_empty_even_for_plan_like_names() -> None:
    result = troupe.partition_tools(tools("planner_make", "plan_trip"))

    assert result.planner == []
    assert names(result.unmatched) == ["planner_make", "plan_trip"]


def test_partition_rejects_bad_tool_names() -> None:
    with pytest.raises(troupe.ConfigError, match="'Fs_Read'"):
        troupe.partition_tools(tools("Fs_Read"))


def test_partition_of_no_tools_is_empty() -> None:
    result = troupe.partition_tools([])

    for role in ROLE_FIELDS:
        assert getattr(result, role) == []
