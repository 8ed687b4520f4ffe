"""Fixtures for the serving tests: troupe server processes on 127.0.0.1, session stores.

Every server is a real ``python -m troupe serve`` process on a free loopback
port; the fixture kills whatever it started. ``session_store`` gives a fresh
SQLite URL, and a PostgreSQL one too when ``TROUPE_TEST_POSTGRES_URL`` is set
(``.ci/postgres.sh`` starts such a server).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from troupe_servers import TEST_VAULT_KEY, ServerFactory, free_port

POSTGRES_ENV = "TROUPE_TEST_POSTGRES_URL"


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[ServerFactory]:
    """Start ``troupe serve`` processes; all are stopped after the test."""
    factory = ServerFactory(tmp_path)
    try:
        yield factory
    finally:
        factory.stop_all()


def _store_params() -> list[object]:
    params: list[object] = ["sqlite"]
    if os.environ.get(POSTGRES_ENV):
        params.append("postgresql")
    return params


@pytest.fixture(params=_store_params())
def session_store(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> str:
    """A session store URL: a new SQLite file, or the test PostgreSQL database
    (whose shared vault needs TROUPE_SECRET_KEY, set here as an operator would)."""
    if request.param == "postgresql":
        monkeypatch.setenv("TROUPE_SECRET_KEY", TEST_VAULT_KEY)
        return os.environ[POSTGRES_ENV]
    return f"sqlite:///{(tmp_path / 'store' / 'sessions.db').as_posix()}"


@pytest.fixture
def unused_port() -> int:
    """A loopback port with nothing listening on it."""
    return free_port()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace with a couple of files for the offline operator to find."""
    ws = tmp_path / "workspace"
    ws.mkdir()
    (ws / "notes.txt").write_text("notes for the tests\n", encoding="utf-8")
    return ws
