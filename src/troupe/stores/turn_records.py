"""Durable turns: each request with an idempotency key has a row, in the session store.

A row is written ``running`` before the turn starts, under the session's turn
lock, and ``done`` with the response once the turn answered. A retry with the
same key finds the row: ``done`` gives the stored response back; ``running``
found under the lock means the process that ran it died mid-turn (a live one
would still hold the lock), so the turn is closed (see :func:`close_dangling`)
and marked ``interrupted`` instead of being replayed.

The table lives in the session store's database (PostgreSQL or the SQLite
file), so every replica on that store sees the same rows; ``memory://`` keeps
them in the process.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import time
from dataclasses import dataclass
from typing import Any

from google.adk.events.event import Event
from google.adk.sessions.base_session_service import BaseSessionService
from google.genai import types

RUNNING, DONE, INTERRUPTED = "running", "done", "interrupted"
INTERRUPTED_RESULT = {
    "error": "interrupted: the process running this turn stopped before the tool answered; "
    "the call was not run again",
    "interrupted": True,
}
"""The function response that closes a call its turn never answered."""

_DDL = (
    "CREATE TABLE IF NOT EXISTS troupe_turns ("
    " turn_key VARCHAR(64) PRIMARY KEY, session_id TEXT NOT NULL,"
    " state VARCHAR(16) NOT NULL, response TEXT, updated_at DOUBLE PRECISION NOT NULL)"
)


@dataclass
class TurnRecord:
    """One keyed turn: its state and, once done, the response it gave."""

    state: str
    response: str | None = None
    session: str = ""
    """The session's id (kept with in-memory rows; the table has its own column)."""


def session_scope(app_name: str, user_id: str, session_id: str) -> str:
    """What the rows name a session by: session ids are unique per app and user only."""
    return json.dumps([app_name, user_id, session_id])


def turn_key(app_name: str, user_id: str, session_id: str, idempotency_key: str) -> str:
    """The row's key: the client's key scoped to its session (clients choose keys)."""
    raw = "\0".join((app_name, user_id, session_id, idempotency_key)).encode("utf-8")
    return hashlib.sha256(raw).hexdigest()


class TurnRecords:
    """The rows, in a database the session store URL names, or in memory."""

    def __init__(self, url: str | None) -> None:
        self.url = async_database_url(url) if url else None
        self._engine: Any = None
        self._memory: dict[str, TurnRecord] = {}

    async def _conn(self) -> Any:
        from sqlalchemy import text
        from sqlalchemy.ext.asyncio import create_async_engine

        if self._engine is None:
            assert self.url is not None, "memory:// keeps its rows in the process"
            self._engine = create_async_engine(self.url)
            async with self._engine.begin() as conn:
                await conn.execute(text(_DDL))
        return self._engine.begin()

    async def get(self, key: str) -> TurnRecord | None:
        if self.url is None:
            return self._memory.get(key)
        from sqlalchemy import text

        async with await self._conn() as conn:
            row = (
                await conn.execute(
                    text("SELECT state, response FROM troupe_turns WHERE turn_key = :k"),
                    {"k": key},
                )
            ).first()
        return None if row is None else TurnRecord(row[0], row[1])

    async def put(self, key: str, session_id: str, record: TurnRecord) -> None:
        if self.url is None:
            self._memory[key] = TurnRecord(record.state, record.response, session_id)
            return
        from sqlalchemy import text

        params = {
            "k": key,
            "s": session_id,
            "st": record.state,
            "r": record.response,
            "t": time.time(),
        }
        async with await self._conn() as conn:
            await conn.execute(text("DELETE FROM troupe_turns WHERE turn_key = :k"), params)
            await conn.execute(
                text(
                    "INSERT INTO troupe_turns (turn_key, session_id, state, response, updated_at)"
                    " VALUES (:k, :s, :st, :r, :t)"
                ),
                params,
            )

    async def running_in(self, session_id: str) -> list[str]:
        """Keys of the session's turns recorded as running."""
        if self.url is None:
            rows = self._memory.items()
            return [k for k, r in rows if r.state == RUNNING and r.session == session_id]
        from sqlalchemy import text

        async with await self._conn() as conn:
            rows = await conn.execute(
                text("SELECT turn_key FROM troupe_turns WHERE session_id = :s AND state = :st"),
                {"s": session_id, "st": RUNNING},
            )
            return [row[0] for row in rows]

    async def forget(self, key: str) -> None:
        """Drop the row of a turn that did not run (refused), so a retry runs it."""
        if self.url is None:
            self._memory.pop(key, None)
            return
        from sqlalchemy import text

        async with await self._conn() as conn:
            await conn.execute(text("DELETE FROM troupe_turns WHERE turn_key = :k"), {"k": key})

    async def close(self) -> None:
        engine, self._engine = self._engine, None
        if engine is not None:
            await engine.dispose()


def async_database_url(url: str) -> str | None:
    """The async SQLAlchemy URL of a session store's database, or None to keep rows in memory.

    None for ``memory://``, and for SQLite without SQLAlchemy (it comes with
    the ``postgres`` extra; a PostgreSQL store cannot be opened without it).
    """
    if not _has_sqlalchemy():
        return None
    scheme = url.split("://", 1)[0].lower()
    if scheme in ("sqlite", "sqlite+aiosqlite"):
        return "sqlite+aiosqlite://" + url.split("://", 1)[1]
    if scheme.startswith("postgres"):
        return url
    return None


def _has_sqlalchemy() -> bool:
    try:
        return importlib.util.find_spec("sqlalchemy") is not None
    except ValueError:  # set to None in sys.modules: import blocked
        return False


async def close_dangling(
    service: BaseSessionService,
    app_name: str,
    user_id: str,
    session_id: str,
    *,
    result: dict[str, Any] | None = None,
) -> int:
    """Answer every function call of the session that has no response, as interrupted
    (or with ``result``, e.g. as cancelled).

    Returns how many calls were closed. The answer is an explicit event in the
    session, so the model (and a reader of the history) sees the call was cut
    off, and the call is never run again. Long-running calls (an approval the
    user has not given yet) are waiting, not cut off, and stay open.
    """
    session = await service.get_session(app_name=app_name, user_id=user_id, session_id=session_id)
    if session is None:
        return 0
    answered = {
        r.id for e in session.events for r in e.get_function_responses() if r.id is not None
    }
    closed = 0
    for event in list(session.events):
        for call in event.get_function_calls():
            if call.id is None or call.id in answered:
                continue
            if call.id in (event.long_running_tool_ids or ()):
                continue
            response = types.FunctionResponse(
                id=call.id, name=call.name, response=dict(result or INTERRUPTED_RESULT)
            )
            closing = Event(
                author=event.author,
                invocation_id=event.invocation_id,
                branch=event.branch,
                content=types.Content(role="user", parts=[types.Part(function_response=response)]),
            )
            await service.append_event(session, closing)
            answered.add(call.id)
            closed += 1
    return closed


def interrupted_reply(closed: int) -> str:
    """The body of the answer to a retry of an interrupted turn."""
    return json.dumps(
        {
            "detail": "this turn was interrupted (the server running it stopped) and has "
            f"been closed, not replayed: {closed} unanswered tool call(s) were marked "
            "interrupted. Send a new message to continue the session.",
            "state": INTERRUPTED,
        }
    )
