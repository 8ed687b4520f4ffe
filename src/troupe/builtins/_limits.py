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
machine lets troupe make one.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import resource
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError

MIB = 1024 * 1024
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
        """(resource, limit) pairs set before exec, soft and hard alike."""
        return (
            (resource.RLIMIT_AS, self.memory_mb * MIB),
            (resource.RLIMIT_NOFILE, self.open_files),
        )

    def inside(self, argv: Sequence[str], *, jailed: bool) -> list[str]:
        """``argv`` with the process limit set in front of it, for running in the jail.

        Unchanged outside the jail (the count would be the whole user's), as
        root (the kernel ignores it there; :class:`PidsGroup` holds instead)
        and where ``prlimit`` is missing.
        """
        if not jailed or os.geteuid() == 0 or _PRLIMIT is None:
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
        for parent in _pids_parents():
            folder = parent / f"troupe-{os.getpid()}-{next(_serial)}"
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
        """Stop whatever is left in the group and remove it."""
        os.close(self._procs)
        with contextlib.suppress(OSError):
            (self.folder / "cgroup.kill").write_text("1", encoding="ascii")
        for _ in range(50):
            try:
                self.folder.rmdir()
                return
            except OSError:
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
