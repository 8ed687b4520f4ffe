"""Close a conversation's browser context when its session is deleted over the API.

The navigator browses in one context per session (see
:mod:`troupe.builtins.browser_session`); ADK's ``DELETE
/apps/{app}/users/{user}/sessions/{session}`` ends the session, and after it
succeeds this middleware closes that session's context. Contexts of sessions
that are never deleted close when they idle, and all of them at shutdown.
"""

from __future__ import annotations

from urllib.parse import unquote

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..builtins.browser_session import BrowserSession, shared_browser


def deleted_session(scope: Scope) -> tuple[str, str, str] | None:
    """(app, user, session) when ``scope`` is a request that deletes a session."""
    if scope["type"] != "http" or scope.get("method") != "DELETE":
        return None
    parts = [unquote(p) for p in str(scope.get("path", "")).strip("/").split("/")]
    if len(parts) == 6 and parts[0] == "apps" and parts[2] == "users" and parts[4] == "sessions":
        return (parts[1], parts[3], parts[5])
    return None


class CloseBrowserOnDelete:
    """Pure ASGI: after a successful session delete, close that session's browser context."""

    def __init__(self, app: ASGIApp, *, browser: BrowserSession | None = None) -> None:
        self.app = app
        self._browser = browser

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        session = deleted_session(scope)
        if session is None:
            await self.app(scope, receive, send)
            return
        status = 0

        async def remember_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        await self.app(scope, receive, remember_status)
        if 200 <= status < 300:
            browser = self._browser if self._browser is not None else shared_browser()
            await browser.close_scope(session)
