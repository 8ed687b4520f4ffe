"""The same team built by hand on plain ADK, as a baseline for the benchmarks."""

from __future__ import annotations

from collections.abc import Sequence

from google.adk.agents import LlmAgent
from google.adk.agents.base_agent import BaseAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.function_tool import FunctionTool

from troupe.config import Config
from troupe.tools import Tool
from troupe.tree import build_agent_tree


def plain_adk_tree(
    tools: Sequence[Tool], model: BaseLlm, *, each_turn_from_the_root: bool = False
) -> LlmAgent:
    """Plain ``LlmAgent``s with troupe's names, instructions and tools, and nothing else:
    no guards, no repair, ADK's default transfer rules (sub-agents may transfer back).

    ``each_turn_from_the_root``: as in troupe's tree, a specialist may not hand
    back, so every user turn starts at the orchestrator (ADK otherwise lets the
    agent that answered last take the next turn, skipping the routing)."""
    reference = build_agent_tree(Config(tools=tools, model=model, model_retries=0))
    by_name = {t.name: t for t in tools}
    subs: list[BaseAgent] = []
    for agent in reference.sub_agents:
        assert isinstance(agent, LlmAgent)
        # The planner's teammates (AgentTools) are agents, not tools of the flat list.
        own = [by_name[getattr(t, "name", "")] for t in agent.tools if not isinstance(t, AgentTool)]
        subs.append(
            LlmAgent(
                name=agent.name,
                # The reference agent's model: the offline model's view of the team.
                model=agent.model,
                description=agent.description,
                instruction=str(agent.instruction),
                tools=[FunctionTool(t.func) for t in own],
                disallow_transfer_to_parent=each_turn_from_the_root,
                disallow_transfer_to_peers=each_turn_from_the_root,
            )
        )
    return LlmAgent(
        name=reference.name,
        model=reference.model,
        description=reference.description,
        instruction=str(reference.instruction),
        sub_agents=subs,
    )
