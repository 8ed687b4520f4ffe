"""One line per request on ``troupe serve``'s terminal: who, what, the status, how long.

``127.0.0.1 POST /run 200 812 ms``: written when the response ends, so a
streamed ``/run_sse`` turn is one line with its whole duration. The path is
shown with its control characters made visible; the query string is left
out (it may carry a token), and so are bodies.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..terminal_text import visible

REQUEST_LOGGER = "troupe.requests"


def request_logger() -> logging.Logger:
    """The logger the lines go to: its own handler on stderr, shown without --verbose."""
    log = logging.getLogger(REQUEST_LOGGER)
    log.setLevel(logging.INFO)
    log.propagate = False  # the root handler shows warnings only, and on one line its way
    if not any(getattr(h, "troupe_requests", False) for h in log.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
        handler.troupe_requests = True  # type: ignore[attr-defined]
        log.addHandler(handler)
    return log


class RequestLog:
    """ASGI middleware: one log line per HTTP request, when its response is done."""

    def __init__(self, app: ASGIApp, *, log: logging.Logger | None = None) -> None:
        self.app = app
        self.log = log or request_logger()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status: list[Any] = []

        async def noting_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, noting_send)
        finally:
            client = scope.get("client")
            who = client[0] if client else "-"
            took = (time.perf_counter() - started) * 1000
            code = status[0] if status else "(no response)"
            path = visible(scope.get("path", ""))
            self.log.info("%s %s %s %s %.0f ms", who, scope.get("method", "?"), path, code, took)
