"""A stdio MCP server where the jail cannot run: it does not start until a person says so.

The attack: where bubblewrap cannot create namespaces, an MCP server started
unjailed, with the caller's privileges, as soon as its tools were listed (the
first model call, or ``troupe tree --check``); only its calls asked. Now such
a server is not started at all (the warning says how to start it) unless a
person approves it at the terminal, or a config file the person trusts says
``jail: false`` for it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from google.adk.tools.base_toolset import BaseToolset
from typer.testing import CliRunner

from fakes.cli import unwrapped
from fakes.containment import failing_bwrap
from troupe import Config, build_agent_tree
from troupe.cli.app import app
from troupe.mcp import (
    McpServer,
    approve_unjailed_start,
    close_toolsets,
    mcp_tool_descriptions,
    waiting_for_approval,
)


@pytest.fixture(autouse=True)
def no_namespaces(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bwrap fails here as where namespaces are forbidden, whatever this machine allows."""
    fake = failing_bwrap(tmp_path_factory.mktemp("no-namespaces"))
    monkeypatch.setattr("troupe.sandbox.jail.bundled_bwrap", lambda: fake)


def _marking(marker: Path, workspace: Path, *, jail: bool = True) -> McpServer:
    """A server whose start leaves ``marker`` (and then fails to speak MCP)."""
    return McpServer(
        name="planted",
        command="/bin/sh",
        args=["-c", f"touch {marker}"],
        prefix="fs_",
        workspace=workspace,
        jail=jail,
        timeout=3,
    )


async def _listed(server: McpServer, *, approve: bool) -> list[BaseToolset]:
    """What the tree's first model call would do: list the server's tools."""
    root = build_agent_tree(Config(model="offline", mcp_servers=[server]))
    waiting = waiting_for_approval(root)
    if approve:
        for toolset in waiting:
            approve_unjailed_start(toolset)
    try:
        await mcp_tool_descriptions(root)
    except Exception:  # the planted server speaks no MCP; only its start matters here
        pass
    finally:
        await close_toolsets(root)
    return waiting


async def test_a_server_the_jail_cannot_hold_does_not_start_when_its_tools_are_listed(
    workspace: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    marker = tmp_path / "started"

    waiting = await _listed(_marking(marker, workspace), approve=False)

    assert len(waiting) == 1
    assert not marker.exists(), "the server started unjailed without anyone's yes"
    said = unwrapped(caplog.text)
    assert "MCP server 'planted' was not started: the sandbox is not active" in said
    assert "set `jail: false` on its entry in a config file you trust" in said


async def test_a_person_s_yes_or_a_trusted_jail_false_starts_it(
    workspace: Path, tmp_path: Path
) -> None:
    approved, opted_out = tmp_path / "approved", tmp_path / "opted-out"

    await _listed(_marking(approved, workspace), approve=True)
    waiting = await _listed(_marking(opted_out, workspace, jail=False), approve=False)
    await asyncio.sleep(0.5)

    assert approved.exists() and opted_out.exists()
    assert waiting == []  # jail: false was the person's own say


def test_troupe_tree_check_without_a_terminal_does_not_start_it(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "started"
    config = tmp_path / "config" / "troupe.yaml"  # outside the workspace: trusted
    config.parent.mkdir()
    config.write_text(
        "mcp_servers:\n  - name: planted\n    command: /bin/sh\n"
        f"    args: ['-c', 'touch {marker}']\n    prefix: fs_\n",
        encoding="utf-8",
    )

    checked = CliRunner().invoke(
        app, ["tree", "--check", "--config", str(config), "--workspace", str(workspace)]
    )

    assert not marker.exists()
    assert "was not started: the sandbox is not active" in unwrapped(checked.output)


@pytest.mark.parametrize("answer", [True, False])
def test_troupe_chat_at_a_terminal_asks_before_starting_it(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answer: bool
) -> None:
    from rich.console import Console

    from troupe.cli.session import ChatSession

    config = tmp_path / "config" / "troupe.yaml"
    config.parent.mkdir()
    config.write_text(
        "mcp_servers:\n  - name: planted\n    command: /bin/sh\n    args: ['-c', 'true']\n"
        "    prefix: fs_\n",
        encoding="utf-8",
    )
    asked: list[str] = []

    def person(server: McpServer) -> bool:
        asked.append(server.name)
        return answer

    monkeypatch.setattr("troupe.cli.session.approve_unjailed_server", person)
    chat = ChatSession.open(
        config_path=config, model=None, workspace=workspace, topology=None,
        single_agent=False, data_dir=None, session_id="s1", persist=False,
        json_output=False, console=Console(), approve="ask",
    )  # fmt: skip

    assert asked == ["planted"]
    assert bool(waiting_for_approval(chat.assistant.root_agent)) is not answer
