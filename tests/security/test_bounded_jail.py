"""The jail's own bounds: RAM in /tmp, file size, CPU time, and processes without a cgroup.

The attacks: with ``shell.max_memory_mb: 1024``, a jailed command parks 2 GiB
in ``/tmp`` (a tmpfs of half the machine's RAM, which RLIMIT_AS does not
count) or in ``/dev``; nothing bounds a file's size or a process's CPU time;
and as root where no pids cgroup can be made (Docker's read-only
``/sys/fs/cgroup``) a command limited to 16 processes started 42, silently.
Now the memory-backed mounts hold the memory limit together, RLIMIT_FSIZE
and RLIMIT_CPU are set, and without a cgroup a read-only command's jail runs
as the dedicated uid ``nobody`` (where RLIMIT_NPROC holds) while a command
that writes is one only a person may approve, as ``troupe tree`` says.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fakes.cli import unwrapped
from fakes.containment import asked_first, jail_active
from fakes.hostile_cli import hostile_chat
from fakes.tool_runs import call_tool
from troupe import builtin_tools
from troupe.builtins import _limits
from troupe.builtins._limits import CommandLimits
from troupe.builtins._process import run_process
from troupe.builtins.operator import OperatorTools
from troupe.builtins.workspace import Workspace
from troupe.cli.app import app
from troupe.testing import call

PARK = (
    "for i in 1 2 3 4; do head -c 536870912 /dev/zero > /tmp/park$i; done; "
    "head -c 536870912 /dev/zero > /dev/shm/park; head -c 1048576 /dev/zero > /dev/park; "
    "du -sk /tmp /dev/shm | awk '{s+=$1} END {print \"PARKED\", s}'"
)
"""2.5 GiB into the jail's /tmp, /dev/shm and /dev, then the KiB that stayed."""


@pytest.fixture
def no_pids_cgroup(monkeypatch: pytest.MonkeyPatch) -> None:
    """As where /sys/fs/cgroup is read-only: troupe cannot make a pids cgroup."""
    monkeypatch.setattr(_limits, "_cgroups", False)
    monkeypatch.setattr(_limits.PidsGroup, "create", classmethod(lambda cls, limit: None))


@pytest.fixture
def open_workspace() -> Iterator[Path]:
    """A workspace other users may read, as /workspace or /app in a container is
    (pytest's own folders are owner-only)."""
    folder = Path(tempfile.mkdtemp(prefix="troupe-open-ws-"))
    folder.chmod(0o755)
    (folder / "notes.txt").write_text("ordinary notes\n", encoding="utf-8")
    (folder / "notes.txt").chmod(0o644)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_command_cannot_park_more_than_its_memory_limit_in_the_jail_s_memory_mounts(
    workspace: Path, tmp_path: Path
) -> None:
    """The issue's attack through the CLI: a 1 GiB limit, 2.5 GiB written."""
    config = tmp_path / "config" / "troupe.yaml"
    config.parent.mkdir()
    config.write_text("shell:\n  max_memory_mb: 1024\n", encoding="utf-8")

    chat = hostile_chat(
        [call("exec_shell", command=PARK)], workspace=workspace, options=["-c", str(config)]
    )

    shown = chat.shown_to_model()
    if jail_active():
        parked = int(shown.split("PARKED ")[1].split("\\")[0])
        assert parked <= 1024 * 1024 + 16, shown  # 1 GiB, and du's rounding
    else:  # unjailed /tmp is the host's: the command is never run without a person
        assert '"declined": true' in shown
        assert re.search(r"PARKED \d", shown) is None


async def test_each_process_has_a_file_size_and_cpu_time_limit(
    workspace: Path, data_dir: Path
) -> None:
    tools = builtin_tools(
        workspace=workspace,
        data_dir=data_dir,
        shell_limits=CommandLimits(memory_mb=256),
        shell_timeout_s=20,
    )

    run = await call_tool(tools, "exec_shell", {"command": "cat /proc/self/limits"})

    if not jail_active():
        assert asked_first(run) and "error" in run.response
        return
    limits = {
        line[:26].strip(): line[26:].split()[0] for line in run.response["stdout"].splitlines()
    }
    assert limits["Max file size"] == str(256 * 1024 * 1024)
    assert limits["Max cpu time"] == "21"
    assert limits["Max address space"] == str(256 * 1024 * 1024)


def _operator(workspace: Path, processes: int = 16) -> OperatorTools:
    return OperatorTools(Workspace(workspace), limits=CommandLimits(processes=processes))


async def test_without_a_pids_cgroup_a_read_only_command_is_still_held_at_its_process_limit(
    open_workspace: Path, no_pids_cgroup: None
) -> None:
    """As root the jail of a command that only reads runs as nobody, where RLIMIT_NPROC
    holds; as a user it always did. Forty sleeps against a limit of 16.

    As root that needs a jail nobody can start: a checkout under a folder only
    root may enter (``mktemp -d``, /root) puts troupe's bundled bwrap out of
    nobody's reach, and then the plan says no limit holds."""
    tools = _operator(open_workspace)
    plan = tools.process_limit(writable=False)
    if not jail_active():
        assert not plan.holds or os.geteuid() != 0
        return
    if os.geteuid() == 0 and not tools.jail.starts_as(_limits.DEDICATED_UID):
        assert plan.how == "none" and not plan.holds
        return
    argv, plan = tools.jailed(
        ["/bin/sh", "-c", "sh -c 'for i in $(seq 40); do sleep 5 & done' 2>/dev/null; "
         "set -- /proc/[0-9]*; echo $#; cat notes.txt"],
        writable=False,
    )  # fmt: skip

    done = await run_process(
        argv=argv,
        cwd=open_workspace,
        env={"PATH": "/usr/bin:/bin"},
        timeout_s=30,
        max_output_chars=10_000,
        limits=tools.limits,
        run_as=plan.run_as,
    )

    assert plan.how == ("uid" if os.geteuid() == 0 else "rlimit")
    assert done.exit_code == 0, done
    count, notes = done.stdout.split("\n", 1)
    assert int(count) <= 16, done
    assert notes.startswith("ordinary notes")


async def test_without_any_process_limit_a_writing_command_needs_a_person(
    workspace: Path, data_dir: Path, no_pids_cgroup: None
) -> None:
    tools = builtin_tools(workspace=workspace, data_dir=data_dir)
    operator = _operator(workspace)

    run = await call_tool(tools, "exec_shell", {"command": "touch made-here"}, policy="auto")

    if os.geteuid() == 0 or not jail_active():
        assert not operator.process_limit(writable=True).holds
        assert asked_first(run) and "error" in run.response
        assert "--approve auto does not cover that" in run.response["error"] or (
            "a person must approve" in str(run.events)
        )
        assert not (workspace / "made-here").exists()
    else:  # a user's jail holds RLIMIT_NPROC: auto approves as before
        assert (workspace / "made-here").exists()


def test_troupe_tree_says_how_commands_processes_are_limited(
    workspace: Path, no_pids_cgroup: None
) -> None:
    shown = unwrapped(CliRunner().invoke(app, ["tree", "--workspace", str(workspace)]).output)

    if os.geteuid() == 0 or not jail_active():
        assert "process limit: NONE for commands that write the workspace" in shown
        assert "each needs a person's approval" in shown
    else:
        assert "process limit: RLIMIT_NPROC in each command's jail" in shown
