"""Session stores: ADK's services chosen by URL, conversations that outlive the process.

Runs against SQLite always and against PostgreSQL when TROUPE_TEST_POSTGRES_URL is set.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from google.adk.agents import LlmAgent

from troupe import Assistant, Config, ConfigError, build_agent_tree, builtin_tools
from troupe.runtime.events import conversation
from troupe.settings import load_settings
from troupe.stores.sessions import (
    close_session_store,
    default_session_store,
    open_session_store,
    probe_session_store,
    redact,
    store_parts,
)


def _tree(workspace: Path, data: Path) -> LlmAgent:
    return build_agent_tree(
        Config(tools=builtin_tools(workspace=workspace, data_dir=data), model="offline")
    )


async def test_a_conversation_resumes_after_the_store_is_reopened(
    session_store: str, workspace: Path, tmp_path: Path
) -> None:
    sid = f"resume-{uuid.uuid4().hex[:8]}"
    first = open_session_store(session_store)
    try:
        await Assistant(_tree(workspace, tmp_path), first).run_and_collect(sid, "hello")
    finally:
        await close_session_store(first)

    # A new tree and a new service, as after a restart of the process.
    second = open_session_store(session_store)
    try:
        answer = await Assistant(_tree(workspace, tmp_path), second).run_and_collect(
            sid, "list the files here"
        )
        session = await second.get_session(app_name="troupe", user_id="user", session_id=sid)
    finally:
        await close_session_store(second)

    assert "notes.txt" in answer
    assert session is not None
    lines = conversation(session.events)
    assert [line.text for line in lines if line.kind == "message"] == [
        "hello",
        "list the files here",
    ]
    assert ("orchestrator", "transfer", "operator") in [
        (line.author, line.kind, line.name) for line in lines
    ]
    assert ("operator", "tool_call", "fs_list") in [
        (line.author, line.kind, line.name) for line in lines
    ]


async def test_a_reachable_store_passes_the_readiness_probe(session_store: str) -> None:
    service = open_session_store(session_store)
    try:
        await probe_session_store(service, app_name="troupe")
    finally:
        await close_session_store(service)


def test_the_default_store_is_sessions_db_in_the_data_directory(tmp_path: Path) -> None:
    settings = load_settings(data_dir=tmp_path / "data")
    expected = (tmp_path / "data" / "sessions.db").resolve()
    assert settings.session_store == f"sqlite:///{expected.as_posix()}"
    assert default_session_store(tmp_path / "data") == settings.session_store


def test_the_data_dir_environment_variable_moves_the_default_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TROUPE_DATA_DIR", str(tmp_path / "elsewhere"))
    assert load_settings().session_store.endswith("/elsewhere/sessions.db")


def test_the_config_file_selects_the_store_and_the_environment_overrides_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "troupe.yaml"
    config.write_text("session_store: sqlite:////srv/troupe/from-file.db\n", encoding="utf-8")
    assert load_settings(config_path=config).session_store == "sqlite:////srv/troupe/from-file.db"
    monkeypatch.setenv("TROUPE_SESSION_STORE", "memory://")
    assert load_settings(config_path=config).session_store == "memory://"


def test_a_store_that_is_not_a_url_is_refused_with_examples() -> None:
    with pytest.raises(ConfigError) as caught:
        open_session_store("/var/lib/sessions.db")
    message = str(caught.value)
    assert "'/var/lib/sessions.db'" in message
    assert "sqlite:///" in message and "postgresql+asyncpg://" in message


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://troupe:secret@127.0.0.1:5432/troupe",
        "postgresql+asyncpg://troupe:secret@127.0.0.1:5432/troupe",
        "postgres://troupe:secret@127.0.0.1:5432/troupe",
    ],
)
def test_every_postgres_url_opens_through_psycopg_whatever_driver_it_names(url: str) -> None:
    """One driver for every connection of the process: the budget and PgBouncer hold."""
    service = open_session_store(url)
    engine = store_parts(service).records.engine  # type: ignore[attr-defined]
    assert engine.url.render_as_string(hide_password=False) == (
        "postgresql+psycopg://troupe:secret@127.0.0.1:5432/troupe"
    )
    assert service.db_engine is engine  # type: ignore[attr-defined]


def test_passwords_are_redacted_from_store_urls() -> None:
    assert redact("postgresql+asyncpg://me:hunter2@db:5432/x") == (
        "postgresql+asyncpg://me:***@db:5432/x"
    )
    assert redact("sqlite:////tmp/s.db") == "sqlite:////tmp/s.db"
