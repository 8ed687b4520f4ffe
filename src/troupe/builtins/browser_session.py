"""One headless Chromium per process, driven by Playwright's async API.

troupe never downloads a browser: it drives the system Chromium (Debian's
``chromium`` package, or the binary named by ``TROUPE_CHROMIUM``). The
browser starts on the first navigator tool call and must be closed with
:meth:`BrowserSession.close` (or :func:`close_shared_browser`) before the
event loop that started it ends. Every conversation browses in a context of
its own, closed when the conversation ends or idles.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib.util
import logging
import os
import shutil
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from ..errors import TroupeError
from ..sandbox.browser import BrowserLaunch, confined_chromium
from ..sandbox.egress import EgressPolicy
from ..sandbox.egress_proxy import EgressProxy, Verdict

if TYPE_CHECKING:
    from google.adk.tools.tool_context import ToolContext
    from playwright.async_api import (
        Browser,
        BrowserContext,
        Page,
        Playwright,
        ProxySettings,
        Route,
        WebSocketRoute,
    )

logger = logging.getLogger("troupe.browser")

CHROMIUM_ENV = "TROUPE_CHROMIUM"
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/snap/bin/chromium")
# A closed network refuses Chromium's background connections (updates, sync,
# field trials, QUIC probes); without these flags it keeps retrying them.
LAUNCH_ARGS = (
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
NAVIGATION_TIMEOUT_S = 20.0
ACTION_TIMEOUT_S = 5.0
INSTALL_HINT = (
    "pip install playwright (a dependency of troupe), and the system Chromium "
    "(Debian/Ubuntu: apt-get install chromium)"
)


class BrowserUnavailableError(TroupeError):
    """No browser can be started: Playwright or Chromium is missing."""


def find_chromium(configured: str | None = None) -> str | None:
    """The Chromium binary to drive: ``configured`` (``TROUPE_CHROMIUM`` as the
    settings read it), else a known path, else PATH."""
    if configured:
        return configured if _is_executable(configured) else None
    for candidate in CHROMIUM_CANDIDATES:
        if _is_executable(candidate):
            return candidate
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _is_executable(path: str) -> bool:
    return Path(path).is_file() and os.access(path, os.X_OK)


def browser_unavailable_reason(configured: str | None = None) -> str | None:
    """Why the navigator's browser tools cannot run here, or None when they can.

    ``configured`` is the Chromium binary the settings name (``TROUPE_CHROMIUM``).
    """
    if importlib.util.find_spec("playwright") is None:
        return f"the Playwright package is not installed; install it with {INSTALL_HINT}"
    if configured and not _is_executable(configured):
        return (
            f"{CHROMIUM_ENV}={configured!r} is not an executable file; point it at the "
            "Chromium binary or unset it"
        )
    if find_chromium(configured) is None:
        return (
            "no Chromium binary was found (looked for "
            + ", ".join(CHROMIUM_CANDIDATES)
            + f" and chromium on PATH); install it ({INSTALL_HINT}) or set {CHROMIUM_ENV}"
        )
    return None


Scope = tuple[str, ...]
"""Whose pages: ``(app, user, session)`` for a conversation, ``()`` for direct calls."""
DEFAULT_SCOPE: Scope = ()
IDLE_CLOSE_S = 600.0
"""Seconds a conversation's browser context stays open after its last use."""


def scope_of(tool_context: ToolContext | None) -> Scope:
    """The conversation a tool call belongs to, from the context ADK passes to the tool."""
    if tool_context is None:
        return DEFAULT_SCOPE
    session = tool_context.session
    return (session.app_name, session.user_id, session.id)


@dataclass
class _Tab:
    """One conversation's browser context, its current page and when it was last used."""

    context: BrowserContext
    page: Page | None = None
    used: float = 0.0


class BrowserSession:
    """A lazily started headless Chromium with one context per conversation.

    Each scope (a session of one user of one app) gets its own browser
    context, so cookies, storage and the current page of one conversation are
    never seen by another. A context is closed with :meth:`close_scope` (when
    its session is deleted), after ``idle_s`` seconds without use, or with
    the browser by :meth:`close`.
    """

    def __init__(
        self,
        *,
        executable: str | None = None,
        navigation_timeout_s: float = NAVIGATION_TIMEOUT_S,
        action_timeout_s: float = ACTION_TIMEOUT_S,
        idle_s: float = IDLE_CLOSE_S,
        egress: EgressPolicy | None = None,
    ) -> None:
        self.executable = executable
        self.egress = egress or EgressPolicy()
        """Where pages may go; every request and redirect hop is checked against it."""
        self.stand_in: Callable[[str], str] | None = None
        """When set, every page is this function's HTML for its address and no
        request leaves the machine (``troupe eval --web stand-in``)."""
        self._refused: dict[Scope, list[str]] = {}
        self._approved: set[Scope] = set()
        self.navigation_timeout_s = navigation_timeout_s
        self.action_timeout_s = action_timeout_s
        self.idle_s = idle_s
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._proxy: EgressProxy | None = None
        self._launch: BrowserLaunch | None = None
        self._tabs: dict[Scope, _Tab] = {}
        self._busy: dict[Scope, int] = {}
        self._reaper: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock: asyncio.Lock | None = None

    @property
    def is_open(self) -> bool:
        """True while a browser process is running."""
        return self._browser is not None

    @property
    def scopes(self) -> list[Scope]:
        """The conversations that have a browser context open now."""
        return list(self._tabs)

    def current_page(self, scope: Scope = DEFAULT_SCOPE) -> Page | None:
        """The page the tools act on for ``scope``, or None before its first navigation."""
        try:
            same_loop = self._loop is asyncio.get_running_loop()
        except RuntimeError:
            same_loop = False
        tab = self._tabs.get(scope)
        if not same_loop or tab is None or tab.page is None or tab.page.is_closed():
            return None
        tab.used = asyncio.get_running_loop().time()
        return tab.page

    async def page(self, scope: Scope = DEFAULT_SCOPE) -> Page:
        """The current page of ``scope``, starting the browser and its context if needed.

        Raises:
            BrowserUnavailableError: when Playwright or Chromium is missing or
                the browser fails to start.
        """
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            # Playwright objects belong to the loop that made them; a new
            # loop (a new asyncio.run) needs a new browser.
            self._forget()
            self._loop = loop
            self._lock = asyncio.Lock()
        assert self._lock is not None
        async with self._lock:
            if self._browser is None:
                await self._start()
            tab = self._tabs.get(scope)
            if tab is None:
                tab = self._tabs[scope] = _Tab(await self._new_context(scope))
                self._watch_idle()
            tab.used = loop.time()
            live = [p for p in tab.context.pages if not p.is_closed()]
            if tab.page is None or tab.page.is_closed():
                tab.page = live[-1] if live else await tab.context.new_page()
            return tab.page

    def follow_new_tab(self, scope: Scope = DEFAULT_SCOPE) -> None:
        """Make the newest open tab of ``scope`` current (a link may open one)."""
        tab = self._tabs.get(scope)
        if tab is None:
            return
        live = [p for p in tab.context.pages if not p.is_closed()]
        if live:
            tab.page = live[-1]

    @contextlib.asynccontextmanager
    async def in_use(self, scope: Scope) -> AsyncIterator[None]:
        """Keep ``scope``'s context from idling out while a tool works in it.

        Its idle time starts again when the block ends.
        """
        self._busy[scope] = self._busy.get(scope, 0) + 1
        try:
            yield
        finally:
            left = self._busy.pop(scope) - 1
            if left:
                self._busy[scope] = left
            tab = self._tabs.get(scope)
            if tab is not None:
                tab.used = asyncio.get_running_loop().time()

    async def close_scope(self, scope: Scope) -> bool:
        """Close the browser context of ``scope``; False when it had none open."""
        tab = self._tabs.pop(scope, None)
        self._refused.pop(scope, None)
        self._approved.discard(scope)
        if tab is None:
            return False
        if self._loop is asyncio.get_running_loop():
            with contextlib.suppress(Exception):  # already gone with the browser
                await tab.context.close()
        return True

    async def _new_context(self, scope: Scope) -> BrowserContext:
        assert self._browser is not None
        # A service worker's requests would bypass the routing.
        context = await self._browser.new_context(service_workers="block")
        context.set_default_timeout(self.action_timeout_s * 1000)
        context.set_default_navigation_timeout(self.navigation_timeout_s * 1000)
        await context.route("**/*", functools.partial(self._guard, scope=scope))
        await context.route_web_socket("**/*", functools.partial(self._guard_socket, scope=scope))
        return context

    def _watch_idle(self) -> None:
        if self._reaper is None or self._reaper.done():
            self._reaper = asyncio.get_running_loop().create_task(self._close_idle())

    async def _close_idle(self) -> None:
        """Close each context ``idle_s`` after its last use, until none is left."""
        loop = asyncio.get_running_loop()
        while self._tabs:
            now = loop.time()
            idle = [
                scope
                for scope, tab in self._tabs.items()
                if scope not in self._busy and now - tab.used >= self.idle_s
            ]
            for scope in idle:
                await self.close_scope(scope)
            if self._tabs:
                oldest = min(tab.used for tab in self._tabs.values())
                await asyncio.sleep(max(oldest + self.idle_s - loop.time(), 0.05))

    async def _start(self) -> None:
        reason = browser_unavailable_reason(self.executable)
        if reason is not None:
            raise BrowserUnavailableError(f"The browser is unavailable: {reason}.")
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import async_playwright

        executable = find_chromium(self.executable)
        # Every connection goes through troupe's proxy, which resolves each name
        # once and connects to the address it checked (no DNS rebinding).
        self._proxy = EgressProxy(lambda: self.egress)
        proxy: ProxySettings = {"server": await self._proxy.start(), "bypass": "<-loopback>"}
        assert executable is not None  # browser_unavailable_reason found it
        try:
            # Never root, never a capability: in the jail, else as an unprivileged user.
            self._launch = launch = confined_chromium(executable)
        except RuntimeError as exc:
            raise BrowserUnavailableError(f"The browser is unavailable: {exc}.") from None
        self._playwright = await async_playwright().start()
        try:
            self._browser = await self._launch_with(launch, proxy)
        except PlaywrightError as exc:
            failure = exc
            if launch.own_sandbox:
                # Chromium's own sandbox needs user namespaces or its setuid helper;
                # without either it cannot start, and runs unprivileged without it.
                logger.warning(
                    "Chromium's own sandbox cannot start here; it runs without it, %s",
                    launch.describe().removeprefix("browser: Chromium runs "),
                )
                self._launch = launch = launch.without_own_sandbox()
                try:
                    self._browser = await self._launch_with(launch, proxy)
                    return
                except PlaywrightError as again:
                    failure = again
            await self._stop_driver()
            said = str(failure).strip()
            first_line = said.splitlines()[0] if said else repr(failure)
            raise BrowserUnavailableError(
                f"Chromium at {executable!r} failed to start: {first_line}. Check that it "
                f"runs (`{executable} --headless --version`) or set {CHROMIUM_ENV}."
            ) from None

    async def _launch_with(self, launch: BrowserLaunch, proxy: ProxySettings) -> Browser:
        assert self._playwright is not None
        return await self._playwright.chromium.launch(
            executable_path=launch.executable,
            headless=True,
            args=[*LAUNCH_ARGS, *launch.args],
            proxy=proxy,
            env=dict[str, str | float | bool](launch.env),
            chromium_sandbox=launch.own_sandbox,
        )

    def approve_network(self, scope: Scope, approved: bool) -> None:
        """Whether a person approved the navigation ``scope`` is about to make.

        Until then, and after a navigation nobody approved (one to a host in
        ``allow_hosts``), ``scope``'s pages may load only hosts that
        ``allow_hosts`` lists: under ``--approve deny`` no page reaches the
        network without a person's yes.
        """
        if approved:
            self._approved.add(scope)
        else:
            self._approved.discard(scope)

    def refusal(self, url: str, scope: Scope = DEFAULT_SCOPE) -> str | None:
        """Why a page of ``scope`` may not load ``url`` now, or None when it may."""
        if self.stand_in is not None:
            # Nothing is fetched: the address is checked, its name not looked up.
            return self.egress.refusal(url, resolve=False)
        if scope not in self._approved and self.egress.needs_approval(url):
            return (
                f"refused: {url!r} is on a host browser.allow_hosts does not list, and "
                "nobody approved going to the network in this conversation (under "
                "--approve deny nothing is loaded from the network without a person's yes)"
            )
        return self.egress.refusal(url)

    def take_refusals(self, scope: Scope = DEFAULT_SCOPE) -> list[str]:
        """The refusals in ``scope``'s pages since the last call (a tool reports them)."""
        return self._refused.pop(scope, [])

    async def _guard(self, route: Route, scope: Scope) -> None:
        """Let a request through only if the egress policy allows every hop.

        Playwright does not route the later hops of a redirect, so the request
        is fetched here without following redirects; a redirect goes back to
        the page only when its target is allowed, and the page's request for
        that target is routed through here again.
        """
        url = route.request.url
        reason = await asyncio.to_thread(self.refusal, url, scope)
        if reason is None and self.stand_in is not None:
            await route.fulfill(status=200, content_type="text/html", body=self.stand_in(url))
            return
        if reason is None:
            reason = await self._pass_on(route, url, scope)
            if reason is None:
                return
        self._refused.setdefault(scope, []).append(reason)
        await route.abort("blockedbyclient")

    async def _pass_on(self, route: Route, url: str, scope: Scope) -> str | None:
        """Fetch one hop of ``url`` for the page; None once answered, else why it is refused."""
        failure: Exception | None = None
        try:
            response = await route.fetch(max_redirects=0)
        except Exception as exc:
            failure = exc
        verdict = self._proxy_verdict(url)
        if verdict is not None and verdict.refusal is not None:
            return verdict.refusal
        if failure is not None or verdict is not None:
            code = verdict.network_error if verdict is not None else None
            await route.abort(code or _abort_code(failure or Exception()))
            return None
        location = response.headers.get("location")
        if 300 <= response.status < 400 and location:
            target = urljoin(url, location)
            if (reason := await asyncio.to_thread(self.refusal, target, scope)) is not None:
                return reason
        await route.fulfill(response=response)
        return None

    def _proxy_verdict(self, url: str) -> Verdict | None:
        """What troupe's proxy said about the connection for ``url``, if anything."""
        if self._proxy is None:
            return None
        try:
            parts = urlsplit(url)
            port = parts.port or (443 if parts.scheme in ("https", "wss") else 80)
        except ValueError:
            return None
        return self._proxy.take_verdict(parts.hostname or "", port)

    async def _guard_socket(self, socket_route: WebSocketRoute, scope: Scope) -> None:
        reason = await asyncio.to_thread(self.refusal, socket_route.url, scope)
        if reason is None and self.stand_in is not None:
            await socket_route.close()  # a stand-in page has no server to talk to
            return
        if reason is None:
            socket_route.connect_to_server()
            return
        self._refused.setdefault(scope, []).append(reason)
        await socket_route.close(code=1008, reason="refused by troupe's egress policy")

    async def close(self) -> None:
        """Close every context and the browser; safe to call twice."""
        reaper, self._reaper = self._reaper, None
        same_loop = self._loop is asyncio.get_running_loop()
        if reaper is not None and same_loop:
            reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reaper
        for scope in list(self._tabs):
            await self.close_scope(scope)
        browser, self._browser = self._browser, None
        if browser is not None and same_loop:
            # Already gone (crashed or killed): nothing left to close.
            with contextlib.suppress(Exception):
                await browser.close()
        await self._stop_driver()

    async def _stop_driver(self) -> None:
        launch, self._launch = self._launch, None
        if launch is not None:
            launch.close()
        proxy, self._proxy = self._proxy, None
        if proxy is not None and self._loop is asyncio.get_running_loop():
            await proxy.close()
        await self._stop_playwright()

    async def _stop_playwright(self) -> None:
        driver, self._playwright = self._playwright, None
        if driver is not None and self._loop is asyncio.get_running_loop():
            with contextlib.suppress(Exception):  # the driver already exited
                await driver.stop()

    def _forget(self) -> None:
        self._browser = self._playwright = self._reaper = self._proxy = None
        self._tabs.clear()


_FETCH_ERRORS = {
    "ECONNREFUSED": "connectionrefused",
    "ENOTFOUND": "namenotresolved",
    "EAI_AGAIN": "namenotresolved",
    "ETIMEDOUT": "timedout",
    "ECONNRESET": "connectionreset",
    "EHOSTUNREACH": "addressunreachable",
}


def _abort_code(exc: BaseException) -> str:
    """The network error the page sees when troupe's own fetch of a request failed."""
    text = str(exc)
    return next((code for key, code in _FETCH_ERRORS.items() if key in text), "failed")


_shared: BrowserSession | None = None


def shared_browser() -> BrowserSession:
    """The process-wide browser the built-in navigator tools use."""
    global _shared
    if _shared is None:
        _shared = BrowserSession()
    return _shared


async def close_shared_browser() -> None:
    """Close the process-wide browser if it was started."""
    if _shared is not None:
        await _shared.close()
