"""Where conversations are kept: ADK's own session services, chosen by URL.

troupe writes no storage of its own. A ``session_store`` URL picks one of the
services ADK registers (``cli/service_registry.py``): ``sqlite:///`` for the
default file in the data directory, ``postgresql+asyncpg://`` for a server,
``memory://`` for nothing at all. A URL the registry does not know goes to
ADK's SQLAlchemy ``DatabaseSessionService``, as ``adk api_server`` does. For
SQLite troupe only switches the file to WAL and queues this process's writes
(:class:`SerializedSqliteSessionService`), so many concurrent sessions do not
fail on SQLite's file lock. Every store opened here also gets the queue that
runs one turn at a time per session (:mod:`troupe.stores.session_lock`).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import sqlite3
import weakref
from collections.abc import Collection
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from google.adk.events.event import Event
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.session import Session
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from typing_extensions import override

from .._adk_compat import sqlite_session_path
from ..errors import ConfigError
from ..paths import default_session_store as default_session_store
from ..sandbox.private import private_file
from .budget import PoolBudget
from .database import PostgresRecords, Records, SqliteRecords, async_engine
from .session_lock import (
    FileGuard,
    LeaseGuard,
    LockLimits,
    SessionKey,
    SessionTurns,
    StoreGuard,
    attach_turns,
    note_stored,
    session_turns,
)
from .turn_records import DEFAULT_TTL_S, TurnRecords, close_turn, session_scope
from .urls import redact as redact

logger = logging.getLogger("troupe.sessions")

SESSION_STORE_ENV = "TROUPE_SESSION_STORE"
"""Environment variable that overrides the configured session store URL."""

_EXAMPLES = (
    "sqlite:////absolute/path/sessions.db, sqlite:///relative.db, "
    "postgresql+asyncpg://user:password@127.0.0.1:5432/troupe or memory://"
)


def sqlite_file(url: str) -> Path | None:
    """The file a ``sqlite://`` URL points at, or None for other stores."""
    parts = urlsplit(url)
    if parts.scheme not in ("sqlite", "sqlite+aiosqlite") or not parts.path:
        return None
    return Path(parts.path[1:]) if parts.path.startswith("/") else Path(parts.path)


def is_postgres(url: str) -> bool:
    """True for a PostgreSQL session store URL, whatever driver it names."""
    return urlsplit(url).scheme.lower().startswith("postgres")


def open_session_store(
    url: str,
    limits: LockLimits | None = None,
    *,
    budget: PoolBudget | None = None,
    record_ttl_s: float = DEFAULT_TTL_S,
) -> BaseSessionService:
    """ADK's session service for ``url``, with the queue of its turns, the keyed-turn
    records and the database troupe's own rows live in (:func:`store_parts`).

    ``limits`` bound a turn's wait for its session and a holder's lease;
    ``budget`` sizes the PostgreSQL pools; keyed-turn records live ``record_ttl_s``.

    Raises:
        ConfigError: the URL is malformed or names a driver that is not
            installed; the message names the URL and gives working examples.
    """
    if "://" not in url:
        raise ConfigError(f"session_store {url!r} is not a URL. Use one of: {_EXAMPLES}.")
    file = sqlite_file(url)
    if file is not None:
        private_file(file)
    limits = limits or LockLimits()
    records: Records
    guard: StoreGuard | None = None
    service: BaseSessionService | None
    try:
        if is_postgres(url):
            from .fenced_sessions import FencedDatabaseSessionService

            engine = async_engine(url, budget or PoolBudget())
            service = FencedDatabaseSessionService(db_engine=engine)
            # A stopped process's open transaction ends within half a lease.
            half = limits.lease_s / 2
            records = PostgresRecords(engine, lock_timeout_s=half, idle_timeout_s=half)
            guard = LeaseGuard(records, limits)
        elif file is not None and urlsplit(url).scheme == "sqlite":
            service = SerializedSqliteSessionService(db_path=url)
            _use_wal(file)
            records = SqliteRecords(None if str(file) == ":memory:" else file)
            guard = _file_guard(file)
        elif urlsplit(url).scheme.lower() == "memory":
            service, records = JournaledInMemorySessionService(), SqliteRecords(None)
        else:
            from google.adk.cli.service_registry import get_service_registry

            service = get_service_registry().create_session_service(url)
            if service is None:
                from google.adk.sessions.database_session_service import (
                    DatabaseSessionService,
                )

                service = DatabaseSessionService(db_url=url, pool_pre_ping=True)
            records = SqliteRecords(None)  # another database: keyed turns in this process
    except ImportError as exc:
        raise ConfigError(
            f"session_store {redact(url)!r} needs a database driver that is not installed "
            f"({exc}). For PostgreSQL: pip install 'troupe[postgres]'."
        ) from None
    except (ValueError, RuntimeError, sqlite3.Error) as exc:
        raise ConfigError(
            f"session_store {redact(url)!r} cannot be used: {exc} Use one of: {_EXAMPLES}."
        ) from None
    turn_records = TurnRecords(records, record_ttl_s)

    # Turns on one session queue here, and across processes in the store.
    attach_turns(
        service,
        SessionTurns(guard, limits, on_takeover=partial(close_stalled, service, turn_records)),
    )
    _parts[service] = StoreParts(records, turn_records)
    return service


STALLED_REASON = "the replica running it stopped renewing its lease on the session"


async def close_stalled(
    service: BaseSessionService,
    records: TurnRecords,
    key: SessionKey,
    answering: Collection[str] = (),
) -> None:
    """Close the turn of a holder whose lease was taken over: its keyed record is
    marked interrupted, its dangling calls are answered, and the approvals it asked
    for are closed, since the stalled holder answers its own client "interrupted"
    (it may write nothing more) and the session must not offer them; but not those
    in ``answering``, which the turn taking over answers: their question reached
    the client before the holder died (it sent its answer, then died before it
    could mark its turn done), so they run once, now."""
    since = await records.interrupt_running(session_scope(*key))
    await close_turn(
        service, *key, reason=STALLED_REASON, settle_turn_since=since, keep_waiting=answering
    )


@dataclass(frozen=True)
class StoreParts:
    """What troupe keeps beside a session service: its database and keyed-turn records."""

    records: Records
    turn_records: TurnRecords


_parts: weakref.WeakKeyDictionary[BaseSessionService, StoreParts] = weakref.WeakKeyDictionary()


def store_parts(service: BaseSessionService) -> StoreParts:
    """The parts :func:`open_session_store` made for ``service`` (in-memory ones for a
    service it did not open)."""
    parts = _parts.get(service)
    if parts is None:
        records = SqliteRecords(None)
        parts = _parts[service] = StoreParts(records, TurnRecords(records))
    return parts


def _file_guard(file: Path) -> StoreGuard | None:
    if str(file) in ("", ":memory:"):
        return None
    if importlib.util.find_spec("fcntl") is None:
        logger.warning("No fcntl here: turns on one session are queued in this process only.")
        return None
    return FileGuard(file.parent / f"{file.name}.turns")


def store_guard(service: BaseSessionService) -> StoreGuard | None:
    """The cross-process guard for a session service troupe did not open (``adk web``).

    ADK's SQLite service and its database service say where their store is;
    the guard is the one :func:`open_session_store` gives the same store, so
    ``adk web`` and ``troupe chat`` on one store queue each other's turns.
    Other services get None.
    """
    if isinstance(service, SqliteSessionService):
        path = sqlite_session_path(service)
        if path.startswith("file:") or path in ("", ":memory:"):
            return None
        return _file_guard(Path(path))
    engine = getattr(service, "db_engine", None)
    url = getattr(engine, "url", None)
    render = getattr(url, "render_as_string", None)
    if not callable(render):
        return None
    rendered = str(render(hide_password=False))
    if is_postgres(rendered):
        return LeaseGuard(PostgresRecords(async_engine(rendered, PoolBudget())))
    file = sqlite_file(rendered)
    return _file_guard(file) if file is not None else None


class JournaledInMemorySessionService(InMemorySessionService):
    """ADK's in-memory session service, counting each turn's stored events."""

    @override
    async def append_event(self, session: Session, event: Event) -> Event:
        stored = await super().append_event(session, event)
        if not event.partial:
            note_stored()
        return stored


class SerializedSqliteSessionService(SqliteSessionService):
    """ADK's SQLite session service, taking its writes one at a time.

    SQLite has a single writer. ADK's service opens a connection per call,
    so a few hundred concurrent turns wait on the file lock with sqlite's
    5-second busy timeout and some fail with "database is locked". Queueing
    the writes of this process on an asyncio lock keeps every one of them;
    reads are not queued (the file is in WAL mode, so they do not block).
    """

    def __init__(self, db_path: str) -> None:
        super().__init__(db_path)
        self._troupe_write_lock = asyncio.Lock()

    @override
    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        async with self._troupe_write_lock:
            return await super().create_session(
                app_name=app_name, user_id=user_id, state=state, session_id=session_id
            )

    @override
    async def append_event(self, session: Session, event: Event) -> Event:
        async with self._troupe_write_lock:
            stored = await super().append_event(session, event)
        if not event.partial:
            note_stored()
        return stored

    @override
    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        async with self._troupe_write_lock:
            await super().delete_session(app_name=app_name, user_id=user_id, session_id=session_id)


def _use_wal(file: Path) -> None:
    # WAL is a property of the file: set once, every later connection (ADK's
    # and other processes') uses it. Readers then never block the writer, and
    # a commit is still on disk when the process is killed.
    with contextlib.closing(sqlite3.connect(file, timeout=30)) as conn:
        conn.execute("PRAGMA journal_mode=WAL")


async def probe_session_store(service: BaseSessionService, *, app_name: str) -> None:
    """Raise if the store cannot answer a query (used for readiness)."""
    await service.list_sessions(app_name=app_name, user_id="__troupe_readiness__")


async def close_session_store(service: BaseSessionService) -> None:
    """Release the store's connections, for services that hold any."""
    await session_turns(service).close()
    close = getattr(service, "close", None)
    if close is not None:
        result = close()
        if hasattr(result, "__await__"):
            await result
    parts = _parts.pop(service, None)
    if parts is not None:
        await parts.records.close()  # on PostgreSQL: the engine the service shared
