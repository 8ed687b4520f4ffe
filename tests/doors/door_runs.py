"""The doors a user can send a turn through, each driven the way a user would.

Every door takes the same :class:`Visit` (a config file, a workspace, a data
directory and the request) and returns the user-visible reply. All of them
build their runner from troupe's one App, so the same shape must come out the
same way through each.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from troupe.cli.app import app as cli_app
from troupe.server import ServeOptions
from troupe.server import build_app as build_server_app
from troupe.settings import load_settings

REPO = Path(__file__).resolve().parents[2]
ADK_AGENTS = REPO / "adk_agents"
ADK_APP_FOLDER = "troupe_team"
BASE = "http://127.0.0.1:8000"
SUBPROCESS_TIMEOUT = 240
"""Seconds `adk run` may take: a fresh process imports ADK, LiteLLM and troupe."""
MODELS = ("scripted", "openai_fake")
"""How a shape's script reaches the runtime: a model patched in-process, or over HTTP."""


@dataclass(frozen=True)
class Visit:
    """One turn to send: where the settings, workspace and data live, and the text."""

    config: Path
    workspace: Path
    data_dir: Path
    request: str
    own_process: bool = False
    """True when ``adk run`` runs as a new process (the ``adk`` command)."""


def _serve(visit: Visit, *, a2a: bool = False) -> TestClient:
    settings = load_settings(
        config_path=visit.config,
        workspace=visit.workspace,
        data_dir=visit.data_dir,
        session_store=f"sqlite:///{(visit.data_dir / 'sessions.db').as_posix()}",
    )
    return TestClient(build_server_app(settings, ServeOptions(a2a=a2a)), base_url=BASE)


def _texts(parts: list[dict[str, Any]]) -> list[str]:
    return [p["text"] for p in parts if p.get("text") and not p.get("thought")]


def _adk_event_texts(events: list[dict[str, Any]]) -> str:
    chunks: list[str] = []
    for event in events:
        if event.get("author") == "user" or event.get("partial"):
            continue
        chunks += _texts((event.get("content") or {}).get("parts") or [])
    return "\n".join(chunks)


def _new_session(client: TestClient, app: str = "troupe") -> str:
    sid = f"door-{uuid.uuid4().hex[:8]}"
    created = client.post(f"/apps/{app}/users/u1/sessions", json={"session_id": sid})
    assert created.status_code == 200, created.text
    return sid


def run_body(sid: str, text: str, app: str = "troupe") -> dict[str, Any]:
    return {
        "app_name": app,
        "user_id": "u1",
        "session_id": sid,
        "new_message": {"role": "user", "parts": [{"text": text}]},
    }


def chat(visit: Visit) -> str:
    """``troupe chat --json`` (the Assistant), through the CLI."""
    args = ["chat", "--config", str(visit.config), "--workspace", str(visit.workspace)]
    args += ["--data-dir", str(visit.data_dir), "--json", visit.request]
    result = CliRunner().invoke(cli_app, args)
    assert result.exit_code == 0, result.output
    steps = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    return "\n".join(s["text"] for s in steps if s["kind"] == "text")


def run(visit: Visit) -> str:
    """``troupe serve``: ADK's ``POST /run``."""
    with _serve(visit) as client:
        sid = _new_session(client)
        response = client.post("/run", json=run_body(sid, visit.request))
        assert response.status_code == 200, response.text
        return _adk_event_texts(response.json())


def run_sse(visit: Visit) -> str:
    """``troupe serve``: ADK's ``POST /run_sse`` (server-sent events)."""
    with _serve(visit) as client:
        sid = _new_session(client)
        response = client.post("/run_sse", json=run_body(sid, visit.request))
        assert response.status_code == 200, response.text
        events = [
            json.loads(line[len("data: ") :])
            for line in response.text.splitlines()
            if line.startswith("data: ")
        ]
        return _adk_event_texts(events)


def a2a(visit: Visit) -> str:
    """``troupe serve --a2a``: a JSON-RPC ``SendMessage`` to ``/a2a/``."""
    message = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"text": visit.request}],
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    with _serve(visit, a2a=True) as client:
        response = client.post("/a2a/", json=body, headers={"A2A-Version": "1.0"})
    assert response.status_code == 200, response.text
    task = response.json()["result"]["task"]
    chunks: list[str] = []
    for item in task.get("history") or []:
        if item.get("role") == "ROLE_AGENT":
            chunks += _texts(item.get("parts") or [])
    for artifact in task.get("artifacts") or []:
        chunks += _texts(artifact.get("parts") or [])
    return "\n".join(chunks)


def _troupe_env(visit: Visit) -> dict[str, str]:
    """The variables troupe's settings read, pointing at the visit's files."""
    return {
        "TROUPE_CONFIG": str(visit.config),
        "TROUPE_DATA_DIR": str(visit.data_dir),
        "TROUPE_WORKSPACE": str(visit.workspace),
    }


def adk_run(visit: Visit) -> str:
    """``adk run --replay`` on ``adk_agents/troupe_team`` (ADK's own CLI).

    With ``visit.own_process`` the ``adk`` command runs as a subprocess;
    otherwise ADK's ``run_cli`` (what ``adk run`` calls) runs here.
    """
    replay = visit.data_dir / "replay.json"
    replay.parent.mkdir(parents=True, exist_ok=True)
    replay.write_text(json.dumps({"state": {}, "queries": [visit.request]}), encoding="utf-8")
    env = _troupe_env(visit)
    if not visit.own_process:
        output = _adk_run_in_process(visit, replay)
    else:
        adk = Path(sys.executable).with_name("adk")
        done = subprocess.run(
            [
                str(adk),
                "run",
                "--session_service_uri",
                "memory://",
                "--artifact_service_uri",
                "memory://",
                "--replay",
                str(replay),
                str(ADK_AGENTS / ADK_APP_FOLDER),
            ],
            cwd=visit.workspace,
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=SUBPROCESS_TIMEOUT,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-4000:]
        output = done.stdout
    return _adk_run_texts(output)


@contextlib.contextmanager
def _adk_loads_troupe(visit: Visit) -> Iterator[None]:
    """The environment ADK's loader builds troupe's App from, with a fresh import."""
    env = _troupe_env(visit)
    for name in [m for m in sys.modules if m.split(".")[0] == ADK_APP_FOLDER]:
        del sys.modules[name]  # the App is built when ADK imports the agent module
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _adk_run_in_process(visit: Visit, replay: Path) -> str:
    from google.adk.cli.cli import run_cli

    out = io.StringIO()
    with _adk_loads_troupe(visit), contextlib.redirect_stdout(out):
        asyncio.run(
            run_cli(
                agent_parent_dir=str(ADK_AGENTS),
                agent_folder_name=ADK_APP_FOLDER,
                input_file=str(replay),
                save_session=False,
                in_memory=True,
            )
        )
    return out.getvalue()


@contextlib.contextmanager
def adk_web_app(visit: Visit, session_service_uri: str = "memory://") -> Iterator[Any]:
    """ADK's own dev server app for ``adk web adk_agents`` (troupe's App loads on first use)."""
    from google.adk.cli.fast_api import get_fast_api_app

    with _adk_loads_troupe(visit):
        yield get_fast_api_app(
            agents_dir=str(ADK_AGENTS),
            session_service_uri=session_service_uri,
            artifact_service_uri="memory://",
            memory_service_uri="memory://",
            use_local_storage=False,
            web=True,
        )


def adk_web(visit: Visit) -> str:
    """``adk web adk_agents``: ADK's own dev server app, ``POST /run`` on ``troupe_team``."""
    with adk_web_app(visit) as api, TestClient(api, base_url=BASE) as client:
        sid = _new_session(client, ADK_APP_FOLDER)
        body = run_body(sid, visit.request, ADK_APP_FOLDER)
        response = client.post("/run", json=body)
    assert response.status_code == 200, response.text
    return _adk_event_texts(response.json())


def _adk_run_texts(output: str) -> str:
    """The agents' lines of ``adk run``'s ``[author]: text`` transcript."""
    lines: list[str] = []
    speaking = False
    for line in output.splitlines():
        if line.startswith("[user]:"):
            speaking = False
            continue
        if line.startswith("[") and "]: " in line:
            speaking = True
            lines.append(line.split("]: ", 1)[1])
        elif speaking:
            lines.append(line)
    return "\n".join(lines)


DOORS: dict[str, Callable[[Visit], str]] = {
    "chat": chat,
    "run": run,
    "run_sse": run_sse,
    "a2a": a2a,
    "adk_run": adk_run,
    "adk_web": adk_web,
}
"""Every door, by name."""


def spawns_process(door: str, visit: Visit) -> bool:
    """True when ``door`` starts a new process for ``visit`` (``adk run`` over HTTP)."""
    return door == "adk_run" and visit.own_process
