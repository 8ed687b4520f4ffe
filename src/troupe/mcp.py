"""MCP servers as toolsets: config entries, their owners, and ADK McpToolsets.

An ``mcp_servers`` entry names a server reached over stdio (``command`` plus
``args`` and ``env``) or streamable HTTP (``url`` plus ``headers``). MCP tool
names rarely follow troupe's prefixes (``read_file``, ``fetch``), so an entry
says who gets its tools:

* ``prefix: fs_`` -- every tool is shown as ``fs_<name>`` and goes to the agent
  that owns the prefix, as if the server had named it that way;
* ``agent: librarian`` -- the tools go to that agent, named with its first
  prefix;
* neither -- the server is *unmatched*: no agent gets its tools, the
  orchestrator's instruction does not mention it (its tools are unknown until
  the server runs, and a server name in the routing text reads like an agent
  name to a model), and ``troupe tree`` lists it with the fix.

Nothing is started when the tree is built: ADK starts a server the first time
its owner's model is called. :func:`list_tool_names` starts one on purpose,
with a timeout, for ``troupe tree``. ADK's McpToolset is imported only when a
toolset is built, so reading a config file stays fast.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import re
import sys
import tempfile
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from .errors import ConfigError, TroupeError
from .routing.capabilities import GENERAL_ACTIONS, tool_capability
from .routing.partition import owner_of
from .tools import Tool
from .topology import Topology

if TYPE_CHECKING:
    from google.adk.agents.base_agent import BaseAgent
    from google.adk.tools.base_toolset import BaseToolset

    from .config import Config

logger = logging.getLogger("troupe.mcp")

DEFAULT_TIMEOUT = 30.0
"""Seconds to wait for a server to start and for each tool call."""
LIST_TIMEOUT = 20.0
"""Seconds ``troupe tree`` waits for a server to list its tools."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True, kw_only=True)
class McpServer:
    """One MCP server whose tools join the team.

    Exactly one of ``command`` (a local server over stdio) and ``url`` (a
    streamable HTTP server) is set. ``prefix`` or ``agent`` decides which
    specialist gets the tools; with neither they are unmatched.
    """

    name: str
    """A short name for messages and ``troupe tree``, e.g. ``files``."""
    command: str | None = None
    """Program that runs a stdio server, e.g. ``uvx`` or ``python``."""
    args: Sequence[str] = ()
    """Arguments of ``command``."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Environment of a stdio server, on top of a minimal one (PATH, HOME, ...);
    ``${VAR}`` in a value is read from troupe's environment."""
    url: str | None = None
    """URL of a streamable HTTP server, e.g. ``http://127.0.0.1:8000/mcp``."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """HTTP headers sent to a ``url`` server; ``${VAR}`` is read from the environment."""
    prefix: str | None = None
    """A routed prefix (``fs_``, ``browser_``): tools are shown as ``fs_<name>`` and
    go to the agent that owns it."""
    agent: str | None = None
    """An agent of the topology that gets the tools (named with its first prefix)."""
    tools: Sequence[str] | None = None
    """Only these tools of the server, by the server's own names (None: all)."""
    dangerous: bool = False
    """Ask the user before every call to one of these tools."""
    timeout: float = DEFAULT_TIMEOUT
    """Seconds to wait for the server to start and for each call."""

    def __post_init__(self) -> None:
        problem = _structure_problem(self)
        if problem:
            raise ConfigError(f"mcp_servers entry {self.name!r}: {problem}.")

    @property
    def transport(self) -> str:
        """``stdio`` or ``http``."""
        return "stdio" if self.command else "http"


def _structure_problem(server: McpServer) -> str | None:
    """What is wrong with an entry's own fields, or None."""
    if not isinstance(server.name, str) or not _NAME.match(server.name):
        return "the name must be letters, digits, '_', '.' or '-', e.g. 'files'"
    if server.command and server.url:
        return (
            "it sets both command and url; keep command (and args) for a local stdio "
            "server or url for a streamable HTTP server"
        )
    if not server.command and not server.url:
        return (
            "it has neither command nor url; add command (and args) to start a stdio "
            "server, or url for a streamable HTTP server"
        )
    if server.url:
        parts = urlsplit(server.url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return f"url {server.url!r} is not an http(s) URL, e.g. http://127.0.0.1:8000/mcp"
        if server.args or server.env:
            return "args and env only apply to a command; pass settings to a url server in headers"
    if server.command and server.headers:
        return "headers only apply to a url; pass settings to a command in args or env"
    if server.prefix is not None and server.agent is not None:
        return (
            f"it sets both prefix {server.prefix!r} and agent {server.agent!r}; keep one "
            "(prefix names the tools and picks the agent that owns it)"
        )
    if server.prefix is not None and not server.prefix.strip():
        return "prefix is empty; use a routed prefix such as fs_ or browser_"
    if isinstance(server.tools, str):
        return f"tools must be a list of tool names, not {server.tools!r}"
    if not server.timeout > 0:
        return f"timeout must be a positive number of seconds, not {server.timeout!r}"
    return None


class McpServerEntry(BaseModel):
    """One ``mcp_servers`` item of ``troupe.yaml``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Short name used in messages and `troupe tree`.")
    command: str | None = Field(default=None, description="Program of a stdio server.")
    args: list[str] = Field(default_factory=list, description="Arguments of command.")
    env: dict[str, str] = Field(
        default_factory=dict, description="Environment of a stdio server (${VAR} allowed)."
    )
    url: str | None = Field(default=None, description="URL of a streamable HTTP server.")
    headers: dict[str, str] = Field(
        default_factory=dict, description="HTTP headers for url (${VAR} allowed)."
    )
    prefix: str | None = Field(default=None, description="Routed prefix, e.g. fs_ or browser_.")
    agent: str | None = Field(default=None, description="Agent that gets the tools.")
    tools: list[str] | None = Field(default=None, description="Only these server tools.")
    dangerous: bool = Field(default=False, description="Ask before every call.")
    timeout: float = Field(default=DEFAULT_TIMEOUT, gt=0, description="Seconds per start/call.")

    def to_server(self) -> McpServer:
        """The :class:`McpServer` this entry describes (raises ConfigError when invalid)."""
        return McpServer(
            name=self.name,
            command=self.command,
            args=tuple(self.args),
            env=dict(self.env),
            url=self.url,
            headers=dict(self.headers),
            prefix=self.prefix,
            agent=self.agent,
            tools=tuple(self.tools) if self.tools is not None else None,
            dangerous=self.dangerous,
            timeout=self.timeout,
        )


@dataclass(frozen=True)
class McpPlacement:
    """Where one server's tools go and what they are called."""

    server: McpServer
    """The configured server."""
    owner: str | None
    """The agent that gets the tools; None when the server is unmatched."""
    prefix: str
    """Prefix every visible tool name carries ("" keeps the server's names)."""

    @property
    def capability(self) -> str:
        """The plain-language capability the owner is described with."""
        return tool_capability(self.prefix + "x") if self.prefix else GENERAL_ACTIONS


def visible_name(prefix: str, name: str) -> str:
    """``name`` carrying ``prefix`` exactly once.

    ``fs_`` + ``read_file`` gives ``fs_read_file``; a prefix without a trailing
    underscore is joined with one (``exec`` + ``run`` gives ``exec_run``); a name
    that already starts with the prefix is kept. (ADK's own ``tool_name_prefix``
    always joins with ``_``, so ``fs_`` would give ``fs__read_file``.)
    """
    if not prefix or name.startswith(prefix):
        return name
    joiner = "" if prefix.endswith("_") else "_"
    return f"{prefix}{joiner}{name}"


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
        return McpPlacement(server, owner_of(server.prefix, topology), server.prefix)
    if server.agent is not None:
        names = topology.agent_names()
        agent = topology.aliases.get(server.agent, server.agent)
        if agent not in names:
            raise ConfigError(
                f"mcp_servers entry {server.name!r}: agent {server.agent!r} is not in the "
                f"{topology.name!r} topology; use one of {', '.join(names)}."
            )
        spec = topology.spec(agent)
        return McpPlacement(server, agent, spec.prefixes[0] if spec.prefixes else "")
    return McpPlacement(server, None, "")


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

    def for_agent(self, agent: str) -> list[McpPlacement]:
        """The servers whose tools ``agent`` gets."""
        return [p for p in self.placements if p.owner == agent]

    @property
    def unmatched(self) -> list[McpPlacement]:
        """Servers no agent gets (neither prefix nor agent set)."""
        return [p for p in self.placements if p.owner is None]

    def stand_ins(self, agent: str) -> list[Tool]:
        """One named-only Tool per server of ``agent``, for capability text.

        The routing text describes agents by the capabilities of their tool
        names (:func:`troupe.tool_capability`); an MCP server's names are only
        known once it runs, so a stand-in named with the prefix gives the same
        phrase. Stand-ins are never turned into ADK tools.
        """
        return [
            Tool(name=f"{p.prefix}mcp", description=p.capability, func=_never_called)
            for p in self.for_agent(agent)
        ]

    def toolsets(self, agent: str | None, *, exclude: Collection[str] = ()) -> list[BaseToolset]:
        """ADK toolsets for the servers of ``agent`` (None: every server)."""
        chosen = self.placements if agent is None else self.for_agent(agent)
        return [build_toolset(p, exclude=exclude) for p in chosen]


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


def _expand(value: str, server: McpServer) -> str:
    def replace(match: re.Match[str]) -> str:
        var = match.group(1)
        if var not in os.environ:
            raise ConfigError(
                f"mcp_servers entry {server.name!r}: environment variable {var!r} is not "
                "set; export it before starting troupe."
            )
        return os.environ[var]

    return _ENV_REF.sub(replace, value)


def _connection_params(server: McpServer) -> Any:
    from google.adk.tools.mcp_tool.mcp_session_manager import (
        StdioConnectionParams,
        StreamableHTTPConnectionParams,
    )
    from mcp import StdioServerParameters

    if server.command:
        env = {k: _expand(v, server) for k, v in server.env.items()}
        return StdioConnectionParams(
            server_params=StdioServerParameters(
                command=server.command, args=list(server.args), env=env or None
            ),
            timeout=server.timeout,
        )
    headers = {k: _expand(v, server) for k, v in server.headers.items()}
    return StreamableHTTPConnectionParams(
        url=server.url or "", headers=headers or None, timeout=server.timeout
    )


@functools.cache
def _toolset_class() -> Callable[..., BaseToolset]:
    from google.adk.agents.readonly_context import ReadonlyContext
    from google.adk.tools.base_tool import BaseTool
    from google.adk.tools.mcp_tool.mcp_toolset import McpToolset

    class TroupeMcpToolset(McpToolset):
        """An McpToolset whose tools carry the placement's prefix once.

        Each ``get_tools`` call returns fresh McpTool objects, so renaming them
        is safe; an McpTool calls the server by the server's own name and
        declares itself to the model by ``name``.
        """

        def __init__(
            self, *, placement: McpPlacement, exclude: Collection[str], **kwargs: Any
        ) -> None:
            super().__init__(**kwargs)
            self.troupe_placement = placement
            self._troupe_exclude = frozenset(exclude)

        async def get_tools(
            self, readonly_context: ReadonlyContext | None = None
        ) -> list[BaseTool]:
            tools = await super().get_tools(readonly_context)
            visible: list[BaseTool] = []
            for tool in tools:
                name = visible_name(self.troupe_placement.prefix, tool.name)
                if name in self._troupe_exclude:
                    logger.warning(
                        "MCP server %r: tool %r is hidden because %r is already a tool of "
                        "the same agent; drop it with the entry's tools: list.",
                        self.troupe_placement.server.name,
                        tool.name,
                        name,
                    )
                    continue
                tool.name = name
                visible.append(tool)
            return visible

    return TroupeMcpToolset


def build_toolset(
    placement: McpPlacement,
    *,
    exclude: Collection[str] = (),
    errlog: IO[str] | None = None,
) -> BaseToolset:
    """An ADK McpToolset for ``placement``; no process starts until it is used.

    Tools whose visible name is in ``exclude`` (the owner's other tools) are
    left out with a warning rather than silently shadowing one another.
    ``errlog`` receives a stdio server's stderr (default: troupe's stderr).

    Raises:
        ConfigError: a ``${VAR}`` in env or headers is not set.
    """
    server = placement.server
    return _toolset_class()(
        placement=placement,
        exclude=exclude,
        connection_params=_connection_params(server),
        tool_filter=list(server.tools) if server.tools is not None else None,
        require_confirmation=server.dangerous,
        errlog=errlog if errlog is not None else sys.stderr,
    )


def is_mcp_toolset(item: object) -> bool:
    """True for a toolset :func:`build_toolset` made."""
    return hasattr(item, "troupe_placement")


class McpUnavailableError(TroupeError):
    """An MCP server could not be started or did not list its tools."""


@contextlib.contextmanager
def _quiet_adk() -> Iterator[None]:
    # ADK logs a failed start at ERROR level, with a traceback; the error
    # raised from here already says what happened.
    adk = logging.getLogger("google_adk")
    level = adk.level
    adk.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        adk.setLevel(level)


def _root_cause(exc: BaseException) -> str:
    """The most specific message in an error's chain.

    ADK wraps a transport's error in ConnectionErrors and task groups; the
    innermost message that says something ("Connection closed", "No such
    file or directory", "timed out after 5s ...") is the useful one.
    """
    messages: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, BaseExceptionGroup) and current.exceptions:
            current = current.exceptions[0]
            continue
        text = re.sub(r"^(Failed to create MCP session: )+", "", str(current)).strip()
        if text:
            messages.append(text)
        current = current.__cause__
    return messages[-1] if messages else type(exc).__name__


def _last_line(stream: IO[str]) -> str:
    stream.flush()
    stream.seek(0)
    lines = [line.strip() for line in stream.read().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _start_hint(server: McpServer) -> str:
    if server.command:
        cmd = " ".join([server.command, *server.args])
        return f"check that `{cmd}` starts an MCP server over stdio"
    return f"check that an MCP server answers at {server.url} (streamable HTTP)"


async def list_tool_names(placement: McpPlacement, *, timeout: float = LIST_TIMEOUT) -> list[str]:
    """Start the server, list its tools by their visible names, and stop it.

    Raises:
        McpUnavailableError: the server did not start or list its tools within
            ``timeout`` seconds; the message says why and what to check.
    """
    server = placement.server
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as errlog, _quiet_adk():
        toolset = build_toolset(placement, errlog=errlog)
        try:
            tools = await asyncio.wait_for(toolset.get_tools(), timeout=timeout)
        except TimeoutError:
            reason = f"no tool list after {timeout:g}s"
        except Exception as exc:
            reason = _root_cause(exc)
        else:
            return [tool.name for tool in tools]
        finally:
            await toolset.close()
        stderr = _last_line(errlog)
    detail = f"{reason} (server said: {stderr})" if stderr else reason
    raise McpUnavailableError(
        f"MCP server {server.name!r} could not start: {detail}; {_start_hint(server)}."
    )


@dataclass(frozen=True)
class McpServerReport:
    """What ``troupe tree`` shows for one server."""

    placement: McpPlacement
    """The server and where its tools go."""
    owner: str | None
    """The agent holding the tools in the built tree; None when unmatched."""
    tools: list[str]
    """Visible tool names (empty when the server could not start)."""
    error: str | None = None
    """Why the tools could not be listed."""
    fix: str | None = None
    """For an unmatched server: how to give its tools to an agent."""


async def describe_servers(
    config: Config, *, timeout: float = LIST_TIMEOUT
) -> list[McpServerReport]:
    """List every configured server's tools at once, for ``troupe tree``.

    Raises:
        ConfigError: an entry names a prefix or agent the topology lacks.
    """
    from .topology import resolve_topology
    from .tree import SINGLE_AGENT_NAME

    topology = resolve_topology(config.topology)
    placements = place_servers(config.mcp_servers, topology)

    async def one(placement: McpPlacement) -> McpServerReport:
        owner = placement.owner if config.multi_agent else SINGLE_AGENT_NAME
        fix = None
        if owner is None:
            fix = unmatched_fix(placement.server.name, topology)
        try:
            names = await list_tool_names(placement, timeout=timeout)
        except McpUnavailableError as exc:
            return McpServerReport(placement, owner, [], str(exc), fix)
        return McpServerReport(placement, owner, names, None, fix)

    return list(await asyncio.gather(*(one(p) for p in placements)))


def mcp_toolsets(agent: BaseAgent) -> list[BaseToolset]:
    """Every MCP toolset held by ``agent`` and its sub-agents."""
    found: list[BaseToolset] = []
    for tool in getattr(agent, "tools", None) or []:
        if is_mcp_toolset(tool):
            found.append(tool)
    for sub in agent.sub_agents:
        found.extend(mcp_toolsets(sub))
    return found


async def close_toolsets(agent: BaseAgent) -> None:
    """Stop every MCP server the tree under ``agent`` started (safe to repeat)."""
    for toolset in mcp_toolsets(agent):
        await toolset.close()
