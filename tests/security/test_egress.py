"""The navigator against a model (or a page) that aims at loopback and private addresses."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from fakes.planted import SECRET_TEXT
from fakes.tool_runs import call_tool, everything_shown
from troupe.builtins import Workspace, browser_unavailable_reason, navigator_tools
from troupe.builtins.browser_session import BrowserSession
from troupe.runtime.approvals import ApprovalPolicy
from troupe.sandbox.egress import EgressPolicy


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://localhost/",
        "http://api.localhost/",
        "http://127.1/",
        "http://2130706433/",
        "http://0x7f000001/",
        "http://0x7f.0.0.1/",
        "http://0177.0.0.1/",
        "http://0/",
        "http://0.0.0.0/",
        "http://[::1]/",
        "http://[::]/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:7f00:1]/",
        "http://10.1.2.3/",
        "http://172.16.0.1/",
        "http://192.168.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[fe80::1]/",
        "http://[fc00::1]/",
        "http://[fd12::1]/",
        "http://100.64.0.1/",
        "ws://127.0.0.1:9/",
        "file:///etc/passwd",
    ],
)
def test_every_spelling_of_a_private_address_is_refused(url: str) -> None:
    assert EgressPolicy().refusal(url) is not None


@pytest.mark.parametrize(
    ("allowed", "url"),
    [
        ("127.0.0.1", "http://127.1:8000/"),
        ("127.0.0.1:8765", "http://127.0.0.1:8765/page"),
        ("LOCALHOST", "http://localhost/"),
        ("[::1]:80", "http://[::1]/"),
    ],
)
def test_allow_hosts_lets_a_listed_host_through(allowed: str, url: str) -> None:
    assert EgressPolicy.allowing([allowed]).refusal(url) is None


def test_allow_hosts_with_a_port_allows_only_that_port() -> None:
    assert EgressPolicy.allowing(["127.0.0.1:8765"]).refusal("http://127.0.0.1:8766/") is not None


def test_a_public_address_is_allowed() -> None:
    assert EgressPolicy().refusal("http://93.184.215.14/") is None


@dataclass
class Site:
    """A local HTTP server that records the paths it was asked for."""

    url: str
    port: int
    hits: list[str] = field(default_factory=list)
    pages: dict[str, tuple[int, dict[str, str], str]] = field(default_factory=dict)


@pytest.fixture
def sites() -> Iterator[tuple[Site, Site]]:
    """An allowed site and a private one; each records who reached it."""
    made: list[tuple[ThreadingHTTPServer, threading.Thread]] = []
    out = []
    for _ in range(2):
        site = Site("", 0)

        class Handler(BaseHTTPRequestHandler):
            served = site

            def do_GET(self) -> None:
                self.served.hits.append(self.path)
                status, headers, body = self.served.pages.get(
                    self.path, (200, {}, f"<html><body>{SECRET_TEXT}</body></html>")
                )
                data = body.encode()
                self.send_response(status)
                for name, value in {"Content-Type": "text/html", **headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        site.port = server.server_address[1]
        site.url = f"http://127.0.0.1:{site.port}"
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        made.append((server, thread))
        out.append(site)
    yield out[0], out[1]
    for server, thread in made:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest_asyncio.fixture
async def browser() -> AsyncIterator[BrowserSession]:
    if (reason := browser_unavailable_reason()) is not None:
        pytest.fail(f"The egress tests need Playwright and Chromium: {reason}.", pytrace=False)
    session = BrowserSession()
    yield session
    await session.close()


def _tools(tmp_path: Path, browser: BrowserSession, allowed: Site) -> list[Any]:
    return navigator_tools(
        Workspace(tmp_path), browser=browser, allow_hosts=[f"127.0.0.1:{allowed.port}"]
    )


@pytest.mark.parametrize("spelling", ["127.0.0.1", "127.1", "2130706433", "0x7f.1", "localhost"])
async def test_the_model_cannot_open_a_private_page(
    tmp_path: Path,
    browser: BrowserSession,
    sites: tuple[Site, Site],
    policy: ApprovalPolicy,
    spelling: str,
) -> None:
    allowed, private = sites
    url = f"http://{spelling}:{private.port}/secret"

    run = await call_tool(
        _tools(tmp_path, browser, allowed), "browser_navigate", {"url": url}, policy=policy
    )

    assert "error" in run.response
    assert private.hits == []
    assert SECRET_TEXT not in everything_shown(run)


async def test_a_redirect_to_a_private_page_is_not_followed(
    tmp_path: Path, browser: BrowserSession, sites: tuple[Site, Site], policy: ApprovalPolicy
) -> None:
    allowed, private = sites
    allowed.pages["/go"] = (302, {"Location": f"{private.url}/secret"}, "")

    run = await call_tool(
        _tools(tmp_path, browser, allowed),
        "browser_navigate",
        {"url": f"{allowed.url}/go"},
        policy=policy,
    )

    assert allowed.hits == ["/go"]
    assert private.hits == []
    assert SECRET_TEXT not in everything_shown(run)


async def test_a_page_cannot_load_or_fetch_from_a_private_address(
    tmp_path: Path, browser: BrowserSession, sites: tuple[Site, Site], policy: ApprovalPolicy
) -> None:
    allowed, private = sites
    allowed.pages["/page"] = (
        200,
        {},
        f'<html><body>public page<img src="{private.url}/img">'
        f'<iframe src="{private.url}/frame"></iframe>'
        f'<script>fetch("{private.url}/fetch").catch(() => 0)</script></body></html>',
    )

    run = await call_tool(
        _tools(tmp_path, browser, allowed),
        "browser_navigate",
        {"url": f"{allowed.url}/page"},
        policy=policy,
    )

    assert run.response["title"] == "" and "public page" in run.response["text"]
    assert private.hits == []
    assert len(run.response["blocked_requests"]) >= 1
