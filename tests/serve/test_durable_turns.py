"""Durable turns: a retry with the same Idempotency-Key never runs a tool twice.

A retry of a turn that answered gets the stored answer back; a retry of a turn
whose replica was killed mid-turn finds it interrupted, closed with an explicit
"interrupted" answer to its dangling tool call, and not replayed.
"""

from __future__ import annotations

import asyncio
import os
import signal
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from troupe_servers import ServerFactory, run_body

pytestmark = pytest.mark.serve

POSTGRES_ENV = "TROUPE_TEST_POSTGRES_URL"


def _calls(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """The shell tool's calls (``functionCall``) or answers (``functionResponse``)."""
    return [
        part[kind]
        for event in events
        for part in (event.get("content") or {}).get("parts") or []
        if (part.get(kind) or {}).get("name") == "exec_shell"
    ]


def test_a_retried_turn_gets_its_stored_answer_and_runs_no_tool_again(
    servers: ServerFactory, session_store: str
) -> None:
    server = servers.start(env={"TROUPE_SESSION_STORE": session_store})
    sid = f"idem-{uuid.uuid4().hex[:8]}"
    with httpx.Client(base_url=server.url, timeout=60.0) as client:
        client.post("/apps/troupe/users/u/sessions", json={"session_id": sid}).raise_for_status()
        headers = {"Idempotency-Key": "turn-1"}
        first = client.post("/run", json=run_body(sid, "run `echo once`"), headers=headers)
        again = client.post("/run", json=run_body(sid, "run `echo once`"), headers=headers)
        other = client.post(
            "/run", json=run_body(sid, "run `echo twice`"), headers={"Idempotency-Key": "turn-2"}
        )
        session = client.get(f"/apps/troupe/users/u/sessions/{sid}").json()
    assert first.status_code == again.status_code == other.status_code == 200
    assert again.json() == first.json()
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert "Idempotent-Replayed" not in first.headers
    commands = [c["args"].get("command") for c in _calls(session["events"], "functionCall")]
    assert commands == ["echo once", "echo twice"]


@pytest.mark.skipif(not os.environ.get(POSTGRES_ENV), reason="needs .ci/postgres.sh's server")
def test_a_turn_cut_off_by_kill_9_is_closed_as_interrupted_not_replayed(
    servers: ServerFactory, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    os.mkfifo(workspace / "slow.fifo")
    # The killed replica's lease expires after 3 s; the next turn waits that long at most.
    env = {"TROUPE_SESSION_STORE": os.environ[POSTGRES_ENV], "TROUPE_TURN_LOCK_LEASE_S": "3"}
    doomed = servers.start("--workspace", str(workspace), env=env)
    other = servers.start("--workspace", str(workspace), env=env)
    sid = f"cut-{uuid.uuid4().hex[:8]}"
    headers = {"Idempotency-Key": "slow-1"}
    session_url = f"/apps/troupe/users/u/sessions/{sid}"

    async def scenario() -> tuple[httpx.Response, dict[str, Any], httpx.Response]:
        """Returns the retry's reply, the session after the next turn, the next turn's reply."""
        async with httpx.AsyncClient(timeout=60.0) as client:
            created = await client.post(
                f"{doomed.url}/apps/troupe/users/u/sessions", json={"session_id": sid}
            )
            created.raise_for_status()
            slow = asyncio.create_task(
                client.post(
                    f"{doomed.url}/run", json=run_body(sid, "run `cat slow.fifo`"), headers=headers
                )
            )
            for _ in range(200):  # until the tool call is in the store
                events = (await client.get(f"{other.url}{session_url}")).json()["events"]
                if _calls(events, "functionCall"):
                    break
                await asyncio.sleep(0.1)
            else:
                pytest.fail("the slow turn never called its tool")
            os.kill(doomed.proc.pid, signal.SIGKILL)
            with pytest.raises(httpx.HTTPError):
                await slow
            # The session's next turn, on another replica, closes the cut-off one.
            after = await client.post(
                f"{other.url}/run",
                json=run_body(sid, "run `echo next`"),
                headers={"Idempotency-Key": "next-1"},
            )
            session = (await client.get(f"{other.url}{session_url}")).json()
            retry = await client.post(
                f"{other.url}/run", json=run_body(sid, "run `cat slow.fifo`"), headers=headers
            )
            return retry, session, after

    retry, session, after = asyncio.run(scenario())
    assert after.status_code == 200 and "next" in after.text
    # The retry of the cut-off turn is told so, and runs nothing.
    assert retry.status_code == 409, retry.text
    assert "interrupted" in retry.json()["detail"] and "not replayed" in retry.json()["detail"]
    calls = _calls(session["events"], "functionCall")
    answers = _calls(session["events"], "functionResponse")
    assert [c["args"]["command"] for c in calls] == ["cat slow.fifo", "echo next"]
    assert [a["id"] for a in answers] == [calls[0]["id"], calls[1]["id"]]
    assert answers[0]["response"]["interrupted"] is True  # closed before the next turn ran


def test_a_retried_streamed_turn_gets_its_stored_stream_and_runs_no_tool_again(
    servers: ServerFactory,
) -> None:
    server = servers.start()
    sid = f"sse-{uuid.uuid4().hex[:8]}"
    with httpx.Client(base_url=server.url, timeout=60.0) as client:
        client.post("/apps/troupe/users/u/sessions", json={"session_id": sid}).raise_for_status()
        body = {**run_body(sid, "run `echo streamed`"), "streaming": False}
        headers = {"Idempotency-Key": "sse-1"}
        first = client.post("/run_sse", json=body, headers=headers)
        again = client.post("/run_sse", json=body, headers=headers)
        session = client.get(f"/apps/troupe/users/u/sessions/{sid}").json()
    assert first.status_code == again.status_code == 200
    assert first.headers["content-type"].startswith("text/event-stream")
    assert again.headers["content-type"].startswith("text/event-stream")
    assert "streamed" in first.text and again.text == first.text
    assert again.headers.get("Idempotent-Replayed") == "true"
    commands = [c["args"].get("command") for c in _calls(session["events"], "functionCall")]
    assert commands == ["echo streamed"]


def test_without_sqlalchemy_keyed_turns_and_a2a_tasks_survive_a_restart_in_the_sqlite_file(
    servers: ServerFactory, tmp_path: Path
) -> None:
    """``troupe[a2a]`` without the ``postgres`` extra has no SQLAlchemy: the records and
    the tasks still go to the SQLite file, so a server started again has them."""
    blocker = tmp_path / "no_sqlalchemy"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\nsys.modules['sqlalchemy'] = None\n", encoding="utf-8"
    )
    path = os.pathsep.join(p for p in (str(blocker), os.environ.get("PYTHONPATH")) if p)
    data_dir = tmp_path / "data"
    sid = f"nosa-{uuid.uuid4().hex[:8]}"
    headers = {"Idempotency-Key": "k"}
    message = {"role": "ROLE_USER", "messageId": uuid.uuid4().hex, "parts": [{"text": "hi"}]}
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    server = servers.start("--a2a", data_dir=data_dir, env={"PYTHONPATH": path})
    with httpx.Client(base_url=server.url, timeout=60.0) as client:
        client.post("/apps/troupe/users/u/sessions", json={"session_id": sid}).raise_for_status()
        first = client.post("/run", json=run_body(sid, "hello"), headers=headers)
        sent = client.post("/a2a/", json=rpc, headers={"A2A-Version": "1.0"})
    server.stop()
    again = servers.start("--a2a", data_dir=data_dir, env={"PYTHONPATH": path})
    task_id = sent.json()["result"]["task"]["id"]
    get = {"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": task_id}}
    with httpx.Client(base_url=again.url, timeout=60.0) as client:
        replayed = client.post("/run", json=run_body(sid, "hello"), headers=headers)
        task = client.post("/a2a/", json=get, headers={"A2A-Version": "1.0"})
    assert first.status_code == replayed.status_code == 200
    assert replayed.headers.get("Idempotent-Replayed") == "true"
    assert replayed.json() == first.json()
    assert sent.status_code == 200 and "TASK_STATE_COMPLETED" in sent.text
    assert task.status_code == 200 and task.json()["result"]["id"] == task_id
    assert task.json()["result"]["status"]["state"] == "TASK_STATE_COMPLETED"
