"""Remote agents in a turn: the path names them and their tool calls, and a failure fails the turn.

One troupe serves its operator over A2A behind a token; the troupe under test
routes "the build machine" to it as ``build_box``. A wrong token makes every
call to it fail with HTTP 401.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from troupe_servers import ServerFactory, ServerProcess, serving_operator
from typer.testing import CliRunner

from fakes.cli import unwrapped
from troupe.cli.app import app

pytestmark = pytest.mark.serve

TOKEN = "remote-failures-token"
REQUEST = "list the files on the build machine"


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("remote-failures")
    workspace = root / "remote-ws"
    workspace.mkdir()
    (workspace / "remote-marker.txt").write_text("on the build machine\n", encoding="utf-8")
    with serving_operator(root, workspace, TOKEN) as server:
        yield server


@pytest.fixture
def client_config(tmp_path: Path, remote: ServerProcess) -> Path:
    path = tmp_path / "client.yaml"
    path.write_text(
        "remote_agents:\n"
        "  - name: build_box\n"
        f"    agent_card: {remote.url}/a2a/.well-known/agent-card.json\n"
        "    description: Runs commands and lists files on the build machine.\n"
        "    keywords: [build machine]\n"
        "    auth_token_env: BUILD_BOX_TOKEN\n",
        encoding="utf-8",
    )
    return path


def _chat(config: Path, workspace: Path, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        app, ["chat", "--config", str(config), "--workspace", str(workspace), *extra, REQUEST]
    )
    return result.exit_code, result.stdout


def test_the_path_shows_the_remote_agent_and_its_tool_calls(
    client_config: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BUILD_BOX_TOKEN", TOKEN)
    code, out = _chat(client_config, workspace)
    assert code == 0, out
    flat = unwrapped(out)
    assert "build_box → fs_list" in flat
    assert "remote-marker.txt" in flat
    assert "path: orchestrator → build_box → fs_list → answer" in flat


def test_a_remote_failure_fails_a_one_shot_chat_with_the_reason(
    client_config: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BUILD_BOX_TOKEN", "wrong-token")
    code, out = _chat(client_config, workspace)
    flat = unwrapped(out)
    assert code == 1, out
    assert "turn failed: remote agent 'build_box' failed" in flat
    assert "401" in flat
    assert "path: orchestrator → build_box → failed" in flat
    assert "No result was produced" not in flat


def test_a_remote_failure_is_an_error_line_in_json_output(
    client_config: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BUILD_BOX_TOKEN", "wrong-token")
    code, out = _chat(client_config, workspace, "--json")
    assert code == 1, out
    last = json.loads(out.strip().splitlines()[-1])
    assert last["author"] == "build_box"
    assert last["kind"] == "error"
    assert last["name"] == "REMOTE_AGENT_FAILED"
    assert "401" in last["text"]


def test_a_remote_failure_ends_the_turn_with_an_error_event_over_http(
    servers: ServerFactory, client_config: Path
) -> None:
    local = servers.start("--config", str(client_config), env={"BUILD_BOX_TOKEN": "wrong"})
    session = f"fail-{uuid.uuid4().hex[:8]}"
    httpx.post(f"{local.url}/apps/troupe/users/u/sessions", json={"session_id": session})
    reply = httpx.post(
        f"{local.url}/run",
        json={
            "app_name": "troupe", "user_id": "u", "session_id": session,
            "new_message": {"role": "user", "parts": [{"text": REQUEST}]},
        },
        timeout=60,
    )  # fmt: skip
    assert reply.status_code == 200, reply.text
    last = reply.json()[-1]
    assert last["author"] == "build_box"
    assert last["errorCode"] == "REMOTE_AGENT_FAILED"
    assert "401" in last["errorMessage"]
