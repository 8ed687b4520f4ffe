"""ADK's database session service whose writes are fenced by the turn's lease (PostgreSQL).

Imported only for a PostgreSQL store: it needs SQLAlchemy, which the default
install does not have.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from google.adk.events.event import Event
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.adk.sessions.session import Session
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from typing_extensions import override

from .session_lock import held_lease, note_stored


class FencedDatabaseSessionService(DatabaseSessionService):
    """ADK's database session service whose writes are fenced by the turn's lease.

    While a turn holds a lease on its session (:class:`~troupe.stores.session_lock.Lease`),
    each event it appends is written in the transaction that checks the lease
    (``FOR SHARE`` on its row): a holder that lost its lease writes nothing,
    and a takeover waits for a write in flight instead of racing it. ADK's
    own statements join that transaction through the session factory.
    """

    def __init__(self, *, db_engine: Any) -> None:
        super().__init__(db_engine=db_engine)
        self.database_session_factory = _FencedSessions(bind=db_engine, expire_on_commit=False)

    @override
    async def append_event(self, session: Session, event: Event) -> Event:
        lease = held_lease((session.app_name, session.user_id, session.id))
        if lease is None or event.partial:
            stored = await super().append_event(session, event)
        else:
            async with lease.fence() as conn:
                token = _FENCED.set(conn)
                try:
                    stored = await super().append_event(session, event)
                finally:
                    _FENCED.reset(token)
        if not event.partial:
            note_stored()
        return stored


_FENCED: ContextVar[Any] = ContextVar("troupe_fenced_connection", default=None)


class _FencedSessions(async_sessionmaker[AsyncSession]):
    """ADK's session factory, joining the fenced transaction when one is open."""

    def __call__(self, **local_kw: Any) -> AsyncSession:
        conn = _FENCED.get()
        if conn is None:
            return super().__call__(**local_kw)
        # ADK's commit then leaves the transaction to the fence, which commits it.
        return AsyncSession(
            bind=conn, expire_on_commit=False, join_transaction_mode="rollback_only"
        )
