"""troupe's own files: directories 0700, files 0600, created without races.

Every store, the vault key and the session database go through these
helpers, so nothing troupe keeps is readable by other users, whatever the
umask, and two processes starting at once never see half a file.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Sequence
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: Path) -> Path:
    """Create ``path`` and every missing parent as 0700; an existing ``path`` is
    tightened if ours. (``mkdir(parents=True)`` would give the parents the umask's mode.)"""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=DIR_MODE)
    with contextlib.suppress(OSError):
        info = path.stat()
        if info.st_uid == os.getuid() and info.st_mode & 0o077:
            path.chmod(DIR_MODE)
    return path


def private_file(path: Path) -> Path:
    """Create ``path`` empty with mode 0600 unless it exists (never through a symlink).

    SQLite gives its ``-wal`` and ``-shm`` files the mode of the database
    file, so creating the database this way keeps all three private.
    """
    private_dir(path.parent)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        os.close(os.open(path, flags, FILE_MODE))
    except FileExistsError:
        with contextlib.suppress(OSError):
            info = path.lstat()
            if info.st_uid == os.getuid() and info.st_mode & 0o077:
                path.chmod(FILE_MODE)
    return path


def publish_once(path: Path, content: bytes) -> bool:
    """Write ``content`` to ``path`` (0600) only if ``path`` does not exist yet.

    The content goes to a randomly named file first and is then hard-linked to
    ``path``, so ``path`` appears complete or not at all: of many processes
    racing, exactly one wins and the others read the winner's whole file.
    Returns True when this call created ``path``.
    """
    private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(tmp, flags, FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        os.link(tmp, path)
    except FileExistsError:
        return False
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    return True


TROUPE_FILES = (
    "secret.key",
    "vault.db",
    "knowledge.db",
    "memory.db",
    "sessions.db",
    "traces.db",
    "troupe.log",
    "chat_history",
    "trusted_configs.json",
)
"""What troupe keeps directly in its data directory (SQLite adds -wal, -shm, -journal):
stores, the vault key, the log, the REPL's history and the trust records."""
_SQLITE_SUFFIXES = ("", "-wal", "-shm", "-journal")


def protected_paths(data_dir: Path, workspace: Path) -> list[Path]:
    """What no tool may touch: the whole data directory, or, when the data
    directory holds the workspace itself (``--data-dir .``), troupe's own files in it."""
    data = data_dir.expanduser().resolve()
    root = workspace.expanduser().resolve()
    if data != root and data not in root.parents:
        return [data]
    return [data / f"{name}{suffix}" for name in TROUPE_FILES for suffix in _SQLITE_SUFFIXES] + [
        data / "evals",
        data / "router-cache",
    ]


def guarded_files(
    workspace: Path, *, config_files: Sequence[Path] = (), key_files: Sequence[Path] = ()
) -> tuple[list[Path], list[Path]]:
    """(read-only, hidden): the ``config_files`` and ``key_files`` troupe reads that lie
    inside ``workspace``. A config file stays readable but no tool or command may
    change it; a key file is hidden like the data directory."""
    root = workspace.expanduser().resolve()

    def inside(paths: Sequence[Path]) -> list[Path]:
        found = []
        for path in paths:
            for form in {Path(os.path.abspath(path.expanduser())), path.expanduser().resolve()}:
                if root in form.parents:
                    found.append(form)
        return found

    return inside(config_files), inside(key_files)
