"""Operator tools and small agent accessors shared by the tests of the built tree.

The tools are defined here rather than taken from troupe's built-ins, so that
the routing tests do not change when built-in tools are added.
"""

from __future__ import annotations

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.base_tool import BaseTool

import troupe


def instruction_of(agent: BaseAgent) -> str:
    """The instruction troupe wrote for ``agent``, which is always a plain string."""
    assert isinstance(agent, LlmAgent), agent.name
    assert isinstance(agent.instruction, str), agent.name
    return agent.instruction


def tool_names(agent: BaseAgent) -> list[str]:
    """The names of ``agent``'s tools in order; troupe gives agents ADK ``BaseTool`` objects.

    Teammates the planner calls for its steps (``AgentTool``) are agents, not tools."""
    assert isinstance(agent, LlmAgent), agent.name
    names = []
    for tool in agent.tools:
        assert isinstance(tool, BaseTool), tool
        if not isinstance(tool, AgentTool):
            names.append(tool.name)
    return names


def exec_shell(command: str) -> dict[str, str]:
    """Run a shell command and return its output."""
    return {"output": f"ran {command}"}


def fs_list(path: str = ".") -> dict[str, list[str]]:
    """List the files in a directory."""
    return {"entries": ["notes.txt"]}


def fs_read(path: str) -> dict[str, str]:
    """Read a text file."""
    return {"content": f"contents of {path}"}


OPERATOR_TOOLS = [troupe.Tool.from_function(f) for f in (exec_shell, fs_list, fs_read)]
