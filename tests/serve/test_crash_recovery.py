"""kill -9 in the middle of load: every acknowledged turn is in the store afterwards."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
import time
import uuid
from pathlib import Path

import httpx
import pytest
from troupe_servers import ServerFactory

from troupe.stores.sessions import close_session_store, open_session_store, sqlite_file

USERS = 16
KILL_AFTER_TURNS = 30
MESSAGES = ("list the files here", "hello", "read notes.txt")


class Load:
    """Users sending turns back to back, remembering what the server acknowledged."""

    def __init__(self, base: str, prefix: str) -> None:
        self.base = base
        self.sessions = [f"{prefix}-{i:02d}" for i in range(USERS)]
        self.acknowledged: dict[str, list[str]] = {sid: [] for sid in self.sessions}
        self.turns = 0
        self.interrupted = 0
        self.stop = asyncio.Event()

    async def user(self, client: httpx.AsyncClient, sid: str) -> None:
        created = await client.post(
            f"{self.base}/apps/troupe/users/crash/sessions", json={"session_id": sid}
        )
        created.raise_for_status()
        turn = 0
        while not self.stop.is_set():
            body = {
                "app_name": "troupe",
                "user_id": "crash",
                "session_id": sid,
                "new_message": {"role": "user", "parts": [{"text": MESSAGES[turn % 3]}]},
            }
            try:
                reply = await client.post(f"{self.base}/run", json=body)
            except httpx.HTTPError:
                self.interrupted += 1
                return
            assert reply.status_code == 200, reply.text
            self.acknowledged[sid].extend(event["id"] for event in reply.json())
            self.turns += 1
            turn += 1

    async def run_until_killed(self, pid: int) -> None:
        async with httpx.AsyncClient(timeout=30) as client:
            users = [asyncio.create_task(self.user(client, sid)) for sid in self.sessions]
            # Generous: four test suites may share two cores.
            deadline = time.monotonic() + 90
            while self.turns < KILL_AFTER_TURNS and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            os.kill(pid, signal.SIGKILL)
            self.stop.set()
            await asyncio.gather(*users)


async def _stored_ids(store: str, sessions: list[str]) -> dict[str, set[str]]:
    service = open_session_store(store)
    try:
        stored = {}
        for sid in sessions:
            session = await service.get_session(app_name="troupe", user_id="crash", session_id=sid)
            assert session is not None, f"session {sid} is missing after the crash"
            stored[sid] = {event.id for event in session.events}
        return stored
    finally:
        await close_session_store(service)


@pytest.mark.serve
async def test_every_turn_acknowledged_before_a_kill_9_is_in_the_store_after_restart(
    servers: ServerFactory, workspace: Path, tmp_path: Path, session_store: str
) -> None:
    data = tmp_path / "data"
    args = ("--workspace", str(workspace), "--session-store", session_store)
    server = servers.start(*args, data_dir=data)
    load = Load(server.url, f"crash-{uuid.uuid4().hex[:8]}")

    await load.run_until_killed(server.proc.pid)
    server.proc.wait(timeout=10)
    assert server.proc.returncode == -signal.SIGKILL
    assert load.turns >= KILL_AFTER_TURNS, server.output()
    assert load.interrupted > 0, "the kill should land while turns are in flight"

    # The store opens cleanly with the server dead...
    if (file := sqlite_file(session_store)) is not None:
        with contextlib.closing(sqlite3.connect(file)) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    stored = await _stored_ids(session_store, load.sessions)
    for sid, ids in load.acknowledged.items():
        assert set(ids) <= stored[sid], f"{sid} lost acknowledged events"

    # ...and a restarted server serves the same sessions and takes new turns.
    restarted = servers.start(*args, data_dir=data)
    async with httpx.AsyncClient(timeout=30) as client:
        ready = await client.get(f"{restarted.url}/readyz")
        assert ready.status_code == 200, ready.text
        for sid, ids in load.acknowledged.items():
            got = await client.get(f"{restarted.url}/apps/troupe/users/crash/sessions/{sid}")
            assert got.status_code == 200
            assert set(ids) <= {event["id"] for event in got.json()["events"]}
        again = await client.post(
            f"{restarted.url}/run",
            json={
                "app_name": "troupe",
                "user_id": "crash",
                "session_id": load.sessions[0],
                "new_message": {"role": "user", "parts": [{"text": "list the files here"}]},
            },
        )
        assert again.status_code == 200, again.text
        assert "notes.txt" in again.json()[-1]["content"]["parts"][0]["text"]
