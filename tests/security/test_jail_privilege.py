"""A hostile model against the jail's own walls: no privilege inside, whatever uid troupe has.

CI runs these as root, where a jail that kept the host's uid 0 and its
capabilities could remount ``/etc`` writable or unmount the mask over the
data directory. Each test lets a scripted model try that through the runner,
then checks what it saw and what changed on the host.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.containment import a_person_says_yes, check_contained, jail_active, spy_server
from fakes.planted import SECRET_TEXT
from fakes.tool_runs import call_server_tool, call_tool, everything_shown
from troupe import Tool
from troupe.builtins import SecretStore
from troupe.runtime.approvals import ApprovalPolicy

NO_CAPABILITIES = "0000000000000000"


def _status_field(text: str, name: str) -> str:
    """The value of ``name`` in a /proc/<pid>/status text (as a tool result showed it)."""
    found = re.search(rf"{name}:\s*(?:\\t)?\s*([0-9a-f]+)", text)
    assert found, f"{name} is not in what the tool returned: {text[:300]!r}"
    return found.group(1)


def _unprivileged(text: str) -> bool:
    return (
        all(
            _status_field(text, field) == NO_CAPABILITIES
            for field in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")
        )
        and _status_field(text, "NoNewPrivs") == "1"
    )


async def test_a_jailed_command_holds_no_capability_and_no_new_privileges(
    tools: list[Tool],
) -> None:
    # Approved (auto), so it runs in the writable jail, the one with the most it could abuse.
    run = await call_tool(tools, "exec_shell", {"command": "cat /proc/self/status"}, policy="auto")

    if jail_active():
        assert _unprivileged(str(run.response["stdout"]))
    else:
        check_contained(run, "auto", leaked="CapEff" in everything_shown(run))


async def test_a_jailed_command_is_not_root_inside(tools: list[Tool]) -> None:
    run = await call_tool(tools, "exec_shell", {"command": "id -u; id -g"}, policy="auto")

    if jail_active():
        inner = str(run.response["stdout"]).split()
        assert "0" not in inner
        if os.geteuid() != 0:
            assert inner[0] == str(os.geteuid())  # a normal user keeps its own uid
    else:
        check_contained(run, "auto", leaked="exit_code" in run.response)


@pytest.fixture
def host_marks() -> Iterator[list[Path]]:
    """Files a command would leave in the host's system folders if it broke out."""
    marks = [Path(f"/etc/troupe-jail-{os.getpid()}"), Path(f"/usr/troupe-jail-{os.getpid()}")]
    yield marks
    for mark in marks:
        mark.unlink(missing_ok=True)


async def test_a_command_cannot_remount_the_system_folders_writable(
    tools: list[Tool], host_marks: list[Path]
) -> None:
    etc, usr = host_marks
    command = (
        f"mount -o remount,rw,bind /etc; touch {etc}; "
        f"mount -o remount,rw,bind /usr; touch {usr}; "
        f"umount /etc; touch {etc}"
    )

    run = await call_tool(tools, "exec_shell", {"command": command}, policy="auto")

    check_contained(run, "auto", leaked=any(mark.exists() for mark in host_marks))
    assert not jail_active() or run.response["exit_code"] != 0


@pytest.mark.parametrize("unmount", ["umount {data}", "umount -l {data}", "umount -R {ws}"])
async def test_a_command_cannot_unmount_the_mask_over_the_data_directory(
    tools: list[Tool], workspace: Path, data_dir: Path, unmount: str
) -> None:
    SecretStore(data_dir).set("deploy", SECRET_TEXT)
    key = (data_dir / "vault.key").read_bytes() if (data_dir / "vault.key").exists() else b""
    command = unmount.format(data=data_dir, ws=workspace) + f"; ls -la {data_dir}; cat {data_dir}/*"

    run = await call_tool(tools, "exec_shell", {"command": command}, policy="auto")

    shown = everything_shown(run)
    leaked = [SECRET_TEXT, "vault.db", *([key.decode(errors="replace").strip()] if key else [])]
    check_contained(run, "auto", leaked=any(text in shown for text in leaked))


async def test_an_approved_command_still_writes_the_files_troupe_owns_in_the_workspace(
    tools: list[Tool], workspace: Path
) -> None:
    # As root the command is nobody inside, mapped onto troupe's uid: it still owns them.
    run = await call_tool(
        tools,
        "exec_shell",
        {"command": "echo more >> notes.txt && mkdir -p out && echo made > out/new.txt"},
        policy="auto",
        ask=a_person_says_yes,
    )

    assert run.response["exit_code"] == 0, run.response
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "ordinary notes\nmore\n"
    assert (workspace / "out" / "new.txt").stat().st_uid == os.geteuid()


async def test_a_jailed_mcp_server_holds_no_capability_and_no_new_privileges(
    workspace: Path, data_dir: Path, policy: ApprovalPolicy
) -> None:
    run = await call_server_tool(
        spy_server(workspace, data_dir),
        "librarian",
        "search_peek",
        {"query": "/proc/self/status"},
        policy=policy,
    )

    if jail_active():
        assert _unprivileged(str(run.response))
    else:
        check_contained(run, policy, leaked="CapEff" in everything_shown(run))


async def test_a_command_cannot_make_a_user_namespace_to_win_capabilities_back(
    tools: list[Tool],
) -> None:
    command = "unshare --user --map-root-user --mount cat /proc/self/status"

    run = await call_tool(tools, "exec_shell", {"command": command}, policy="auto")

    if jail_active():
        assert run.response["exit_code"] != 0
        assert "CapEff" not in run.response["stdout"]
    else:
        check_contained(run, "auto", leaked="CapEff" in everything_shown(run))
