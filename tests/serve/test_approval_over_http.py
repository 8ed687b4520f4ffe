"""Approving a tool call over HTTP, as docs/serving.md shows it with curl: over /run,
/run_sse and A2A the turn pauses, GET /traces says "awaiting approval", the client's
answer runs (or declines) the call, and the turn is then one trace; every request
is one line of the server's log."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from troupe.server import ServeOptions, build_app
from troupe.server.request_log import REQUEST_LOGGER
from troupe.settings import load_settings

CONFIRM = "adk_request_confirmation"


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[TestClient, Path, _Lines]]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    settings = load_settings(
        workspace=workspace,
        data_dir=tmp_path / "data",
        session_store=f"sqlite:///{(tmp_path / 'sessions.db').as_posix()}",
    )
    settings.config.model = "offline"
    app = build_app(settings, ServeOptions(a2a=True))
    lines = _Lines()
    logging.getLogger(REQUEST_LOGGER).addHandler(lines)
    try:
        with TestClient(app, base_url="http://127.0.0.1:8000") as client:
            yield client, workspace, lines
    finally:
        logging.getLogger(REQUEST_LOGGER).removeHandler(lines)


def _turn(client: TestClient, session: str, parts: list[dict[str, Any]], sse: bool = False) -> Any:
    body = {
        "app_name": "troupe",
        "user_id": "me",
        "session_id": session,
        "new_message": {"role": "user", "parts": parts},
    }
    reply = client.post("/run_sse" if sse else "/run", json=body)
    assert reply.status_code == 200, reply.text
    if not sse:
        return reply.json()
    return [json.loads(line[6:]) for line in reply.text.splitlines() if line.startswith("data: ")]


def _question(events: list[dict[str, Any]]) -> str:
    [call] = [
        p["functionCall"]["id"]
        for e in events
        for p in (e.get("content") or {}).get("parts", [])
        if (p.get("functionCall") or {}).get("name") == CONFIRM
    ]
    return str(call)


def _answer(call: str, confirmed: bool) -> list[dict[str, Any]]:
    response = {"id": call, "name": CONFIRM, "response": {"confirmed": confirmed}}
    return [{"function_response": response}]


def _outcomes(client: TestClient, session: str) -> list[str]:
    listed = client.get("/traces", params={"session_id": session})
    assert listed.status_code == 200, listed.text
    return [t["outcome"] for t in listed.json()]


def test_approving_over_run_runs_the_call_and_the_turn_is_one_trace(
    served: tuple[TestClient, Path, _Lines],
) -> None:
    client, workspace, lines = served
    client.post("/apps/troupe/users/me/sessions", json={"session_id": "s1"})

    call = _question(_turn(client, "s1", [{"text": 'write "hi" to out.txt'}]))
    assert _outcomes(client, "s1") == ["awaiting approval"]
    _turn(client, "s1", _answer(call, True))

    assert (workspace / "out.txt").read_text() == "hi"
    assert _outcomes(client, "s1") == ["answered"]
    [trace] = client.get("/traces", params={"session_id": "s1"}).json()
    full = client.get(f"/traces/{trace['id']}").json()
    assert full["request"] == 'write "hi" to out.txt' and full["outcome"] == "answered"
    runs = [line for line in lines.lines if " POST /run 200 " in line]
    assert len(runs) == 2 and all(line.endswith(" ms") for line in runs)
    assert any(" GET /traces 200 " in line for line in lines.lines)


def test_declining_over_run_sse_leaves_the_file_unwritten(
    served: tuple[TestClient, Path, _Lines],
) -> None:
    client, workspace, _ = served
    client.post("/apps/troupe/users/me/sessions", json={"session_id": "s2"})

    call = _question(_turn(client, "s2", [{"text": 'write "hi" to sse.txt'}], sse=True))
    after = _turn(client, "s2", _answer(call, False), sse=True)

    assert not (workspace / "sse.txt").exists()
    said = json.dumps(after)
    assert "declined" in said
    assert _outcomes(client, "s2") == ["answered"]


def test_approving_over_a2a_completes_the_input_required_task(
    served: tuple[TestClient, Path, _Lines],
) -> None:
    client, workspace, _ = served

    def send(message: dict[str, Any]) -> dict[str, Any]:
        rpc = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
        reply = client.post("/a2a/", json=rpc)
        assert reply.status_code == 200, reply.text
        result: dict[str, Any] = reply.json()["result"]
        return result

    text = {"kind": "text", "text": 'write "hi" to a2a.txt'}
    task = send({"role": "user", "messageId": "m1", "parts": [text]})
    assert task["status"]["state"] == "input-required"
    [call] = [
        p["data"]["id"] for p in task["status"]["message"]["parts"] if p["data"]["name"] == CONFIRM
    ]
    answer = {
        "kind": "data",
        "metadata": {"adk_type": "function_response"},
        "data": {"id": call, "name": CONFIRM, "response": {"confirmed": True}},
    }
    ids = {"taskId": task["id"], "contextId": task["contextId"]}
    done = send({"role": "user", "messageId": "m2", **ids, "parts": [answer]})

    assert done["status"]["state"] == "completed"
    assert (workspace / "a2a.txt").read_text() == "hi"
