"""Plain-language capabilities for tool names, read from the topology.

The orchestrator only ever sees these phrases, never raw tool names: a model
that reads ``browser_navigate`` tends to invent an agent called
``browser_agent``, while "web browsing" suggests no agent name at all. Each
:class:`~troupe.AgentSpec` declares the phrases of its prefixes
(``capabilities: {weather_: weather forecasts}``); a prefix an agent does not
describe falls back to the phrase the default topology gives it, then to
"general actions".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from ..tools import Tool
from ..topology import DEFAULT_TOPOLOGY, Topology

GENERAL_ACTIONS = "general actions"
"""Capability of a tool whose name matches no described prefix."""

CAPABILITY_MAP: Mapping[str, str] = MappingProxyType(DEFAULT_TOPOLOGY.capabilities())
"""Prefix -> phrase of the default topology (read-only; a topology's YAML sets its own)."""


def tool_capability(name: str, topology: Topology | None = None) -> str:
    """The capability of a tool name, by its longest described prefix.

    ``topology``'s own phrases come first, then the default topology's.
    """
    for phrases in _phrase_tables(topology):
        for prefix in sorted(phrases, key=len, reverse=True):
            if name.startswith(prefix):
                return phrases[prefix]
    return GENERAL_ACTIONS


def capability_list(tools: Iterable[Tool | str], topology: Topology | None = None) -> list[str]:
    """Capabilities of ``tools`` in first-seen order, without repeats."""
    seen: dict[str, None] = {}
    for tool in tools:
        name = tool if isinstance(tool, str) else tool.name
        seen.setdefault(tool_capability(name, topology), None)
    return list(seen)


def capability_description(tools: Iterable[Tool | str], topology: Topology | None = None) -> str:
    """Capabilities of ``tools`` joined with ", " (first-seen order, deduplicated)."""
    return ", ".join(capability_list(tools, topology))


def _phrase_tables(topology: Topology | None) -> list[Mapping[str, str]]:
    if topology is None or topology is DEFAULT_TOPOLOGY:
        return [CAPABILITY_MAP]
    return [topology.capabilities(), CAPABILITY_MAP]
