"""Refuse request bodies over a size limit with a 413, before they are read in full.

A declared ``Content-Length`` over the limit is answered at once, without
reading a byte of the body; a body sent without one (chunked) is counted as
it streams and refused the moment it passes the limit. Reading stays
asynchronous throughout, so a huge or slow upload never holds the event loop
that answers ``/healthz`` and other sessions' turns.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class _TooLarge(Exception):
    """The streamed body passed the limit."""


class BodyLimit:
    """ASGI middleware: bodies larger than ``max_bytes`` get a JSON 413."""

    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await self._refuse(send, f"declares {declared} bytes")
            return
        received = 0
        started = refused = False

        async def counting_receive() -> Message:
            nonlocal received, refused
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    # Answer here: FastAPI turns any error while reading a body
                    # into a 400, and whatever the app sends after is dropped.
                    if not started and not refused:
                        refused = True
                        await self._refuse(send, f"is over {self.max_bytes} bytes")
                    raise _TooLarge
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if refused:
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except _TooLarge:
            if not refused:
                raise

    async def _refuse(self, send: Send, what: str) -> None:
        body = json.dumps(
            {
                "detail": f"The request body {what}; this server accepts at most "
                f"{self.max_bytes} bytes (max_request_bytes in the config). Send a smaller "
                "body.",
                "max_request_bytes": self.max_bytes,
            }
        ).encode()
        headers: list[Any] = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else None
    return None
