"""Database trouble as HTTP answers a client can act on, never a 500.

A database that cannot give a connection now (PostgreSQL's "too many
clients", a pooler's limit, a restart, a pool that stayed empty for
``database_pool_timeout_s``) answers 503 with ``Retry-After``; a turn whose
replica lost its session's lease to another answers 409 "interrupted". The
middleware converts what reaches it before a response started; later (a
stream already sent) the error stays the stream's own.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..stores.budget import RETRY_AFTER_S, is_unavailable
from ..stores.lock_limits import LeaseLostError
from .responses import json_response


async def unavailable(send: Send, exc: BaseException) -> None:
    """503 with ``Retry-After``: the database could not serve this request now."""
    detail = " ".join(str(exc).split())[:300] or type(exc).__name__
    await json_response(
        send,
        503,
        {
            "detail": f"the session store's database cannot serve this request now ({detail}); "
            f"retry in {RETRY_AFTER_S} s",
            "retry_after_s": RETRY_AFTER_S,
        },
        retry_after=RETRY_AFTER_S,
    )


async def lease_lost(send: Send, exc: LeaseLostError) -> None:
    """409 "interrupted": another turn took this turn's session over."""
    await json_response(send, 409, {"detail": str(exc), "state": "interrupted"})


class StartTracker:
    """A ``send`` that remembers whether the response has started (then nothing else may)."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self.started = False

    async def __call__(self, message: Message) -> None:
        self.started = self.started or message["type"] == "http.response.start"
        await self.send(message)


async def answer_database_error(tracker: StartTracker, exc: BaseException) -> bool:
    """Answer ``exc`` (503 for an overloaded database, 409 for a lost lease) when the
    response has not started; False when the caller must re-raise it."""
    if tracker.started:
        return False
    if isinstance(exc, LeaseLostError):
        await lease_lost(tracker.send, exc)
        return True
    if is_unavailable(exc):
        await unavailable(tracker.send, exc)
        return True
    return False


class DatabaseErrors:
    """ASGI middleware: database overload as 503, a lost lease as 409."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        tracker = StartTracker(send)
        try:
            await self.app(scope, receive, tracker)
        except Exception as exc:
            if not await answer_database_error(tracker, exc):
                raise
