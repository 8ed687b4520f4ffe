"""Replicas on one PostgreSQL with separate data directories read what another wrote.

Covered so far: sessions, A2A tasks and keyed turns. Knowledge, memory, the
vault and traces are still per replica (README "Running N replicas").
"""

from __future__ import annotations

import os
import uuid

import httpx
import pytest
from troupe_servers import ServerFactory, run_body

pytestmark = [
    pytest.mark.serve,
    pytest.mark.skipif(
        not os.environ.get("TROUPE_TEST_POSTGRES_URL"), reason="needs .ci/postgres.sh's server"
    ),
]

A2A_HEADERS = {"A2A-Version": "1.0"}


def _rpc(base: str, method: str, params: dict[str, object]) -> dict[str, object]:
    reply = httpx.post(
        f"{base}/a2a/",
        json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
        headers=A2A_HEADERS,
        timeout=60.0,
    )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert "error" not in body, body
    result = body["result"]
    assert isinstance(result, dict)
    return result


def test_three_replicas_read_the_sessions_tasks_and_turns_another_wrote(
    servers: ServerFactory,
) -> None:
    env = {"TROUPE_SESSION_STORE": os.environ["TROUPE_TEST_POSTGRES_URL"]}
    first, second, third = (servers.start("--a2a", env=env) for _ in range(3))
    assert len({first.env["TROUPE_DATA_DIR"], second.env["TROUPE_DATA_DIR"],
                third.env["TROUPE_DATA_DIR"]}) == 3  # fmt: skip

    # An A2A task written through one replica is read through another.
    message = {"role": "ROLE_USER", "messageId": uuid.uuid4().hex, "parts": [{"text": "hello"}]}
    task = _rpc(first.url, "SendMessage", {"message": message})["task"]
    assert isinstance(task, dict)
    read = _rpc(second.url, "GetTask", {"id": task["id"]})
    assert read["id"] == task["id"]
    assert read["status"]["state"] == "TASK_STATE_COMPLETED"  # type: ignore[index]

    # A session and a keyed turn written through one replica are read through another.
    sid = f"shared-{uuid.uuid4().hex[:8]}"
    with httpx.Client(timeout=60.0) as client:
        created = client.post(
            f"{second.url}/apps/troupe/users/u/sessions", json={"session_id": sid}
        )
        created.raise_for_status()
        headers = {"Idempotency-Key": "k1"}
        ran = client.post(f"{second.url}/run", json=run_body(sid, "hello"), headers=headers)
        again = client.post(f"{third.url}/run", json=run_body(sid, "hello"), headers=headers)
        session = client.get(f"{first.url}/apps/troupe/users/u/sessions/{sid}").json()
    assert ran.status_code == again.status_code == 200
    assert again.json() == ran.json() and again.headers["Idempotent-Replayed"] == "true"
    user_texts = [
        part.get("text")
        for event in session["events"]
        if event["author"] == "user"
        for part in event["content"]["parts"]
    ]
    assert user_texts == ["hello"]
