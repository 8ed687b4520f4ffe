"""One connection budget per process, checked against PostgreSQL at its defaults
(``max_connections`` 100, as ``.ci/postgres.sh`` runs it).

Five replicas either refuse to start with the one-line budget error or all run
within a budget that fits, serving bursts of turns while ``troupe secrets set``
and ``troupe trace list`` work against the same database; a server out of
connection slots answers 503 with ``Retry-After``, never 500.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from typing import Any

import httpx
import pytest
from troupe_servers import ServerFactory, run_body

from troupe.stores.budget import PoolBudget, budget_problem

pytestmark = pytest.mark.serve
POSTGRES_ENV = "TROUPE_TEST_POSTGRES_URL"
needs_postgres = pytest.mark.skipif(
    not os.environ.get(POSTGRES_ENV), reason="needs .ci/postgres.sh's server"
)


def _dsn() -> str:
    return os.environ[POSTGRES_ENV].replace("postgresql+asyncpg://", "postgresql://", 1)


def _troupe_connections() -> int:
    import psycopg

    with psycopg.connect(_dsn(), application_name="budget-test") as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'troupe'"
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_the_budget_error_is_one_line_with_the_arithmetic_and_the_fix() -> None:
    problem = budget_problem(PoolBudget(size=20, replicas=5, reserve=10), 100, 3)
    assert problem is not None and "\n" not in problem
    assert "5 replica(s) x 20 connections" in problem and "= 110 > 97" in problem
    assert "set database_pool_size to 17 or less" in problem
    assert budget_problem(PoolBudget(size=10, replicas=5, reserve=10), 100, 3) is None


@needs_postgres
def test_serve_refuses_five_replicas_that_do_not_fit_in_one_line(servers: ServerFactory) -> None:
    env = {
        "TROUPE_SESSION_STORE": os.environ[POSTGRES_ENV],
        "TROUPE_DATABASE_REPLICAS": "5",
        "TROUPE_DATABASE_POOL_SIZE": "20",
    }
    refused = servers.start(env=env, wait=False)
    assert refused.proc.wait(timeout=60) == 2
    lines = [line for line in refused.output().splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: the database connection budget does not fit: ")
    assert "5 replica(s) x 20 connections (database_pool_size) + 10 reserved" in lines[0]
    assert "= 110 > 97" in lines[0] and "max_connections 100" in lines[0]


@needs_postgres
def test_five_replicas_run_within_the_budget_while_the_cli_works(
    servers: ServerFactory, tmp_path: Any
) -> None:
    env = {"TROUPE_SESSION_STORE": os.environ[POSTGRES_ENV], "TROUPE_DATABASE_REPLICAS": "5"}
    replicas = [servers.start(env=env, wait=False) for _ in range(5)]
    for replica in replicas:
        replica.wait_ready()
    sessions = [f"budget-{uuid.uuid4().hex[:6]}-{i}" for i in range(10)]
    peak = 0

    async def burst(client: httpx.AsyncClient, sid: str, step: int) -> int:
        replies = await asyncio.gather(
            *(
                client.post(
                    f"{replicas[(step + k) % 5].url}/run",
                    json=run_body(sid, f"hello {step}-{k}"),
                    headers={"Idempotency-Key": f"{sid}-{step}-{k}"},
                )
                for k in range(3)
            )
        )
        return sum(r.status_code == 200 for r in replies)

    async def load() -> int:
        nonlocal peak
        async with httpx.AsyncClient(timeout=120.0) as client:
            for i, sid in enumerate(sessions):
                made = await client.post(
                    f"{replicas[i % 5].url}/apps/troupe/users/u/sessions", json={"session_id": sid}
                )
                made.raise_for_status()
            ok = 0
            for step in range(3):
                turns = asyncio.gather(*(burst(client, sid, step) for sid in sessions))
                while not turns.done():
                    peak = max(peak, await asyncio.to_thread(_troupe_connections))
                    await asyncio.sleep(0.2)
                ok += sum(await turns)
            return ok

    def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "troupe", *args],
            env={**replicas[0].env, "TROUPE_DATA_DIR": str(tmp_path / "cli")},
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
        )

    async def scenario() -> tuple[int, list[subprocess.CompletedProcess[str]]]:
        loading = asyncio.create_task(load())
        await asyncio.sleep(1.0)  # the bursts have started
        meanwhile = [
            await asyncio.to_thread(cli, "secrets", "set", "BUDGET_TOKEN", stdin="s3cret\n"),
            await asyncio.to_thread(cli, "trace", "list", "--json", "--limit", "5"),
        ]
        return await loading, meanwhile

    started = time.monotonic()
    ok, meanwhile = asyncio.run(scenario())
    assert ok == len(sessions) * 3 * 3, f"{ok} turns answered 200"
    for done in meanwhile:
        assert done.returncode == 0, done.stderr
    assert 0 < peak <= 5 * PoolBudget().size + 2, peak  # + the CLI's own connections
    assert time.monotonic() - started < 300


@needs_postgres
def test_a_server_out_of_connection_slots_answers_503_with_retry_after(
    servers: ServerFactory,
) -> None:
    env = {"TROUPE_SESSION_STORE": os.environ[POSTGRES_ENV], "TROUPE_DATABASE_POOL_SIZE": "2"}
    server = servers.start(env=env)
    sid = f"full-{uuid.uuid4().hex[:8]}"
    fillers: list[Any] = []
    with httpx.Client(base_url=server.url, timeout=60.0) as client:
        client.post("/apps/troupe/users/u/sessions", json={"session_id": sid}).raise_for_status()
        try:
            _fill(fillers)
            # Drop the server's pooled connections: it must open new ones, and cannot.
            fillers[0].execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = 'troupe'"
            )
            time.sleep(0.5)
            _fill(fillers)
            plain = client.post("/run", json=run_body(sid, "hello"))
            keyed = client.post(
                "/run", json=run_body(sid, "hello"), headers={"Idempotency-Key": "full-1"}
            )
            read = client.get(f"/apps/troupe/users/u/sessions/{sid}")
        finally:
            for conn in fillers:
                conn.close()
        after = client.post(
            "/run", json=run_body(sid, "hello"), headers={"Idempotency-Key": "full-1"}
        )
    for reply in (plain, keyed, read):
        assert reply.status_code == 503, reply.text
        assert int(reply.headers["Retry-After"]) >= 1
        assert "too many clients" in reply.json()["detail"]
    assert after.status_code == 200 and "Idempotent-Replayed" not in after.headers


def _fill(into: list[Any]) -> None:
    """Open connections until the server refuses one: every slot is taken."""
    import psycopg

    for _ in range(120):
        try:
            into.append(psycopg.connect(_dsn(), application_name="filler", autocommit=True))
        except psycopg.OperationalError as exc:
            assert "too many clients" in str(exc)
            return
    pytest.fail("the server never ran out of connection slots")
