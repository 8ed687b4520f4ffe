"""Small plain-ASGI responses the middlewares send before the app is reached."""

from __future__ import annotations

import json
from typing import Any

from starlette.types import Send


async def send_body(
    send: Send,
    status: int,
    body: bytes,
    media_type: bytes = b"application/json",
    replayed: bool = False,
    retry_after: int | None = None,
) -> None:
    """Send a whole response: ``body`` with its media type, length and optional headers."""
    headers = [(b"content-type", media_type), (b"content-length", str(len(body)).encode())]
    if replayed:
        headers.append((b"idempotent-replayed", b"true"))
    if retry_after is not None:
        headers.append((b"retry-after", str(retry_after).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def json_response(
    send: Send, status: int, payload: Any, *, retry_after: int | None = None
) -> None:
    """Send ``payload`` as JSON with ``status`` (and ``Retry-After`` when given)."""
    await send_body(send, status, json.dumps(payload).encode(), retry_after=retry_after)
