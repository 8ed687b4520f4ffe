"""A git repository in the workspace whose config names programs git would run.

The workspace is the attacker's, ``.git/config`` included. A command that
runs without asking must not read it, so a planted ``core.fsmonitor`` (or
``diff.external``, a textconv or clean filter, an ``include.path``) never
runs without a person's yes. Each planted program prints a marker into the
command's output (the jail's workspace is read-only for an unapproved
command, and its ``/tmp`` is private, so output is the one place it could
show), and writes a file where it can; neither may appear.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fakes.containment import asked_first
from fakes.tool_runs import call_tool, everything_shown
from troupe import Tool
from troupe.runtime.approvals import approval_requests

MARKER = "PLANTED-GIT-PROGRAM-RAN"


def _planted(name: str, workspace: Path) -> str:
    """A shell command that shows the marker and leaves a file wherever it may."""
    return (
        f"sh -c 'echo {MARKER}-{name}; echo {MARKER}-{name} >&2; "
        f"touch {workspace}/ran-{name} /tmp/ran-{name} 2>/dev/null; exit 1' --"
    )


def _git(workspace: Path, *args: str) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(workspace), "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(
        ["git", *args], cwd=workspace, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.fixture
def repository(workspace: Path) -> Path:
    """The workspace as a git repository with one commit and one changed file."""
    _git(workspace, "init", "-q")
    _git(workspace, "config", "user.email", "a@example.invalid")
    _git(workspace, "config", "user.name", "a")
    _git(workspace, "add", "notes.txt")
    _git(workspace, "commit", "-qm", "first")
    (workspace / "notes.txt").write_text("changed notes\n", encoding="utf-8")
    return workspace


def _plant(repository: Path, key: str) -> None:
    program = _planted(key.replace(".", "-"), repository)
    if key == "include.path":
        (repository / "extra.cfg").write_text(f"[core]\n\tfsmonitor = {program}\n")
        _git(repository, "config", "include.path", "../extra.cfg")
        return
    if key.startswith(("diff.planted", "filter.planted")):
        kind = key.split(".")[0]
        (repository / ".gitattributes").write_text(f"*.txt {kind}=planted\n")
    _git(repository, "config", key, program)


PLANTED = [
    ("core.fsmonitor", "git status"),
    ("core.fsmonitor", "git diff"),
    ("diff.external", "git diff"),
    ("diff.planted.textconv", "git log -p"),
    ("filter.planted.clean", "git diff"),
    ("include.path", "git status"),
]


@pytest.mark.parametrize(("key", "command"), PLANTED)
async def test_a_planted_repository_config_never_runs_without_approval(
    tools: list[Tool], repository: Path, key: str, command: str
) -> None:
    _plant(repository, key)

    run = await call_tool(tools, "exec_shell", {"command": command}, policy="deny")

    assert asked_first(run), f"{command!r} ran in an attacker's repository without asking"
    asked = [r for event in run.events for r in approval_requests(event)]
    assert ".git/config" in asked[0].effect["summary"]  # the person sees what git may run
    assert "error" in run.response
    assert MARKER not in everything_shown(run)
    assert not list(repository.glob("ran-*"))
