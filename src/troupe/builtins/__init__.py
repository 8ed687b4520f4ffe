"""troupe's built-in tools, one module per role."""

from __future__ import annotations

from pathlib import Path

from ..tools import Tool
from .browser_session import browser_unavailable_reason
from .navigator import navigator_tools
from .operator import operator_tools
from .workspace import Workspace


def builtin_tools(*, workspace: str | Path | None = None) -> list[Tool]:
    """Every built-in tool, confined to ``workspace`` (default: the current directory)."""
    ws = Workspace(workspace)
    tools = [*operator_tools(ws)]
    # Without Playwright or Chromium the navigator is left out; `troupe tree` says why.
    if browser_unavailable_reason() is None:
        tools += navigator_tools(ws)
    return tools


__all__ = [
    "Workspace",
    "browser_unavailable_reason",
    "builtin_tools",
    "navigator_tools",
    "operator_tools",
]
