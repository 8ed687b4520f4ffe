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


class PathOutsideWorkspace(ValueError):
    """A path that resolves outside the workspace."""


class Workspace:
    """A root directory; every path a tool touches must resolve inside it.

    ``private`` are directories no tool may touch even inside the root
    (troupe's data directory, which holds the stores and the vault key).
    """

    def __init__(
        self, root: str | Path | None = None, *, private: Sequence[str | Path] = ()
    ) -> None:
        self.root = Path(root or os.getcwd()).expanduser().resolve()
        self.private = tuple(Path(p).expanduser().resolve() for p in private)
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
        candidate = Path(path).expanduser()
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
                f"path {path!r} is inside troupe's data directory {str(hidden)!r}, which "
                "holds its stores and keys; no tool touches it"
            )
        return resolved

    def private_root_of(self, path: Path) -> Path | None:
        """The private directory ``path`` lies in (or is), else None."""
        for root in self.private:
            if path == root or root in path.parents:
                return root
        return None

    def open_read(self, target: Path) -> BinaryIO:
        """Open a path :meth:`resolve` returned, for reading, without following a link.

        A link swapped in after the check is refused (``O_NOFOLLOW``), and the
        opened file is checked again by where it really is.
        """
        fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        try:
            self._check_opened(fd, target)
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise PathOutsideWorkspace(f"{self.relative(target)!r} is not a regular file")
            os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
        return os.fdopen(fd, "rb")

    def write_bytes(self, target: Path, data: bytes) -> None:
        """Replace a path :meth:`resolve` returned with ``data``; links cannot redirect it.

        The bytes go to a new file with a random name (``O_EXCL|O_NOFOLLOW``)
        in the target's directory, opened by descriptor and checked to be
        inside the workspace, and are then renamed over the target: a planted
        link is replaced, never followed, and a crash leaves the old file or
        the new one.
        """
        target.parent.mkdir(parents=True, exist_ok=True)
        dir_fd = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            self._check_opened(dir_fd, target.parent)
            mode = 0o644
            with contextlib.suppress(FileNotFoundError):
                info = os.stat(target.name, dir_fd=dir_fd, follow_symlinks=False)
                if stat.S_ISREG(info.st_mode):
                    mode = stat.S_IMODE(info.st_mode)
            tmp = f".{target.name[:80]}.{secrets.token_hex(8)}.troupe-tmp"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(tmp, flags, mode, dir_fd=dir_fd)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(tmp, target.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            except BaseException:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp, dir_fd=dir_fd)
                raise
        finally:
            os.close(dir_fd)

    def _check_opened(self, fd: int, asked: Path) -> None:
        """Refuse an opened file or directory that is not really inside the workspace."""
        try:
            real = Path(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            real = asked.resolve()  # no /proc: the path check already ran
        if (real != self.root and self.root not in real.parents) or self.private_root_of(real):
            raise PathOutsideWorkspace(
                f"{str(asked)!r} turned out to be {str(real)!r} when opened, outside the "
                "workspace or inside troupe's data directory; it was not used"
            )

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
