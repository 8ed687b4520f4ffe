"""MCP servers as real servers name and run their tools: names made valid, duplicates
refused, ``isError`` read as a failure, stderr kept out of the chat, descriptions exposed.

The server is tests/interop/quirky_mcp_server.py over stdio.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from typer.testing import CliRunner

from fakes.cli import unwrapped
from fakes.trust import trust_every_config
from troupe import Assistant, Config
from troupe.cli.app import app
from troupe.cli.render import path_summary
from troupe.mcp import (
    McpServer,
    list_tools,
    mcp_tool_descriptions,
    place_server,
    safe_name,
)
from troupe.mcp.toolset import TOOL_NAME_CONFLICT
from troupe.runtime.events import steps
from troupe.testing import ScriptedModel, call, declared_tools
from troupe.topology import resolve_topology


@pytest.fixture(autouse=True)
def trusted_config_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests' troupe.yaml lies in the workspace: they trust it (see fakes.trust)."""
    trust_every_config(monkeypatch)


QUIRKY = Path(__file__).parent / "quirky_mcp_server.py"
VALID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def quirky(name: str = "quirky", **options: Any) -> McpServer:
    options.setdefault("prefix", "fs_")
    return McpServer(name=name, command=sys.executable, args=[str(QUIRKY)], **options)


def _yaml(tmp_path: Path, *servers: str) -> Path:
    lines = ["mcp_servers:"]
    for name in servers:
        lines += [
            f"  - name: {name}",
            f"    command: {sys.executable}",
            f"    args: [{QUIRKY}]",
            "    prefix: fs_",
        ]
    path = tmp_path / "troupe.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("name", "safe"),
    [
        ("files.read", "files_read"),
        ("data/get v2", "data_get_v2"),
        ("a" * 80, "a" * 64),
        ("", "tool"),
    ],
)
def test_a_name_is_made_valid_for_model_apis(name: str, safe: str) -> None:
    assert safe_name(name) == safe


def test_a_name_that_is_taken_gets_a_numbered_suffix_within_64_characters() -> None:
    assert safe_name("files.read", ["files_read"]) == "files_read_2"
    assert safe_name("b" * 70, ["b" * 64]) == "b" * 62 + "_2"


async def test_every_tool_a_server_lists_gets_a_valid_unique_name() -> None:
    placement = place_server(quirky(), resolve_topology("default"))

    listing = await list_tools(placement)

    assert all(VALID.match(name) for name in listing.names), listing.names
    assert len(set(listing.names)) == len(listing.names)
    assert listing.renamed["fs_files_read"] == "files.read"
    assert listing.renamed["fs_files_read_2"] == "files_read"


def test_troupe_tree_reports_the_renamed_tools(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["tree", "--check", "--config", str(_yaml(tmp_path, "quirky"))]
    )

    assert result.exit_code == 0, result.output
    flat = unwrapped(result.output)
    assert "fs_files_read (renamed from files.read)" in flat
    assert "fs_files_read_2 (renamed from files_read)" in flat


def test_troupe_tree_refuses_two_servers_offering_one_tool_name_naming_both(
    tmp_path: Path,
) -> None:
    result = CliRunner().invoke(
        app, ["tree", "--check", "--config", str(_yaml(tmp_path, "one", "two"))]
    )

    assert result.exit_code == 2, result.output
    flat = unwrapped(result.output)
    assert re.search(r"MCP servers '(one|two)' and '(one|two)' both offer a tool named", flat)


async def test_in_a_turn_two_servers_offering_one_tool_name_fail_the_turn_naming_both(
    trees: Callable[[Config], LlmAgent],
) -> None:
    model = ScriptedModel(replies=[call("transfer_to_agent", agent_name="operator"), "done"])
    root = trees(Config(model=model, mcp_servers=[quirky("one"), quirky("two")]))

    events = [event async for event in Assistant(root).run("s1", "read the note")]

    done = [s for e in events for s in steps(e)]
    [failure] = [s for s in done if s.kind == "error"]
    assert failure.name == TOOL_NAME_CONFLICT
    assert re.search(
        r"MCP servers '(one|two)' and '(one|two)' both offer a tool named 'fs_", failure.text
    )
    assert len(model.requests) == 1, "the operator's model is not called without the tools"
    assert path_summary(done).endswith("failed")


def test_troupe_chat_shows_a_tool_name_clash_as_one_line_and_fails(
    tmp_path: Path, isolated_environment: Path
) -> None:
    config = _yaml(tmp_path, "one", "two")
    result = CliRunner().invoke(
        app, ["chat", "--config", str(config), "--workspace", str(tmp_path), "list the files"]
    )

    assert result.exit_code == 1, result.output
    flat = unwrapped(result.output)
    assert flat.count("both offer a tool named") == 1, flat
    assert re.search(
        r"turn failed: operator: MCP servers '(one|two)' and '(one|two)' both offer a tool "
        r"named 'fs_\w+'",
        flat,
    ), flat
    assert "Traceback" not in result.output


async def test_the_model_is_offered_only_valid_tool_names(
    trees: Callable[[Config], LlmAgent],
) -> None:
    model = ScriptedModel(replies=[call("transfer_to_agent", agent_name="operator"), "ok"])
    root = trees(Config(model=model, mcp_servers=[quirky()]))

    [event async for event in Assistant(root).run("s1", "read the note")]

    offered = declared_tools(model.requests[1])
    assert "fs_files_read" in offered and "fs_files_read_2" in offered
    assert all(VALID.match(name) for name in offered), offered


async def test_a_renamed_tool_still_calls_the_server_by_its_own_name(
    trees: Callable[[Config], LlmAgent],
) -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="operator"),
            call("fs_files_read", path="notes.txt"),
            "read it",
        ]
    )
    root = trees(Config(model=model, mcp_servers=[quirky()]))

    events = [event async for event in Assistant(root).run("s1", "read the note")]

    results = [s for e in events for s in steps(e) if s.kind == "tool_result"]
    assert "dotted read of notes.txt" in results[0].text


async def test_an_is_error_result_is_a_failure_in_the_result_the_trace_and_the_path(
    trees: Callable[[Config], LlmAgent],
) -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="operator"),
            call("fs_always_fails", reason="disk full"),
            "It failed.",
        ]
    )
    root = trees(Config(model=model, mcp_servers=[quirky()]))
    assistant = Assistant(root)

    events = [event async for event in assistant.run("s1", "make it fail")]

    done = [s for e in events for s in steps(e)]
    result = next(s for s in done if s.kind == "tool_result")
    assert json.loads(result.text)["error"].startswith("MCP tool fs_always_fails failed:")
    assert "disk full" in result.text
    assert "fs_always_fails (failed)" in path_summary(done)
    record = assistant.last_turn
    assert record is not None
    assert record.trace.tool_calls[-1].error is not None


async def test_mcp_tool_descriptions_are_readable_from_the_tree(
    trees: Callable[[Config], LlmAgent],
) -> None:
    root = trees(Config(model="offline", mcp_servers=[quirky()]))

    descriptions = await mcp_tool_descriptions(root)

    assert descriptions["fs_always_fails"] == "Fail with the given reason."
    assert descriptions["fs_files_read"].startswith("Read a note by its path")


def test_server_stderr_goes_to_the_log_file_not_the_chat(
    tmp_path: Path, isolated_environment: Path
) -> None:
    config = _yaml(tmp_path, "quirky")
    result = CliRunner().invoke(
        app, ["chat", "--config", str(config), "--workspace", str(tmp_path), "list the files"]
    )

    assert result.exit_code == 0, result.output
    assert "quirky-server" not in result.output
    log = (isolated_environment / "troupe.log").read_text(encoding="utf-8")
    assert "quirky-server: listening on stdio" in log


async def test_a_bare_mcp_failure_carries_the_reason_the_server_wrote_to_stderr(
    trees: Callable[[Config], LlmAgent],
) -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="operator"),
            call("fs_fails_quietly", url="http://127.0.0.1/page"),
            "It failed.",
        ]
    )
    assistant = Assistant(trees(Config(model=model, mcp_servers=[quirky()])))

    events = [event async for event in assistant.run("s1", "fetch the page")]

    result = next(s for e in events for s in steps(e) if s.kind == "tool_result")
    error = json.loads(result.text)["error"]
    assert error.startswith("MCP tool fs_fails_quietly failed: Error executing tool")
    assert "(server said: npm ERR! could not install a helper for http://127.0.0.1/page)" in error
    record = assistant.last_turn
    assert record is not None and "npm ERR!" in str(record.trace.tool_calls[-1].error)


def test_troupe_chat_shows_why_an_mcp_tool_failed_on_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fakes.openai_server import serve, text_reply, tool_call_reply

    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    config = _yaml(tmp_path, "quirky")
    script = [
        tool_call_reply("fs_fails_quietly", {"url": "http://127.0.0.1/page"}, "c1"),
        text_reply("The fetch failed."),
    ]
    with serve(script) as fake:
        result = CliRunner().invoke(
            app,
            [
                "chat", "--single-agent", "--config", str(config), "--workspace", str(tmp_path),
                "--model", "openai/fake", "--api-base", fake.api_base, "fetch the page",
            ],
        )  # fmt: skip

    assert result.exit_code == 0, result.output
    [line] = [line for line in result.output.splitlines() if "fs_fails_quietly failed:" in line]
    assert "server said: npm ERR! could not install a helper" in line
