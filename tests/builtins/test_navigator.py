"""The navigator's browser tools in real headless Chromium, against pages served here."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import pytest_asyncio
from typer.testing import CliRunner

from fakes.needs import require_browser
from fakes.web import loopback_site
from troupe import Assistant, Config, Workspace, build_agent_tree, builtin_tools
from troupe.builtins.browser_session import (
    CHROMIUM_ENV,
    BrowserSession,
    browser_unavailable_reason,
    close_shared_browser,
    shared_browser,
)
from troupe.builtins.navigator import navigator_tools
from troupe.cli.app import app
from troupe.runtime.approvals import ApprovalRequest, run_with_approvals
from troupe.sandbox.egress import EgressPolicy
from troupe.stores.vault import SecretStore
from troupe.testing import ScriptedModel, call, simplify

# One browser serves the whole module, so its tests share one event loop.
on_module_loop = pytest.mark.asyncio(loop_scope="module")

PAGES = {
    "/": """<html><head><title>Troupe test page</title></head><body>
        <h1>Welcome to the troupe test page</h1>
        <p>The secret word is marmalade.</p>
        <a href="/about">About us</a>
        <a href="/form">Sign-up form</a>
        <button id="reveal" onclick="document.getElementById('out').textContent='Button pressed'">
          Reveal</button>
        <p id="out">Nothing yet</p>
        <script>var hidden = "script text is not page text";</script>
        </body></html>""",
    "/about": """<html><head><title>About</title></head><body>
        <p>This is the about page.</p><a href="/">Home</a></body></html>""",
    "/form": """<html><head><title>Form</title></head><body>
        <form action="/greet" method="get">
          <label for="name">Your name</label><input id="name" name="name">
          <button type="submit">Send</button>
        </form></body></html>""",
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path == "/greet":
            name = parse_qs(parts.query).get("name", ["nobody"])[0]
            body, status = f"<html><body><p>Hello, {name}!</p></body></html>", 200
        elif parts.path in PAGES:
            body, status = PAGES[parts.path], 200
        else:
            body, status = "<html><body>Not here</body></html>", 404
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return  # keep the test output quiet


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    with loopback_site(_Handler) as url:
        yield url


def _require_browser() -> None:
    require_browser()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[BrowserSession]:
    _require_browser()
    # The test site runs on 127.0.0.1, which the navigator refuses unless allowed.
    session = BrowserSession(egress=EgressPolicy.allowing(["127.0.0.1"]))
    try:
        yield session
    finally:
        await session.close()


Tools = dict[str, Callable[..., Any]]


def _tools(workspace: Path, browser: BrowserSession, **options: Any) -> Tools:
    return {
        t.name: t.func for t in navigator_tools(Workspace(workspace), browser=browser, **options)
    }


@on_module_loop
async def test_navigate_returns_the_title_status_and_page_text(
    browser: BrowserSession, site: str, tmp_path: Path
) -> None:
    result = await _tools(tmp_path, browser)["browser_navigate"](site + "/")

    assert result["status"] == 200
    assert result["title"] == "Troupe test page"
    assert "Welcome to the troupe test page" in result["text"]
    assert "error" not in result


@on_module_loop
async def test_extract_returns_readable_text_and_absolute_links(
    browser: BrowserSession, site: str, tmp_path: Path
) -> None:
    tools = _tools(tmp_path, browser)
    await tools["browser_navigate"](site + "/")

    result = await tools["browser_extract"]()

    assert "The secret word is marmalade." in result["text"]
    assert "script text is not page text" not in result["text"]
    assert "<p>" not in result["text"]
    assert {"text": "About us", "url": site + "/about"} in result["links"]
    assert {"text": "Sign-up form", "url": site + "/form"} in result["links"]


@on_module_loop
async def test_click_follows_a_link_named_by_its_text(
    browser: BrowserSession, site: str, tmp_path: Path
) -> None:
    tools = _tools(tmp_path, browser)
    await tools["browser_navigate"](site + "/")

    result = await tools["browser_click"]("About us")

    assert result["url"] == site + "/about"
    assert "This is the about page." in result["text"]


@on_module_loop
async def test_click_presses_a_button_named_by_a_css_selector(
    browser: BrowserSession, site: str, tmp_path: Path
) -> None:
    tools = _tools(tmp_path, browser)
    await tools["browser_navigate"](site + "/")

    result = await tools["browser_click"]("#reveal")

    assert "Button pressed" in result["text"]
    assert "Nothing yet" not in result["text"]


@on_module_loop
async def test_click_on_something_missing_names_the_target(
    browser: BrowserSession, site: str, tmp_path: Path
) -> None:
    tools = _tools(tmp_path, browser)
    await tools["browser_navigate"](site + "/")

    result = await tools["browser_click"]("Buy now")

    assert "'Buy now'" in result["error"]
    assert "accepted" in result


@on_module_loop
async def test_type_fills_a_field_and_submitting_shows_the_result(
    browser: BrowserSession, site: str, tmp_path: Path
) -> None:
    tools = _tools(tmp_path, browser)
    await tools["browser_navigate"](site + "/form")

    result = await tools["browser_type"]("Your name", "Ada", submit=True)

    assert result["typed_into"] == "Your name"
    assert result["characters"] == 3
    assert "Hello, Ada!" in result["text"]
    assert "/greet?name=Ada" in result["url"]


@on_module_loop
async def test_type_substitutes_a_secret_and_never_returns_its_plaintext(
    browser: BrowserSession, site: str, tmp_path: Path
) -> None:
    tools = _tools(tmp_path, browser, secret_lookup={"PASSWORD": "hunter2"}.get)
    await tools["browser_navigate"](site + "/form")

    typed = await tools["browser_type"]("#name", "{{secret:PASSWORD}}", submit=True)
    extracted = await tools["browser_extract"]()

    assert typed["secrets_used"] == ["PASSWORD"]
    assert "characters" not in typed
    assert "Hello, {{secret:PASSWORD}}!" in typed["text"]
    assert "hunter2" not in repr(typed)
    assert "hunter2" not in repr(extracted)


@on_module_loop
async def test_the_builtin_browser_type_reads_secrets_from_the_vault(
    site: str, tmp_path: Path
) -> None:
    _require_browser()
    data = tmp_path / "data"
    SecretStore(data).set("PASSWORD", "hunter2")
    tools = {
        t.name: t.func
        for t in builtin_tools(workspace=tmp_path, data_dir=data, browser_allow_hosts=["127.0.0.1"])
    }
    try:
        await tools["browser_navigate"](site + "/form")
        typed = await tools["browser_type"]("#name", "{{secret:PASSWORD}}", submit=True)
    finally:
        await close_shared_browser()

    assert "/greet?name=hunter2" not in repr(typed)
    assert "Hello, {{secret:PASSWORD}}!" in typed["text"]
    assert typed["secrets_used"] == ["PASSWORD"]
    assert "characters" not in typed


@on_module_loop
async def test_type_with_a_secret_reference_but_no_vault_is_refused(
    browser: BrowserSession, site: str, tmp_path: Path
) -> None:
    tools = _tools(tmp_path, browser)
    await tools["browser_navigate"](site + "/form")

    result = await tools["browser_type"]("#name", "{{secret:PASSWORD}}")

    assert "vault" in result["error"]


@on_module_loop
async def test_type_with_an_unknown_secret_names_it(
    browser: BrowserSession, site: str, tmp_path: Path
) -> None:
    tools = _tools(tmp_path, browser, secret_lookup={}.get)
    await tools["browser_navigate"](site + "/form")

    result = await tools["browser_type"]("#name", "{{secret:NOPE}}")

    assert "'NOPE'" in result["error"]


@on_module_loop
async def test_screenshot_is_saved_as_a_png_inside_the_workspace(
    browser: BrowserSession, site: str, tmp_path: Path
) -> None:
    tools = _tools(tmp_path, browser)
    await tools["browser_navigate"](site + "/")

    result = await tools["browser_screenshot"]("shots/home.png")

    saved = tmp_path / "shots" / "home.png"
    assert result["path"] == "shots/home.png"
    assert saved.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert result["bytes"] == saved.stat().st_size > 1000


@pytest.mark.parametrize("path", ["../escape.png", "/tmp/troupe-escape.png"])
@on_module_loop
async def test_screenshot_outside_the_workspace_is_refused(
    browser: BrowserSession, site: str, tmp_path: Path, path: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    tools = _tools(workspace, browser)
    await tools["browser_navigate"](site + "/")

    result = await tools["browser_screenshot"](path)

    assert result["error"].startswith("refused:")
    assert "inside the workspace" in result["accepted"]
    assert not (tmp_path / "escape.png").exists()
    assert not Path("/tmp/troupe-escape.png").exists()


@on_module_loop
async def test_screenshot_must_be_a_png(browser: BrowserSession, site: str, tmp_path: Path) -> None:
    tools = _tools(tmp_path, browser)
    await tools["browser_navigate"](site + "/")

    result = await tools["browser_screenshot"]("page.jpg")

    assert ".png" in result["error"]
    assert not (tmp_path / "page.jpg").exists()


@pytest.mark.parametrize(
    "url",
    ["file:///etc/passwd", "javascript:alert(1)", "ftp://127.0.0.1/", "example.com", ""],
)
@on_module_loop
async def test_a_url_that_is_not_http_is_refused_with_a_structured_error(
    tmp_path: Path, url: str
) -> None:
    # A session that is never started: the URL is refused before any browser work.
    unused = BrowserSession()
    result = await _tools(tmp_path, unused)["browser_navigate"](url)

    assert "error" in result
    assert result["accepted"].startswith("an http:// or https:// URL")
    assert not unused.is_open


@on_module_loop
async def test_a_server_error_status_is_reported(
    browser: BrowserSession, site: str, tmp_path: Path
) -> None:
    result = await _tools(tmp_path, browser)["browser_navigate"](site + "/missing")

    assert result["status"] == 404
    assert "HTTP 404" in result["error"]


@on_module_loop
async def test_an_unreachable_url_gives_a_structured_error(
    browser: BrowserSession, tmp_path: Path
) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed_port = sock.getsockname()[1]

    result = await _tools(tmp_path, browser)["browser_navigate"](f"http://127.0.0.1:{closed_port}/")

    assert "could not open" in result["error"]
    assert "ERR_CONNECTION_REFUSED" in result["error"]


@on_module_loop
async def test_reading_before_any_page_is_open_says_to_navigate_first(tmp_path: Path) -> None:
    unused = BrowserSession()
    tools = _tools(tmp_path, unused)

    results = [
        await tools["browser_extract"](),
        await tools["browser_click"]("About us"),
        await tools["browser_screenshot"]("x.png"),
    ]

    for result in results:
        assert result["error"] == "no page is open yet"
        assert "browser_navigate" in result["accepted"]
    assert not unused.is_open


@on_module_loop
async def test_the_orchestrator_sends_a_page_request_to_the_navigator(
    site: str, tmp_path: Path
) -> None:
    _require_browser()
    tools = builtin_tools(workspace=tmp_path, browser_allow_hosts=["127.0.0.1"])
    root = build_agent_tree(Config(tools=tools, model="offline"))
    try:
        events = [e async for e in Assistant(root).run("s1", f"open {site}/ and read it")]
    finally:
        await close_shared_browser()

    assert simplify(events)[:3] == [
        ("orchestrator", "transfer", "navigator"),
        ("navigator", "tool_call", "browser_navigate"),
        ("navigator", "tool_result", "browser_navigate"),
    ]
    answer = events[-1]
    assert answer.author == "navigator"
    assert answer.content is not None
    assert "Welcome to the troupe test page" in "".join(
        p.text or "" for p in answer.content.parts or []
    )


def test_without_chromium_the_navigator_tools_are_not_registered(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-chromium")  # TROUPE_CHROMIUM, as the settings read it

    names = [t.name for t in builtin_tools(workspace=tmp_path, chromium=missing)]
    reason = browser_unavailable_reason(missing)

    assert not [n for n in names if n.startswith("browser_")]
    assert reason is not None
    assert CHROMIUM_ENV in reason


def test_troupe_tree_says_why_the_navigator_is_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A path far wider than the 80-column terminal: the reason must stay on one line.
    deep = tmp_path / ("a-long-folder-name-" * 6) / "no-such-chromium"
    monkeypatch.setenv(CHROMIUM_ENV, str(deep))
    monkeypatch.setenv("COLUMNS", "80")

    result = CliRunner().invoke(app, ["tree", "--workspace", str(tmp_path)])

    assert result.exit_code == 0, result.output
    [line] = [ln for ln in result.output.splitlines() if "navigator tools not registered" in ln]
    assert f"'{deep}' is not an executable file" in line


def test_troupe_tree_lists_the_browser_tools_when_chromium_is_present(tmp_path: Path) -> None:
    _require_browser()

    result = CliRunner().invoke(app, ["tree", "--workspace", str(tmp_path)])

    assert result.exit_code == 0, result.output
    assert "browser_navigate" in result.output
    assert "not registered" not in result.output


def test_troupe_chat_reads_a_local_page_and_closes_the_browser(site: str, tmp_path: Path) -> None:
    _require_browser()

    config = tmp_path / "troupe.yaml"  # outside the workspace, so its allow_hosts counts
    config.write_text("browser:\n  allow_hosts: ['127.0.0.1']\n", encoding="utf-8")
    workspace = tmp_path / "ws"
    workspace.mkdir()

    result = CliRunner().invoke(
        app,
        ["chat", "-w", str(workspace), "--config", str(config), f"open {site}/about and read it"],
    )

    assert result.exit_code == 0, result.output
    assert "This is the about page." in result.output
    assert "orchestrator → navigator → browser_navigate → answer" in result.output
    assert not shared_browser().is_open


@on_module_loop
async def test_the_browser_type_approval_shows_the_page_url_the_field_and_the_text(
    browser: BrowserSession, site: str, tmp_path: Path
) -> None:
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="navigator"),
            call("browser_navigate", url=site + "/form"),
            call("browser_type", selector="#name", text="Ada", submit=True),
            "Not typed.",
        ]
    )
    tools = navigator_tools(Workspace(tmp_path), browser=browser)
    assistant = Assistant(build_agent_tree(Config(tools=tools, model=model)))
    asked: list[ApprovalRequest] = []

    def decline(request: ApprovalRequest) -> bool:
        asked.append(request)
        return False

    async for _ in run_with_approvals(assistant, "s1", "sign up", policy="ask", ask=decline):
        pass

    assert [r.tool for r in asked] == ["browser_type"]
    effect = asked[0].effect
    assert (effect["url"], effect["field"], effect["text"]) == (site + "/form", "#name", "Ada")
