"""MCP servers: a real stdio server (tests/fakes/mcp_server.py) through ADK's McpToolset."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from google.adk.agents import LlmAgent
from google.adk.events.event import Event
from typer.testing import CliRunner

from fakes.cli import unwrapped
from fakes.trust import trust_every_config
from troupe import (
    DEFAULT_TOPOLOGY,
    Assistant,
    Config,
    ConfigError,
    Tool,
    build_agent_tree,
    load_config,
)
from troupe.cli.app import app
from troupe.mcp import (
    McpServer,
    McpUnavailableError,
    close_toolsets,
    list_tool_names,
    mcp_toolsets,
    place_server,
    visible_name,
)
from troupe.runtime.approvals import ApprovalRequest, run_with_approvals
from troupe.settings import load_settings
from troupe.testing import ScriptedModel, call, declared_tools, simplify


@pytest.fixture(autouse=True)
def trusted_config_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests' troupe.yaml lies in the workspace: they trust it (see fakes.trust)."""
    trust_every_config(monkeypatch)


FAKE_SERVER = str(Path(__file__).parent / "fakes" / "mcp_server.py")


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test's folder is the current directory, the workspace MCP servers are confined to."""
    monkeypatch.chdir(tmp_path)


def fake_server(name: str = "files", **options: Any) -> McpServer:
    """The test server, started with this interpreter."""
    return McpServer(name=name, command=sys.executable, args=[FAKE_SERVER], **options)


def tool_results(events: list[Event]) -> dict[str, Any]:
    """Tool name -> the response the agent got, for every tool run in ``events``."""
    return {
        response.name or "": response.response
        for event in events
        for response in event.get_function_responses()
        if response.name != "transfer_to_agent"
    }


def result_text(response: Any) -> str:
    """An MCP tool result as text: its one text part, which troupe hands on as
    ``{"result": text}`` (or as the object a JSON text holds)."""
    return str(response["result"]) if "result" in response else json.dumps(response)


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text("remember the milk\n", encoding="utf-8")
    return path


async def run(root: LlmAgent, text: str) -> list[Event]:
    return [event async for event in Assistant(root).run("s1", text)]


def sub_agent(root: LlmAgent, name: str) -> LlmAgent:
    for agent in root.sub_agents:
        if agent.name == name and isinstance(agent, LlmAgent):
            return agent
    raise AssertionError(f"no sub-agent {name!r} in {[a.name for a in root.sub_agents]}")


# -- through the runner --------------------------------------------------------


async def test_prefix_gives_the_operator_the_servers_tools_and_a_call_runs_the_server(
    trees: Callable[[Config], LlmAgent], notes: Path
) -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="operator"),
            call("fs_read_file", path=str(notes)),
            "The note says: remember the milk.",
        ]
    )
    root = trees(Config(model=model, mcp_servers=[fake_server(prefix="fs_")]))

    events = await run(root, f"read {notes}")

    assert simplify(events) == [
        ("orchestrator", "transfer", "operator"),
        ("operator", "tool_call", "fs_read_file"),
        ("operator", "tool_result", "fs_read_file"),
        ("operator", "text", None),
    ]
    assert result_text(tool_results(events)["fs_read_file"]) == "remember the milk\n"
    assert sorted(declared_tools(model.requests[1])) == ["fs_read_file", "fs_word_count"]


async def test_agent_entry_gives_the_tools_to_that_agent_under_its_first_prefix(
    trees: Callable[[Config], LlmAgent],
) -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="librarian"),
            call("search_word_count", text="one two three"),
            "Three words.",
        ]
    )
    root = trees(Config(model=model, mcp_servers=[fake_server(agent="librarian")]))

    events = await run(root, "count the words in: one two three")

    assert [a.name for a in root.sub_agents] == ["librarian", "planner"]
    assert ("librarian", "tool_call", "search_word_count") in simplify(events)
    assert result_text(tool_results(events)["search_word_count"]) == "3"
    assert sorted(declared_tools(model.requests[1])) == ["search_read_file", "search_word_count"]


async def test_single_agent_mode_gives_every_server_to_the_one_agent(
    trees: Callable[[Config], LlmAgent],
) -> None:
    model = ScriptedModel(replies=[call("word_count", text="a b"), "Two words."])
    servers = [fake_server("named", prefix="fs_"), fake_server("stray")]
    root = trees(Config(model=model, multi_agent=False, mcp_servers=servers))

    events = await run(root, "count: a b")

    assert result_text(tool_results(events)["word_count"]) == "2"
    assert sorted(declared_tools(model.requests[0])) == [
        "fs_read_file",
        "fs_word_count",
        "read_file",
        "word_count",
    ]


async def test_a_troupe_tool_keeps_its_name_when_an_mcp_tool_would_shadow_it(
    trees: Callable[[Config], LlmAgent],
) -> None:
    def fs_read_file(path: str) -> dict[str, str]:
        """Read a file (troupe's own version)."""
        return {"from": "troupe", "path": path}

    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="operator"),
            call("fs_read_file", path="x"),
            "Done.",
        ]
    )
    config = Config(
        model=model,
        tools=[Tool.from_function(fs_read_file)],
        mcp_servers=[fake_server(prefix="fs_")],
    )
    root = trees(config)

    events = await run(root, "read x")

    assert tool_results(events)["fs_read_file"] == {"from": "troupe", "path": "x"}
    assert sorted(declared_tools(model.requests[1])) == ["fs_read_file", "fs_word_count"]


async def test_a_dangerous_server_asks_before_each_call(
    trees: Callable[[Config], LlmAgent],
) -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="operator"),
            call("fs_word_count", text="x y"),
            "Two.",
        ]
    )
    root = trees(Config(model=model, mcp_servers=[fake_server(prefix="fs_", dangerous=True)]))
    asked: list[ApprovalRequest] = []

    def ask(request: ApprovalRequest) -> bool:
        asked.append(request)
        return True

    events = [
        e async for e in run_with_approvals(Assistant(root), "s1", "count", policy="ask", ask=ask)
    ]

    assert [(r.agent, r.tool) for r in asked] == [("operator", "fs_word_count")]
    assert result_text(tool_results(events)["fs_word_count"]) == "2"


async def test_closing_the_tree_stops_the_server_process(
    trees: Callable[[Config], LlmAgent], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pid_file = tmp_path / "server.pid"
    monkeypatch.setenv("FAKE_MCP_PID_FILE", str(pid_file))
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="operator"),
            call("fs_word_count", text="a"),
            "One.",
        ]
    )
    # ${VAR} in env is read from troupe's environment.
    server = fake_server(prefix="fs_", env={"FAKE_MCP_PID_FILE": "${FAKE_MCP_PID_FILE}"})
    server = McpServer(**{**vars(server), "args": [*server.args, f"--marker={tmp_path}"]})
    root = trees(Config(model=model, mcp_servers=[server]))
    await run(root, "count")
    assert pid_file.exists()
    # In the jail the server has a pid namespace of its own, so it is found by
    # its command line rather than by the pid it writes.
    assert _running_with(f"--marker={tmp_path}")

    await close_toolsets(root)

    deadline = time.monotonic() + 5
    while _running_with(f"--marker={tmp_path}") and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not _running_with(f"--marker={tmp_path}")


def _running_with(argument: str) -> list[int]:
    """Live processes (not zombies) with ``argument`` on their command line."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().split(") ")[-1]
        except (OSError, ValueError):
            continue
        if argument.encode() in words and not state.startswith("Z"):
            found.append(int(entry.name))
    return found


# -- the tree and the routing text ---------------------------------------------


def test_the_owner_exists_without_other_tools_and_is_described_by_the_prefix() -> None:
    root = build_agent_tree(Config(mcp_servers=[fake_server(prefix="browser_")]))

    navigator = sub_agent(root, "navigator")
    assert len(mcp_toolsets(navigator)) == 1
    assert "Capabilities: web browsing." in str(navigator.description)
    assert "### navigator" in str(root.instruction)
    assert "Capabilities: web browsing." in str(root.instruction)


def test_the_orchestrator_instruction_shows_no_mcp_tool_or_server_names() -> None:
    servers = [fake_server("files_srv", prefix="fs_"), fake_server("stray_srv")]
    instruction = str(build_agent_tree(Config(mcp_servers=servers)).instruction)

    for word in ("read_file", "word_count", "files_srv", "stray_srv", "mcp"):
        assert word not in instruction


def test_an_unmatched_server_goes_to_no_agent(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="troupe.mcp"):
        root = build_agent_tree(Config(mcp_servers=[fake_server("stray")]))

    assert mcp_toolsets(root) == []
    assert [a.name for a in root.sub_agents] == ["planner"]
    assert "add prefix: fs_ or agent: operator to the mcp_servers entry 'stray'" in caplog.text


def test_nothing_starts_when_the_tree_is_built(tmp_path: Path) -> None:
    pid_file = tmp_path / "server.pid"
    server = fake_server(prefix="fs_", env={"FAKE_MCP_PID_FILE": str(pid_file)})
    build_agent_tree(Config(mcp_servers=[server]))
    time.sleep(0.3)
    assert not pid_file.exists()


@pytest.mark.parametrize(
    ("prefix", "name", "shown"),
    [
        ("fs_", "read_file", "fs_read_file"),
        ("fs_", "fs_read", "fs_read"),
        ("exec", "run", "exec_run"),
        ("", "fetch", "fetch"),
    ],
)
def test_visible_names_carry_the_prefix_once(prefix: str, name: str, shown: str) -> None:
    assert visible_name(prefix, name) == shown


# -- troupe tree ---------------------------------------------------------------


def _tree_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entries: list[Any], *, exit_code: int = 0
) -> str:
    monkeypatch.setenv("COLUMNS", "250")
    config = tmp_path / "troupe.yaml"
    config.write_text(
        yaml.safe_dump({"builtin_tools": False, "mcp_servers": entries}), encoding="utf-8"
    )
    result = CliRunner().invoke(app, ["tree", "--check", "--config", str(config)])
    assert result.exit_code == exit_code, result.output
    return unwrapped(result.output)


def _entry(name: str, **options: Any) -> dict[str, Any]:
    return {"name": name, "command": sys.executable, "args": [FAKE_SERVER], **options}


def test_troupe_tree_lists_an_unmatched_server_with_its_tools_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output = _tree_output(tmp_path, monkeypatch, [_entry("stray")])

    unmatched = output[output.index("unmatched") :]
    assert "MCP stray" in unmatched
    assert "read_file" in unmatched and "word_count" in unmatched
    assert "add prefix: fs_ or agent: operator to the mcp_servers entry 'stray'" in unmatched


def test_troupe_tree_lists_mcp_tools_under_their_owner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output = _tree_output(tmp_path, monkeypatch, [_entry("files", prefix="fs_")])

    operator = output[output.index("operator") : output.index("planner")]
    assert "file operations" in operator
    assert "fs_read_file" in operator and "fs_word_count" in operator
    assert "unmatched" not in output


def test_troupe_tree_check_says_why_a_server_could_not_start_and_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = _entry("broken", prefix="fs_")
    broken["args"] = [FAKE_SERVER, "--fail"]

    output = _tree_output(tmp_path, monkeypatch, [broken], exit_code=1)

    assert "MCP server 'broken' could not start" in output
    assert "refusing to start (--fail)" in output
    assert "starts an MCP server over stdio" in output
    assert "--check failed: MCP server(s) broken could not start" in output
    shown = CliRunner().invoke(app, ["tree", "--config", str(tmp_path / "troupe.yaml")])
    assert shown.exit_code == 0, shown.output  # without --check nothing starts or fails


# -- configuration -------------------------------------------------------------


def test_a_config_file_entry_becomes_an_mcp_server(tmp_path: Path) -> None:
    path = tmp_path / "troupe.yaml"
    path.write_text(
        "builtin_tools: false\n"
        "mcp_servers:\n"
        "  - name: web\n"
        "    url: http://127.0.0.1:8765/mcp\n"
        "    headers: {Authorization: Bearer x}\n"
        "    prefix: browser_\n",
        encoding="utf-8",
    )

    config = load_config(path)

    servers = [replace(s, workspace=None, data_dir=None) for s in config.mcp_servers]
    assert [replace(s, config_files=()) for s in servers] == [
        McpServer(
            name="web",
            url="http://127.0.0.1:8765/mcp",
            headers={"Authorization": "Bearer x"},
            prefix="browser_",
        )
    ]


def test_a_config_file_entry_is_confined_to_the_teams_workspace_and_data_dir(
    tmp_path: Path,
) -> None:
    path = tmp_path / "troupe.yaml"
    path.write_text(
        f"workspace: {tmp_path}\nbuiltin_tools: false\n"
        "mcp_servers: [{name: files, command: srv, prefix: fs_}]\n",
        encoding="utf-8",
    )

    settings = load_settings(config_path=path)
    (server,) = settings.config.mcp_servers

    assert (server.workspace, server.data_dir) == (settings.workspace, settings.data_dir)
    assert server.workspace == tmp_path.resolve()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"command": "srv", "url": "http://127.0.0.1:1/mcp"}, "sets both command and url"),
        ({}, "has neither command nor url; add command"),
        ({"url": "ftp://example/mcp"}, "is not an http(s) URL"),
        ({"command": "srv", "headers": {"A": "b"}}, "headers only apply to a url"),
        ({"command": "srv", "prefix": "fs_", "agent": "operator"}, "sets both prefix"),
        ({"command": "srv", "timeout": 0}, "timeout must be a positive number"),
    ],
)
def test_an_invalid_entry_raises_config_error_naming_it(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError) as err:
        McpServer(name="bad", **options)
    assert "mcp_servers entry 'bad'" in str(err.value)
    assert message in str(err.value)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"prefix": "files_"}, "prefix 'files_' is not owned by any agent"),
        ({"prefix": "fs"}, "use one of exec, fs_, skill_"),
        ({"agent": "archivist"}, "agent 'archivist' is not in the 'default' topology"),
        ({"agent": "archivist"}, "use one of operator, navigator"),
    ],
)
def test_a_prefix_or_agent_the_topology_lacks_raises_config_error(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError) as err:
        build_agent_tree(Config(mcp_servers=[fake_server("bad", **options)]))
    assert "mcp_servers entry 'bad'" in str(err.value)
    assert message in str(err.value)


def test_two_entries_with_one_name_raise_config_error() -> None:
    with pytest.raises(ConfigError, match="lists 'files' twice"):
        build_agent_tree(Config(mcp_servers=[fake_server(), fake_server(prefix="fs_")]))


def test_an_unset_environment_variable_raises_config_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TROUPE_TEST_UNSET", raising=False)
    server = fake_server(prefix="fs_", env={"TOKEN": "${TROUPE_TEST_UNSET}"})
    with pytest.raises(ConfigError, match="'TROUPE_TEST_UNSET' is not set"):
        build_agent_tree(Config(mcp_servers=[server]))


def test_a_bad_entry_in_the_config_file_fails_troupe_tree_with_the_fix(tmp_path: Path) -> None:
    config = tmp_path / "troupe.yaml"
    config.write_text(
        "mcp_servers:\n  - name: files\n    command: srv\n    prefix: files_\n", encoding="utf-8"
    )

    result = CliRunner().invoke(app, ["tree", "--config", str(config)])

    assert result.exit_code == 2
    assert "prefix 'files_' is not owned by any agent" in unwrapped(result.output)
    assert "Traceback" not in result.output


# -- streamable HTTP -----------------------------------------------------------


@pytest.fixture
def http_server() -> Iterator[str]:
    """The test server over streamable HTTP on 127.0.0.1; yields its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, FAKE_SERVER, "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("the HTTP MCP server did not start") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


async def test_a_url_entry_calls_the_server_over_http_with_its_headers(
    trees: Callable[[Config], LlmAgent], http_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_MCP_TOKEN", "s3cret")
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="navigator"),
            call("browser_request_header", name="x-token"),
            "Got it.",
        ]
    )
    server = McpServer(
        name="web", url=http_server, headers={"X-Token": "${FAKE_MCP_TOKEN}"}, prefix="browser_"
    )
    root = trees(Config(model=model, mcp_servers=[server]))

    events = await run(root, "which token did you send?")

    assert result_text(tool_results(events)["browser_request_header"]) == "s3cret"


# -- listing tools -------------------------------------------------------------


async def test_the_tools_option_keeps_only_the_named_server_tools() -> None:
    placement = place_server(fake_server(prefix="fs_", tools=["word_count"]), DEFAULT_TOPOLOGY)

    assert await list_tool_names(placement) == ["fs_word_count"]


async def test_a_server_that_never_answers_is_reported_after_its_timeout_and_stopped() -> None:
    # `sleep` neither answers nor ends when its input closes: the MCP client has
    # to kill it, which takes longer than this timeout.
    silent = McpServer(name="silent", command="sleep", args=["31.5"], prefix="fs_", timeout=0.5)

    started = time.monotonic()
    with pytest.raises(McpUnavailableError) as err:
        await list_tool_names(place_server(silent, DEFAULT_TOPOLOGY))

    assert time.monotonic() - started < 10
    assert "MCP server 'silent' could not start: timed out after 0.5s" in str(err.value)
    assert "check that `sleep 31.5` starts an MCP server over stdio" in str(err.value)
    assert not _processes_running(["sleep", "31.5"])


def _processes_running(argv: list[str]) -> list[int]:
    """Process ids whose command line is exactly ``argv``."""
    wanted = ("\0".join(argv) + "\0").encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes() == wanted:
                    found.append(int(entry.name))
            except OSError:
                continue  # the process ended while we looked
    return found


async def test_the_router_names_a_server_whose_tools_it_could_not_list(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from troupe.routing.fastpath import agent_profile

    broken = McpServer(
        name="broken", command=sys.executable, args=[FAKE_SERVER, "--fail"], prefix="fs_"
    )
    root = build_agent_tree(Config(mcp_servers=[broken]))
    operator = next(a for a in root.sub_agents if a.name == "operator")

    with caplog.at_level(logging.WARNING, logger="troupe.router"):
        await agent_profile(operator, None)

    assert "could not list the tools of MCP server 'broken'" in caplog.text
    assert " object at 0x" not in caplog.text
