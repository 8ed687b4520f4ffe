"""A bearer token in front of every route except the health probes."""

from __future__ import annotations

import hmac
import json
from collections.abc import Iterable

from starlette.types import ASGIApp, Receive, Scope, Send

OPEN_PATHS = frozenset({"/healthz", "/readyz", "/health"})
"""Paths a load balancer probes without credentials."""


class BearerAuthMiddleware:
    """Refuse HTTP and WebSocket requests without ``Authorization: Bearer <token>``.

    Pure ASGI, so it also guards streamed responses and ``/run_live``; the
    comparison takes constant time.
    """

    def __init__(self, app: ASGIApp, *, token: str, open_paths: Iterable[str] = OPEN_PATHS):
        if not token:
            raise ValueError("BearerAuthMiddleware needs a non-empty token.")
        self.app = app
        self._expected = f"Bearer {token}".encode()
        self._open = frozenset(open_paths)

    def _authorized(self, scope: Scope) -> bool:
        for key, value in scope.get("headers") or []:
            if key == b"authorization":
                return hmac.compare_digest(value, self._expected)
        return False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket") or scope.get("path") in self._open:
            await self.app(scope, receive, send)
            return
        if self._authorized(scope):
            await self.app(scope, receive, send)
            return
        if kind == "websocket":
            # Closing before accepting makes the server answer the handshake with 403.
            await send({"type": "websocket.close", "code": 1008})
            return
        body = json.dumps(
            {"detail": "Missing or wrong bearer token: send 'Authorization: Bearer <token>'."}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b'Bearer realm="troupe"'),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
