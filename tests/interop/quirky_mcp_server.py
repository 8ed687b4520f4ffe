"""An MCP server with the names and habits real servers have, for the interop tests.

Run over stdio: ``python quirky_mcp_server.py``. Its tools are named with a
dot, with a name that only differs from another by that dot, and with 70
characters; ``always_fails`` answers with ``isError``, and ``fails_quietly``
does too with a bare message, its reason written to stderr. It writes a line to
stderr when it starts, as many servers log there.
"""

from __future__ import annotations

import sys

from mcp.types import ToolAnnotations

try:  # mcp 2.x renamed FastMCP to MCPServer.
    from mcp.server.mcpserver import MCPServer as FastMCP
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError:  # pragma: no cover - mcp 1.x
    from mcp.server.fastmcp import FastMCP  # type: ignore[no-redef, attr-defined]
    from mcp.server.fastmcp.exceptions import ToolError  # type: ignore[no-redef, import-not-found]

STDERR_MARKER = "quirky-server: listening on stdio"
LONG_NAME = "report_" + "x" * 63

server = FastMCP("troupe-test-quirky")
# Nothing here changes anything, and the server says so: troupe runs MCP tools
# without asking only when their server marks them read-only.
READ_ONLY = ToolAnnotations.model_validate({"readOnlyHint": True})


def dotted_read(path: str) -> str:
    """Read a note by its path (the dotted variant)."""
    return f"dotted read of {path}"


def plain_read(path: str) -> str:
    """Read a note by its path (the underscore variant)."""
    return f"plain read of {path}"


def long_report() -> str:
    """A tool whose name is longer than model APIs allow."""
    return "report"


def always_fails(reason: str) -> str:
    """Fail with the given reason."""
    raise ToolError(reason)  # the server answers isError with this text


def fails_quietly(url: str) -> str:
    """Fail as many servers do: the reason on stderr, a bare error in the answer."""
    print(f"npm ERR! could not install a helper for {url}", file=sys.stderr, flush=True)
    raise ToolError("Error executing tool fails_quietly")


server.tool(name="files.read", annotations=READ_ONLY)(dotted_read)
server.tool(name="files_read", annotations=READ_ONLY)(plain_read)
server.tool(name=LONG_NAME, annotations=READ_ONLY)(long_report)
server.tool(name="always_fails", annotations=READ_ONLY)(always_fails)
server.tool(name="fails_quietly", annotations=READ_ONLY)(fails_quietly)


if __name__ == "__main__":
    print(STDERR_MARKER, file=sys.stderr, flush=True)
    server.run()
