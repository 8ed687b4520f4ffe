"""One headless Chromium per process, driven by Playwright's async API.

troupe never downloads a browser: it drives the system Chromium (Debian's
``chromium`` package, or the binary named by ``TROUPE_CHROMIUM``). The
browser starts on the first navigator tool call and must be closed with
:meth:`BrowserSession.close` (or :func:`close_shared_browser`) before the
event loop that started it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from ..errors import TroupeError
from ..sandbox.egress import EgressPolicy

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Page, Playwright, Route, WebSocketRoute

CHROMIUM_ENV = "TROUPE_CHROMIUM"
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/snap/bin/chromium")
# A closed network refuses Chromium's background connections (updates, sync,
# field trials, QUIC probes); without these flags it keeps retrying them.
LAUNCH_ARGS = (
    "--no-sandbox",
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


def find_chromium() -> str | None:
    """The Chromium binary to drive: ``TROUPE_CHROMIUM``, else a known path, else PATH."""
    configured = os.environ.get(CHROMIUM_ENV)
    if configured:
        return configured if _is_executable(configured) else None
    for candidate in CHROMIUM_CANDIDATES:
        if _is_executable(candidate):
            return candidate
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _is_executable(path: str) -> bool:
    return Path(path).is_file() and os.access(path, os.X_OK)


def browser_unavailable_reason() -> str | None:
    """Why the navigator's browser tools cannot run here, or None when they can."""
    if importlib.util.find_spec("playwright") is None:
        return f"the Playwright package is not installed; install it with {INSTALL_HINT}"
    configured = os.environ.get(CHROMIUM_ENV)
    if configured and not _is_executable(configured):
        return (
            f"{CHROMIUM_ENV}={configured!r} is not an executable file; point it at the "
            "Chromium binary or unset it"
        )
    if find_chromium() is None:
        return (
            "no Chromium binary was found (looked for "
            + ", ".join(CHROMIUM_CANDIDATES)
            + f" and chromium on PATH); install it ({INSTALL_HINT}) or set {CHROMIUM_ENV}"
        )
    return None


class BrowserSession:
    """A lazily started headless Chromium with one current page."""

    def __init__(
        self,
        *,
        executable: str | None = None,
        navigation_timeout_s: float = NAVIGATION_TIMEOUT_S,
        action_timeout_s: float = ACTION_TIMEOUT_S,
        egress: EgressPolicy | None = None,
    ) -> None:
        self.executable = executable
        self.egress = egress or EgressPolicy()
        """Where pages may go; every request and redirect hop is checked against it."""
        self.refused: list[str] = []
        """Why requests were refused since the last :meth:`take_refusals`."""
        self.navigation_timeout_s = navigation_timeout_s
        self.action_timeout_s = action_timeout_s
        self._playwright: Playwright | None = None
        self._context: BrowserContext | None = None
        self._page: Page | None = None
        self._profile: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock: asyncio.Lock | None = None

    @property
    def is_open(self) -> bool:
        """True while a browser process is running."""
        return self._context is not None

    @property
    def current_page(self) -> Page | None:
        """The page the tools act on, or None before the first navigation."""
        try:
            same_loop = self._loop is asyncio.get_running_loop()
        except RuntimeError:
            same_loop = False
        if not same_loop or self._page is None or self._page.is_closed():
            return None
        return self._page

    async def page(self) -> Page:
        """The current page, starting the browser first if needed.

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
            if self._context is None:
                await self._start()
            assert self._context is not None
            live = [p for p in self._context.pages if not p.is_closed()]
            if self._page is None or self._page.is_closed():
                self._page = live[-1] if live else await self._context.new_page()
            return self._page

    def follow_new_tab(self) -> None:
        """Make the newest open tab current (a link may open one)."""
        if self._context is None:
            return
        live = [p for p in self._context.pages if not p.is_closed()]
        if live:
            self._page = live[-1]

    async def _start(self) -> None:
        reason = browser_unavailable_reason()
        if reason is not None:
            raise BrowserUnavailableError(f"The browser is unavailable: {reason}.")
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import async_playwright

        executable = self.executable or find_chromium()
        self._profile = tempfile.mkdtemp(prefix="troupe-chromium-")
        self._playwright = await async_playwright().start()
        try:
            self._context = await self._playwright.chromium.launch_persistent_context(
                self._profile,
                executable_path=executable,
                headless=True,
                args=list(LAUNCH_ARGS),
                service_workers="block",  # a worker's requests would bypass the routing
            )
            await self._context.route("**/*", self._guard)
            await self._context.route_web_socket("**/*", self._guard_socket)
        except PlaywrightError as exc:
            await self._stop_driver()
            first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
            raise BrowserUnavailableError(
                f"Chromium at {executable!r} failed to start: {first_line}. Check that it "
                f"runs (`{executable} --headless --version`) or set {CHROMIUM_ENV}."
            ) from None
        self._context.set_default_timeout(self.action_timeout_s * 1000)
        self._context.set_default_navigation_timeout(self.navigation_timeout_s * 1000)

    def take_refusals(self) -> list[str]:
        """The refusals since the last call (a tool reports them to the model)."""
        out, self.refused = self.refused, []
        return out

    async def _guard(self, route: Route) -> None:
        """Let a request through only if the egress policy allows every hop.

        Playwright does not route the later hops of a redirect, so the request
        is fetched here without following redirects; a redirect goes back to
        the page only when its target is allowed, and the page's request for
        that target is routed through here again.
        """
        url = route.request.url
        reason = await asyncio.to_thread(self.egress.refusal, url)
        if reason is None:
            try:
                response = await route.fetch(max_redirects=0)
            except Exception as exc:
                await route.abort(_abort_code(exc))
                return
            location = response.headers.get("location")
            if 300 <= response.status < 400 and location:
                target = urljoin(url, location)
                reason = await asyncio.to_thread(self.egress.refusal, target)
            if reason is None:
                await route.fulfill(response=response)
                return
        self.refused.append(reason)
        await route.abort("blockedbyclient")

    async def _guard_socket(self, socket_route: WebSocketRoute) -> None:
        reason = await asyncio.to_thread(self.egress.refusal, socket_route.url)
        if reason is None:
            socket_route.connect_to_server()
            return
        self.refused.append(reason)
        await socket_route.close(code=1008, reason="refused by troupe's egress policy")

    async def close(self) -> None:
        """Close the browser and remove its profile; safe to call twice."""
        context, self._context, self._page = self._context, None, None
        if context is not None and self._loop is asyncio.get_running_loop():
            # Already gone (crashed or killed): nothing left to close.
            with contextlib.suppress(Exception):
                await context.close()
        await self._stop_driver()
        self._remove_profile()

    async def _stop_driver(self) -> None:
        driver, self._playwright = self._playwright, None
        if driver is not None and self._loop is asyncio.get_running_loop():
            with contextlib.suppress(Exception):  # the driver already exited
                await driver.stop()

    def _forget(self) -> None:
        self._context = self._page = self._playwright = None
        self._remove_profile()

    def _remove_profile(self) -> None:
        if self._profile is not None:
            shutil.rmtree(self._profile, ignore_errors=True)
            self._profile = None


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
