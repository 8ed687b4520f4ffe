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

from .entries import DEFAULT_TIMEOUT, McpServer, McpServerEntry
from .listing import (
    LIST_TIMEOUT,
    McpServerReport,
    McpToolListing,
    McpUnavailableError,
    describe_servers,
    list_tool_names,
    list_tools,
)
from .placement import (
    McpPlacement,
    McpPlan,
    place_server,
    place_servers,
    plan_servers,
    unmatched_fix,
)
from .toolset import (
    MAX_NAME,
    ToolClaims,
    approve_unjailed_start,
    build_toolset,
    close_toolsets,
    is_mcp_toolset,
    mcp_tool_descriptions,
    mcp_toolsets,
    not_started_unjailed,
    safe_name,
    visible_name,
    waiting_for_approval,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "LIST_TIMEOUT",
    "MAX_NAME",
    "McpPlacement",
    "McpPlan",
    "McpServer",
    "McpServerEntry",
    "McpServerReport",
    "McpToolListing",
    "McpUnavailableError",
    "ToolClaims",
    "approve_unjailed_start",
    "build_toolset",
    "close_toolsets",
    "describe_servers",
    "is_mcp_toolset",
    "list_tool_names",
    "list_tools",
    "mcp_tool_descriptions",
    "mcp_toolsets",
    "not_started_unjailed",
    "place_server",
    "place_servers",
    "plan_servers",
    "safe_name",
    "unmatched_fix",
    "visible_name",
    "waiting_for_approval",
]
