"""The orchestrator's and the specialists' instructions, as build_agent_tree writes them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent

import troupe
from fakes.agents import instruction_of

EVERY_ROLE_TOOLS = [
    "exec_shell",
    "fs_read",
    "fs_list",
    "skill_run",
    "browser_navigate",
    "browser_open",
    "crypto_hash",
    "secrets_get",
    "payment_send",
    "search_web",
    "rag_query",
    "graph_traverse",
    "save_knowledge_item",
    "save_learning_note",
    "create_skill_x",
    "list_skills",
    "memory_store",
    "observe_event",
    "reflect_summary",
]
DEFAULT_AGENTS = ["operator", "navigator", "vault", "librarian", "planner", "chronicler"]
ORCHESTRATOR_SECTIONS = [
    "## Routing table",
    "## Decision protocol",
    "## Rejections",
    "## Delegation rules",
    "## Agent names",
]
SPECIALIST_SECTIONS = ["## What You Do", "## Input Format", "## Output Format", "## Constraints"]


def tool(name: str) -> troupe.Tool:
    def run(request: str = "") -> dict[str, str]:
        return {"tool": name}

    return troupe.Tool(name=name, description=f"Performs {name.replace('_', ' ')}.", func=run)


def build(tool_names: list[str], **options: Any) -> LlmAgent:
    config = troupe.Config(tools=[tool(n) for n in tool_names], model="offline", **options)
    return troupe.build_agent_tree(config)


def section(instruction: str, heading: str) -> str:
    """The body of ``## heading`` up to the next ``## `` heading."""
    body = instruction.split(heading + "\n", 1)[1]
    return body.split("\n## ", 1)[0]


def mentions(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


def specialists(root: LlmAgent) -> list[LlmAgent]:
    agents = [a for a in root.sub_agents if isinstance(a, LlmAgent)]
    assert len(agents) == len(root.sub_agents)
    return agents


# The orchestrator instruction


def test_orchestrator_instruction_starts_with_the_system_prompt() -> None:
    root = build(["exec_shell"], system_prompt="You are Ada, the lab's assistant.")

    assert instruction_of(root).startswith("You are Ada, the lab's assistant.\n")


def test_orchestrator_instruction_uses_a_default_system_prompt_when_none_is_given() -> None:
    root = build(["exec_shell"])

    first_line = instruction_of(root).splitlines()[0]
    assert first_line
    assert not first_line.startswith("#")


def test_orchestrator_instruction_sections_come_in_order() -> None:
    instruction = instruction_of(build(["exec_shell"]))

    positions = [instruction.index(heading + "\n") for heading in ORCHESTRATOR_SECTIONS]
    assert positions == sorted(positions)


def test_decision_protocol_says_no_tools_and_delegate_with_transfer_to_agent() -> None:
    protocol = section(instruction_of(build(["exec_shell"])), "## Decision protocol")

    assert "you have no tools, so delegate" in protocol
    assert "call transfer_to_agent with that name" in protocol


INSTRUCTION_BUDGET = 4600
"""Characters the six-agent orchestrator instruction may take (issue 12)."""


def test_six_agent_instruction_with_the_builtin_tools_fits_the_budget_with_every_section(
    tmp_path: Path,
) -> None:
    root = troupe.build_agent_tree(
        troupe.Config(tools=troupe.builtin_tools(workspace=tmp_path), model="offline")
    )
    instruction = instruction_of(root)

    assert [a.name for a in root.sub_agents] == DEFAULT_AGENTS
    assert len(instruction) <= INSTRUCTION_BUDGET
    for heading in ORCHESTRATOR_SECTIONS:
        assert heading + "\n" in instruction, heading
    assert "at most 5 delegation rounds" in instruction  # round limit
    assert "greetings, opinions and general-knowledge questions yourself" in instruction
    assert "NEVER invent or abbreviate agent names" in instruction  # exact-name rule
    assert "[REJECT]" in section(instruction, "## Rejections")


def test_routing_table_lists_name_role_capabilities_keywords_accepts_returns_cannot_do() -> None:
    table = section(instruction_of(build(["exec_shell", "fs_read"])), "## Routing table")
    operator = troupe.DEFAULT_TOPOLOGY.spec("operator")

    expected = (
        "### operator\n"
        f"- Role: {operator.description} Capabilities: command execution, file operations.\n"
        f"- Keywords: {', '.join(operator.keywords)}\n"
        f"- Accepts: {operator.accepts}\n"
        f"- Returns: {operator.returns}\n"
        f"- Cannot do: {'; '.join(operator.cannot_do)}"
    )
    assert table.startswith(expected)


def test_routing_table_has_one_entry_per_created_agent_in_tree_order() -> None:
    table = section(instruction_of(build(EVERY_ROLE_TOOLS)), "## Routing table")

    assert re.findall(r"^### (\S+)$", table, re.M) == DEFAULT_AGENTS


def test_unmatched_section_appears_only_when_some_tools_are_unmatched() -> None:
    with_unmatched = instruction_of(build(["exec_shell", "weather_now", "stock_quote"]))
    without = instruction_of(build(["exec_shell"]))

    unmatched = section(with_unmatched, "## Tools no agent owns")
    assert "2 registered tool(s)" in unmatched
    assert "Performs weather now" in unmatched
    assert "Performs stock quote" in unmatched
    assert "Tools no agent owns" not in without


def test_decision_protocol_lists_classify_match_select_verify_delegate_in_order() -> None:
    protocol = section(instruction_of(build(["exec_shell"])), "## Decision protocol")

    steps = re.findall(r"^(\d)\. (\w+):", protocol, re.M)
    assert steps == [
        ("1", "Classify"),
        ("2", "Match"),
        ("3", "Select"),
        ("4", "Verify"),
        ("5", "Delegate"),
    ]


def test_rejection_handling_explains_the_reject_marker() -> None:
    rejections = section(instruction_of(build(["exec_shell"])), "## Rejections")

    assert "[REJECT]" in rejections
    assert "Delegate the task to the named agent" in rejections


def test_delegation_rules_answer_greetings_opinions_and_general_knowledge_directly() -> None:
    rules = section(instruction_of(build(["exec_shell"])), "## Delegation rules")

    assert "greetings, opinions and general-knowledge questions yourself" in rules


@pytest.mark.parametrize(("configured", "shown"), [(0, 5), (1, 1), (3, 3), (12, 12)])
def test_delegation_rules_state_the_round_limit(configured: int, shown: int) -> None:
    rules = section(
        instruction_of(build(["exec_shell"], max_delegation_rounds=configured)),
        "## Delegation rules",
    )

    assert f"at most {shown} delegation rounds" in rules


def test_exact_name_rule_has_the_literal_text_and_the_valid_names() -> None:
    names = section(instruction_of(build(["exec_shell", "browser_open"])), "## Agent names")

    assert "NEVER invent or abbreviate agent names" in names
    assert "The only valid agent names are: operator, navigator, planner." in names


def test_instruction_names_only_registered_agents() -> None:
    root = build(["fs_read"])
    instruction = instruction_of(root)

    assert [a.name for a in root.sub_agents] == ["operator", "planner"]
    for absent in ("navigator", "vault", "librarian", "chronicler"):
        assert not mentions(instruction, absent), absent


def test_instruction_without_a_planner_never_mentions_the_planner(tmp_path: Path) -> None:
    path = tmp_path / "duo.yaml"
    path.write_text(
        "planner: false\n"
        "agents:\n"
        "  - name: scout\n    prefixes: [scout_]\n"
        "  - name: smith\n    prefixes: [forge_]\n",
        encoding="utf-8",
    )

    root = build(["scout_area", "forge_blade"], topology=path)

    assert not mentions(instruction_of(root), "planner")
    for agent in specialists(root):
        assert not mentions(str(agent.instruction), "planner")


def test_no_routed_tool_name_appears_in_any_instruction_or_description(tmp_path: Path) -> None:
    # troupe's own built-ins plus one tool per prefix; later built-ins are covered too.
    given = [*troupe.builtin_tools(workspace=tmp_path), *(tool(n) for n in EVERY_ROLE_TOOLS)]
    all_tools = list({t.name: t for t in given}.values())
    routed = troupe.partition_tools(all_tools)
    routed_names = [t.name for owned in routed.by_agent.values() for t in owned]
    root = troupe.build_agent_tree(troupe.Config(tools=all_tools, model="offline"))

    assert len(routed_names) >= len(EVERY_ROLE_TOOLS)
    texts = [instruction_of(root)]
    for agent in specialists(root):
        texts += [agent.description, str(agent.instruction)]
    for text in texts:
        for name in routed_names:
            assert name not in text, name


# The specialists' instructions


def test_every_specialist_instruction_has_the_four_sections_in_order() -> None:
    for agent in specialists(build(EVERY_ROLE_TOOLS)):
        instruction = str(agent.instruction)
        positions = [instruction.index(heading + "\n") for heading in SPECIALIST_SECTIONS]
        assert positions == sorted(positions), agent.name


def test_every_specialist_instruction_gives_the_reject_format() -> None:
    for agent in specialists(build(EVERY_ROLE_TOOLS)):
        instruction = str(agent.instruction)
        assert "[REJECT] This task requires <agent>: <one-sentence reason>" in instruction


@pytest.mark.parametrize(
    ("agent", "reporting"),
    [
        ("operator", "report the results clearly"),
        ("navigator", "summarize findings clearly"),
        ("vault", "report the results clearly"),
        ("librarian", "summarize findings clearly"),
        ("planner", "answer once with every step's outcome"),
        ("chronicler", "report what was stored or retrieved"),
    ],
)
def test_specialist_output_format_says_how_to_report_its_result(agent: str, reporting: str) -> None:
    found = {a.name: a for a in specialists(build(EVERY_ROLE_TOOLS))}

    output = section(str(found[agent].instruction), "## Output Format")
    assert reporting in output


def test_specialist_constraints_include_its_cannot_do_list() -> None:
    found = {a.name: a for a in specialists(build(EVERY_ROLE_TOOLS))}

    constraints = section(str(found["vault"].instruction), "## Constraints")
    for item in troupe.DEFAULT_TOPOLOGY.spec("vault").cannot_do:
        assert f"You cannot {item}." in constraints


def test_specialist_team_lists_only_the_other_registered_agents() -> None:
    root = build(["exec_shell", "browser_open"])
    found = {a.name: a for a in specialists(root)}

    team = section(str(found["operator"].instruction), "## Team")
    assert re.findall(r"^- (\w+):", team, re.M) == ["navigator", "planner"]
