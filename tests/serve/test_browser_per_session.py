"""Under ``troupe serve`` every session browses in its own context, closed when it ends or idles.

Pages are served on 127.0.0.1 by the test; a scripted model drives the
navigator, so each turn's tool call is known and only the browser decides
what the tool sees.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from fakes.needs import require_browser
from fakes.web import loopback_site
from troupe import Assistant, Config, Workspace, build_agent_tree
from troupe.builtins.browser_session import (
    BrowserSession,
    shared_browser,
)
from troupe.builtins.navigator import navigator_tools
from troupe.sandbox.egress import EgressPolicy
from troupe.server import ServeOptions, build_app
from troupe.settings import load_settings
from troupe.testing import ScriptedModel, call

PAGES = {
    "/alpha": "<html><head><title>Alpha</title></head><body><p>alpha secrets</p></body></html>",
    "/beta": "<html><head><title>Beta</title></head><body><p>beta notes</p></body></html>",
}
NO_PAGE = "no page is open yet"


class _Pages(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = PAGES.get(self.path, "<html><body>Not here</body></html>").encode()
        self.send_response(200 if self.path in PAGES else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def site() -> Iterator[str]:
    require_browser()
    with loopback_site(_Pages) as url:
        yield url


def to_navigator(tool_call: Any) -> list[Any]:
    """One turn of scripted replies: hand over to the navigator, call the tool, answer."""
    return [call("transfer_to_agent", agent_name="navigator"), tool_call, "ok"]


def navigate(url: str) -> list[Any]:
    return to_navigator(call("browser_navigate", url=url))


def extract() -> list[Any]:
    return to_navigator(call("browser_extract"))


def tool_output(events: list[dict[str, Any]], tool: str) -> str:
    """The JSON of ``tool``'s response in a ``/run`` answer."""
    for event in events:
        for part in (event.get("content") or {}).get("parts") or []:
            response = part.get("functionResponse")
            if response and response["name"] == tool:
                return json.dumps(response["response"])
    raise AssertionError(f"no {tool} response in {events}")


def test_each_served_session_sees_only_its_own_page_and_loses_it_when_deleted(
    site: str, workspace: Path, tmp_path: Path
) -> None:
    model = ScriptedModel(
        replies=[
            *navigate(f"{site}/alpha"),  # u1/a opens alpha
            *extract(),  # u2/b has opened nothing
            *navigate(f"{site}/beta"),  # u2/b opens beta
            *extract(),  # u1/a still reads alpha
        ]
    )
    store = f"sqlite:///{(tmp_path / 'sessions.db').as_posix()}"
    settings = load_settings(
        workspace=workspace,
        data_dir=tmp_path / "data",
        session_store=store,
        browser={"allow_hosts": ["127.0.0.1"]},  # the pages are served on loopback
    )
    settings.config.model = model
    app = build_app(settings, ServeOptions())

    with TestClient(app, base_url="http://127.0.0.1:8000") as client:

        def turn(user: str, session: str) -> list[dict[str, Any]]:
            response = client.post(
                "/run",
                json={
                    "app_name": "troupe",
                    "user_id": user,
                    "session_id": session,
                    "new_message": {"role": "user", "parts": [{"text": "browse"}]},
                },
            )
            assert response.status_code == 200, response.text
            return list(response.json())

        for user, session in (("u1", "a"), ("u2", "b")):
            created = client.post(
                f"/apps/troupe/users/{user}/sessions", json={"session_id": session}
            )
            assert created.status_code == 200, created.text
        turn("u1", "a")
        other = tool_output(turn("u2", "b"), "browser_extract")
        turn("u2", "b")
        own = tool_output(turn("u1", "a"), "browser_extract")

        assert NO_PAGE in other and "alpha" not in other
        assert "alpha secrets" in own and "beta" not in own
        assert sorted(shared_browser().scopes) == [("troupe", "u1", "a"), ("troupe", "u2", "b")]

        deleted = client.delete("/apps/troupe/users/u1/sessions/a")
        assert deleted.status_code == 200, deleted.text
        assert shared_browser().scopes == [("troupe", "u2", "b")]
    assert not shared_browser().is_open


def test_a_sessions_browser_context_closes_after_it_idles(site: str, tmp_path: Path) -> None:
    browser = BrowserSession(idle_s=0.5, egress=EgressPolicy.allowing(["127.0.0.1"]))
    model = ScriptedModel(replies=[*navigate(f"{site}/alpha"), *extract()])
    tools = navigator_tools(Workspace(tmp_path), browser=browser)
    assistant = Assistant(build_agent_tree(Config(tools=tools, model=model)))

    async def scenario() -> str:
        try:
            await assistant.run_and_collect("idle", "browse")
            opened = browser.scopes
            assert opened == [("troupe", "user", "idle")]
            for _ in range(200):  # the context closes on its own, half a second after use
                if not browser.scopes:
                    break
                await asyncio.sleep(0.05)
            assert browser.scopes == [], "the idle context was not closed"
            assert browser.is_open  # the browser itself stays up for the next session
            events = [event async for event in assistant.run("idle", "browse")]
            return tool_output(
                [event.model_dump(by_alias=True, exclude_none=True) for event in events],
                "browser_extract",
            )
        finally:
            await browser.close()

    assert NO_PAGE in asyncio.run(scenario())
