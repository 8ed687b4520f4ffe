"""troupe's built-in tools, one module per role."""

from __future__ import annotations

from pathlib import Path

from ..tools import Tool
from .operator import operator_tools
from .workspace import Workspace


def builtin_tools(*, workspace: str | Path | None = None) -> list[Tool]:
    """Every built-in tool, confined to ``workspace`` (default: the current directory)."""
    ws = Workspace(workspace)
    return [*operator_tools(ws)]


__all__ = ["Workspace", "builtin_tools", "operator_tools"]
