"""Reach a path under a root by directory descriptors, never following a link.

Every file tool resolves and checks a path first (:meth:`Workspace.resolve`),
then does its work here: the root is opened, and each component of the
checked path is opened relative to the one before with ``O_NOFOLLOW |
O_DIRECTORY``. A directory swapped for a symlink between the check and the
use makes the walk fail (``ELOOP``/``ENOTDIR``) instead of leading out of the
root; the final name is then opened, created, listed or replaced relative to
the last descriptor.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_SWAPPED = {errno.ELOOP, errno.ENOTDIR, errno.EMLINK}


class PathChanged(OSError):
    """A component of a checked path turned into a link (or a file) before it was used."""


def _open_child(parent: int, name: str, *, create: bool) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            raise
    with suppress(FileExistsError):  # made meanwhile (or swapped in): the open decides
        os.mkdir(name, 0o777, dir_fd=parent)
    return os.open(name, _DIR_FLAGS, dir_fd=parent)


@contextmanager
def open_dir(root: Path, parts: Sequence[str], *, create: bool = False) -> Iterator[int]:
    """A descriptor of ``root/parts...``, walked one component at a time without links.

    ``create`` makes missing directories (``mkdir`` relative to the parent's
    descriptor). Raises :class:`PathChanged` when a component is a link or
    not a directory.
    """
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name in parts:
            if name in ("", ".", "..") or "/" in name:
                raise PathChanged(errno.EINVAL, f"unexpected path component {name!r}")
            try:
                child = _open_child(fd, name, create=create)
            except OSError as exc:
                if exc.errno in _SWAPPED:
                    raise PathChanged(exc.errno, f"{name!r} is a link or not a folder") from None
                raise
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def open_file(dir_fd: int, name: str, flags: int, mode: int = 0o644) -> int:
    """Open ``name`` in the directory ``dir_fd`` without following a link."""
    try:
        return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in _SWAPPED:
            raise PathChanged(exc.errno, f"{name!r} is a link") from None
        raise


def list_entries(dir_fd: int) -> list[tuple[str, bool]]:
    """The names in the directory ``dir_fd`` with whether each is a folder (links not followed)."""
    with os.scandir(dir_fd) as it:
        return sorted((e.name, e.is_dir(follow_symlinks=False)) for e in it)
