"""Design note 004: the decisions it makes, checked through troupe's public API.

Decisions: (1) an AgentSpec registry iterated by the tree builder, (2) the
six-agent topology split from executor, (3) prefix matching order with the
librarian first, (4) an Unmatched bucket, (5) a routing table in the
orchestrator prompt, (6) the [REJECT] protocol. Risk mitigation: agents
without tools are skipped.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import Field, PrivateAttr
from typing_extensions import override

import troupe
from fakes.agents import OPERATOR_TOOLS, instruction_of, tool_names
from fakes.named_tools import make_tool, named_tree, routing_blocks
from troupe.testing import simplify

SIX_AGENTS = ["operator", "navigator", "vault", "librarian", "planner", "chronicler"]


def tree(tool_names: list[str], **options: Any) -> LlmAgent:
    return named_tree(tool_names, **options)


def spec(name: str) -> troupe.AgentSpec:
    return next(a for a in troupe.DEFAULT_TOPOLOGY.agents if a.name == name)


# Decision 1: data-driven agent creation via an AgentSpec registry


def test_agent_spec_registry_lists_the_six_agents_as_data_in_tree_order() -> None:
    agents = troupe.DEFAULT_TOPOLOGY.agents

    assert all(isinstance(agent, troupe.AgentSpec) for agent in agents)
    assert [agent.name for agent in agents] == SIX_AGENTS


def test_agent_spec_registry_adding_an_agent_is_a_data_change() -> None:
    scribe = troupe.AgentSpec(
        name="scribe",
        description="Writes notes down.",
        prefixes=("note_",),
        keywords=("note",),
        accepts="Something to write down.",
        returns="The saved note.",
    )
    topology = troupe.Topology(
        name="with-scribe",
        agents=(*troupe.DEFAULT_TOPOLOGY.agents, scribe),
        match_order=troupe.DEFAULT_TOPOLOGY.match_order,
    )

    root = tree(["exec_shell", "note_add"], topology=topology)

    assert [agent.name for agent in root.sub_agents] == ["operator", "planner", "scribe"]
    scribe_agent = root.sub_agents[-1]
    assert isinstance(scribe_agent, LlmAgent)
    assert tool_names(scribe_agent) == ["note_add"]
    assert "- Keywords: note" in routing_blocks(instruction_of(root))["scribe"]


# Decision 2: six-agent topology split from the classic executor


def test_six_agent_topology_splits_executor_prefixes_across_operator_navigator_and_vault() -> None:
    executor = next(a for a in troupe.CLASSIC_TOPOLOGY.agents if a.name == "executor")
    split = {*spec("operator").prefixes, *spec("navigator").prefixes, *spec("vault").prefixes}

    assert split == set(executor.prefixes)
    assert spec("navigator").prefixes == ("browser_",)
    assert set(spec("vault").prefixes) == {"crypto_", "secrets_", "payment_"}


def test_six_agent_topology_renames_researcher_to_librarian_and_memory_manager_to_chronicler() -> (
    None
):
    classic = {a.name: a for a in troupe.CLASSIC_TOPOLOGY.agents}

    assert spec("librarian").prefixes == classic["researcher"].prefixes
    assert spec("chronicler").prefixes == classic["memory_manager"].prefixes


# Decision 3: prefix matching order, librarian first


def test_prefix_matching_order_is_librarian_chronicler_navigator_vault_operator() -> None:
    assert troupe.DEFAULT_TOPOLOGY.match_order == (
        "librarian",
        "chronicler",
        "navigator",
        "vault",
        "operator",
    )


def test_prefix_matching_order_decides_overlapping_prefixes_not_tree_order() -> None:
    # Operator comes first in the tree but its broad "save_" must not win over
    # the librarian's exact "save_knowledge", because the librarian is tried first.
    topology = troupe.Topology(
        name="overlap",
        agents=(
            troupe.AgentSpec(name="operator", description="Acts.", prefixes=("save_",)),
            troupe.AgentSpec(name="librarian", description="Knows.", prefixes=("save_knowledge",)),
        ),
        match_order=("librarian", "operator"),
    )

    split = troupe.partition_tools(
        [make_tool("save_knowledge_data"), make_tool("save_file")], topology
    )

    assert [t.name for t in split["librarian"]] == ["save_knowledge_data"]
    assert [t.name for t in split["operator"]] == ["save_file"]


# Decision 4: unmatched tools as a separate bucket


def test_unmatched_bucket_does_not_default_unmatched_tools_to_operator() -> None:
    split = troupe.partition_tools([make_tool("exec_shell"), make_tool("weather_lookup")])

    assert [t.name for t in split.operator] == ["exec_shell"]
    assert [t.name for t in split.unmatched] == ["weather_lookup"]


def test_unmatched_bucket_is_mentioned_in_the_orchestrator_prompt() -> None:
    with_unmatched = instruction_of(tree(["exec_shell", "weather_lookup"]))
    without = instruction_of(tree(["exec_shell"]))

    assert "## Tools no agent owns" in with_unmatched
    assert "Performs weather lookup" in with_unmatched
    assert "## Tools no agent owns" not in without


# Decision 5: routing table in the orchestrator prompt


def test_routing_table_has_keywords_accepts_returns_and_cannot_do_for_each_agent() -> None:
    root = tree(["exec_shell", "browser_open", "crypto_hash", "search_web", "memory_store"])
    blocks = routing_blocks(instruction_of(root))

    assert list(blocks) == SIX_AGENTS
    for name, block in blocks.items():
        agent = spec(name)
        assert f"- Keywords: {', '.join(agent.keywords)}" in block
        assert f"- Accepts: {agent.accepts}" in block
        assert f"- Returns: {agent.returns}" in block
        assert f"- Cannot do: {'; '.join(agent.cannot_do)}" in block


# Decision 6: the reject protocol


def test_reject_protocol_each_sub_agent_instruction_gives_the_reject_format() -> None:
    root = tree(["exec_shell", "browser_open", "crypto_hash", "search_web", "memory_store"])

    assert len(root.sub_agents) == 6
    for agent in root.sub_agents:
        assert isinstance(agent, LlmAgent)
        assert "[REJECT] This task requires <agent>: <one-sentence reason>" in str(
            agent.instruction
        )


def test_reject_protocol_orchestrator_instruction_handles_rejections() -> None:
    instruction = instruction_of(tree(["exec_shell"]))

    rejections = instruction.split("## Rejections", 1)[1].split("\n## ", 1)[0]
    assert "[REJECT]" in rejections
    assert "never send the same task back to an agent that rejected it" in rejections


class MisroutingModel(troupe.OfflineModel):
    """The offline model, except that the orchestrator first sends the task to operator.

    The tree gives each agent its own view of this model (see
    ``OfflineModel.serving``); the views share one list of replies.
    """

    replies: list[str] = Field(default_factory=list)
    """Every text the offline model produced, whichever agent it served."""
    _misrouted: bool = PrivateAttr(default=False)

    @override
    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        if self.agent == "orchestrator" and not self._misrouted:
            self._misrouted = True
            call = types.FunctionCall(name="transfer_to_agent", args={"agent_name": "operator"})
            yield LlmResponse(
                content=types.Content(role="model", parts=[types.Part(function_call=call)]),
                turn_complete=True,
            )
            return
        async for response in super().generate_content_async(llm_request, stream):
            for part in (response.content.parts if response.content else None) or []:
                if part.text:
                    self.replies.append(part.text)
            yield response


def crypto_hash(text: str) -> dict[str, str]:
    """Compute the SHA-256 hash of a text."""
    return {"digest": f"sha256 of {text}"}


async def test_reject_protocol_misrouted_task_is_rejected_and_rerouted() -> None:
    model = MisroutingModel()
    tools = [*OPERATOR_TOOLS, troupe.Tool.from_function(crypto_hash)]
    root = troupe.build_agent_tree(troupe.Config(tools=tools, model=model))

    assistant = troupe.Assistant(root)
    events = [e async for e in assistant.run("s1", "compute the sha256 hash of 'abc'")]
    steps = simplify(events)

    assert model.replies[0].startswith("[REJECT] This task requires vault")
    transfers = [name for _, kind, name in steps if kind == "transfer"]
    assert transfers == ["operator", "vault"]
    assert ("vault", "tool_call", "crypto_hash") in steps


# Risk mitigation: conditional creation


def test_more_sub_agents_overhead_is_mitigated_by_skipping_agents_without_tools() -> None:
    root = tree(["browser_open"])

    assert [agent.name for agent in root.sub_agents] == ["navigator", "planner"]
