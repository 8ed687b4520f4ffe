"""A2A: one troupe serves a specialist, another routes to it as a remote sub-agent."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from troupe_servers import ServerFactory
from typer.testing import CliRunner

from fakes.cli import unwrapped
from troupe.cli.app import app

pytestmark = pytest.mark.serve

TOKEN = "a2a-shared-token"


def _client_config(path: Path, card_url: str, *, token_env: str | None = None) -> Path:
    lines = [
        "remote_agents:",
        "  - name: build_box",
        f"    agent_card: {card_url}",
        "    description: Runs commands and lists files on the build machine.",
        "    keywords: [build machine, build box]",
    ]
    if token_env:
        lines.append(f"    auth_token_env: {token_env}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _run(base: str, user: str, session: str, text: str) -> list[dict[str, Any]]:
    reply = httpx.post(
        f"{base}/run",
        json={
            "app_name": "troupe",
            "user_id": user,
            "session_id": session,
            "new_message": {"role": "user", "parts": [{"text": text}]},
        },
        timeout=60,
    )
    assert reply.status_code == 200, reply.text
    return list(reply.json())


def _transfers(events: list[dict[str, Any]]) -> list[str]:
    return [
        part["functionCall"]["args"]["agent_name"]
        for event in events
        for part in (event.get("content") or {}).get("parts") or []
        if part.get("functionCall", {}).get("name") == "transfer_to_agent"
    ]


def _answer(events: list[dict[str, Any]]) -> tuple[str, str]:
    for event in reversed(events):
        texts = [p["text"] for p in (event.get("content") or {}).get("parts") or [] if "text" in p]
        if texts:
            return event["author"], "".join(texts)
    raise AssertionError(f"no answer in {events}")


def test_the_orchestrator_routes_to_a_specialist_served_by_another_troupe_over_a2a(
    servers: ServerFactory, tmp_path: Path
) -> None:
    remote_ws = tmp_path / "remote-ws"
    remote_ws.mkdir()
    (remote_ws / "remote-marker.txt").write_text("on the build machine\n", encoding="utf-8")
    local_ws = tmp_path / "local-ws"
    local_ws.mkdir()
    (local_ws / "local-marker.txt").write_text("here\n", encoding="utf-8")

    remote = servers.start(
        "--a2a", "--agent", "operator", "--workspace", str(remote_ws),
        env={"TROUPE_AUTH_TOKEN": TOKEN},
    )  # fmt: skip
    card_url = f"{remote.url}/a2a/.well-known/agent-card.json"
    config = _client_config(tmp_path / "client.yaml", card_url, token_env="BUILD_BOX_TOKEN")
    local = servers.start(
        "--config", str(config), "--workspace", str(local_ws),
        env={"BUILD_BOX_TOKEN": TOKEN},
    )  # fmt: skip
    session = f"a2a-{uuid.uuid4().hex[:8]}"
    assert httpx.post(
        f"{local.url}/apps/troupe/users/u/sessions", json={"session_id": session}
    ).is_success

    events = _run(local.url, "u", session, "list the files on the build machine")
    assert _transfers(events) == ["build_box"]
    author, text = _answer(events)
    assert author == "build_box"
    assert "remote-marker.txt" in text and "local-marker.txt" not in text
    remote_calls = [
        part["functionCall"]["name"]
        for event in events
        if event["author"] == "build_box"
        for part in (event.get("content") or {}).get("parts") or []
        if "functionCall" in part
    ]
    assert remote_calls == ["fs_list"]

    # The same team still does local work locally.
    events = _run(local.url, "u", session, "list the files here")
    assert _transfers(events) == ["operator"]
    author, text = _answer(events)
    assert author == "operator" and "local-marker.txt" in text


def test_the_remote_server_refuses_a2a_calls_without_its_token(
    servers: ServerFactory, tmp_path: Path
) -> None:
    remote = servers.start("--a2a", "--agent", "operator", env={"TROUPE_AUTH_TOKEN": TOKEN})
    card = httpx.get(f"{remote.url}/a2a/.well-known/agent-card.json")
    assert card.status_code == 200
    assert "bearer" in card.json()["securitySchemes"]
    call = httpx.post(
        f"{remote.url}/a2a/",
        json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {}},
    )
    assert call.status_code == 401


@pytest.fixture
def dead_remote_config(tmp_path: Path, unused_port: int) -> Path:
    url = f"http://127.0.0.1:{unused_port}/a2a/.well-known/agent-card.json"
    return _client_config(tmp_path / "dead.yaml", url)


def test_tree_check_reports_an_unreachable_remote_agent(dead_remote_config: Path) -> None:
    result = CliRunner().invoke(app, ["tree", "--config", str(dead_remote_config), "--check"])
    assert result.exit_code == 1, result.output
    flat = unwrapped(result.output)
    assert "unreachable build_box" in flat
    assert "Local agents keep working" in flat


def test_an_unreachable_remote_agent_does_not_stop_the_local_agents(
    dead_remote_config: Path, workspace: Path
) -> None:
    result = CliRunner().invoke(
        app,
        [
            "chat", "--config", str(dead_remote_config), "--workspace", str(workspace),
            "--json", "list the files here",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert '"name": "operator"' in result.stdout
    assert "notes.txt" in result.stdout
