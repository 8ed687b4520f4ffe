"""Per-command resource limits: processes, memory and open files, set before the command runs.

Memory (address space, ``RLIMIT_AS``) and open files (``RLIMIT_NOFILE``) are
rlimits set in the child before exec and inherited by everything it starts:
an allocation past the limit fails in the command (``MemoryError``, ``Cannot
allocate memory``) instead of growing the machine.

Processes are counted per user, so ``RLIMIT_NPROC`` set outside the jail
would count every process of troupe's user. Inside the jail the kernel
counts per user namespace, and each jail has its own: for a normal user the
limit is set there, by ``prlimit`` just before the command. The kernel never
applies it to uid 0, though, and as root a jailed command is still uid 0 to
the kernel (see :mod:`troupe.sandbox.jail`), so as root each command gets a
pids cgroup with ``pids.max`` instead (:class:`PidsGroup`), where this
machine lets troupe make one. Where it does not (Docker's read-only
``/sys/fs/cgroup``), a command that only reads runs its jail as the
dedicated unprivileged uid ``nobody`` instead, where ``prlimit`` holds again
(:func:`process_limit`); a command that writes the workspace needs troupe's
own uid, so there no process limit can apply, and such a command is one only
a person may approve (never ``--approve auto``), as ``troupe tree`` says.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
import os
import re
import resource
import secrets
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import ConfigError

MIB = 1024 * 1024
DEFAULT_CPU_SECONDS = 3601
"""CPU seconds a process gets unless its runner says (the longest ``shell.timeout_s``, plus one)."""
PROCESSES = (16, 256, 4096)
"""Lowest, default and highest ``max_processes``."""
MEMORY_MB = (128, 4096, 65_536)
"""Lowest, default and highest ``max_memory_mb`` (address space, MiB)."""
OPEN_FILES = (64, 1024, 65_536)
"""Lowest, default and highest ``max_open_files``."""


@dataclass(frozen=True)
class CommandLimits:
    """What one command (with everything it starts) may use; bounded, see the tuples above."""

    processes: int = PROCESSES[1]
    memory_mb: int = MEMORY_MB[1]
    open_files: int = OPEN_FILES[1]
    cpu_seconds: int = DEFAULT_CPU_SECONDS
    """CPU time each process may use (``RLIMIT_CPU``); the command's runner sets it
    from its timeout, so a process that escapes the timeout's kill still stops."""

    def __post_init__(self) -> None:
        for setting, value, (low, _, high) in (
            ("shell.max_processes", self.processes, PROCESSES),
            ("shell.max_memory_mb", self.memory_mb, MEMORY_MB),
            ("shell.max_open_files", self.open_files, OPEN_FILES),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ConfigError(
                    f"{setting} is {value!r}; use a whole number from {low} to {high}."
                )

    def rlimits(self) -> tuple[tuple[int, int], ...]:
        """(resource, limit) pairs set before exec, soft and hard alike.

        Address space and open files, CPU seconds, and the largest file a
        process may write (``RLIMIT_FSIZE``, the memory limit: a file in the
        jail's ``/tmp`` is RAM, and the tmpfs is sized to the same limit).
        """
        return (
            (resource.RLIMIT_AS, self.memory_mb * MIB),
            (resource.RLIMIT_NOFILE, self.open_files),
            (resource.RLIMIT_FSIZE, self.memory_mb * MIB),
            (resource.RLIMIT_CPU, self.cpu_seconds),
        )

    def for_timeout(self, timeout_s: float) -> CommandLimits:
        """These limits with CPU time to match a command's ``timeout_s`` (a second more)."""
        return replace(self, cpu_seconds=math.ceil(timeout_s) + 1)

    def inside(self, argv: Sequence[str], plan: ProcessLimit) -> list[str]:
        """``argv`` with the process limit set in front of it, for running in the jail.

        Only where ``plan`` holds the count by RLIMIT_NPROC (``rlimit`` or
        ``uid``): outside the jail the count would be the whole user's, and the
        kernel ignores it for uid 0 (:class:`PidsGroup` holds there instead).
        """
        if plan.how not in ("rlimit", "uid") or _PRLIMIT is None:
            return list(argv)
        return [_PRLIMIT, f"--nproc={self.processes}", "--", *argv]

    def in_child(self, group: PidsGroup | None = None) -> Callable[[], None]:
        """A ``preexec_fn`` that lowers the limits in the child, before it execs,
        and moves it into ``group``.

        It only calls ``setrlimit`` and ``write`` on an open descriptor (no
        allocation, no lock), which is what is safe between fork and exec. A
        limit already lower than ours is kept.
        """
        pairs = self.rlimits()
        current = {kind: resource.getrlimit(kind) for kind, _ in pairs}
        wanted = []
        for kind, limit in pairs:
            _, hard = current[kind]
            if hard != resource.RLIM_INFINITY:
                limit = min(limit, hard)
            wanted.append((kind, (limit, limit)))

        def lower() -> None:
            if group is not None:
                group.join()
            for kind, pair in wanted:
                resource.setrlimit(kind, pair)

        return lower


DEFAULT_LIMITS = CommandLimits()


_CGROUP_ROOT = Path("/sys/fs/cgroup")
_PRLIMIT = next(
    (name for name in ("/usr/bin/prlimit", "/bin/prlimit") if Path(name).is_file()), None
)


class PidsGroup:
    """A pids cgroup of one command, for troupe running as root (see the module).

    Made under troupe's own cgroup (cgroup v1's ``pids`` hierarchy, or v2
    where the controller is delegated); the child joins it before exec.
    :meth:`create` returns None where that is not possible.
    """

    def __init__(self, folder: Path, procs: int) -> None:
        self.folder = folder
        self._procs = procs

    @classmethod
    def create(cls, limit: int) -> PidsGroup | None:
        if time.monotonic() - _last_sweep > SWEEP_EVERY_S:
            sweep_stale_groups()
        for parent in _pids_parents():
            # The random part keeps a group left behind by a killed process whose
            # pid this process now has (pids come round) from taking this name.
            folder = parent / f"troupe-{os.getpid()}-{next(_serial)}-{secrets.token_hex(4)}"
            try:
                folder.mkdir(mode=0o700)
            except OSError:
                continue
            try:
                (folder / "pids.max").write_text(str(limit), encoding="ascii")
                procs = os.open(folder / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
            except OSError:
                with contextlib.suppress(OSError):
                    folder.rmdir()
                continue
            return cls(folder, procs)
        return None

    def join(self) -> None:
        """In the child before exec: move this process into the group."""
        os.write(self._procs, b"0")

    def close(self) -> None:
        """Stop whatever is left in the group and remove it.

        cgroup v2 stops the group with ``cgroup.kill``; v1 has no such file, so
        each process still in the group (one that left the command's process
        group with ``setsid``, say) is killed by its pid.
        """
        os.close(self._procs)
        _stop_and_remove(self.folder)


def _members(folder: Path) -> list[int] | None:
    """The pids in a group, or None when its member list cannot be read."""
    try:
        text = (folder / "cgroup.procs").read_text(encoding="ascii")
    except OSError:
        return None
    return [int(pid) for pid in text.split()]


def _kill_members(folder: Path) -> None:
    for pid in _members(folder) or []:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


STALE_AFTER_S = 60.0
"""An empty troupe group older than this was left by a process killed before it
could remove it: a live one is empty only for the moments around its command."""


SWEEP_EVERY_S = 10.0
"""How often making a group also sweeps the groups of troupe processes gone."""
_last_sweep = 0.0


def _owner_gone(folder: Path) -> bool:
    """The troupe process that made ``folder`` (its pid is in the name) is not
    running: no process has that pid, or the one that has it started after
    the group was made (pids come round)."""
    match = re.match(r"troupe-(\d+)-", folder.name)
    if match is None or int(match.group(1)) == os.getpid():
        return False
    pid = int(match.group(1))
    try:
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
        boot = _boot_time()
    except (OSError, IndexError, StopIteration):
        return True
    if fields[0] == "Z":
        return True
    started = boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    return started > folder.stat().st_mtime + 1.0


@functools.cache
def _boot_time() -> float:
    """When the machine booted (``btime`` in ``/proc/stat``), in seconds since the epoch."""
    return next(
        float(line.split()[1])
        for line in Path("/proc/stat").read_text(encoding="ascii").splitlines()
        if line.startswith("btime ")
    )


def sweep_stale_groups() -> int:
    """Remove the groups that killed troupe processes left behind; how many.

    An empty group is removed once it is old (:data:`STALE_AFTER_S`). A group
    whose troupe process is gone (killed with SIGKILL mid-command, which no
    ``--die-with-parent`` survives reliably) is stopped first: its command
    would otherwise run on with nobody to read it or bound its time.
    """
    global _last_sweep
    _last_sweep = time.monotonic()
    removed = 0
    now = time.time()
    for parent in _pids_parents():
        with contextlib.suppress(OSError):
            for folder in parent.glob("troupe-*"):
                with contextlib.suppress(OSError):
                    if _owner_gone(folder):
                        _stop_and_remove(folder)
                        removed += 1
                    elif now - folder.stat().st_mtime > STALE_AFTER_S and _members(folder) == []:
                        folder.rmdir()
                        removed += 1
    return removed


def _stop_and_remove(folder: Path) -> None:
    """Stop every process in a group (``cgroup.kill``, else each by its pid) and remove it."""
    with contextlib.suppress(OSError):
        (folder / "cgroup.kill").write_text("1", encoding="ascii")
    for _ in range(50):
        try:
            folder.rmdir()
            return
        except OSError:
            _kill_members(folder)
            time.sleep(0.01)


def _pids_parents() -> list[Path]:
    """Where this process may make a pids cgroup: its own group in each hierarchy."""
    found = []
    try:
        lines = Path("/proc/self/cgroup").read_text(encoding="ascii").splitlines()
    except OSError:
        return []
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):
            found.append(_CGROUP_ROOT / "pids" / path.lstrip("/"))
        elif controllers == "" and (_CGROUP_ROOT / "cgroup.controllers").exists():
            found.append(_CGROUP_ROOT / path.lstrip("/"))
    return [folder for folder in found if folder.is_dir()]


_serial = itertools.count()


@dataclass(frozen=True)
class ProcessLimit:
    """How one command's process count is held, and as which uid its jail starts."""

    how: str
    """``rlimit`` (per-jail RLIMIT_NPROC), ``cgroup`` (a pids cgroup), ``uid`` (the
    jail run as :data:`DEDICATED_UID`, with RLIMIT_NPROC) or ``none``."""
    run_as: int | None = None
    """The uid the jail is started as (``uid`` only); None keeps troupe's."""

    @property
    def holds(self) -> bool:
        """True when the process limit applies."""
        return self.how != "none"


DEDICATED_UID = 65534
"""The uid (``nobody``) a read-only command's jail runs as when troupe is root and
no pids cgroup can be made: RLIMIT_NPROC applies to any uid but 0."""
NO_PROCESS_LIMIT = (
    "no process limit can apply to it here (troupe runs as root and cannot make a pids "
    "cgroup, or prlimit is missing), so only a person may approve it"
)
"""Why a command is one only a person may approve, said in its approval request."""


def process_limit(
    *, jailed: bool, writable: bool, workspace: Path, as_uid_works: Callable[[int], bool]
) -> ProcessLimit:
    """How a command's processes are limited here (see the module).

    ``as_uid_works(uid)`` tells whether the jail starts when run as ``uid``.
    """
    if os.geteuid() != 0:
        return ProcessLimit("rlimit" if jailed and _PRLIMIT is not None else "none")
    if pids_cgroups_work():
        return ProcessLimit("cgroup")
    if (
        jailed
        and not writable
        and _PRLIMIT is not None
        and reachable_by_others(workspace)
        and as_uid_works(DEDICATED_UID)
    ):
        return ProcessLimit("uid", DEDICATED_UID)
    return ProcessLimit("none")


def describe_process_limit(
    *, jailed: bool, workspace: Path, as_uid_works: Callable[[int], bool]
) -> tuple[bool, str]:
    """(holds, one line for ``troupe tree``): how commands' processes are limited here."""
    writer = process_limit(
        jailed=jailed, writable=True, workspace=workspace, as_uid_works=as_uid_works
    )
    reader = process_limit(
        jailed=jailed, writable=False, workspace=workspace, as_uid_works=as_uid_works
    )
    how = {
        "rlimit": "RLIMIT_NPROC in each command's jail",
        "cgroup": "a pids cgroup per command",
        "uid": f"RLIMIT_NPROC, the jail run as uid {DEDICATED_UID}",
    }
    if writer.holds:
        return True, f"process limit: {how[writer.how]}"
    said = (
        "process limit: NONE for commands that write the workspace (troupe runs as root "
        "and cannot make a pids cgroup here, or prlimit is missing), so each needs a "
        "person's approval; --approve auto does not cover them"
    )
    if reader.holds:
        said += f"; read-only commands: {how[reader.how]}"
    return False, said


def pids_cgroups_work() -> bool:
    """True when troupe (as root) can make a pids cgroup here (tried once per process)."""
    global _cgroups
    if _cgroups is None:
        sweep_stale_groups()
        group = PidsGroup.create(PROCESSES[0])
        _cgroups = group is not None
        if group is not None:
            group.close()
    return _cgroups


_cgroups: bool | None = None


def reachable_by_others(folder: Path) -> bool:
    """True when a user other than its owner may enter and read ``folder`` (and every
    folder above it may be entered), as the dedicated uid must to mount it."""
    try:
        target = folder.resolve()
        if target.stat().st_mode & 0o005 != 0o005:
            return False
        return all(parent.stat().st_mode & 0o001 for parent in target.parents)
    except OSError:
        return False
