"""As root, each command's process limit is a pids cgroup: made whatever was left behind, and
removed with everything in it.

The failure: a troupe process killed before it removed a command's group left
``troupe-<pid>-<n>`` behind; a later process given the same pid (pids come
round, and a fresh container hands out the same ones) could not make its
group under that name, decided that no pids cgroup could be made here, and
refused every command as one no process limit holds. And on cgroup v1, which
has no ``cgroup.kill``, a process that left the command's process group
(``setsid``) outlived the command and kept its group.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.needs import in_ci, missing
from troupe.builtins import _limits
from troupe.builtins._limits import CommandLimits, PidsGroup, sweep_stale_groups
from troupe.builtins._process import run_process


@pytest.fixture
def real_groups() -> Iterator[Path]:
    """Where troupe makes its groups on this machine (root with pids cgroups only)."""
    if os.geteuid() != 0:
        pytest.skip("troupe makes pids cgroups only as root; this run is not root")
    probe = PidsGroup.create(16)
    if probe is None:
        if in_ci():
            missing("a writable pids cgroup hierarchy as root", "run CI as root on Linux")
        pytest.skip("this machine lets root make no pids cgroup")
    probe.close()
    yield probe.folder.parent


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_groups_left_under_this_process_s_pid_do_not_stop_it_making_its_own(
    real_groups: Path,
) -> None:
    next_serial = next(_limits._serial)
    left = [real_groups / f"troupe-{os.getpid()}-{next_serial + n}" for n in range(1, 65)]
    for folder in left:  # as a killed process with this pid left them
        folder.mkdir()
    try:
        group = PidsGroup.create(16)

        assert group is not None
        assert (group.folder / "pids.max").read_text().strip() == "16"
        group.close()
    finally:
        for folder in left:
            folder.rmdir()


def test_a_stale_empty_group_is_swept_and_live_or_new_ones_are_kept(real_groups: Path) -> None:
    stale = real_groups / "troupe-1-0"
    stale.mkdir()
    old = time.time() - 2 * _limits.STALE_AFTER_S
    os.utime(stale, (old, old))
    new = PidsGroup.create(16)
    busy = PidsGroup.create(16)
    assert new is not None and busy is not None
    sleeper = os.fork()
    if sleeper == 0:  # the child joins the busy group and waits to be stopped
        busy.join()
        time.sleep(60)
        os._exit(0)
    try:
        os.utime(busy.folder, (old, old))
        deadline = time.time() + 5
        while not (busy.folder / "cgroup.procs").read_text().split() and time.time() < deadline:
            time.sleep(0.01)

        sweep_stale_groups()

        assert not stale.exists()
        assert new.folder.is_dir() and busy.folder.is_dir()
    finally:
        busy.close()
        new.close()
        os.waitpid(sleeper, 0)
    assert not busy.folder.exists() and not new.folder.exists()


async def test_a_process_that_left_the_command_s_process_group_stops_with_the_command(
    real_groups: Path, tmp_path: Path
) -> None:
    result = await run_process(
        argv=["/bin/sh", "-c", "setsid sleep 300 >/dev/null 2>&1 & echo $!"],
        cwd=tmp_path,
        env={"PATH": os.environ["PATH"]},
        timeout_s=20,
        max_output_chars=1000,
        limits=CommandLimits(processes=16),
    )

    escaped = int(result.stdout)
    deadline = time.time() + 5
    while _alive(escaped) and time.time() < deadline:
        time.sleep(0.05)
    assert not _alive(escaped)
    assert not [f for f in real_groups.glob(f"troupe-{os.getpid()}-*") if f.is_dir()]


def test_a_group_whose_troupe_process_was_killed_is_stopped_and_removed(
    real_groups: Path,
) -> None:
    gone = os.fork()
    if gone == 0:
        os._exit(0)
    os.waitpid(gone, 0)  # a troupe process killed mid-command: its pid is free now
    left = real_groups / f"troupe-{gone}-0-cafe0001"
    left.mkdir()
    (left / "pids.max").write_text("16")
    orphan = os.fork()
    if orphan == 0:  # its command, still running with nobody to stop it
        (left / "cgroup.procs").write_text("0")
        time.sleep(60)
        os._exit(0)
    try:
        deadline = time.time() + 5
        while not (left / "cgroup.procs").read_text().split() and time.time() < deadline:
            time.sleep(0.01)

        sweep_stale_groups()

        _, status = os.waitpid(orphan, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        assert not left.exists()
    finally:
        with contextlib.suppress(OSError):
            os.kill(orphan, signal.SIGKILL)
            os.waitpid(orphan, 0)
        with contextlib.suppress(OSError):
            left.rmdir()
