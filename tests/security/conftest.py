"""A hostile model against troupe's built-in tools, under ``--approve deny`` and ``auto``.

Each test plants something a model must never reach (a file outside the
workspace, the data directory, troupe's environment, a private page), lets a
scripted model try to reach it through the real runner, and checks what the
model was sent and what changed on disk.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from fakes.containment import NO_NAMESPACES_ENV, failing_bwrap
from fakes.needs import require_browser
from fakes.planted import SECRET_TEXT
from troupe import Tool, builtin_tools
from troupe.builtins.browser_session import BrowserSession
from troupe.runtime.approvals import ApprovalPolicy, parse_policy


@pytest.fixture(autouse=True)
def without_namespaces(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With TROUPE_TEST_NO_NAMESPACES=1, bwrap fails as where namespaces are forbidden."""
    if os.environ.get(NO_NAMESPACES_ENV) == "1":
        fake = failing_bwrap(tmp_path_factory.mktemp("no-namespaces"))
        monkeypatch.setattr("troupe.sandbox.jail.bundled_bwrap", lambda: fake)


@pytest.fixture(params=["deny", "auto"])
def policy(request: pytest.FixtureRequest) -> ApprovalPolicy:
    """Each attack runs under the default ``deny`` and under ``auto``."""
    return parse_policy(request.param)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("ordinary notes\n", encoding="utf-8")
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file next to the workspace, holding :data:`SECRET_TEXT`."""
    folder = tmp_path / "outside"
    folder.mkdir()
    target = folder / "secret.txt"
    target.write_text(SECRET_TEXT + "\n", encoding="utf-8")
    return target


@pytest.fixture
def data_dir(workspace: Path) -> Path:
    """troupe's data directory, placed inside the workspace (troupe started in ~)."""
    return workspace / ".local-troupe"


@pytest.fixture
def tools(workspace: Path, data_dir: Path) -> list[Tool]:
    return builtin_tools(workspace=workspace, data_dir=data_dir)


@pytest_asyncio.fixture
async def browser() -> AsyncIterator[BrowserSession]:
    """A browser of the test's own, closed after it."""
    require_browser()
    session = BrowserSession()
    yield session
    await session.close()
