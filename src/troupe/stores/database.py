"""The session store's database for troupe's own rows, reached from the event loop.

Session leases, keyed-turn records, A2A tasks and artifacts are small tables
troupe keeps beside ADK's sessions, in the same database, so every replica on
one store sees the same rows. One interface, :class:`Records`, reaches them:

* PostgreSQL: the asyncio engine the session service uses too (psycopg 3,
  its pool sized by :class:`~troupe.stores.budget.PoolBudget`), so every
  connection of the process comes out of one budget;
* a SQLite file (the default install has no SQLAlchemy): the standard
  library's ``sqlite3``, each statement on a worker thread, one transaction
  at a time per process (``BEGIN IMMEDIATE``; other processes wait on
  SQLite's own lock);
* ``memory://``: an in-memory SQLite database of this process.

Statements are written once, with ``:name`` parameters, in the SQL both
databases speak (``INSERT ... ON CONFLICT``, ``RETURNING``); only table
definitions may differ (:meth:`Records.ensure` takes one per dialect). Nothing
here takes a session-level lock, prepares a named statement or sets a session
variable, so a transaction pooler (PgBouncer in transaction mode) may sit
between troupe and PostgreSQL.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from .budget import APPLICATION_NAME, PoolBudget

SQLITE_BUSY_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Rows:
    """What a statement returned: its rows (for ``SELECT`` / ``RETURNING``) and row count."""

    rows: list[tuple[Any, ...]]
    count: int

    def first(self) -> tuple[Any, ...] | None:
        return self.rows[0] if self.rows else None


class Transaction(Protocol):
    """Statements run in one transaction: committed when the block ends, else rolled back."""

    async def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> Rows: ...


class Records(Protocol):
    """A database troupe's own tables live in."""

    dialect: str
    """``postgresql`` or ``sqlite``."""

    def transaction(self) -> contextlib.AbstractAsyncContextManager[Transaction]: ...

    async def run(self, sql: str, params: Mapping[str, Any] | None = None) -> Rows:
        """One statement, committed as it runs (on PostgreSQL: in autocommit, so no
        transaction stays open around it whatever happens to this process)."""
        ...

    async def ensure(self, name: str, tables: Mapping[str, Sequence[str]]) -> None:
        """Create the tables ``tables[dialect]`` once per process (``name`` says which set)."""
        ...

    async def close(self) -> None: ...


def psycopg_url(url: str) -> str:
    """The SQLAlchemy URL troupe opens a PostgreSQL session store with: psycopg 3, whatever
    driver ``url`` names (``postgresql+asyncpg://`` stores keep working)."""
    return "postgresql+psycopg://" + url.split("://", 1)[1]


def connect_args(connect_timeout_s: int = 10) -> dict[str, Any]:
    """psycopg's connection arguments for every troupe connection: no prepared statements
    (PgBouncer in transaction mode hands each transaction another server connection), a
    connect timeout, and a name in ``pg_stat_activity``."""
    return {
        "prepare_threshold": None,
        "connect_timeout": connect_timeout_s,
        "application_name": APPLICATION_NAME,
    }


def async_engine(url: str, budget: PoolBudget) -> Any:
    """The asyncio engine of a PostgreSQL store: ``budget.turn_connections`` connections,
    no overflow, a request waiting ``budget.timeout_s`` at most for one."""
    from sqlalchemy.ext.asyncio import create_async_engine

    return create_async_engine(
        psycopg_url(url),
        pool_size=budget.turn_connections,
        max_overflow=0,
        pool_timeout=budget.timeout_s,
        pool_pre_ping=True,
        connect_args=connect_args(),
    )


_TIMEOUTS = (
    "SELECT set_config('lock_timeout', :lock, true),"
    " set_config('idle_in_transaction_session_timeout', :idle, true)"
)


class PostgresRecords:
    """:class:`Records` on the asyncio engine of a PostgreSQL session store.

    Each transaction bounds, for itself only (``set_config(..., true)``, fine
    through PgBouncer), how long it waits for a row lock and how long it may
    stay open idle: a process stopped in the middle of a transaction (SIGSTOP,
    a hung host) would otherwise keep its row locks, and every replica waiting
    on them, until it woke up; the server ends such a transaction after
    ``idle_timeout_s``.
    """

    dialect = "postgresql"

    def __init__(
        self, engine: Any, *, lock_timeout_s: float = 5.0, idle_timeout_s: float = 5.0
    ) -> None:
        self.engine = engine
        self.lock_timeout_s = lock_timeout_s
        self.idle_timeout_s = idle_timeout_s
        self._ready: set[str] = set()
        self._lock = asyncio.Lock()

    @contextlib.asynccontextmanager
    async def connection(self, lock_timeout_s: float | None = None) -> AsyncIterator[Any]:
        """An engine connection in a transaction with this object's timeouts (committed
        when the block ends, else rolled back)."""
        from sqlalchemy import text

        lock_s = self.lock_timeout_s if lock_timeout_s is None else lock_timeout_s
        timeouts = {"lock": str(int(lock_s * 1000)), "idle": str(int(self.idle_timeout_s * 1000))}
        async with self.engine.begin() as conn:
            await conn.execute(text(_TIMEOUTS), timeouts)
            yield conn

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Transaction]:
        async with self.connection() as conn:
            yield _PostgresTransaction(conn)

    async def run(self, sql: str, params: Mapping[str, Any] | None = None) -> Rows:
        async with self.engine.connect() as conn:
            auto = await conn.execution_options(isolation_level="AUTOCOMMIT")
            return await _PostgresTransaction(auto).execute(sql, params)

    async def ensure(self, name: str, tables: Mapping[str, Sequence[str]]) -> None:
        if name in self._ready:
            return
        async with self._lock:
            if name in self._ready:
                return
            async with self.transaction() as tx:
                # Replicas starting together race on CREATE ... IF NOT EXISTS;
                # a transaction-scoped advisory lock (fine through PgBouncer) orders them.
                await tx.execute("SELECT pg_advisory_xact_lock(hashtext(:n))", {"n": name})
                for statement in tables[self.dialect]:
                    await tx.execute(statement)
            self._ready.add(name)

    async def close(self) -> None:
        await self.engine.dispose()


class _PostgresTransaction:
    def __init__(self, conn: Any) -> None:
        self._conn = conn

    async def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> Rows:
        from sqlalchemy import text

        result = await self._conn.execute(text(sql), dict(params or {}))
        rows = [tuple(r) for r in result.fetchall()] if result.returns_rows else []
        return Rows(rows, max(result.rowcount, len(rows)))


class SqliteRecords:
    """:class:`Records` in a SQLite file (or in memory), through the standard library."""

    dialect = "sqlite"

    def __init__(self, path: Path | None) -> None:
        """``path`` None: an in-memory database that lives as long as this object."""
        self.path = path
        self._lock = asyncio.Lock()
        self._ready: set[str] = set()
        self._memory: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        if self.path is None:
            if self._memory is None:
                self._memory = sqlite3.connect(
                    ":memory:", isolation_level=None, check_same_thread=False
                )
            return self._memory
        conn = sqlite3.connect(
            self.path,
            timeout=SQLITE_BUSY_TIMEOUT_S,
            isolation_level=None,
            check_same_thread=False,
        )
        return conn

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Transaction]:
        # asyncio.Lock is bound to the loop that first waits on it; a store used
        # from several loops (tests, CLI commands) gets a lock per loop.
        async with self._loop_lock():
            conn = await asyncio.to_thread(self._connect)
            try:
                await asyncio.to_thread(conn.execute, "BEGIN IMMEDIATE")
                try:
                    yield _SqliteTransaction(conn)
                except BaseException:
                    await asyncio.shield(asyncio.to_thread(conn.execute, "ROLLBACK"))
                    raise
                await asyncio.to_thread(conn.execute, "COMMIT")
            finally:
                if conn is not self._memory:
                    await asyncio.to_thread(conn.close)

    def _loop_lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if getattr(self, "_lock_loop", None) is not loop:
            self._lock = asyncio.Lock()
            self._lock_loop = loop
        return self._lock

    async def ensure(self, name: str, tables: Mapping[str, Sequence[str]]) -> None:
        if name in self._ready:
            return
        async with self.transaction() as tx:
            for statement in tables[self.dialect]:
                await tx.execute(statement)
        self._ready.add(name)

    async def run(self, sql: str, params: Mapping[str, Any] | None = None) -> Rows:
        async with self.transaction() as tx:
            return await tx.execute(sql, params)

    async def close(self) -> None:
        memory, self._memory = self._memory, None
        if memory is not None:
            memory.close()


class _SqliteTransaction:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    async def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> Rows:
        def run() -> Rows:
            cursor = self._conn.execute(sql, dict(params or {}))
            rows = [tuple(r) for r in cursor.fetchall()]
            return Rows(rows, max(cursor.rowcount, len(rows)))

        return await asyncio.to_thread(run)
