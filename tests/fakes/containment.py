"""What "contained" means on this machine: the jail where namespaces work, else troupe's fallback.

Where bubblewrap can create namespaces, a hostile command or MCP server runs
in the jail and must leak nothing, whatever the approval policy. Where it
cannot (some containers; simulated with ``TROUPE_TEST_NO_NAMESPACES=1``, which
CI runs the security tests under too), troupe runs them unjailed and holds
the line with approvals instead: every such call must ask a person first.
``--approve auto`` does not count as that person, so with nobody to ask (as in
these tests) the call is refused under ``deny`` and under ``auto``, and nothing
leaks.
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path

from fakes.tool_runs import ToolRun
from troupe.mcp import McpServer
from troupe.runtime.approvals import ApprovalPolicy, ApprovalRequest, approval_requests
from troupe.sandbox import sandbox_status

NO_NAMESPACES_ENV = "TROUPE_TEST_NO_NAMESPACES"
"""Set to 1 to run the tests as on a machine where bwrap cannot create namespaces."""
FAKE_SERVER = str(Path(__file__).parent / "mcp_server.py")


def spy_server(workspace: Path, data_dir: Path) -> McpServer:
    """The test MCP server with its hostile ``--spy`` tools, placed with the librarian."""
    return McpServer(
        name="spy",
        command=sys.executable,
        args=[FAKE_SERVER, "--spy"],
        agent="librarian",
        workspace=workspace,
        data_dir=data_dir,
    )


def failing_bwrap(folder: Path) -> str:
    """A ``bwrap`` in ``folder`` that fails as it does where namespaces are forbidden."""
    fake = folder / "bwrap"
    fake.write_text("#!/bin/sh\necho 'No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    return str(fake)


def jail_active() -> bool:
    """True when commands and MCP servers run in the jail here."""
    return sandbox_status().active


def asked_first(run: ToolRun) -> bool:
    """True when the call paused for a person's approval."""
    return any(approval_requests(event) for event in run.events)


def check_contained(run: ToolRun, policy: ApprovalPolicy, *, leaked: bool) -> None:
    """With the jail: nothing ``leaked``. Without it: the call asked first and,
    with no person to answer, was refused under ``policy`` with nothing ``leaked``."""
    if jail_active():
        assert not leaked, "the jail let it out"
        return
    assert asked_first(run), "without the jail every such call must ask first"
    assert "error" in run.response, f"under {policy} with nobody to ask the call must be refused"
    assert not leaked, "a refused call leaked"


def a_person_says_yes(request: ApprovalRequest) -> bool:
    """The person at the prompt approves. Tests of what an approved call does use
    it, because without the jail ``--approve auto`` alone never lets a command run."""
    return True
