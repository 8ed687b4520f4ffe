"""The directory file and shell tools are confined to."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import ConfigError


class PathOutsideWorkspace(ValueError):
    """A path that resolves outside the workspace."""


class Workspace:
    """A root directory; every path a tool touches must resolve inside it."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root or os.getcwd()).expanduser().resolve()
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
        return resolved

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
