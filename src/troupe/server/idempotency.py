"""Keyed requests: every request that can run a tool, retried, never runs it twice.

Three kinds of request are keyed:

* ``POST /run`` and ``/run_sse`` with an ``Idempotency-Key`` header (1-200
  characters, scoped to the session);
* an approval answer: a ``/run`` or ``/run_sse`` whose message answers ADK's
  ``adk_request_confirmation`` is keyed by the confirmation's call id, with
  or without a header, so answering one approval twice runs its tool once;
* A2A ``message/send`` and ``message/stream`` (``SendMessage``,
  ``SendStreamingMessage``), keyed by their ``messageId``. A message without a
  ``contextId`` gets one derived from its ``messageId``, so a retry of it
  lands in the same conversation.

For each, the middleware takes the session's turn lock (the lock the runner
takes, so the turn runs inside it), then looks the key up in
:class:`~troupe.stores.turn_records.TurnRecords`:

* no record: the key is claimed ``running``, the turn runs, and its response
  is stored ``done``. A turn that fails (an error, a 503, a dropped client)
  before anything of it was stored or run leaves no record, so a retry runs
  it; one that fails later is closed (its dangling calls answered as
  interrupted, a note where its answer would be) and marked ``interrupted``;
* ``done``: the stored response is sent again, with ``Idempotent-Replayed: true``
  (an A2A reply carries the retry's JSON-RPC id);
* ``running``: found under the lock, its process died or stalled past its
  lease, so the turn is closed and the client gets 409 "interrupted", as for
  ``interrupted``. The approvals of that turn are closed with it: the one a
  cut-off approval answer answered (it is never run again) and those a turn
  asked for before its key was marked done, so the session never offers an
  approval its client was told is interrupted. (A client that saw the question
  and answers it before retrying gets it run once.)

Any keyed turn first closes the session's other turns still recorded
``running`` the same way, so a turn cut off by a crash is closed on the next
keyed turn of its session even when the client never retries it.

The response is passed on as it comes (``/run_sse`` keeps streaming) and
kept; a replay sends it whole. Because the session's lock is taken before the
response starts, a busy session gets a plain 409 with ``Retry-After`` on
``/run_sse`` too, and a database that cannot give a connection a 503 with
``Retry-After``. Requests with no key pass through untouched.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
import uuid
from dataclasses import dataclass
from typing import Any

from google.adk.sessions.base_session_service import BaseSessionService
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .._adk_compat import a2a_user_id
from ..stores.lock_limits import LeaseLostError, SessionBusyError
from ..stores.session_lock import CONFIRMATION, held_lease, session_turns, turn_journal
from ..stores.turn_records import (
    DONE,
    INTERRUPTED,
    RUNNING,
    TurnRecords,
    close_turn,
    interrupted_reply,
    session_scope,
    turn_key,
)
from .database_errors import StartTracker, answer_database_error
from .responses import json_response, send_body

logger = logging.getLogger("troupe.server")

HEADER = b"idempotency-key"
MEDIA_TYPES = {"/run": b"application/json", "/run_sse": b"text/event-stream"}
"""The keyed ADK paths, and the media type of their responses."""
A2A_PATHS = ("/a2a", "/a2a/")
A2A_SEND_METHODS = frozenset(
    {"message/send", "message/stream", "SendMessage", "SendStreamingMessage"}
)
"""The A2A methods that run a turn (0.3 and 1.0 names)."""
MAX_KEY_CHARS = 200
FAILED_REASON = "it failed after it had started"
_CONTEXT_NAMESPACE = uuid.UUID("0b5f3c1e-8f5e-4a47-9d2c-7b1a2d4e6f80")


@dataclass(frozen=True)
class KeyedTurn:
    """A request to run under a key: its session and what names it."""

    app_name: str
    user_id: str
    session_id: str
    key: str
    approvals: tuple[str, ...] = ()
    """The confirmation call ids the request answers."""
    rpc_id: Any = None
    """The JSON-RPC id of an A2A request (its replay carries it)."""

    @property
    def row(self) -> str:
        return turn_key(self.app_name, self.user_id, self.session_id, self.key)

    @property
    def scope(self) -> str:
        return session_scope(self.app_name, self.user_id, self.session_id)


class IdempotentRuns:
    """ASGI middleware giving ``/run``, ``/run_sse`` and A2A sends durable, keyed turns."""

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
        path = scope.get("path")
        if scope.get("type") != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        if path in MEDIA_TYPES:
            await self._run(scope, receive, send)
        elif path in A2A_PATHS:
            await self._a2a(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _run(self, scope: Scope, receive: Receive, send: Send) -> None:
        header = _header(scope)
        if header is not None and not 0 < len(header) <= MAX_KEY_CHARS:
            detail = f"Idempotency-Key must be 1-{MAX_KEY_CHARS} characters"
            await json_response(send, 400, {"detail": detail})
            return
        body = await _read_body(receive)
        turn = _run_turn(body, header, self.default_app)
        if turn is None:  # no key, or a body ADK will refuse and explain
            await self.app(scope, _replay(body, receive), send)
            return
        await self._keyed(turn, scope, _replay(body, receive), send)

    async def _a2a(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await _read_body(receive)
        keyed = _a2a_turn(body, self.default_app)
        if keyed is None:
            await self.app(scope, _replay(body, receive), send)
            return
        turn, body = keyed
        await self._keyed(turn, scope, _replay(body, receive), send)

    async def _keyed(self, turn: KeyedTurn, scope: Scope, receive: Receive, send: Send) -> None:
        tracker = StartTracker(send)
        try:
            async with session_turns(self.service).hold(
                turn.app_name, turn.user_id, turn.session_id, answering=turn.approvals
            ):
                await self._under_lock(turn, scope, receive, tracker)
        except SessionBusyError as exc:
            if tracker.started:
                raise
            await json_response(
                send,
                409,
                {"detail": str(exc), "retry_after_s": exc.retry_after_s},
                retry_after=exc.retry_after_s,
            )
        except Exception as exc:
            if not await answer_database_error(tracker, exc):
                raise

    async def _under_lock(
        self, turn: KeyedTurn, scope: Scope, receive: Receive, send: Send
    ) -> None:
        lease = held_lease((turn.app_name, turn.user_id, turn.session_id))
        fence = f"{lease.holder}:{lease.token}" if lease is not None else "local"
        await self._close_interrupted(turn)
        record = await self.records.get(turn.row)
        if record is not None and record.state == DONE and record.response is not None:
            media_type, payload = _unpack(record.response)
            await send_body(send, 200, _with_rpc_id(payload, turn.rpc_id), media_type, True)
            return
        if record is not None and record.state in (RUNNING, INTERRUPTED):
            # The client is told its turn was interrupted, so the session must not show
            # an approval of that turn as still waiting: neither the one this request
            # answers (cut off before its answer was stored) nor one the turn asked for.
            closed = await close_turn(
                self.service,
                *_session(turn),
                reason=FAILED_REASON,
                settle=turn.approvals,
                settle_turn_since=record.claimed_at,
            )
            await self.records.interrupt(turn.row)
            await send_body(send, 409, interrupted_reply(closed).encode())
            return
        if turn.approvals and await self._answered(turn):
            detail = (
                "this approval was answered already; its tool is not run again. "
                "Send a new message to continue."
            )
            await json_response(send, 409, {"detail": detail, "state": "answered"})
            return
        claimed_at = time.time()
        if not await self.records.claim(turn.row, turn.scope, fence):
            await json_response(send, 409, {"detail": "this key's turn is running"}, retry_after=1)
            return
        with turn_journal() as journal:
            try:
                status, media_type, payload = await _pass_on(self.app, scope, receive, send)
            except LeaseLostError:
                raise  # the session is another's now: its holder closes this turn
            except BaseException:
                await self._failed(turn, fence, journal.stored + journal.tools, claimed_at)
                raise
        if status == 200:
            text = _pack(media_type, payload)
            await self.records.finish(turn.row, fence, DONE, text)
        else:
            await self._failed(turn, fence, journal.stored + journal.tools, claimed_at)

    async def _failed(self, turn: KeyedTurn, fence: str, done: int, claimed_at: float) -> None:
        """A keyed turn ended without an answer: forget it if nothing of it happened,
        else close it as interrupted. If even that fails, the record stays ``running``
        and the session's next holder closes the turn."""
        try:
            if done == 0:
                await self.records.forget(turn.row, fence)
                return
            await close_turn(
                self.service,
                *_session(turn),
                reason=FAILED_REASON,
                settle=turn.approvals,
                settle_turn_since=claimed_at,
            )
            await self.records.finish(turn.row, fence, INTERRUPTED)
        except Exception as exc:
            logger.warning("Could not close the failed turn of key %r: %s", turn.key, exc)

    async def _close_interrupted(self, turn: KeyedTurn) -> None:
        """Close the session's other turns still recorded running: their process died.
        The approvals such a turn asked for are closed with it, but for those this
        request answers (its client saw the question before the process died).

        Called with the session's lock held, so no live process runs them.
        """
        since = await self.records.interrupt_running(turn.scope, keep=turn.row)
        if since is not None:
            await close_turn(
                self.service,
                *_session(turn),
                reason=FAILED_REASON,
                settle_turn_since=since,
                keep_waiting=turn.approvals,
            )

    async def _answered(self, turn: KeyedTurn) -> bool:
        """True when the session already holds an answer to one of the turn's approvals."""
        session = await self.service.get_session(
            app_name=turn.app_name, user_id=turn.user_id, session_id=turn.session_id
        )
        if session is None:
            return False
        answered = {r.id for e in session.events for r in e.get_function_responses()}
        return any(call_id in answered for call_id in turn.approvals)


def _session(turn: KeyedTurn) -> tuple[str, str, str]:
    return turn.app_name, turn.user_id, turn.session_id


def _run_turn(body: bytes, header: str | None, default_app: str) -> KeyedTurn | None:
    """The keyed turn a ``/run`` body asks for, or None (no key, or not a valid request)."""
    try:
        request = json.loads(body)
        app_name = str(request.get("app_name") or default_app)
        user_id, session_id = str(request["user_id"]), str(request["session_id"])
        approvals = _approvals(request.get("new_message"))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if approvals:
        # One approval runs its tool once, whatever key (or none) each answer carries.
        key = "approval:" + ",".join(approvals)
    elif header is not None:
        key = "key:" + header
    else:
        return None
    return KeyedTurn(app_name, user_id, session_id, key, approvals)


def _approvals(message: Any) -> tuple[str, ...]:
    """The confirmation call ids a ``/run`` message answers, sorted."""
    if not isinstance(message, dict):
        return ()
    ids = set()
    for part in message.get("parts") or ():
        response = part.get("functionResponse") or part.get("function_response") or {}
        if response.get("name") == CONFIRMATION and response.get("id"):
            ids.add(str(response["id"]))
    return tuple(sorted(ids))


def _a2a_turn(body: bytes, app_name: str) -> tuple[KeyedTurn, bytes] | None:
    """The keyed turn of an A2A send, and its body (with a context id derived from the
    message id when it had none); None for other requests and malformed ones."""
    try:
        request = json.loads(body)
        if request.get("method") not in A2A_SEND_METHODS:
            return None
        message = request["params"]["message"]
        message_id = str(message.get("messageId") or message.get("message_id") or "")
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if not message_id or len(message_id) > MAX_KEY_CHARS:
        return None
    context_id = message.get("contextId") or message.get("context_id")
    if not context_id:
        context_id = str(uuid.uuid5(_CONTEXT_NAMESPACE, message_id))
        message["contextId"] = context_id
        body = json.dumps(request).encode()
    context_id = str(context_id)
    turn = KeyedTurn(
        app_name,
        a2a_user_id(context_id),
        context_id,
        "a2a:" + message_id,
        rpc_id=request.get("id"),
    )
    return turn, body


def _pack(media_type: bytes, payload: bytes) -> str:
    return json.dumps(
        {"media_type": media_type.decode("latin-1"), "body": payload.decode("utf-8", "replace")}
    )


def _unpack(stored: str) -> tuple[bytes, bytes]:
    kept = json.loads(stored)
    return kept["media_type"].encode("latin-1"), kept["body"].encode("utf-8")


def _with_rpc_id(payload: bytes, rpc_id: Any) -> bytes:
    """An A2A reply as the retry's reply: its JSON-RPC id (in each event of a stream)."""
    if rpc_id is None:
        return payload

    def rewrite(text: str) -> str:
        with contextlib.suppress(ValueError, TypeError, AttributeError):
            reply = json.loads(text)
            if isinstance(reply, dict) and "jsonrpc" in reply:
                reply["id"] = rpc_id
                return json.dumps(reply)
        return text

    text = payload.decode("utf-8", "replace")
    if text.lstrip().startswith("{"):
        return rewrite(text).encode()
    lines = [
        "data: " + rewrite(line[6:]) if line.startswith("data: ") else line
        for line in text.split("\n")
    ]
    return "\n".join(lines).encode()


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


async def _pass_on(
    app: ASGIApp, scope: Scope, receive: Receive, send: Send
) -> tuple[int, bytes, bytes]:
    """Run ``app``, sending its response on as it comes; return its status, media type
    and body."""
    status = 500
    media_type = b"application/json"
    chunks: list[bytes] = []

    async def keep(message: Message) -> None:
        nonlocal status, media_type
        if message["type"] == "http.response.start":
            status = int(message["status"])
            for name, value in message.get("headers") or ():
                if name.lower() == b"content-type":
                    media_type = value.split(b";")[0].strip()
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
        await send(message)

    await app(scope, receive, keep)
    return status, media_type, b"".join(chunks)
