"""Each door that owns its event loop closes the model provider's cached HTTP
clients when it shuts down (LiteLLM keeps them for the life of the process)."""

from __future__ import annotations

from pathlib import Path

import litellm
import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from troupe.cli.app import app
from troupe.models.clients import close_model_clients
from troupe.server.app import ServeOptions, build_app
from troupe.settings import load_settings


@pytest.fixture
def closes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records each call of LiteLLM's close of its async clients."""
    calls: list[str] = []

    async def close() -> None:
        calls.append("closed")

    monkeypatch.setattr(litellm, "close_litellm_async_clients", close)
    return calls


def test_a_chat_message_closes_the_model_clients_once_it_is_answered(
    tmp_path: Path, closes: list[str]
) -> None:
    result = CliRunner().invoke(app, ["chat", "--workspace", str(tmp_path), "hello"])

    assert result.exit_code == 0, result.output
    assert closes == ["closed"]


def test_serve_closes_the_model_clients_when_it_shuts_down(
    tmp_path: Path, closes: list[str]
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    settings = load_settings(
        workspace=workspace, data_dir=tmp_path / "data", session_store="memory://"
    )
    settings.config.model = "offline"

    with TestClient(build_app(settings, ServeOptions()), base_url="http://127.0.0.1:8000"):
        assert closes == []

    assert closes == ["closed"]


async def test_a_failing_close_of_the_model_clients_does_not_stop_the_shutdown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def broken() -> None:
        raise RuntimeError("connector already gone")

    monkeypatch.setattr(litellm, "close_litellm_async_clients", broken)

    await close_model_clients()  # logged, not raised
