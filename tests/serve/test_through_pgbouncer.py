"""troupe through PgBouncer in transaction pooling (``.ci/pgbouncer.sh``), as compose.yaml
runs it: nothing troupe does may need a server session of its own, since each
transaction may land on another server connection.

Two replicas through a pooler whose server pool is smaller than their clients:
concurrent turns on one session are queued by the lease (each answered, each
stored once, in order), a keyed retry replays, a replica stopped inside a tool
is taken over, and the tools' stores (their schema chosen per transaction)
read across replicas. Outside CI the test is skipped when PgBouncer is not
running; in CI (``TROUPE_CI`` set by ``.ci/run``) it must run.
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

from troupe_bench.fifo import release_fifo, wait_running

pytestmark = pytest.mark.serve
PGBOUNCER_ENV = "TROUPE_TEST_PGBOUNCER_URL"


@pytest.fixture
def pgbouncer() -> str:
    url = os.environ.get(PGBOUNCER_ENV)
    if url:
        return url
    if os.environ.get("TROUPE_CI"):
        pytest.fail(f"{PGBOUNCER_ENV} is not set in CI: .ci/run starts .ci/pgbouncer.sh")
    pytest.skip("needs .ci/pgbouncer.sh's PgBouncer (source .ci/pgbouncer.sh)")


def _texts(events: list[dict[str, Any]], author: str) -> list[str]:
    return [
        part["text"]
        for event in events
        if event["author"] == author
        for part in (event.get("content") or {}).get("parts") or []
        if part.get("text")
    ]


def test_two_replicas_through_a_transaction_pooler_queue_retry_and_take_over(
    servers: ServerFactory, tmp_path: Path, pgbouncer: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    fifo = f"slow-{uuid.uuid4().hex[:8]}.fifo"  # named per run: other runs may share the machine
    os.mkfifo(workspace / fifo)
    env = {"TROUPE_SESSION_STORE": pgbouncer, "TROUPE_TURN_LOCK_LEASE_S": "3"}
    first = servers.start("--workspace", str(workspace), env=env)
    second = servers.start("--workspace", str(workspace), env=env)
    sid = f"pgb-{uuid.uuid4().hex[:8]}"
    stalled = f"pgb-stall-{uuid.uuid4().hex[:8]}"
    word = f"pgb{uuid.uuid4().hex[:6]}"

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with httpx.AsyncClient(timeout=90.0) as client:
            for session in (sid, stalled):
                made = await client.post(
                    f"{first.url}/apps/troupe/users/u/sessions", json={"session_id": session}
                )
                made.raise_for_status()
            sends = [
                client.post(
                    f"{(first, second)[k % 2].url}/run",
                    json=run_body(sid, f"hello #{k}"),
                    headers={"Idempotency-Key": f"k{k}"},
                )
                for k in range(6)
            ]
            seen["turns"] = await asyncio.gather(*sends)
            seen["retry"] = await client.post(
                f"{second.url}/run",
                json=run_body(sid, "hello #0"),
                headers={"Idempotency-Key": "k0"},
            )
            seen["events"] = (
                await client.get(f"{second.url}/apps/troupe/users/u/sessions/{sid}")
            ).json()["events"]
            saved = await client.post(
                f"{first.url}/run",
                json=run_body(f"{sid}-k", f"save knowledge: the {word} runbook lives in the wiki"),
            )
            found = await client.post(
                f"{second.url}/run", json=run_body(f"{sid}-k", f"search knowledge for {word}")
            )
            seen["knowledge"] = (saved, found)
            # A replica stopped inside a tool loses the session to the other.
            slow = asyncio.create_task(
                client.post(f"{first.url}/run", json=run_body(stalled, f"run `cat {fifo}`"))
            )
            # Until the first replica is inside its tool (cat waits for the pipe's writer).
            assert await wait_running("cat", fifo), "the slow turn never ran its tool"
            os.kill(first.proc.pid, signal.SIGSTOP)
            try:
                for _ in range(30):
                    reply = await client.post(
                        f"{second.url}/run", json=run_body(stalled, "run `echo after`")
                    )
                    if reply.status_code == 200:
                        break
                seen["took_over"] = reply
            finally:
                os.kill(first.proc.pid, signal.SIGCONT)
            seen["released"] = await release_fifo(workspace / fifo, "late\n")
            seen["stalled_reply"] = await slow
        return seen

    async def with_session(session: str) -> None:
        async with httpx.AsyncClient(timeout=30.0) as client:
            made = await client.post(
                f"{first.url}/apps/troupe/users/u/sessions", json={"session_id": session}
            )
            made.raise_for_status()

    asyncio.run(with_session(f"{sid}-k"))
    seen = asyncio.run(scenario())
    assert [r.status_code for r in seen["turns"]] == [200] * 6
    assert (
        seen["retry"].status_code == 200 and seen["retry"].headers["Idempotent-Replayed"] == "true"
    )
    asked = _texts(seen["events"], "user")
    assert sorted(asked) == [f"hello #{k}" for k in range(6)]  # each stored once
    saved, found = seen["knowledge"]
    assert saved.status_code == found.status_code == 200
    assert f"the {word} runbook lives in the wiki" in found.text
    assert seen["took_over"].status_code == 200 and "after" in seen["took_over"].text
    assert seen["released"]
    assert seen["stalled_reply"].status_code == 409
    assert seen["stalled_reply"].json()["state"] == "interrupted"
