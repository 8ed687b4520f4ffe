"""Under ``--approve deny`` the navigator reaches no host without a person's yes.

The config's ``browser.allow_hosts`` is that yes given in advance; any other
host needs an approved navigation. Here a recording site on 127.0.0.1 stands
in for a public web host: the egress policy of these tests lets loopback
through (as it would a public address), so what is checked is the approval
gate alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fakes.recording_site import Site, page_reaching, recording_site
from fakes.tool_runs import ToolRun, call_tool
from troupe import Assistant, Config, build_agent_tree
from troupe.builtins import Workspace, navigator_tools
from troupe.builtins.browser_session import BrowserSession
from troupe.runtime.approvals import (
    ApprovalPolicy,
    ApprovalRequest,
    AskUser,
    run_with_approvals,
)
from troupe.sandbox.egress import EgressPolicy
from troupe.testing import ScriptedModel, call


class _LoopbackIsTheInternet(EgressPolicy):
    """Counts every address as public, so a local site plays a host on the internet."""

    def connect_address(self, host: str, port: int, url: str | None = None) -> str:
        return host.strip("[]")


@pytest.fixture
def sites() -> Iterator[tuple[Site, Site]]:
    """A site the config allows, and a "public" one it does not list."""
    with recording_site() as allowed, recording_site() as public:
        yield allowed, public


def _tools(tmp_path: Path, browser: BrowserSession, allowed: Site) -> list[Any]:
    browser.egress = _LoopbackIsTheInternet.allowing([f"127.0.0.1:{allowed.port}"])
    return navigator_tools(Workspace(tmp_path), browser=browser)


async def _navigate(
    tmp_path: Path,
    browser: BrowserSession,
    allowed: Site,
    url: str,
    policy: ApprovalPolicy = "deny",
    ask: AskUser | None = None,
) -> ToolRun:
    """The model opens ``url`` with the navigator, ``allowed`` being the only listed host."""
    tools = _tools(tmp_path, browser, allowed)
    return await call_tool(tools, "browser_navigate", {"url": url}, policy=policy, ask=ask)


async def _browse(tools: list[Any], calls: list[Any], policy: ApprovalPolicy) -> ScriptedModel:
    """Run one turn in which the navigator makes ``calls`` in order."""
    model = ScriptedModel(
        replies=[call("transfer_to_agent", agent_name="navigator"), *calls, "Done.", "Done."]
    )
    assistant = Assistant(build_agent_tree(Config(tools=tools, model=model)))
    async for _ in run_with_approvals(assistant, "s1", "browse", policy=policy):
        pass
    return model


async def test_under_deny_a_host_outside_allow_hosts_is_not_loaded(
    tmp_path: Path, browser: BrowserSession, sites: tuple[Site, Site]
) -> None:
    allowed, public = sites

    run = await _navigate(tmp_path, browser, allowed, f"{public.url}/news", "deny")

    assert run.response.get("declined") is True
    assert public.hits == []


async def test_under_auto_a_host_outside_allow_hosts_is_loaded(
    tmp_path: Path, browser: BrowserSession, sites: tuple[Site, Site]
) -> None:
    allowed, public = sites
    public.pages["/news"] = (200, {}, "<html><body>today's news</body></html>")

    run = await _navigate(tmp_path, browser, allowed, f"{public.url}/news", "auto")

    assert "today's news" in run.response["text"]
    assert public.hits == ["/news"]


async def test_under_ask_the_person_is_shown_the_url(
    tmp_path: Path, browser: BrowserSession, sites: tuple[Site, Site]
) -> None:
    allowed, public = sites
    asked: list[ApprovalRequest] = []

    def refuse(request: ApprovalRequest) -> bool:
        asked.append(request)
        return False

    await _navigate(tmp_path, browser, allowed, f"{public.url}/news", "ask", ask=refuse)

    assert [r.effect["url"] for r in asked] == [f"{public.url}/news"]
    assert public.hits == []


async def test_a_host_in_allow_hosts_loads_under_deny_without_asking(
    tmp_path: Path, browser: BrowserSession, sites: tuple[Site, Site]
) -> None:
    allowed, _ = sites
    allowed.pages["/"] = (200, {}, "<html><body>the local page</body></html>")

    run = await _navigate(tmp_path, browser, allowed, allowed.url + "/")

    assert "the local page" in run.response["text"]


@pytest.mark.parametrize("policy", ["deny", "auto"])
async def test_an_allowed_page_cannot_load_from_unlisted_hosts_without_approval(
    tmp_path: Path, browser: BrowserSession, sites: tuple[Site, Site], policy: ApprovalPolicy
) -> None:
    allowed, public = sites
    allowed.pages["/page"] = page_reaching(public, "local page")

    run = await _navigate(tmp_path, browser, allowed, f"{allowed.url}/page", policy)

    assert "local page" in run.response["text"]
    assert public.hits == []
    assert run.response["blocked_requests"]


async def test_under_deny_a_click_cannot_take_the_page_to_an_unlisted_host(
    tmp_path: Path, browser: BrowserSession, sites: tuple[Site, Site]
) -> None:
    allowed, public = sites
    allowed.pages["/page"] = (
        200,
        {},
        f'<html><body><a href="{public.url}/exfil?data=x">next</a></body></html>',
    )

    await _browse(
        _tools(tmp_path, browser, allowed),
        [call("browser_navigate", url=f"{allowed.url}/page"), call("browser_click", target="next")],
        "deny",
    )

    assert allowed.hits == ["/page"]
    assert public.hits == []


async def test_an_unapproved_navigation_withdraws_an_earlier_approval(
    tmp_path: Path, browser: BrowserSession, sites: tuple[Site, Site]
) -> None:
    allowed, public = sites
    allowed.pages["/page"] = (200, {}, f'<html><body><img src="{public.url}/pixel"></body></html>')

    await _browse(
        _tools(tmp_path, browser, allowed),
        [
            call("browser_navigate", url=f"{public.url}/approved"),
            call("browser_navigate", url=f"{allowed.url}/page"),
        ],
        "auto",
    )

    assert public.hits == ["/approved"]
