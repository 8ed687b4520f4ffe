"""What an MCP server may reach: the jail it runs in and the paths its tools may be given.

A stdio server is a process troupe starts, so it runs in the bubblewrap jail
like a command: the workspace read-write, its own installation with writes
going to a throwaway layer (read-only where the kernel has no overlays; see
:func:`troupe.sandbox.installs.install_roots`), the system directories
read-only, troupe's data directory absent (masked when it lies inside
something mounted), its own pid namespace, ``--die-with-parent``, and the
network (servers fetch, query and call APIs). Its environment is the MCP
client's minimal one (``PATH``, ``HOME``, ``USER`` ...) plus the entry's
``env``: troupe's keys reach it only when ``env`` names them.

Before a call, every argument that is a path (by its name -- ``path``,
``source``, ``destination``, ``file`` ... -- or, for a tool under the ``fs_``
prefix, any string that starts with ``/`` or ``~``) is resolved as the file
tools resolve theirs and refused when it lands outside the workspace or in
the data directory. That check is the tool layer's; the jail is what holds
when a server is given a path some other way.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..paths import default_data_dir
from ..sandbox.installs import install_roots, package_caches
from ..sandbox.jail import Jail, SandboxStatus, sandbox_status

if TYPE_CHECKING:
    from ..builtins.workspace import Workspace
    from .entries import McpServer

FILESYSTEM_PREFIX = "fs_"
"""Tools placed under this prefix act on files: absolute string arguments are paths."""
PATH_NAMES = frozenset(
    {
        "path", "paths", "file", "files", "filename", "filenames", "filepath", "source",
        "sources", "destination", "dest", "src", "dst", "target", "directory", "directories",
        "dir", "folder", "root", "cwd", "location",
    }
)  # fmt: skip
"""Argument names that are paths whatever the tool (compared without case, ``-`` and ``_``)."""
_PLAIN_PATH_NAMES = frozenset(n.replace("_", "") for n in PATH_NAMES)
_PATH_SUFFIX = re.compile(r"(?:path|paths|file|files|dir|directory|folder)$")


@dataclass(frozen=True)
class McpConfinement:
    """The jail and the path check of one stdio server."""

    server: McpServer

    @functools.cached_property
    def workspace(self) -> Workspace:
        """The folder the server works in, with troupe's data directory made private."""
        from ..builtins.workspace import Workspace
        from ..sandbox.private import guarded_files, protected_paths

        root = Workspace(self.server.workspace).root
        data = Path(
            self.server.data_dir or default_data_dir(self.server.environment())
        ).expanduser()
        read_only, hidden = guarded_files(
            root, config_files=self.server.config_files, key_files=self.server.hidden_files
        )
        return Workspace(root, private=[*protected_paths(data, root), *hidden], read_only=read_only)

    @property
    def status(self) -> SandboxStatus:
        """Whether the jail is enforced on this machine."""
        return sandbox_status()

    @property
    def jailed(self) -> bool:
        """True when the server's process runs in the jail."""
        return self.server.jail and self.server.command is not None and self.status.active

    def command_line(self, env: dict[str, str] | None = None) -> tuple[str, list[str]]:
        """The program and arguments that start the server (in the jail when it is active)."""
        command = self.server.command or ""
        args = list(self.server.args)
        if not self.jailed:
            return command, args
        jail = Jail(
            self.workspace.root,
            hidden=self.workspace.private,
            read_only=self.workspace.read_only,
            network=True,
            # Its installation and the package caches take writes into a
            # throwaway layer: a server that writes into its own folder (a
            # helper installed on first use) works, and nothing it writes lasts.
            scratch=(*install_roots(command, args, env or {}), *package_caches()),
        )
        wrapped = jail.wrap([command, *args], writable=True)
        return wrapped[0], wrapped[1:]

    def argument_problem(self, tool: str, args: dict[str, Any]) -> str | None:
        """Why a call of ``tool`` with ``args`` may not reach the server, or None."""
        from ..builtins.workspace import PathOutsideWorkspace

        for name, value in _path_arguments(tool, args):
            try:
                self.workspace.resolve(value)
            except PathOutsideWorkspace as exc:
                return f"refused {tool} argument {name!r}: {exc}"
        return None


def _path_arguments(tool: str, args: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """The (name, value) pairs of ``args`` that are paths."""
    for name, value in args.items():
        values = value if isinstance(value, list) else [value]
        for item in values:
            if not isinstance(item, str):
                continue
            if is_path_name(name) or (
                tool.startswith(FILESYSTEM_PREFIX) and item.strip().startswith(("/", "~"))
            ):
                yield name, item


def is_path_name(name: str) -> bool:
    """True when an argument called ``name`` holds a path (``path``, ``sourceFile``, ...)."""
    plain = re.sub(r"[-_]", "", name).lower()
    return plain in _PLAIN_PATH_NAMES or bool(_PATH_SUFFIX.search(plain))
