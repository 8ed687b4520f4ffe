"""Partition tools among specialists by name prefix."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..tools import Tool, validate_tools
from ..topology import Topology, resolve_topology


@dataclass
class RoleToolSet(Mapping[str, list[Tool]]):
    """A mapping agent name -> its tools, for any topology, plus the tools no agent owns.

    ``split["weather"]`` and ``for name, tools in split.items()`` work for every
    topology. The six role attributes (``operator`` ... ``chronicler``) are the
    default topology's entries, kept for attribute access; for another
    topology they stay empty.
    """

    operator: list[Tool] = field(default_factory=list)
    navigator: list[Tool] = field(default_factory=list)
    vault: list[Tool] = field(default_factory=list)
    librarian: list[Tool] = field(default_factory=list)
    planner: list[Tool] = field(default_factory=list)
    """Always empty: the planner works without tools."""
    chronicler: list[Tool] = field(default_factory=list)
    unmatched: list[Tool] = field(default_factory=list)
    """Tools whose names match no prefix; no agent receives them."""
    by_agent: dict[str, list[Tool]] = field(default_factory=dict)
    """Agent name -> its tools, for every agent of the topology, in tree order."""

    def __getitem__(self, agent_name: str) -> list[Tool]:
        return self.by_agent[agent_name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.by_agent)

    def __len__(self) -> int:
        return len(self.by_agent)


_ROLE_FIELDS = ("operator", "navigator", "vault", "librarian", "planner", "chronicler")


def owner_of(name: str, topology: Topology) -> str | None:
    """The agent that owns a tool name, or None when it is unmatched."""
    for spec in topology.matching_order():
        if any(name.startswith(prefix) for prefix in spec.prefixes):
            return spec.name
    return None


def partition_tools(
    tools: Iterable[Tool], topology: str | Path | Topology = "default"
) -> RoleToolSet:
    """Split ``tools`` among the topology's agents by prefix.

    Prefixes are tried agent by agent in the topology's match order (for the
    default topology: librarian, chronicler, navigator, vault, operator); a
    tool that matches none goes to ``unmatched``.
    """
    topo = resolve_topology(topology)
    checked = validate_tools(tools)
    result = RoleToolSet(by_agent={name: [] for name in topo.agent_names()})
    for tool in checked:
        owner = owner_of(tool.name, topo)
        if owner is None:
            result.unmatched.append(tool)
        else:
            result.by_agent[owner].append(tool)
    for role in _ROLE_FIELDS:
        if role in result.by_agent and role != "planner":
            setattr(result, role, result.by_agent[role])
    return result
