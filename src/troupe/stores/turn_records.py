"""Keyed turns: a row per request key, in the session store, until the key expires.

A request that can run a tool carries a key (``Idempotency-Key`` on ``/run``
and ``/run_sse``, the confirmation's call id for an approval answer, the
``messageId`` of an A2A message). Its row is claimed ``running`` under the
session's turn lock before the turn starts, with the fence of the lease the
turn holds, and becomes

* ``done`` with the response once the turn answered: a retry gets it back;
* ``interrupted`` when the turn stopped after it had stored or run something
  (its process died, stalled, or the turn failed): its tool calls without an
  answer and its half-written history are closed (:func:`close_turn`), and a
  retry gets 409 "interrupted", never a second run;
* gone, only when the turn failed before anything of it was stored or run, so
  a retry runs it.

A row is never deleted while it may matter: it lives ``ttl_s`` (the
``turn_record_ttl_s`` setting) after its last change, then any process sweeps
it. Updates name the fence they were claimed under, so a holder that lost its
lease cannot overwrite what the process that took the session over wrote. A
row's ``updated_at`` is the time it was claimed and never moves after (the
column keeps its name for the tables earlier releases made): it tells the
turn's events from later turns'.

The table lives in the session store's database (PostgreSQL, the SQLite
file, or memory for ``memory://``: see :mod:`troupe.stores.database`).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from google.adk.events.event import Event
from google.adk.sessions.base_session_service import BaseSessionService
from google.genai import types

from ..turn_state import NOTE_AUTHOR, OUTCOME_KEY
from .database import Records
from .lock_limits import DEFAULT_RECORD_TTL_S as DEFAULT_TTL_S
from .traces import INTERRUPTED as INTERRUPTED_OUTCOME

RUNNING, DONE, INTERRUPTED = "running", "done", "interrupted"
INTERRUPTED_RESULT = {
    "error": "interrupted: the process running this turn stopped before the tool answered; "
    "the call was not run again",
    "interrupted": True,
}
"""The function response that closes a call its turn never answered."""
SWEEP_EVERY = 200
"""Claims between two sweeps of expired rows, per process."""

TABLES = {
    dialect: (
        "CREATE TABLE IF NOT EXISTS troupe_turn_records ("
        " turn_key VARCHAR(64) PRIMARY KEY, session_id TEXT NOT NULL,"
        " state VARCHAR(16) NOT NULL, response TEXT, fence TEXT NOT NULL,"
        " updated_at DOUBLE PRECISION NOT NULL, expires_at DOUBLE PRECISION NOT NULL)",
        "CREATE INDEX IF NOT EXISTS troupe_turn_records_session"
        " ON troupe_turn_records (session_id, state)",
        "CREATE INDEX IF NOT EXISTS troupe_turn_records_expiry ON troupe_turn_records (expires_at)",
    )
    for dialect in ("postgresql", "sqlite")
}

_CLAIM = (
    "INSERT INTO troupe_turn_records"
    " (turn_key, session_id, state, response, fence, updated_at, expires_at)"
    " VALUES (:k, :s, 'running', NULL, :f, :now, :exp)"
    " ON CONFLICT (turn_key) DO UPDATE SET session_id = excluded.session_id,"
    " state = excluded.state, response = NULL, fence = excluded.fence,"
    " updated_at = excluded.updated_at, expires_at = excluded.expires_at"
    " WHERE troupe_turn_records.expires_at <= :now"
)


@dataclass(frozen=True)
class TurnRecord:
    """One keyed turn: its state and, once done, the response it gave."""

    state: str
    response: str | None = None
    claimed_at: float = 0.0
    """When the turn was claimed: a row keeps it whatever becomes of it, so it tells
    the turn's events from later turns' (see :func:`close_turn`)."""


def session_scope(app_name: str, user_id: str, session_id: str) -> str:
    """What the rows name a session by: session ids are unique per app and user only."""
    return json.dumps([app_name, user_id, session_id])


def turn_key(app_name: str, user_id: str, session_id: str, idempotency_key: str) -> str:
    """The row's key: the client's key scoped to its session (clients choose keys)."""
    raw = "\0".join((app_name, user_id, session_id, idempotency_key)).encode("utf-8")
    return hashlib.sha256(raw).hexdigest()


class TurnRecords:
    """The rows of keyed turns in one database."""

    def __init__(self, records: Records, ttl_s: float = DEFAULT_TTL_S) -> None:
        self.records = records
        self.ttl_s = ttl_s
        self._claims = 0

    async def _ready(self) -> None:
        await self.records.ensure("troupe_turn_records", TABLES)

    def _times(self) -> dict[str, float]:
        now = time.time()
        return {"now": now, "exp": now + self.ttl_s}

    async def get(self, key: str) -> TurnRecord | None:
        """The unexpired record of ``key``, if any."""
        await self._ready()
        row = (
            await self.records.run(
                "SELECT state, response, updated_at FROM troupe_turn_records"
                " WHERE turn_key = :k AND expires_at > :now",
                {"k": key, "now": time.time()},
            )
        ).first()
        return None if row is None else TurnRecord(str(row[0]), row[1], float(row[2]))

    async def claim(self, key: str, scope: str, fence: str) -> bool:
        """Record ``key`` as running under ``fence``; False when an unexpired record is there."""
        await self._ready()
        self._claims += 1
        if self._claims % SWEEP_EVERY == 1:
            await self.records.run(
                "DELETE FROM troupe_turn_records WHERE expires_at <= :now", self._times()
            )
        params = {"k": key, "s": scope, "f": fence, **self._times()}
        return (await self.records.run(_CLAIM, params)).count == 1

    async def finish(self, key: str, fence: str, state: str, response: str | None = None) -> bool:
        """Move ``key``'s running record to ``state``, if this fence still owns it.

        The row keeps its claim time (see :meth:`interrupt`)."""
        await self._ready()
        updated = await self.records.run(
            "UPDATE troupe_turn_records SET state = :st, response = :r,"
            " expires_at = :exp WHERE turn_key = :k AND state = 'running' AND fence = :f",
            {"k": key, "f": fence, "st": state, "r": response, "exp": self._times()["exp"]},
        )
        return updated.count == 1

    async def forget(self, key: str, fence: str) -> None:
        """Drop the running record of a turn that stored and ran nothing, so a retry runs."""
        await self._ready()
        await self.records.run(
            "DELETE FROM troupe_turn_records"
            " WHERE turn_key = :k AND state = 'running' AND fence = :f",
            {"k": key, "f": fence},
        )

    async def interrupt(self, key: str) -> None:
        """Mark ``key`` interrupted (its turn was found cut off), whatever fence claimed it.

        The row keeps its claim time, which tells its turn's events from later ones."""
        await self._ready()
        await self.records.run(
            "UPDATE troupe_turn_records SET state = 'interrupted', response = NULL,"
            " expires_at = :exp WHERE turn_key = :k AND state <> 'done'",
            {"k": key, "exp": self._times()["exp"]},
        )

    async def interrupt_running(self, scope: str, keep: str = "") -> float | None:
        """Mark the session's running records interrupted (but ``keep``'s); the claim
        time of the earliest, None when there were none.

        Called by the session's holder: no live turn of this session runs elsewhere.
        The rows keep their claim times (see :meth:`interrupt`).
        """
        await self._ready()
        found = await self.records.run(
            "UPDATE troupe_turn_records SET state = 'interrupted',"
            " expires_at = :exp WHERE session_id = :s AND state = 'running'"
            " AND turn_key <> :k RETURNING updated_at",
            {"s": scope, "k": keep, "exp": self._times()["exp"]},
        )
        return min((float(row[0]) for row in found.rows), default=None)

    async def close(self) -> None:
        await self.records.close()


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
    closed, _ = await _close(service, app_name, user_id, session_id, note=None, result=result)
    return closed


async def close_turn(
    service: BaseSessionService,
    app_name: str,
    user_id: str,
    session_id: str,
    reason: str,
    *,
    settle: Collection[str] = (),
    settle_turn_since: float | None = None,
    keep_waiting: Collection[str] = (),
) -> int:
    """Close the session's last turn if it was cut off: answer its dangling calls as
    interrupted, and when it has no final answer, add a note saying it was interrupted
    and why. Returns how many calls were closed; a turn that ended is left as it is.

    A call waiting for approval stays open (the user may still answer it), unless
    its id is in ``settle``: the approval whose answer was the cut-off turn, which
    is never run again, so the session must not show it as still waiting. With
    ``settle_turn_since`` (the cut-off turn's claim time), the approvals that turn
    asked for are closed too: its client is told the turn was interrupted, so the
    session must not offer them; but not those in ``keep_waiting`` (the ones the
    request that found the turn cut off answers)."""
    closed, _ = await _close(
        service,
        app_name,
        user_id,
        session_id,
        note=reason,
        settle=settle,
        settle_turn_since=settle_turn_since,
        keep_waiting=keep_waiting,
    )
    return closed


async def _close(
    service: BaseSessionService,
    app_name: str,
    user_id: str,
    session_id: str,
    note: str | None,
    result: dict[str, Any] | None = None,
    settle: Collection[str] = (),
    settle_turn_since: float | None = None,
    keep_waiting: Collection[str] = (),
) -> tuple[int, bool]:
    session = await service.get_session(app_name=app_name, user_id=user_id, session_id=session_id)
    if session is None:
        return 0, False
    if settle_turn_since is not None:
        asked = _asked_by_turn(session.events, settle_turn_since)
        settle = {*settle, *(asked - set(keep_waiting))}
    answered = {
        r.id for e in session.events for r in e.get_function_responses() if r.id is not None
    }
    closed = 0
    for event in list(session.events):
        for call in event.get_function_calls():
            if call.id is None or call.id in answered:
                continue
            if call.id in (event.long_running_tool_ids or ()) and call.id not in settle:
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
    if note is None or not session.events or _ended(session.events[-1]):
        return closed, False
    last = session.events[-1]
    await service.append_event(
        session,
        Event(
            author=NOTE_AUTHOR,
            invocation_id=last.invocation_id,
            content=types.Content(role="model", parts=[types.Part(text=_note_text(note))]),
            custom_metadata={OUTCOME_KEY: INTERRUPTED_OUTCOME},
        ),
    )
    return closed, True


def _asked_by_turn(events: list[Event], since: float) -> set[str]:
    """The ids of the long-running calls (approvals asked for) of the turn that began at
    ``since``: its events run from its first user event to the next user event."""
    asked: set[str] = set()
    began = False
    for event in events:
        if event.timestamp < since:
            continue
        if event.author == "user":
            if began:
                break
            began = True
        asked.update(event.long_running_tool_ids or ())
    return asked


def _ended(event: Event) -> bool:
    """True when ``event`` ends a turn: a final answer, or a call waiting for approval."""
    return event.author != "user" and event.is_final_response()


def _note_text(reason: str) -> str:
    return (
        f"This turn was interrupted ({reason}) and was not run again. "
        "Send a new message to continue."
    )


def interrupted_reply(closed: int) -> str:
    """The body of the answer to a retry of an interrupted turn."""
    return json.dumps(
        {
            "detail": "this turn was interrupted (the server running it stopped, or it failed "
            f"after it had started) and has been closed, not replayed: {closed} unanswered "
            "tool call(s) were marked interrupted. Send a new message to continue.",
            "state": INTERRUPTED,
        }
    )
