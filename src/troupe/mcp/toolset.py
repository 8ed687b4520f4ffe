"""ADK toolsets for placed MCP servers: tool renaming, construction, and closing.

ADK's McpToolset is imported only when a toolset is built, so reading a
config file stays fast.
"""

from __future__ import annotations

import functools
import logging
import os
import re
from collections.abc import Callable, Collection
from typing import IO, TYPE_CHECKING, Any

from ..errors import ConfigError
from ..logfile import log_stream

if TYPE_CHECKING:
    from google.adk.agents.base_agent import BaseAgent
    from google.adk.tools.base_toolset import BaseToolset

    from .entries import McpServer
    from .placement import McpPlacement

logger = logging.getLogger("troupe.mcp")

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


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
    ``errlog`` receives a stdio server's stderr (default: troupe's log file,
    never the chat).

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
        errlog=errlog if errlog is not None else log_stream(),
    )


def is_mcp_toolset(item: object) -> bool:
    """True for a toolset :func:`build_toolset` made."""
    return hasattr(item, "troupe_placement")


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
