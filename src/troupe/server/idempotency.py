"""``Idempotency-Key`` on ``/run`` and ``/run_sse``: a retry gets the stored outcome.

For a ``POST /run`` or ``/run_sse`` carrying the header, the middleware takes the session's
turn lock (the same one the runner takes, so the turn runs inside it), then
looks the key up in :class:`~troupe.stores.turn_records.TurnRecords`:

* no row: the turn is recorded ``running``, runs, and its 200 response is
  stored as ``done`` (a refused turn, 4xx/5xx, leaves no row: a retry runs it);
* ``done``: the stored response is sent again, with ``Idempotent-Replayed: true``;
* ``running``: the process that ran it died mid-turn (it would otherwise hold
  the lock), so its unanswered tool calls are closed as interrupted and the
  client gets 409 saying so; ``interrupted`` rows answer the same.

Any keyed turn first closes the session's other turns still recorded
``running`` the same way, so a turn cut off by a crash is closed on the next
keyed turn of its session even when the client never retries it.

The response is passed on as it comes (``/run_sse`` keeps streaming) and
kept; a replay sends it whole. Because the session's lock is taken before the
response starts, a busy session gets a plain 409 with ``Retry-After`` on
``/run_sse`` too. Requests without the header pass through untouched.
"""

from __future__ import annotations

import json
from typing import Any

from google.adk.sessions.base_session_service import BaseSessionService
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..stores.lock_limits import SessionBusyError
from ..stores.session_lock import session_turns
from ..stores.turn_records import (
    DONE,
    INTERRUPTED,
    RUNNING,
    TurnRecord,
    TurnRecords,
    close_dangling,
    interrupted_reply,
    session_scope,
    turn_key,
)

HEADER = b"idempotency-key"
MEDIA_TYPES = {"/run": b"application/json", "/run_sse": b"text/event-stream"}
"""The keyed paths, and the media type of their stored responses."""
MAX_KEY_CHARS = 200


class IdempotentRuns:
    """ASGI middleware giving ``/run`` durable, keyed turns."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        service: BaseSessionService,
        records: TurnRecords,
        default_app: str,
    ) -> None:
        self.app = app
        self.service = service
        self.records = records
        self.default_app = default_app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = _header(scope)
        path = scope.get("path")
        if key is None or scope.get("method") != "POST" or path not in MEDIA_TYPES:
            await self.app(scope, receive, send)
            return
        if not key or len(key) > MAX_KEY_CHARS:
            await _json(send, 400, {"detail": f"Idempotency-Key must be 1-{MAX_KEY_CHARS} chars"})
            return
        body = await _read_body(receive)
        try:
            request = json.loads(body)
            app_name = str(request.get("app_name") or self.default_app)
            user_id, session_id = str(request["user_id"]), str(request["session_id"])
        except (ValueError, KeyError, TypeError, AttributeError):
            await self.app(scope, _replay(body, receive), send)  # ADK names what is wrong
            return
        row = turn_key(app_name, user_id, session_id, key)
        scope_id = session_scope(app_name, user_id, session_id)
        try:
            async with session_turns(self.service).hold(app_name, user_id, session_id):
                await self._close_interrupted(app_name, user_id, session_id, row)
                record = await self.records.get(row)
                if record is not None and record.state == DONE and record.response is not None:
                    await _send(send, 200, record.response.encode(), MEDIA_TYPES[path], True)
                    return
                if record is not None and record.state in (RUNNING, INTERRUPTED):
                    closed = await close_dangling(self.service, app_name, user_id, session_id)
                    await self.records.put(row, scope_id, TurnRecord(INTERRUPTED))
                    await _send(send, 409, interrupted_reply(closed).encode())
                    return
                await self.records.put(row, scope_id, TurnRecord(RUNNING))
                status, payload = await _pass_on(self.app, scope, _replay(body, receive), send)
                if status == 200:
                    text = payload.decode("utf-8", errors="replace")
                    await self.records.put(row, scope_id, TurnRecord(DONE, text))
                else:
                    await self.records.forget(row)
        except SessionBusyError as exc:
            await _json(
                send,
                409,
                {"detail": str(exc), "retry_after_s": exc.retry_after_s},
                retry_after=exc.retry_after_s,
            )

    async def _close_interrupted(
        self, app_name: str, user_id: str, session_id: str, keep: str
    ) -> None:
        """Close the session's other turns still recorded running: their process died.

        Called with the session's lock held, so no live process runs them.
        """
        scope_id = session_scope(app_name, user_id, session_id)
        others = [k for k in await self.records.running_in(scope_id) if k != keep]
        if not others:
            return
        await close_dangling(self.service, app_name, user_id, session_id)
        for other in others:
            await self.records.put(other, scope_id, TurnRecord(INTERRUPTED))


def _header(scope: Scope) -> str | None:
    for name, value in scope.get("headers") or []:
        if name.lower() == HEADER:
            return str(value.decode("latin-1").strip())
    return None


async def _read_body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that gives ``body`` once, then the client's own messages (disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _pass_on(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> tuple[int, bytes]:
    """Run ``app``, sending its response on as it comes; return its status and body."""
    status = 500
    chunks: list[bytes] = []

    async def keep(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = int(message["status"])
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
        await send(message)

    await app(scope, receive, keep)
    return status, b"".join(chunks)


async def _send(
    send: Send,
    status: int,
    body: bytes,
    media_type: bytes = b"application/json",
    replayed: bool = False,
) -> None:
    headers = [(b"content-type", media_type), (b"content-length", str(len(body)).encode())]
    if replayed:
        headers.append((b"idempotent-replayed", b"true"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _json(send: Send, status: int, payload: Any, *, retry_after: int | None = None) -> None:
    body = json.dumps(payload).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if retry_after is not None:
        headers.append((b"retry-after", str(retry_after).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
