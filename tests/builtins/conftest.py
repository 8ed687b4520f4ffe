"""Drive one built-in tool through ADK's real Runner with a scripted model.

``run_tool`` scripts three model turns (the orchestrator transfers to the
specialist, the specialist calls the tool, then answers) and returns what the
model was shown as the tool's result, so every test sees exactly what would
reach a real model. Dangerous tools are approved automatically.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from fakes.tool_runs import RunTool, ToolRun, call_tool
from troupe import Tool, builtin_tools


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace folder."""
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """Where the stores live for this test."""
    return tmp_path / "data"


IMPORTABLE = ("SHARED_PASSPHRASE", "GH_TOKEN_FOR_TEST", "TEST_TOKEN_SOURCE", "TEST_UNSET_VARIABLE")
"""The variables the tests' config lists in ``vault.import_env``."""


@pytest.fixture
def tools(workspace: Path, data_dir: Path) -> list[Tool]:
    """Every built-in tool, on this test's workspace and data directory."""
    return builtin_tools(workspace=workspace, data_dir=data_dir, import_env=IMPORTABLE)


@pytest.fixture
def run_tool(tools: list[Tool]) -> RunTool:
    """``await run_tool("save_knowledge", {"text": ...})`` -> ToolRun."""

    async def run(tool: str, args: dict[str, Any] | None = None, **options: Any) -> ToolRun:
        return await call_tool(tools, tool, args, **options)

    return run


@pytest.fixture
def run_with() -> Callable[..., Awaitable[ToolRun]]:
    """``await run_with(tools, "tool", {...})``: like run_tool, on a tool list of your own."""
    return call_tool
