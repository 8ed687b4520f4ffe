"""Replicas on one PostgreSQL with separate data directories read what another wrote.

Sessions, A2A tasks, keyed turns, memory, knowledge and traces here, through
``troupe serve`` and the offline model; the vault (an approved secret) and
facts in tests/serve/test_replicas_share_stores.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
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

    # A memory stored through one replica is recalled through another, and a
    # knowledge entry saved through one is found through a third.
    word = f"teal{uuid.uuid4().hex[:6]}"
    sessions = [f"stores-{uuid.uuid4().hex[:8]}" for _ in range(4)]
    turns = [
        (first, sessions[0], f"remember that my favourite colour is {word}"),
        (second, sessions[1], f"recall what I said about {word}"),
        (second, sessions[2], f"save knowledge: the {word} deploy key rotates every 30 days"),
        (third, sessions[3], f"search knowledge for {word} key rotation"),
    ]
    answers = []
    with httpx.Client(timeout=60.0) as client:
        for replica, session_id, text in turns:
            made = client.post(
                f"{replica.url}/apps/troupe/users/u/sessions", json={"session_id": session_id}
            )
            made.raise_for_status()
            reply = client.post(f"{replica.url}/run", json=run_body(session_id, text))
            assert reply.status_code == 200, reply.text
            answers.append(_answer(reply.json()))
    assert "memory_recall" in answers[1] and f"my favourite colour is {word}" in answers[1]
    assert "search_knowledge" in answers[3]
    assert f"the {word} deploy key rotates every 30 days" in answers[3]
    for replica in (first, second, third):
        data_dir = replica.env["TROUPE_DATA_DIR"]
        assert not [n for n in os.listdir(data_dir) if n in ("memory.db", "knowledge.db")]

    # `troupe trace list` against the database lists the turns of every replica.
    listed = subprocess.run(
        [sys.executable, "-m", "troupe", "trace", "list", "--json", "--limit", "200"],
        env={**first.env, "TROUPE_SESSION_STORE": env["TROUPE_SESSION_STORE"]},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    traced = {trace["session_id"] for trace in json.loads(listed.stdout)}
    assert set(sessions) <= traced


def _answer(events: list[dict[str, object]]) -> str:
    """The texts of a /run response's events, joined."""
    texts = []
    for event in events:
        content = event.get("content")
        if isinstance(content, dict):
            texts += [str(p.get("text", "")) for p in content.get("parts", []) if p.get("text")]
    return "\n".join(texts)
