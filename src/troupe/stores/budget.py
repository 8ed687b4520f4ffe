"""One connection budget per process for the session store's PostgreSQL.

Every connection a troupe process opens to the session store's database comes
out of one budget of ``database_pool_size`` connections (default
:data:`DEFAULT_POOL_SIZE`): most of it is the pool of the asyncio engine that
sessions, session leases, keyed turns, A2A tasks and artifacts share
(:attr:`PoolBudget.turn_connections`), the rest the pool of the synchronous
engine the tools' stores share (knowledge, memory, the vault and traces:
:attr:`PoolBudget.tool_connections`). ADK's session service needs an asyncio
engine, and the tools are synchronous functions that ADK runs on the event
loop's thread, where they cannot wait on that loop, so the two cannot be one
pool; both are fixed in size (no overflow), and neither grows with the number
of sessions or of turns waiting for one.

``troupe serve`` checks the budget against the server when it starts
(:func:`budget_problem`): ``database_replicas`` processes of
``database_pool_size`` connections each, plus ``database_reserve`` for the
CLI (``troupe secrets``, ``troupe trace``) and for administrators, must fit
in what ``max_connections`` leaves after the slots reserved for superusers.

A database that refuses connections ("too many clients", a pooler's limit, a
restart) or a pool that stays empty for ``database_pool_timeout_s`` is a
moment of overload, not a bug: :func:`is_unavailable` recognises both, and
``troupe serve`` answers them with 503 and ``Retry-After``.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_POOL_SIZE = 10
"""Connections one process opens to the session store's PostgreSQL at most."""
DEFAULT_RESERVE = 10
"""Connections the start-up check leaves to the CLI and administrators."""
DEFAULT_POOL_TIMEOUT_S = 30.0
"""Seconds a request waits for a pooled connection before a 503."""
RETRY_AFTER_S = 2
"""What a client told 503 is asked to wait before retrying."""
APPLICATION_NAME = "troupe"
"""``application_name`` of every connection troupe opens (see ``pg_stat_activity``)."""


@dataclass(frozen=True)
class PoolBudget:
    """How many connections one process may hold, and how the check counts replicas."""

    size: int = DEFAULT_POOL_SIZE
    timeout_s: float = DEFAULT_POOL_TIMEOUT_S
    replicas: int = 1
    """How many processes share the database (the start-up check multiplies by it)."""
    reserve: int = DEFAULT_RESERVE

    @property
    def tool_connections(self) -> int:
        """The synchronous pool, for the tools' stores: a fifth, at least one."""
        return max(1, self.size // 5)

    @property
    def turn_connections(self) -> int:
        """The asyncio pool, for sessions, leases, keyed turns, tasks and artifacts."""
        return max(1, self.size - self.tool_connections)


def budget_problem(budget: PoolBudget, max_connections: int, reserved: int) -> str | None:
    """Why ``budget`` does not fit a server with ``max_connections`` of which ``reserved``
    are kept for superusers, as one sentence with the arithmetic and the fix; None if it fits."""
    available = max_connections - reserved
    needed = budget.replicas * budget.size + budget.reserve
    if needed <= available:
        return None
    fits = (available - budget.reserve) // budget.replicas
    fix = (
        f"set database_pool_size to {fits} or less"
        if fits >= 2
        else f"lower database_reserve ({budget.reserve}) or database_replicas"
    )
    return (
        f"the database connection budget does not fit: {budget.replicas} replica(s) x "
        f"{budget.size} connections (database_pool_size) + {budget.reserve} reserved "
        f"(database_reserve) = {needed} > {available} the server allows (max_connections "
        f"{max_connections} - {reserved} reserved for superusers); {fix}, or raise the "
        "server's max_connections, or put PgBouncer in front (see docs/sessions.md)"
    )


def server_limits(sync_url: str) -> tuple[int, int]:
    """``max_connections`` and the slots reserved for superusers (and, from PostgreSQL 16,
    for ``pg_use_reserved_connections``) of the server at ``sync_url``, over one connection
    opened and closed here."""
    import psycopg

    dsn = sync_url.replace("postgresql+psycopg://", "postgresql://", 1)
    with psycopg.connect(dsn, connect_timeout=10, application_name=APPLICATION_NAME) as conn:
        row = conn.execute(
            "SELECT current_setting('max_connections')::int,"
            " current_setting('superuser_reserved_connections')::int,"
            " coalesce(current_setting('reserved_connections', true), '0')::int"
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1]) + int(row[2])


class DatabaseBusyError(RuntimeError):
    """The database could not give this request a connection now; retry shortly."""

    retry_after_s = RETRY_AFTER_S


_OPERATIONAL = frozenset({"OperationalError", "InterfaceError", "DisconnectionError"})
"""Driver and SQLAlchemy errors about the database's operation, not the request: no
connection, a connection ended (an admin, a timeout, a restart), a lock or a
deadlock that gave up. A retry can succeed."""


def is_lock_timeout(exc: BaseException) -> bool:
    """True when ``exc`` is PostgreSQL giving up on a row lock (``lock_timeout``)."""
    return type(exc).__module__.startswith(("sqlalchemy", "psycopg")) and (
        "lock timeout" in str(exc).lower()
    )


def is_unavailable(exc: BaseException) -> bool:
    """True when ``exc`` says the database cannot serve this request now (no connection,
    a full pool, a server refusing clients, a connection it ended), rather than that the
    request was wrong."""
    if isinstance(exc, DatabaseBusyError):
        return True
    if getattr(exc, "connection_invalidated", False):
        return True
    for kind in type(exc).__mro__:
        module = kind.__module__
        if not module.startswith(("sqlalchemy", "psycopg")):
            continue
        if kind.__name__ in _OPERATIONAL:
            return True
        if module.startswith("sqlalchemy") and kind.__name__ == "TimeoutError":
            return True  # QueuePool limit reached: no connection within the pool timeout
    return False
