"""Operator tools shared by the spec tests.

Defined here rather than taken from troupe's built-ins, so that the routing
tests do not change when built-in tools are added.
"""

from __future__ import annotations

import troupe


def exec_shell(command: str) -> dict[str, str]:
    """Run a shell command and return its output."""
    return {"output": f"ran {command}"}


def fs_list(path: str = ".") -> dict[str, list[str]]:
    """List the files in a directory."""
    return {"entries": ["notes.txt"]}


def fs_read(path: str) -> dict[str, str]:
    """Read a text file."""
    return {"content": f"contents of {path}"}


OPERATOR_TOOLS = [troupe.Tool.from_function(f) for f in (exec_shell, fs_list, fs_read)]
