"""A small MCP server over stdio for the tests, written with the ``mcp`` package.

Run as a script (``python tests/fakes/mcp_server.py``); the tests let ADK's
McpToolset start it as a subprocess with ``sys.executable``. Its tool names
follow no troupe prefix on purpose (``read_file``, ``word_count``), like most
MCP servers. ``--fail`` makes it exit before speaking MCP, like a server that
cannot start.
"""

from __future__ import annotations

import sys
from pathlib import Path

try:  # mcp 2.x renamed FastMCP to MCPServer.
    from mcp.server.mcpserver import MCPServer as FastMCP
except ImportError:  # pragma: no cover - mcp 1.x
    from mcp.server.fastmcp import FastMCP  # type: ignore[no-redef]

server = FastMCP("troupe-test-files")


@server.tool()
def read_file(path: str) -> str:
    """Read a UTF-8 text file and return its contents."""
    return Path(path).read_text(encoding="utf-8")


@server.tool()
def word_count(text: str) -> int:
    """Count the words in a text."""
    return len(text.split())


if __name__ == "__main__":
    if "--fail" in sys.argv:
        print("fake MCP server: refusing to start (--fail)", file=sys.stderr)
        sys.exit(3)
    server.run()
