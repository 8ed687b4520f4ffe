"""A compound request sent to ``/run`` is carried out step by step, and the
answer reports every step."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from troupe.server import ServeOptions, build_app
from troupe.settings import load_settings

THREE_STEPS = "Read config.yaml, encrypt the database password in it and store it as a secret."


def test_run_endpoint_hands_each_step_to_its_agent_and_reports_each(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "config.yaml").write_text("db_password: hunter2\n", encoding="utf-8")
    settings = load_settings(
        workspace=workspace,
        data_dir=tmp_path / "data",
        session_store=f"sqlite:///{(tmp_path / 'sessions.db').as_posix()}",
    )
    settings.config.model = "offline"
    settings.config.router = "auto"
    app = build_app(settings, ServeOptions())

    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        created = client.post("/apps/troupe/users/u1/sessions", json={"session_id": "s"})
        assert created.status_code == 200, created.text
        response = client.post(
            "/run",
            json={
                "app_name": "troupe",
                "user_id": "u1",
                "session_id": "s",
                "new_message": {"role": "user", "parts": [{"text": THREE_STEPS}]},
            },
        )

    assert response.status_code == 200, response.text
    parts = [p for event in response.json() for p in (event.get("content") or {}).get("parts", [])]
    handed = [p["functionCall"]["name"] for p in parts if p.get("functionCall")]
    handed = [name for name in handed if name in {"operator", "vault"}]
    assert handed == ["operator", "vault", "vault"]
    answer = [p["text"] for p in parts if p.get("text")][-1]
    assert "1. Read config.yaml (operator): Result of fs_read" in answer
    assert "2. encrypt the database password in it (vault)" in answer
    assert "3. store it as a secret (vault)" in answer
