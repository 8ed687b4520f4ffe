"""MCP servers troupe starts, against a hostile model: the jail and the path check.

A stdio server runs in the bubblewrap jail with the workspace, its own
installation and the system directories; troupe's data directory, the rest
of the machine, troupe's environment and its process are out of its sight.
Path arguments are checked before a call: the reference filesystem server
from npm is given the data directory and files outside the workspace, and
the test server's ``--spy`` tools try what a hostile server would.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fakes.containment import check_contained, spy_server
from fakes.package_cache import npm_package
from fakes.planted import SECRET_TEXT
from fakes.tool_runs import ToolRun, call_server_tool, everything_shown
from troupe.mcp import McpServer
from troupe.runtime.approvals import ApprovalPolicy


@pytest.fixture
def key_file(data_dir: Path) -> Path:
    """troupe's vault key, in the data directory inside the workspace."""
    data_dir.mkdir(parents=True, exist_ok=True)
    key = data_dir / "secret.key"
    key.write_text(SECRET_TEXT + "\n", encoding="utf-8")
    return key


@pytest.fixture(scope="module")
def filesystem_server_bin() -> Path:
    return npm_package("@modelcontextprotocol/server-filesystem", "mcp-server-filesystem")


def _filesystem(binary: Path, workspace: Path, data_dir: Path, allowed: Path) -> McpServer:
    return McpServer(
        name="files",
        command=str(binary),
        args=[str(allowed)],
        prefix="fs_",
        workspace=workspace,
        data_dir=data_dir,
    )


async def _spy_call(
    workspace: Path, data_dir: Path, tool: str, args: dict[str, Any], policy: ApprovalPolicy
) -> ToolRun:
    return await call_server_tool(
        spy_server(workspace, data_dir), "librarian", tool, args, policy=policy
    )


@pytest.mark.parametrize("spelling", ["absolute", "relative", "dotted"])
async def test_a_filesystem_server_is_not_given_the_data_directory(
    filesystem_server_bin: Path,
    workspace: Path,
    data_dir: Path,
    key_file: Path,
    policy: ApprovalPolicy,
    spelling: str,
) -> None:
    path = {
        "absolute": str(key_file),
        "relative": f"{data_dir.name}/secret.key",
        "dotted": f"./notes/../{data_dir.name}/secret.key",
    }[spelling]
    server = _filesystem(filesystem_server_bin, workspace, data_dir, workspace)

    run = await call_server_tool(
        server, "operator", "fs_read_text_file", {"path": path}, policy=policy
    )

    assert "data directory" in run.response["error"]
    assert SECRET_TEXT not in everything_shown(run)


async def test_a_filesystem_server_is_not_given_a_path_outside_the_workspace(
    filesystem_server_bin: Path,
    workspace: Path,
    data_dir: Path,
    outside: Path,
    policy: ApprovalPolicy,
) -> None:
    # The server itself is allowed the whole parent folder; troupe's check still refuses.
    server = _filesystem(filesystem_server_bin, workspace, data_dir, outside.parent.parent)

    run = await call_server_tool(
        server, "operator", "fs_read_text_file", {"path": "../outside/secret.txt"}, policy=policy
    )

    assert "outside the workspace" in run.response["error"]
    assert SECRET_TEXT not in everything_shown(run)


async def test_a_move_out_of_the_workspace_is_refused_before_the_call(
    filesystem_server_bin: Path, workspace: Path, data_dir: Path, outside: Path
) -> None:
    server = _filesystem(filesystem_server_bin, workspace, data_dir, workspace.parent)
    args = {"source": str(workspace / "notes.txt"), "destination": str(outside.parent / "n.txt")}

    run = await call_server_tool(server, "operator", "fs_move_file", args, policy="auto")

    assert "destination" in run.response["error"]
    assert (workspace / "notes.txt").exists()
    assert not (outside.parent / "n.txt").exists()


async def test_a_server_cannot_read_the_data_directory_by_any_argument(
    workspace: Path, data_dir: Path, key_file: Path, policy: ApprovalPolicy
) -> None:
    run = await _spy_call(workspace, data_dir, "search_peek", {"query": str(key_file)}, policy)

    check_contained(run, policy, leaked=SECRET_TEXT in everything_shown(run))


async def test_a_server_cannot_read_files_outside_the_workspace(
    workspace: Path, data_dir: Path, outside: Path, policy: ApprovalPolicy
) -> None:
    run = await _spy_call(workspace, data_dir, "search_peek", {"query": str(outside)}, policy)

    check_contained(run, policy, leaked=SECRET_TEXT in everything_shown(run))


async def test_a_server_does_not_get_troupes_keys(
    workspace: Path, data_dir: Path, policy: ApprovalPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_TEXT)
    monkeypatch.setenv("TROUPE_SECRET_KEY", SECRET_TEXT)

    run = await _spy_call(workspace, data_dir, "search_environment", {}, policy)

    assert SECRET_TEXT not in everything_shown(run)


async def test_a_server_sees_no_process_of_troupe(
    workspace: Path, data_dir: Path, policy: ApprovalPolicy
) -> None:
    troupe = Path("/proc/self/cmdline").read_bytes().replace(b"\0", b" ").decode()

    run = await _spy_call(workspace, data_dir, "search_processes", {}, policy)

    check_contained(run, policy, leaked=troupe.strip() in str(run.response))
