"""A bearer token in front of every route except the health probes.

Programs send ``Authorization: Bearer <token>`` (the scheme in any case, as
RFC 9110 says). A browser cannot add that header to the dev UI's own requests,
so ``/login`` takes the token once in a form and answers with a cookie that
holds a keyed digest of it (never the token itself), ``HttpOnly`` and
``SameSite=Strict`` so that no other site's page can ride on it.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import json
from collections.abc import Iterable
from http.cookies import SimpleCookie
from urllib.parse import parse_qs, quote

from starlette.types import ASGIApp, Message, Receive, Scope, Send

OPEN_PATHS = frozenset({"/healthz", "/readyz", "/health"})
"""Paths a load balancer probes without credentials."""

LOGIN_PATH = "/login"
COOKIE_NAME = "troupe_session"
LANDING_PATH = "/dev-ui/"
"""Where a browser goes after logging in, unless it came from elsewhere."""

_MAX_FORM_BYTES = 16 * 1024
_COOKIE_CONTEXT = b"troupe dev UI cookie v1"


def cookie_value(token: str) -> str:
    """What the login cookie holds for ``token``: a keyed digest, not the token."""
    return hmac.new(token.encode(), _COOKIE_CONTEXT, hashlib.sha256).hexdigest()


def bearer_token(header: bytes) -> bytes | None:
    """The credentials of an ``Authorization`` header whose scheme is Bearer (any case)."""
    scheme, _, credentials = header.strip().partition(b" ")
    if scheme.lower() != b"bearer":
        return None
    return credentials.strip()


def _local_path(target: str) -> str:
    """``target`` when it is a path on this server, else the dev UI (no open redirect)."""
    if target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return LANDING_PATH


class BearerAuthMiddleware:
    """Refuse HTTP and WebSocket requests without the token (header or login cookie).

    Pure ASGI, so it also guards streamed responses and ``/run_live``; every
    comparison takes constant time.
    """

    def __init__(self, app: ASGIApp, *, token: str, open_paths: Iterable[str] = OPEN_PATHS):
        if not token:
            raise ValueError("BearerAuthMiddleware needs a non-empty token.")
        self.app = app
        self._token = token.encode()
        self._cookie = cookie_value(token).encode()
        self._open = frozenset(open_paths)

    def _authorized(self, scope: Scope) -> bool:
        for key, value in scope.get("headers") or []:
            if key == b"authorization":
                presented = bearer_token(value)
                return presented is not None and hmac.compare_digest(presented, self._token)
            if key == b"cookie" and self._cookie_matches(value):
                return True
        return False

    def _cookie_matches(self, header: bytes) -> bool:
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(header.decode("latin-1"))
        except Exception:  # a malformed Cookie header is simply not a login
            return False
        morsel = jar.get(COOKIE_NAME)
        return morsel is not None and hmac.compare_digest(morsel.value.encode(), self._cookie)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        path = scope.get("path")
        if kind not in ("http", "websocket") or path in self._open:
            await self.app(scope, receive, send)
            return
        if kind == "http" and path == LOGIN_PATH:
            await self._login(scope, receive, send)
            return
        if self._authorized(scope):
            await self.app(scope, receive, send)
            return
        if kind == "websocket":
            # Closing before accepting makes the server answer the handshake with 403.
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope.get("method") == "GET" and _wants_html(scope):
            back = quote(_local_path(str(path)), safe="/")
            await _respond(send, 303, b"", [(b"location", f"{LOGIN_PATH}?next={back}".encode())])
            return
        body = json.dumps(
            {
                "detail": "Missing or wrong bearer token: send 'Authorization: Bearer <token>' "
                f"(or log in at {LOGIN_PATH} from a browser)."
            }
        ).encode()
        await _respond(
            send,
            401,
            body,
            [
                (b"content-type", b"application/json"),
                (b"www-authenticate", b'Bearer realm="troupe"'),
            ],
        )

    async def _login(self, scope: Scope, receive: Receive, send: Send) -> None:
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        target = _local_path(query.get("next", [LANDING_PATH])[0])
        if scope.get("method") != "POST":
            await _respond(send, 200, _login_page(target, failed=False), _HTML)
            return
        form = await _read_form(receive)
        if form is None:
            await _respond(send, 413, b"login form too large", [(b"content-type", b"text/plain")])
            return
        presented = form.get("token", [""])[0].encode()
        target = _local_path(form.get("next", [target])[0])
        if not hmac.compare_digest(presented, self._token):
            await _respond(send, 401, _login_page(target, failed=True), _HTML)
            return
        cookie = (
            f"{COOKIE_NAME}={self._cookie.decode()}; Path=/; HttpOnly; SameSite=Strict"
        ).encode()
        await _respond(send, 303, b"", [(b"location", target.encode()), (b"set-cookie", cookie)])


_HTML = [(b"content-type", b"text/html; charset=utf-8")]


def _wants_html(scope: Scope) -> bool:
    for key, value in scope.get("headers") or []:
        if key == b"accept":
            return b"text/html" in value
    return False


async def _read_form(receive: Receive) -> dict[str, list[str]] | None:
    """The url-encoded form in the request body, or None when it is too large."""
    body = b""
    while True:
        message: Message = await receive()
        body += message.get("body", b"")
        if len(body) > _MAX_FORM_BYTES:
            return None
        if not message.get("more_body", False):
            return parse_qs(body.decode("utf-8", "replace"))


async def _respond(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*headers, (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _login_page(target: str, *, failed: bool) -> bytes:
    note = "<p role='alert'>That token is not the one this server expects.</p>" if failed else ""
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>troupe: log in</title></head>"
        "<body><h1>troupe</h1><p>This server needs its token (<code>auth_token</code>).</p>"
        f"{note}<form method='post' action='{LOGIN_PATH}'>"
        f"<input type='hidden' name='next' value='{html.escape(target, quote=True)}'>"
        "<label>Token <input type='password' name='token' autofocus required></label> "
        "<button type='submit'>Log in</button></form></body></html>"
    ).encode()
