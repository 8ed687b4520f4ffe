"""A compound request sent to ``/run`` is carried out step by step, and the
answer reports every step. Step 3 stores a secret: the first ``/run`` ends
with ADK's ``adk_request_confirmation`` call naming the step's tool, and the
client's answer, sent to ``/run`` on the same session, lets the step run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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

    def run(client: TestClient, parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        body = {"app_name": "troupe", "user_id": "u1", "session_id": "s"}
        reply = client.post("/run", json={**body, "new_message": {"role": "user", "parts": parts}})
        assert reply.status_code == 200, reply.text
        return [p for event in reply.json() for p in (event.get("content") or {}).get("parts", [])]

    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        created = client.post("/apps/troupe/users/u1/sessions", json={"session_id": "s"})
        assert created.status_code == 200, created.text
        first = run(client, [{"text": THREE_STEPS}])
        [question] = [
            p["functionCall"]
            for p in first
            if (p.get("functionCall") or {}).get("name") == "adk_request_confirmation"
        ]
        step = question["args"]["toolConfirmation"]["payload"]["step"]
        assert (step["agent"], step["tool"]) == ("vault", "secrets_set")
        answer_part = {
            "functionResponse": {
                "id": question["id"],
                "name": "adk_request_confirmation",
                "response": {"confirmed": True},
            }
        }
        second = run(client, [answer_part])

    parts = first + second
    handed = [p["functionCall"]["name"] for p in parts if p.get("functionCall")]
    handed = [name for name in handed if name in {"operator", "vault"}]
    assert handed == ["operator", "vault", "vault"]
    answer = [p["text"] for p in parts if p.get("text")][-1]
    assert "1. Read config.yaml (operator): Result of fs_read" in answer
    assert "2. encrypt the database password in it (vault)" in answer
    assert "3. store it as a secret (vault): Result of secrets_set" in answer
