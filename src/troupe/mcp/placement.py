"""Owner resolution: which agent gets an MCP server's tools, and with which prefix."""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import ConfigError
from ..routing.capabilities import GENERAL_ACTIONS, tool_capability
from ..routing.partition import owner_of
from ..tools import Tool
from ..topology import Topology
from .entries import McpServer
from .toolset import ToolClaims, build_toolset

if TYPE_CHECKING:
    from google.adk.tools.base_toolset import BaseToolset

logger = logging.getLogger("troupe.mcp")


@dataclass(frozen=True)
class McpPlacement:
    """Where one server's tools go and what they are called."""

    server: McpServer
    """The configured server."""
    owner: str | None
    """The agent that gets the tools; None when the server is unmatched."""
    prefix: str
    """Prefix every visible tool name carries ("" keeps the server's names)."""
    capability: str = ""
    """What the owner is described as doing with these tools: the topology's
    phrase for the prefix, or "" when it has none (the tools' own descriptions
    then speak for them; a toolset is never "general actions")."""


def _routed_prefixes(topology: Topology) -> list[str]:
    return list(dict.fromkeys(p for spec in topology.agents for p in spec.prefixes))


def _example_owner(topology: Topology) -> tuple[str, str] | None:
    """A (prefix, agent) pair to suggest in messages: the first ``*_`` prefix."""
    for spec in topology.agents:
        for prefix in spec.prefixes:
            if prefix.endswith("_"):
                return prefix, spec.name
    for spec in topology.agents:
        if spec.prefixes:
            return spec.prefixes[0], spec.name
    return None


def unmatched_fix(name: str, topology: Topology) -> str:
    """How to give an unmatched server's tools to an agent."""
    example = _example_owner(topology)
    if example is None:
        return f"add agent: <name> to the mcp_servers entry {name!r}"
    prefix, agent = example
    return f"add prefix: {prefix} or agent: {agent} to the mcp_servers entry {name!r}"


def place_server(server: McpServer, topology: Topology) -> McpPlacement:
    """The owner and visible-name prefix of ``server`` in ``topology``.

    Raises:
        ConfigError: the prefix is owned by no agent, or the agent does not exist.
    """
    if server.prefix is not None:
        prefixes = _routed_prefixes(topology)
        if server.prefix not in prefixes:
            raise ConfigError(
                f"mcp_servers entry {server.name!r}: prefix {server.prefix!r} is not owned "
                f"by any agent of the {topology.name!r} topology; use one of "
                f"{', '.join(prefixes) or '(none)'}, or set agent: instead."
            )
        return McpPlacement(
            server,
            owner_of(server.prefix, topology),
            server.prefix,
            _phrase(server.prefix, topology),
        )
    if server.agent is not None:
        names = topology.agent_names()
        agent = topology.aliases.get(server.agent, server.agent)
        if agent not in names:
            raise ConfigError(
                f"mcp_servers entry {server.name!r}: agent {server.agent!r} is not in the "
                f"{topology.name!r} topology; use one of {', '.join(names)}."
            )
        spec = topology.spec(agent)
        prefix = spec.prefixes[0] if spec.prefixes else ""
        return McpPlacement(server, agent, prefix, _phrase(prefix, topology))
    return McpPlacement(server, None, "")


def _phrase(prefix: str, topology: Topology) -> str:
    """The topology's capability phrase for tools under ``prefix``, or ""."""
    if not prefix:
        return ""
    phrase = tool_capability(prefix + "x", topology)
    return "" if phrase == GENERAL_ACTIONS else phrase


def place_servers(servers: Sequence[McpServer], topology: Topology) -> list[McpPlacement]:
    """:func:`place_server` for each server, in order; names must be unique.

    Raises:
        ConfigError: naming the entry and the fix.
    """
    seen: set[str] = set()
    placements = []
    for server in servers:
        if not isinstance(server, McpServer):
            raise ConfigError(
                f"mcp_servers entry {server!r} is not a troupe.mcp.McpServer; build entries "
                "with McpServer(name=..., command=... or url=...)."
            )
        if server.name in seen:
            raise ConfigError(
                f"mcp_servers lists {server.name!r} twice; give each server its own name."
            )
        seen.add(server.name)
        placements.append(place_server(server, topology))
    return placements


@dataclass(frozen=True)
class McpPlan:
    """The placed servers of one tree, grouped by owner."""

    placements: list[McpPlacement]
    """Every server, in config order."""
    claims: ToolClaims = field(default_factory=ToolClaims, compare=False, repr=False)
    """Tool names taken so far, shared by every toolset of the plan."""

    def for_agent(self, agent: str) -> list[McpPlacement]:
        """The servers whose tools ``agent`` gets."""
        return [p for p in self.placements if p.owner == agent]

    @property
    def unmatched(self) -> list[McpPlacement]:
        """Servers no agent gets (neither prefix nor agent set)."""
        return [p for p in self.placements if p.owner is None]

    def stand_ins(self, agent: str) -> list[Tool]:
        """One named-only Tool per server of ``agent`` whose prefix the topology
        describes, for capability text.

        The routing text describes agents by the capabilities of their tool
        names (:func:`troupe.tool_capability`); an MCP server's names are only
        known once it runs, so a stand-in named with the prefix gives the same
        phrase. Stand-ins are never turned into ADK tools.
        """
        return [
            Tool(name=f"{p.prefix}mcp", description=p.capability, func=_never_called)
            for p in self.for_agent(agent)
            if p.capability
        ]

    def toolsets(self, agent: str | None, *, exclude: Collection[str] = ()) -> list[BaseToolset]:
        """ADK toolsets for the servers of ``agent`` (None: every server)."""
        chosen = self.placements if agent is None else self.for_agent(agent)
        return [build_toolset(p, exclude=exclude, claims=self.claims) for p in chosen]


def _never_called() -> None:
    raise AssertionError("a capability stand-in is never called")


def plan_servers(servers: Sequence[McpServer], topology: Topology) -> McpPlan:
    """Place every server for a tree; warn about the unmatched ones.

    Raises:
        ConfigError: naming the entry and the fix.
    """
    plan = McpPlan(place_servers(servers, topology))
    for placement in plan.unmatched:
        logger.warning(
            "MCP server %r has neither prefix nor agent, so no agent gets its tools; %s.",
            placement.server.name,
            unmatched_fix(placement.server.name, topology),
        )
    return plan
