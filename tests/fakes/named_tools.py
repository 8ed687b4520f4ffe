"""Trees of named stand-in tools, and readers of what troupe built from them.

The specification tests (tests/spec/) build many trees from tool names alone:
each tool echoes its name and request, so a test sees which one ran. They
share these helpers instead of each defining its own copy.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.agents.base_agent import BaseAgent
from google.adk.events.event import Event
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.function_tool import FunctionTool

import troupe

from .scripted import turn_events


def make_tool(name: str) -> troupe.Tool:
    """A tool whose function carries the tool's name, so FunctionTool keeps it."""

    def run(request: str = "") -> dict[str, str]:
        return {"tool": name, "request": request}

    run.__name__ = name
    run.__doc__ = f"Performs {name.replace('_', ' ')}."
    return troupe.Tool.from_function(run)


def make_tools(names: Sequence[str]) -> list[troupe.Tool]:
    """One :func:`make_tool` per name, in order."""
    return [make_tool(n) for n in names]


def named_tree(tool_names: Sequence[str], **options: Any) -> LlmAgent:
    """The tree troupe builds over ``tool_names`` with the offline model (unless
    ``options`` give another model or topology)."""
    options.setdefault("model", "offline")
    return troupe.build_agent_tree(troupe.Config(tools=make_tools(tool_names), **options))


def counting_adapter() -> tuple[Callable[[troupe.Tool], BaseTool], Counter[str]]:
    """An adapt_tool that records how often each tool was adapted."""
    calls: Counter[str] = Counter()

    def adapt(tool: troupe.Tool) -> BaseTool:
        calls[tool.name] += 1
        return FunctionTool(func=tool.func)

    return adapt, calls


def sub_agent(root: LlmAgent, name: str) -> LlmAgent:
    """The sub-agent of ``root`` called ``name`` (the test fails when there is none)."""
    found = [a for a in root.sub_agents if a.name == name]
    assert found, f"{name} was not created"
    agent = found[0]
    assert isinstance(agent, LlmAgent)
    return agent


def routing_blocks(instruction: str) -> dict[str, str]:
    """Agent name -> its entry in the orchestrator's routing table."""
    table = instruction.split("## Routing table", 1)[1].split("\n## ", 1)[0]
    pattern = r"^### (\S+)\n(.*?)(?=^### |\Z)"
    return {m.group(1): m.group(2) for m in re.finditer(pattern, table, re.M | re.S)}


def mentions(text: str, word: str) -> bool:
    """True when ``word`` stands in ``text`` as a whole word (hyphens included)."""
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


async def run_offline(root: BaseAgent, text: str, session: str = "spec") -> list[Event]:
    """Every event of one turn of ``root`` on ``text``."""
    return await turn_events(troupe.Assistant(root), text, session)
