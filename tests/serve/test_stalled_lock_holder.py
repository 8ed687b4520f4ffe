"""A replica that stops while it holds a session does not keep that session from the
others, and when it wakes up it runs and writes nothing more.

Two replicas on one PostgreSQL. The first runs a slow turn (``cat`` of a named
pipe nobody writes, through the operator) and is then stopped with SIGSTOP
while it holds the session's lease. The second is asked for turns on the same
session: each request either runs or is refused with 409 and ``Retry-After``
within the configured wait, and once the lease of the stopped holder has run
out a turn takes the session over, closes the stalled turn as interrupted and
runs. Resumed (SIGCONT) and its tool released, the old holder finds its lease
taken: its client is told the turn was interrupted, and the session holds no
write of it. A live holder, though, keeps its session past the lease.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from troupe_servers import ServerFactory, ServerProcess, run_body

from troupe_bench.fifo import release_fifo, wait_running

pytestmark = pytest.mark.serve

POSTGRES_ENV = "TROUPE_TEST_POSTGRES_URL"
FIFO = f"slow-{uuid.uuid4().hex[:8]}.fifo"
"""The pipe the slow turn reads (named per run: other test runs may share the machine)."""
WAIT_S = 2.0
LEASE_S = 3.0
SLACK_S = 3.0
"""Room for a loaded 2-CPU machine on top of each configured bound."""


def _two_replicas(servers: ServerFactory, tmp_path: Path) -> tuple[ServerProcess, ServerProcess]:
    """Two replicas on the test PostgreSQL sharing a workspace with a named pipe."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    os.mkfifo(workspace / FIFO)
    env = {
        "TROUPE_SESSION_STORE": os.environ[POSTGRES_ENV],
        "TROUPE_TURN_LOCK_WAIT_S": str(WAIT_S),
        "TROUPE_TURN_LOCK_LEASE_S": str(LEASE_S),
    }
    return (
        servers.start("--workspace", str(workspace), env=env),
        servers.start("--workspace", str(workspace), env=env),
    )


async def _start_slow_turn(
    client: httpx.AsyncClient, holder: ServerProcess, sid: str
) -> asyncio.Task[httpx.Response]:
    """Create ``sid`` on ``holder`` and start a turn there that blocks on the pipe."""
    created = await client.post(
        f"{holder.url}/apps/troupe/users/u/sessions", json={"session_id": sid}
    )
    assert created.status_code == 200, created.text
    return asyncio.create_task(
        client.post(f"{holder.url}/run", json=run_body(sid, f"run `cat {FIFO}`"))
    )


async def _wait_until_held(client: httpx.AsyncClient, other: ServerProcess, sid: str) -> None:
    """Return once ``other`` refuses a turn on ``sid``: the holder has the session."""
    for _ in range(40):
        reply = await client.post(f"{other.url}/run", json=run_body(sid, "run `echo probe`"))
        if reply.status_code == 409:
            return
        await asyncio.sleep(0.25)
    raise AssertionError("the slow turn never held the session")


def _parts(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [
        part[kind]
        for event in events
        for part in (event.get("content") or {}).get("parts") or []
        if kind in part
    ]


@pytest.mark.skipif(not os.environ.get(POSTGRES_ENV), reason="needs .ci/postgres.sh's server")
def test_a_stopped_holder_is_taken_over_and_once_resumed_writes_nothing(
    servers: ServerFactory, tmp_path: Path
) -> None:
    holder, other = _two_replicas(servers, tmp_path)
    fifo = tmp_path / "ws" / FIFO
    sid = f"stall-{uuid.uuid4().hex[:8]}"
    session_url = f"{other.url}/apps/troupe/users/u/sessions/{sid}"

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with httpx.AsyncClient(timeout=60.0) as client:
            created = await client.post(
                f"{holder.url}/apps/troupe/users/u/sessions", json={"session_id": sid}
            )
            assert created.status_code == 200, created.text
            slow = asyncio.create_task(
                client.post(
                    f"{holder.url}/run",
                    json=run_body(sid, f"run `cat {FIFO}`"),
                    headers={"Idempotency-Key": "slow-1"},
                )
            )
            # Until the holder is inside its tool (cat waits for the pipe's writer).
            assert await wait_running("cat", FIFO), "the slow turn never ran its tool"
            os.kill(holder.proc.pid, signal.SIGSTOP)
            stopped_at = time.monotonic()
            try:
                ran = None
                while time.monotonic() - stopped_at < LEASE_S + WAIT_S + SLACK_S:
                    asked = time.monotonic()
                    reply = await client.post(
                        f"{other.url}/run", json=run_body(sid, "run `echo after`")
                    )
                    assert time.monotonic() - asked < WAIT_S + SLACK_S
                    if reply.status_code == 200:
                        ran = reply
                        break
                    assert reply.status_code == 409, reply.text
                    assert int(reply.headers["Retry-After"]) >= 1
                seen["took_over_after_s"] = time.monotonic() - stopped_at
                assert ran is not None, "the session stayed locked past the lease"
                assert "after" in ran.text
                seen["before_resume"] = (await client.get(session_url)).json()["events"]
            finally:
                os.kill(holder.proc.pid, signal.SIGCONT)
            # The old holder's tool now returns; its result must not be written.
            assert await release_fifo(fifo, "late result\n"), "the old holder's tool never read"
            seen["old_reply"] = await slow
            seen["after_resume"] = (await client.get(session_url)).json()["events"]
            seen["retry"] = await client.post(
                f"{other.url}/run",
                json=run_body(sid, f"run `cat {FIFO}`"),
                headers={"Idempotency-Key": "slow-1"},
            )
        return seen

    seen = asyncio.run(scenario())
    assert seen["took_over_after_s"] < LEASE_S + WAIT_S + SLACK_S
    old_reply = seen["old_reply"]
    assert old_reply.status_code == 409, old_reply.text
    assert old_reply.json()["state"] == "interrupted"
    events = seen["after_resume"]
    assert [e["id"] for e in events] == [e["id"] for e in seen["before_resume"]]  # no late write
    calls, answers = _parts(events, "functionCall"), _parts(events, "functionResponse")
    commands = [c["args"]["command"] for c in calls if c["name"] == "exec_shell"]
    assert commands == [f"cat {FIFO}", "echo after"]  # the old holder ran nothing more
    answered = {a["id"]: a for a in answers}
    assert set(answered) >= {c["id"] for c in calls}  # no call left hanging
    stalled = answered[calls[[c["name"] for c in calls].index("exec_shell")]["id"]]
    assert stalled["response"]["interrupted"] is True
    assert "late result" not in str(events)
    notes = [e for e in events if e.get("customMetadata", {}).get("troupe_outcome")]
    assert [n["customMetadata"]["troupe_outcome"] for n in notes] == ["interrupted"]
    assert seen["retry"].status_code == 409 and seen["retry"].json()["state"] == "interrupted"


@pytest.mark.skipif(not os.environ.get(POSTGRES_ENV), reason="needs .ci/postgres.sh's server")
def test_a_live_holder_keeps_its_session_past_the_lease(
    servers: ServerFactory, tmp_path: Path
) -> None:
    holder, other = _two_replicas(servers, tmp_path)
    fifo = tmp_path / "ws" / FIFO
    sid = f"live-{uuid.uuid4().hex[:8]}"

    async def scenario() -> None:
        async with httpx.AsyncClient(timeout=60.0) as client:
            slow = await _start_slow_turn(client, holder, sid)
            # Probes sent before the holder has the session would run and,
            # sent back to back, could keep the slow turn from ever taking it.
            await _wait_until_held(client, other, sid)
            started = time.monotonic()
            statuses = []
            # Well past the lease, the running turn still has the session.
            while time.monotonic() - started < 2 * LEASE_S + WAIT_S:
                reply = await client.post(f"{other.url}/run", json=run_body(sid, "run `echo x`"))
                statuses.append(reply.status_code)
            assert statuses[-1] == 409, statuses
            assert await release_fifo(fifo, "released\n")
            finished = await slow
            assert finished.status_code == 200 and "released" in finished.text
            after = await client.post(f"{other.url}/run", json=run_body(sid, "run `echo after`"))
            assert after.status_code == 200 and "after" in after.text

    asyncio.run(scenario())
