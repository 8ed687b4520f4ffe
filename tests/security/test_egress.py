"""The navigator against a model (or a page) that aims at loopback and private addresses."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fakes.planted import SECRET_TEXT
from fakes.recording_site import Site, page_reaching, recording_site
from fakes.tool_runs import call_tool, everything_shown
from troupe.builtins import Workspace, navigator_tools
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


@pytest.fixture
def sites() -> Iterator[tuple[Site, Site]]:
    """An allowed site and a private one; each records who reached it."""
    with recording_site() as allowed, recording_site() as private:
        yield allowed, private


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
    allowed.pages["/page"] = page_reaching(private, "public page")

    run = await call_tool(
        _tools(tmp_path, browser, allowed),
        "browser_navigate",
        {"url": f"{allowed.url}/page"},
        policy=policy,
    )

    assert run.response["title"] == "" and "public page" in run.response["text"]
    assert private.hits == []
    assert len(run.response["blocked_requests"]) >= 1
