"""DNS rebinding: a name that is public when checked and loopback when used.

The navigator's connections go through troupe's egress proxy, which resolves
a name once, checks that address and connects to exactly it. Here the
resolver is replaced in-process by one that answers like a rebinding DNS
server: a public address to the checks before a page is fetched (the
navigation's and the request routing's), ``127.0.0.1`` to every later lookup.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fakes.planted import SECRET_TEXT
from fakes.recording_site import Site, recording_site
from fakes.tool_runs import call_tool, everything_shown
from troupe.builtins import Workspace, navigator_tools
from troupe.builtins.browser_session import BrowserSession
from troupe.sandbox.egress import EgressPolicy
from troupe.sandbox.egress_proxy import EgressProxy

REBINDING_NAME = "rebind.test"
PUBLIC_ADDRESS = "93.184.215.14"
CHECKS = 2
"""Lookups before the connection: browser_navigate's check and the request routing's."""


@pytest.fixture
def private() -> Iterator[Site]:
    """A page on 127.0.0.1 that the rebinding name ends up pointing at."""
    with recording_site() as site:
        yield site


@pytest.fixture
def rebinding_dns(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Resolve REBINDING_NAME to a public address twice, then to 127.0.0.1; the answers given."""
    real = socket.getaddrinfo
    answers: list[str] = []

    def lookup(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host != REBINDING_NAME:
            return real(host, port, *args, **kwargs)
        address = PUBLIC_ADDRESS if len(answers) < CHECKS else "127.0.0.1"
        answers.append(address)
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    return answers


async def test_the_proxy_connects_only_to_the_address_it_checked(
    private: Site, rebinding_dns: list[str]
) -> None:
    rebinding_dns += [PUBLIC_ADDRESS] * CHECKS  # the checks before this one used them
    proxy = EgressProxy(EgressPolicy)
    port = int((await proxy.start()).rsplit(":", 1)[1])
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"CONNECT {REBINDING_NAME}:{private.port} HTTP/1.1\r\n\r\n".encode())
        status = await reader.readline()
        if b" 200 " in status:  # let through: ask the private page for its secret
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"GET /secret HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            await reader.read()
        writer.close()
    finally:
        await proxy.close()

    assert b" 403 " in status
    assert private.hits == []


async def test_a_rebinding_name_does_not_reach_a_private_page(
    tmp_path: Path, browser: BrowserSession, private: Site, rebinding_dns: list[str]
) -> None:
    tools = navigator_tools(Workspace(tmp_path), browser=browser, allow_hosts=[])

    run = await call_tool(
        tools, "browser_navigate", {"url": f"http://{REBINDING_NAME}:{private.port}/secret"}
    )

    assert rebinding_dns == [PUBLIC_ADDRESS] * CHECKS + ["127.0.0.1"]
    assert private.hits == []
    assert f"{REBINDING_NAME} (127.0.0.1)" in run.response["error"]
    assert SECRET_TEXT not in everything_shown(run)
