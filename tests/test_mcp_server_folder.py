"""A stdio MCP server that imports modules from its own folder starts, jailed or not."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fakes.tool_runs import call_server_tool
from troupe.mcp import McpServer
from troupe.sandbox.installs import install_roots

SERVER = '''
from helpers import ANSWER

try:
    from mcp.server.mcpserver import MCPServer as FastMCP
except ImportError:
    from mcp.server.fastmcp import FastMCP

server = FastMCP("beside")


@server.tool()
def answer() -> str:
    """The answer a sibling module holds."""
    return ANSWER


server.run()
'''


def _server_with_helper(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "helpers.py").write_text('ANSWER = "forty-two from helpers.py"\n')
    script = folder / "server.py"
    script.write_text(SERVER)
    return script


def test_a_script_in_a_folder_shows_its_folder_to_the_jail(tmp_path: Path) -> None:
    script = _server_with_helper(tmp_path / "servers")

    assert tmp_path / "servers" in install_roots(sys.executable, [str(script)])


def test_a_script_in_the_home_folder_itself_shows_only_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home" / "someone"
    script = _server_with_helper(home)
    monkeypatch.setenv("HOME", str(home))

    roots = install_roots("/nonexistent/python", [str(script)])

    assert roots == [script]  # a home folder is never shown whole


async def test_a_server_imports_the_module_beside_it(tmp_path: Path) -> None:
    script = _server_with_helper(tmp_path / "servers")
    workspace = tmp_path / "work"
    workspace.mkdir()
    server = McpServer(
        name="beside",
        command=sys.executable,
        args=[str(script)],
        agent="librarian",
        workspace=workspace,
        data_dir=tmp_path / "data",
    )

    run = await call_server_tool(server, "librarian", "search_answer")

    assert "forty-two from helpers.py" in str(run.response)
