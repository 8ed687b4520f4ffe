"""A stdio MCP server for the docs' forecasting example: ``weather_now`` and
``radar_image``, the tools docs/configuration.md names.

Run as a script (the tests start it with ``sys.executable``).
"""

from __future__ import annotations

try:  # mcp 2.x renamed FastMCP to MCPServer.
    from mcp.server.mcpserver import MCPServer as FastMCP
except ImportError:  # pragma: no cover - mcp 1.x
    from mcp.server.fastmcp import FastMCP  # type: ignore[no-redef, attr-defined]

server = FastMCP("forecasts")


@server.tool()
def weather_now(city: str) -> dict[str, str]:
    """The weather forecast for a city: sky and temperature."""
    return {"city": city, "sky": "light rain", "temperature_c": "14"}


@server.tool()
def radar_image(city: str) -> dict[str, str]:
    """The rain radar image of a city."""
    return {"city": city, "image": "radar.png"}


if __name__ == "__main__":
    server.run()
