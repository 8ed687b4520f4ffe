"""Real third-party MCP servers from the package registries, through troupe's tree.

``mcp-server-time`` and ``mcp-server-fetch`` come from PyPI (dev extras);
the reference filesystem server comes from npm, installed by the test into
``.cache/test-packages`` (skipped only when node or npm is missing). Each runs
over stdio as ADK's McpToolset starts it, and a scripted model calls its
tools through the runner. The fetch server reads a page served by the test on
127.0.0.1.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent

from fakes.http_site import serve_folder
from fakes.package_cache import npm_package
from troupe import Assistant, Config
from troupe.mcp import McpServer, list_tool_names, place_server
from troupe.runtime.events import Step, steps
from troupe.testing import ScriptedModel, call
from troupe.topology import resolve_topology

PAGE = "<html><head><title>Release notes</title></head><body><h1>Release 4.2</h1>" \
    "<p>The vault now signs every release with Ed25519.</p></body></html>"  # fmt: skip


def python_server(name: str, module: str, *args: str, **options: Any) -> McpServer:
    """A server from an installed PyPI package, run with this interpreter."""
    return McpServer(name=name, command=sys.executable, args=["-m", module, *args], **options)


async def run_tool(
    build: Callable[[Config], LlmAgent], server: McpServer, agent: str, tool: str, **args: Any
) -> list[Step]:
    """Route to ``agent``, call ``tool`` with ``args``, answer; the turn's steps."""
    model = ScriptedModel(
        replies=[call("transfer_to_agent", agent_name=agent), call(tool, **args), "Done."]
    )
    root = build(Config(model=model, mcp_servers=[server]))
    events = [event async for event in Assistant(root).run("s1", f"use {tool}")]
    return [step for event in events for step in steps(event)]


def result_of(done: list[Step], tool: str) -> Any:
    return json.loads(next(s.text for s in done if s.kind == "tool_result" and s.name == tool))


@pytest.fixture
def page_url(tmp_path: Path) -> Iterator[str]:
    """A page served on 127.0.0.1 for the duration of the test."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(PAGE, encoding="utf-8")
    with serve_folder(site) as base:
        yield f"{base}/index.html"


# -- mcp-server-time (PyPI) ----------------------------------------------------


async def test_mcp_server_time_lists_its_tools_under_the_owners_prefix() -> None:
    server = python_server("time", "mcp_server_time", agent="librarian")
    placement = place_server(server, resolve_topology("default"))

    names = await list_tool_names(placement)

    assert sorted(names) == ["search_convert_time", "search_get_current_time"]


async def test_mcp_server_time_answers_a_call_through_the_runner(
    trees: Callable[[Config], LlmAgent],
) -> None:
    server = python_server("time", "mcp_server_time", "--local-timezone", "UTC", agent="librarian")

    done = await run_tool(
        trees, server, "librarian", "search_get_current_time", timezone="Europe/Berlin"
    )

    result = result_of(done, "search_get_current_time")
    assert "error" not in result
    # The server's JSON text reaches the model as the object it holds.
    assert result["timezone"] == "Europe/Berlin"


async def test_an_mcp_server_time_error_is_a_failed_tool_call(
    trees: Callable[[Config], LlmAgent],
) -> None:
    server = python_server("time", "mcp_server_time", "--local-timezone", "UTC", agent="librarian")

    done = await run_tool(
        trees, server, "librarian", "search_get_current_time", timezone="Mars/Olympus"
    )

    result = result_of(done, "search_get_current_time")
    assert result["error"].startswith("MCP tool search_get_current_time failed:")
    assert "Mars/Olympus" in result["error"]


# -- mcp-server-fetch (PyPI) ---------------------------------------------------


async def test_mcp_server_fetch_reads_a_local_page_when_private_addresses_are_allowed(
    trees: Callable[[Config], LlmAgent], page_url: str
) -> None:
    server = python_server(
        "fetch", "mcp_server_fetch", "--allow-private-ips", "--ignore-robots-txt", agent="librarian"
    )

    done = await run_tool(trees, server, "librarian", "search_fetch", url=page_url)

    result = result_of(done, "search_fetch")
    text = str(result["result"])
    assert "Release 4.2" in text
    assert "signs every release with Ed25519" in text


async def test_mcp_server_fetch_refusing_a_loopback_page_is_a_failed_tool_call(
    trees: Callable[[Config], LlmAgent], page_url: str
) -> None:
    server = python_server("fetch", "mcp_server_fetch", agent="librarian")

    done = await run_tool(trees, server, "librarian", "search_fetch", url=page_url)

    result = result_of(done, "search_fetch")
    assert result["error"].startswith("MCP tool search_fetch failed:")
    assert "--allow-private-ips" in result["error"]


# -- @modelcontextprotocol/server-filesystem (npm) -----------------------------


@pytest.fixture(scope="module")
def filesystem_server_bin() -> Path:
    return npm_package("@modelcontextprotocol/server-filesystem", "mcp-server-filesystem")


async def test_the_npm_filesystem_server_lists_a_folder_for_the_operator(
    trees: Callable[[Config], LlmAgent], filesystem_server_bin: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "release-notes.md").write_text("# 4.2\n", encoding="utf-8")
    server = McpServer(
        name="files",
        command=str(filesystem_server_bin),
        args=[str(shared)],
        prefix="fs_",
        workspace=tmp_path,
    )

    done = await run_tool(trees, server, "operator", "fs_list_directory", path=str(shared))

    result = result_of(done, "fs_list_directory")
    assert "error" not in result
    assert "release-notes.md" in json.dumps(result)


async def test_the_npm_filesystem_server_refuses_a_path_outside_its_folder_as_a_failure(
    trees: Callable[[Config], LlmAgent], filesystem_server_bin: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (tmp_path / "beside.txt").write_text("in the workspace, not in the server's folder\n")
    server = McpServer(
        name="files",
        command=str(filesystem_server_bin),
        args=[str(shared)],
        prefix="fs_",
        workspace=tmp_path,
    )

    done = await run_tool(
        trees, server, "operator", "fs_read_text_file", path=str(tmp_path / "beside.txt")
    )

    result = result_of(done, "fs_read_text_file")
    assert result["error"].startswith("MCP tool fs_read_text_file failed:")
