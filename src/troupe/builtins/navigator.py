"""Navigator tools: open, read, click, type into and photograph web pages.

They drive a real headless Chromium (see :mod:`.browser_session`). Every
tool returns a dict; failures come back as ``{"error", "accepted"}`` instead of
raising. ``browser_type`` accepts ``{{secret:NAME}}`` references, replaced at
call time through a secret lookup, and the plaintext is scrubbed from
everything the tools return afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from google.adk.tools.tool_context import ToolContext

from ..sandbox.egress import EgressPolicy
from ..stores.vault import SECRET_REF, reference
from ._toolset import Toolset, ToolSpec, tool_list_factory
from .browser_session import (
    BrowserSession,
    BrowserUnavailableError,
    Scope,
    scope_of,
    shared_browser,
)
from .workspace import PathOutsideWorkspace, Workspace, tool_error

if TYPE_CHECKING:
    from playwright.async_api import Locator, Page

SecretLookup = Callable[[str], str | None]
"""Returns the plaintext of the named secret; None or an exception when it is unknown.
The built-ins pass the vault's ``SecretStore.get``."""

ToolFunction = Callable[..., Awaitable[dict[str, Any]]]

ALLOWED_SCHEMES = ("http", "https")
MAX_TEXT_CHARS = 20_000
MAX_LINKS = 200
EXCERPT_CHARS = 1_500

_LINKS_JS = """() => Array.from(document.querySelectorAll('a[href]')).map(a => ({
  text: (a.innerText || a.getAttribute('aria-label') || a.title || '').replace(/\\s+/g, ' ').trim(),
  url: a.href,
}))"""


def _page_text(raw: str) -> str:
    lines = [" ".join(line.split()) for line in raw.splitlines()]
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _check_url(url: object) -> dict[str, Any] | None:
    accepted = "an http:// or https:// URL such as https://example.com/"
    if not isinstance(url, str) or not url.strip():
        return tool_error("the URL is empty", accepted)
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ALLOWED_SCHEMES:
        scheme = f"scheme {parts.scheme!r}" if parts.scheme else "no scheme"
        return tool_error(f"URL {url!r} has {scheme}; only http and https are opened", accepted)
    if not parts.netloc:
        return tool_error(f"URL {url!r} has no host", accepted)
    return None


def _approved(tool_context: ToolContext | None) -> bool:
    """True when a person approved this call; a direct call from Python code counts as one."""
    if tool_context is None:
        return True
    confirmation = tool_context.tool_confirmation
    return confirmation is not None and confirmation.confirmed


def _short_error(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


async def _first_match(candidates: list[Locator]) -> Locator | None:
    for locator in candidates:
        try:
            if await locator.count() > 0:
                return locator.first
        except Exception:  # an invalid selector for this strategy; try the next one
            continue
    return None


def _in_browser_session(fn: ToolFunction) -> ToolFunction:
    """Run a navigator tool in the browser context of the session that called it,
    which does not idle out while the tool works."""

    @functools.wraps(fn)
    async def in_session(self: NavigatorTools, *args: Any, **kwargs: Any) -> dict[str, Any]:
        async with self.session.in_use(scope_of(kwargs.get("tool_context"))):
            return await fn(self, *args, **kwargs)

    return in_session


class NavigatorTools(Toolset):
    """browser_navigate, browser_extract, browser_click, browser_type and browser_screenshot.

    ``browser`` defaults to the process-wide :func:`shared_browser`;
    ``secret_lookup`` resolves ``{{secret:NAME}}`` in ``browser_type`` (without
    one, a secret reference is refused with an error). Pages may not reach
    loopback, private or link-local addresses unless ``allow_hosts`` (the
    config's ``browser.allow_hosts``) lists the host; see :class:`EgressPolicy`.
    """

    specs = (
        ToolSpec("browser_navigate", dangerous="goes_to_network", effect="navigation_effect"),
        ToolSpec("browser_extract"),
        ToolSpec("browser_click"),
        ToolSpec("browser_type", dangerous=True, effect="typing_effect"),
        ToolSpec("browser_screenshot", dangerous="screenshot_overwrites"),
    )

    def __init__(
        self,
        workspace: Workspace,
        *,
        browser: BrowserSession | None = None,
        secret_lookup: SecretLookup | None = None,
        max_text_chars: int = MAX_TEXT_CHARS,
        max_links: int = MAX_LINKS,
        allow_hosts: Sequence[str] | None = None,
        chromium: str | None = None,
    ) -> None:
        self.workspace = workspace
        self.session = browser if browser is not None else shared_browser()
        if chromium is not None:
            self.session.executable = chromium
        if allow_hosts is not None:
            self.session.egress = EgressPolicy.allowing(allow_hosts)
        self.secret_lookup = secret_lookup
        self.max_text_chars = max_text_chars
        self.max_links = max_links
        self.revealed: dict[str, str] = {}  # plaintext -> reference, to scrub from outputs

    def scrub(self, value: Any) -> Any:
        if isinstance(value, str):
            for plain, ref in self.revealed.items():
                value = value.replace(plain, ref)
            return value
        if isinstance(value, dict):
            return {k: self.scrub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.scrub(v) for v in value]
        return value

    def open_page(self, scope: Scope) -> Page | dict[str, Any]:
        page = self.session.current_page(scope)
        if page is None:
            return tool_error("no page is open yet", "call browser_navigate with a URL first")
        return page

    async def summary(self, page: Page, *, excerpt: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"url": page.url, "title": await page.title()}
        if excerpt:
            text = _page_text(await page.inner_text("body"))
            out["text"] = text[:EXCERPT_CHARS]
            out["truncated"] = len(text) > EXCERPT_CHARS
        return out

    async def settle(self, page: Page) -> None:
        with contextlib.suppress(Exception):  # a slow page: report what has loaded so far
            await page.wait_for_load_state("load")

    @_in_browser_session
    async def browser_navigate(
        self, url: str, tool_context: ToolContext | None = None
    ) -> dict[str, Any]:
        """Open a web page (http or https URL) and return its title and the start of its text."""
        if problem := _check_url(url):
            return problem
        scope = scope_of(tool_context)
        # Reached only when approved, or when allow_hosts lists the host (then
        # the page may load nothing but listed hosts).
        self.session.approve_network(scope, _approved(tool_context))
        if refusal := await asyncio.to_thread(self.session.refusal, url.strip(), scope):
            return tool_error(refusal, "a public http(s) URL, or a host in browser.allow_hosts")
        try:
            page = await self.session.page(scope)
        except BrowserUnavailableError as exc:
            return tool_error(str(exc), "a machine with Playwright and Chromium")
        self.session.take_refusals(scope_of(tool_context))
        try:
            response = await page.goto(url.strip(), wait_until="load")
        except Exception as exc:
            if blocked := self.session.take_refusals(scope_of(tool_context)):
                return tool_error(blocked[0], "a public http(s) URL", url=url)
            return tool_error(
                f"could not open {url!r}: {_short_error(exc)}", "a reachable http(s) URL", url=url
            )
        out = await self.summary(page)
        if blocked := self.session.take_refusals(scope_of(tool_context)):
            out["blocked_requests"] = blocked[:10]
        status = response.status if response is not None else None
        out["status"] = status
        if status is not None and status >= 400:
            out["error"] = f"the server answered HTTP {status} for {url!r}"
            out["accepted"] = "a URL the server can serve"
        return self.scrub(out)

    @_in_browser_session
    async def browser_extract(self, tool_context: ToolContext | None = None) -> dict[str, Any]:
        """Return the readable text and the links of the page that is open now."""
        page = self.open_page(scope_of(tool_context))
        if isinstance(page, dict):
            return page
        text = _page_text(await page.inner_text("body"))
        links: list[dict[str, str]] = []
        seen: set[tuple[str, str]] = set()
        for link in await page.evaluate(_LINKS_JS):
            key = (link["text"], link["url"])
            if link["url"].startswith("javascript:") or key in seen:
                continue
            seen.add(key)
            links.append({"text": link["text"], "url": link["url"]})
        out = {
            "url": page.url,
            "title": await page.title(),
            "text": text[: self.max_text_chars],
            "links": links[: self.max_links],
            "truncated": len(text) > self.max_text_chars or len(links) > self.max_links,
        }
        return self.scrub(out)

    @_in_browser_session
    async def browser_click(
        self, target: str, tool_context: ToolContext | None = None
    ) -> dict[str, Any]:
        """Click a link or button on the open page, named by its visible text or a CSS selector."""
        if not isinstance(target, str) or not target.strip():
            return tool_error(
                "the click target is empty", "a link or button text, or a CSS selector"
            )
        page = self.open_page(scope_of(tool_context))
        if isinstance(page, dict):
            return page
        name = target.strip()
        locator = await _first_match(
            [
                page.locator(name),
                page.get_by_role("link", name=name),
                page.get_by_role("button", name=name),
                page.get_by_text(name),
            ]
        )
        if locator is None:
            return tool_error(
                f"nothing on {page.url!r} matches {name!r}",
                "the visible text of a link or button on the page, or a CSS selector",
            )
        tabs_before = len(page.context.pages)
        self.session.take_refusals(scope_of(tool_context))
        try:
            await locator.click()
        except Exception as exc:
            return tool_error(f"could not click {name!r}: {_short_error(exc)}", "a visible element")
        if len(page.context.pages) > tabs_before:
            self.session.follow_new_tab(scope_of(tool_context))
            page = self.session.current_page(scope_of(tool_context)) or page
        await self.settle(page)
        out = {"clicked": name, **await self.summary(page)}
        if blocked := self.session.take_refusals(scope_of(tool_context)):
            out["blocked_requests"] = blocked[:10]
        return self.scrub(out)

    @_in_browser_session
    async def browser_type(
        self,
        selector: str,
        text: str,
        submit: bool = False,
        tool_context: ToolContext | None = None,
    ) -> dict[str, Any]:
        """Type text into a form field (CSS selector, label or placeholder); submit presses Enter.

        Write {{secret:NAME}} to type a stored secret without ever seeing it.
        """
        if not isinstance(selector, str) or not selector.strip():
            return tool_error("the field is empty", "a CSS selector, label or placeholder")
        if not isinstance(text, str):
            return tool_error("text must be a string", "the text to type")
        plain, problem = self.secrets_in(text)
        if problem is not None:
            return problem
        value = SECRET_REF.sub(lambda m: plain[m.group(1)], text) if plain else text
        page = self.open_page(scope_of(tool_context))
        if isinstance(page, dict):
            return page
        name = selector.strip()
        locator = await _first_match(
            [
                page.locator(name),
                page.get_by_label(name),
                page.get_by_placeholder(name),
                page.get_by_role("textbox", name=name),
            ]
        )
        if locator is None:
            return tool_error(
                f"no form field on {page.url!r} matches {name!r}",
                "a CSS selector, label or placeholder of an input on the page",
            )
        try:
            await locator.fill(value)
            if submit:
                await locator.press("Enter")
        except Exception as exc:
            return self.scrub(
                tool_error(f"could not type into {name!r}: {_short_error(exc)}", "a text field")
            )
        out: dict[str, Any] = {"typed_into": name, "submitted": submit}
        if plain:
            out["secrets_used"] = list(plain)  # names only: not even a value's length
        else:
            out["characters"] = len(value)
        if submit:
            await self.settle(page)
            out.update(await self.summary(page))
        else:
            out["url"] = page.url
        return self.scrub(out)

    @_in_browser_session
    async def browser_screenshot(
        self,
        path: str = "screenshot.png",
        full_page: bool = False,
        tool_context: ToolContext | None = None,
    ) -> dict[str, Any]:
        """Save a PNG screenshot of the open page to a path inside the workspace."""
        try:
            target = self.workspace.resolve(path)
        except PathOutsideWorkspace as exc:
            return tool_error(f"refused: {exc}", "a .png path inside the workspace")
        if target.suffix.lower() != ".png":
            return tool_error(f"{path!r} does not end in .png", "a .png path inside the workspace")
        if target.is_dir():
            return tool_error(f"{path!r} is a directory", "a .png file path")
        page = self.open_page(scope_of(tool_context))
        if isinstance(page, dict):
            return page
        try:
            png = await page.screenshot(full_page=bool(full_page))
        except Exception as exc:
            return tool_error(f"the screenshot failed: {_short_error(exc)}", "an open page")
        try:
            self.workspace.write_bytes(target, png)
        except (OSError, PathOutsideWorkspace) as exc:
            return tool_error(
                f"the screenshot was not saved: {exc}", "a .png path inside the workspace"
            )
        return {
            "path": self.workspace.relative(target),
            "bytes": len(png),
            "url": self.scrub(page.url),
        }

    def secrets_in(self, text: str) -> tuple[dict[str, str], dict[str, Any] | None]:
        """The plaintext of each ``{{secret:NAME}}`` in ``text`` by name (remembered, to be
        scrubbed from every later output), and the tool error when one cannot be read."""
        names = list(dict.fromkeys(SECRET_REF.findall(text)))
        if names and self.secret_lookup is None:
            return {}, tool_error(
                "secret references need the vault, which is not configured",
                "plain text, or store the secret with secrets_set first",
            )
        plain: dict[str, str] = {}
        for ref in names:
            try:
                found = self.secret_lookup(ref) if self.secret_lookup is not None else None
            except Exception as exc:
                return {}, tool_error(f"cannot read secret {ref!r}: {exc}", "a stored secret")
            if found is None:
                return {}, tool_error(f"no secret named {ref!r}", "the name of a stored secret")
            plain[ref] = found
            if found:
                self.revealed[found] = reference(ref)
        return plain, None

    def goes_to_network(self, url: Any = "", **_: Any) -> bool:
        """A navigation asks first unless browser.allow_hosts lists its host."""
        return not isinstance(url, str) or self.session.egress.needs_approval(url.strip())

    def navigation_effect(self, url: Any = "", **_: Any) -> dict[str, Any]:
        """What an approved browser_navigate does: load this URL from the network."""
        text = str(url).strip()
        try:
            host = urlsplit(text).netloc
        except ValueError:
            host = ""
        return {
            "summary": f"open {text} (loads it and what the page asks for from the network)",
            "url": text,
            "host": host,
        }

    def screenshot_overwrites(self, path: Any = "screenshot.png", **_: Any) -> bool:
        """A screenshot asks first when it would replace an existing file."""
        try:
            return self.workspace.resolve(path).exists()
        except PathOutsideWorkspace:
            return False  # refused by the tool itself

    def typing_effect(
        self,
        selector: Any = "",
        text: Any = "",
        submit: Any = False,
        tool_context: ToolContext | None = None,
        **_: Any,
    ) -> dict[str, Any]:
        """What an approved browser_type does: the page, the field and the text."""
        page = self.session.current_page(scope_of(tool_context))
        url = self.scrub(page.url) if page is not None else None
        return {
            "summary": f"type {text!r} into {selector!r} on {url or '(no page open)'}"
            + (" and press Enter" if submit else ""),
            "url": url,
            "field": selector,
            "text": text,  # {{secret:NAME}} references stay unresolved
            "submit": bool(submit),
        }


navigator_tools = tool_list_factory(
    NavigatorTools,
    "navigator_tools",
    "browser_navigate, browser_extract, browser_click, browser_type and browser_screenshot;"
    " the arguments are those of :class:`NavigatorTools`.",
)
