"""The directory file and shell tools are confined to."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import ConfigError
from . import _safe_fs


class PathOutsideWorkspace(ValueError):
    """A path that resolves outside the workspace."""


class Workspace:
    """A root directory; every path a tool touches must resolve inside it.

    ``private`` are directories no tool may touch even inside the root
    (troupe's data directory, which holds the stores and the vault key).
    ``read_only`` are files tools may read but never write (the config files
    troupe read); only those inside the root are kept.
    """

    def __init__(
        self,
        root: str | Path | None = None,
        *,
        private: Sequence[str | Path] = (),
        read_only: Sequence[str | Path] = (),
    ) -> None:
        self.root = Path(root or os.getcwd()).expanduser().resolve()
        self.private = tuple(Path(p).expanduser().resolve() for p in private)
        fixed = (Path(p).expanduser().resolve() for p in read_only)
        self.read_only = tuple(p for p in fixed if self.root in p.parents)
        if not self.root.is_dir():
            what = "is not a directory" if self.root.exists() else "does not exist"
            raise ConfigError(
                f"The workspace {str(self.root)!r} {what}; create it, or choose another "
                "directory with --workspace or `workspace:` in the config file."
            )

    def resolve(self, path: str) -> Path:
        """The absolute path of ``path`` (relative to the root), if inside the root.

        Symlinks are resolved first, so a link pointing out is refused too.
        """
        if not isinstance(path, str) or not path.strip():
            raise PathOutsideWorkspace("the path is empty; give a path inside the workspace")
        if "\x00" in path:
            raise PathOutsideWorkspace(f"path {path!r} contains a NUL byte; remove it")
        try:
            candidate = Path(path).expanduser()
        except RuntimeError:  # '~name' for a user this machine does not have
            raise PathOutsideWorkspace(
                f"path {path!r} names the home folder of an unknown user; "
                "give a path inside the workspace, relative to it"
            ) from None
        if not candidate.is_absolute():
            candidate = self.root / candidate
        resolved = candidate.resolve()
        if resolved != self.root and self.root not in resolved.parents:
            raise PathOutsideWorkspace(
                f"path {path!r} resolves to {str(resolved)!r}, outside the workspace "
                f"{str(self.root)!r}; use a path inside the workspace"
            )
        if (hidden := self.private_root_of(resolved)) is not None:
            raise PathOutsideWorkspace(
                f"path {path!r} is inside {str(hidden)!r}, troupe's data directory or "
                "key file, which holds its stores, logs or keys; no tool touches it"
            )
        return resolved

    def private_root_of(self, path: Path) -> Path | None:
        """The private directory ``path`` lies in (or is), else None."""
        for root in self.private:
            if path == root or root in path.parents:
                return root
        return None

    def _parts(self, target: Path) -> tuple[str, ...]:
        return target.relative_to(self.root).parts

    def _changed(self, target: Path) -> PathOutsideWorkspace:
        return PathOutsideWorkspace(
            f"{self.relative(target)!r} changed while in use (a folder on its way became a "
            "link or a file); it was not used"
        )

    def open_read(self, target: Path) -> BinaryIO:
        """Open a path :meth:`resolve` returned, for reading, without following a link.

        The path is walked from the root one folder at a time by descriptor
        (:mod:`._safe_fs`), so a folder or file swapped for a link after the
        check is refused, never followed.
        """
        try:
            with _safe_fs.open_dir(self.root, self._parts(target)[:-1]) as dir_fd:
                flags = os.O_RDONLY | os.O_NONBLOCK
                fd = _safe_fs.open_file(dir_fd, target.name, flags)
        except _safe_fs.PathChanged:
            raise self._changed(target) from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise PathOutsideWorkspace(f"{self.relative(target)!r} is not a regular file")
            os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
        return os.fdopen(fd, "rb")

    def list_dir(self, target: Path) -> list[tuple[str, bool]]:
        """The entries of a folder :meth:`resolve` returned: (name, is a folder), sorted.

        Opened by descriptor from the root without following links; links in
        the folder are listed as what they are, not followed.
        """
        try:
            with _safe_fs.open_dir(self.root, self._parts(target)) as dir_fd:
                return _safe_fs.list_entries(dir_fd)
        except _safe_fs.PathChanged:
            raise self._changed(target) from None

    def write_bytes(self, target: Path, data: bytes) -> None:
        """Replace a path :meth:`resolve` returned with ``data``; links cannot redirect it.

        Missing folders are made one at a time relative to their parent's
        descriptor, never through a link. The bytes go to a new file with a
        random name (``O_EXCL|O_NOFOLLOW``) in the target's folder and are
        then renamed over the target: a planted link is replaced, never
        followed, and a crash leaves the old file or the new one.
        """
        if target in self.read_only:
            raise PathOutsideWorkspace(
                f"{self.relative(target)!r} is a config file troupe read at start, so no "
                "tool or command may change it; ask the person to edit it (and trust it "
                "again with `troupe trust`)"
            )
        try:
            with _safe_fs.open_dir(self.root, self._parts(target)[:-1], create=True) as dir_fd:
                self._replace_in(dir_fd, target.name, data)
        except _safe_fs.PathChanged:
            raise self._changed(target) from None

    @staticmethod
    def _replace_in(dir_fd: int, name: str, data: bytes) -> None:
        mode = 0o644
        with contextlib.suppress(FileNotFoundError):
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if stat.S_ISREG(info.st_mode):
                mode = stat.S_IMODE(info.st_mode)
        tmp = f".{name[:80]}.{secrets.token_hex(8)}.troupe-tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
        fd = _safe_fs.open_file(dir_fd, tmp, flags, mode)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise

    def relative(self, path: Path) -> str:
        """``path`` relative to the root, for display."""
        rel = path.relative_to(self.root)
        return str(rel) if str(rel) != "." else "."


def tool_error(message: str, accepted: str | None = None, **extra: Any) -> dict[str, Any]:
    """The structured error every built-in tool returns instead of raising."""
    out: dict[str, Any] = {"error": message}
    if accepted:
        out["accepted"] = accepted
    out.update(extra)
    return out
