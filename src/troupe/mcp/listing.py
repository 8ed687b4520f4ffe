"""Listing a server's tools on purpose, for ``troupe tree``: diagnostics and reports."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING

from ..errors import ConfigError, TroupeError
from .entries import McpServer
from .placement import McpPlacement, place_servers, unmatched_fix
from .toolset import ToolClaims, approve_unjailed_start, build_toolset, not_started_unjailed

if TYPE_CHECKING:
    from ..config import Config

LIST_TIMEOUT = 20.0
"""Seconds ``troupe tree`` waits for a server to list its tools."""


STOP_GRACE = 5.0
"""Seconds to let a server's stop finish after the toolset is closed. ADK's close
waits only the server's own timeout, and the MCP client may need about 2 s (a
grace period, then a kill) to stop a server that ignores the end of its input."""


async def _let_the_server_stop(tasks: set[asyncio.Task[object]]) -> None:
    """Wait (bounded) for the background tasks the toolset started, so that the
    server process is stopped and reaped before the caller's event loop ends."""
    pending = {task for task in tasks if not task.done()}
    if pending:
        await asyncio.wait(pending, timeout=STOP_GRACE)


class McpUnavailableError(TroupeError):
    """An MCP server could not be started or did not list its tools."""


@contextlib.contextmanager
def _quiet_adk() -> Iterator[None]:
    # ADK logs a failed start at ERROR level, with a traceback; the error
    # raised from here already says what happened.
    adk = logging.getLogger("google_adk")
    level = adk.level
    adk.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        adk.setLevel(level)


def _root_cause(exc: BaseException) -> str:
    """The most specific message in an error's chain.

    ADK wraps a transport's error in ConnectionErrors and task groups; the
    innermost message that says something ("Connection closed", "No such
    file or directory", "timed out after 5s ...") is the useful one.
    """
    from .._adk_compat import without_mcp_session_prefix

    messages: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, BaseExceptionGroup) and current.exceptions:
            current = current.exceptions[0]
            continue
        text = without_mcp_session_prefix(str(current))
        if text:
            messages.append(text)
        current = current.__cause__
    return messages[-1] if messages else type(exc).__name__


def _last_line(stream: IO[str]) -> str:
    stream.flush()
    stream.seek(0)
    lines = [line.strip() for line in stream.read().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _start_hint(server: McpServer) -> str:
    if server.command:
        cmd = " ".join([server.command, *server.args])
        return f"check that `{cmd}` starts an MCP server over stdio"
    return f"check that an MCP server answers at {server.url} (streamable HTTP)"


@dataclass(frozen=True)
class McpToolListing:
    """The tools one server offers, as the model sees them."""

    names: list[str]
    """Visible tool names, in the server's order."""
    renamed: dict[str, str] = field(default_factory=dict)
    """Visible name -> the server's own name, for names changed to be valid or unique."""
    descriptions: dict[str, str] = field(default_factory=dict)
    """Visible name -> the tool's description."""


async def list_tool_names(placement: McpPlacement, *, timeout: float = LIST_TIMEOUT) -> list[str]:
    """Start the server, list its tools by their visible names, and stop it.

    Raises:
        McpUnavailableError: the server did not start or list its tools within
            ``timeout`` seconds; the message says why and what to check.
    """
    return (await list_tools(placement, timeout=timeout)).names


async def list_tools(
    placement: McpPlacement,
    *,
    timeout: float = LIST_TIMEOUT,
    claims: ToolClaims | None = None,
    approve_unjailed: Callable[[McpServer], bool] | None = None,
) -> McpToolListing:
    """Start the server, list its tools (names, renames, descriptions), and stop it.

    A stdio server that would run outside the jail (not active here) starts
    only when ``approve_unjailed`` (a person, asked) says yes.

    Raises:
        McpUnavailableError: the server did not start or list its tools within
            ``timeout`` seconds, or was not allowed to start unjailed; the
            message says why and what to check.
        ConfigError: a tool name is already held by another server in ``claims``.
    """
    server = placement.server
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as errlog, _quiet_adk():
        before = asyncio.all_tasks()
        toolset = build_toolset(placement, errlog=errlog, claims=claims)
        if getattr(toolset, "troupe_waits_for_approval", False):
            if approve_unjailed is None or not approve_unjailed(server):
                raise McpUnavailableError(not_started_unjailed(server.name))
            approve_unjailed_start(toolset)
        try:
            tools = await asyncio.wait_for(toolset.get_tools(), timeout=timeout)
        except TimeoutError:
            reason = f"no tool list after {timeout:g}s"
        except ConfigError:
            raise
        except Exception as exc:
            reason = _root_cause(exc)
        else:
            return McpToolListing(
                [tool.name for tool in tools],
                dict(getattr(toolset, "troupe_renamed", {})),
                dict(getattr(toolset, "troupe_descriptions", {})),
            )
        finally:
            await toolset.close()
            await _let_the_server_stop(asyncio.all_tasks() - before - {asyncio.current_task()})
        stderr = _last_line(errlog)
    detail = f"{reason} (server said: {stderr})" if stderr else reason
    raise McpUnavailableError(
        f"MCP server {server.name!r} could not start: {detail}; {_start_hint(server)}."
    )


@dataclass(frozen=True)
class McpServerReport:
    """What ``troupe tree`` shows for one server."""

    placement: McpPlacement
    """The server and where its tools go."""
    owner: str | None
    """The agent holding the tools in the built tree; None when unmatched."""
    tools: list[str]
    """Visible tool names (empty when the server could not start)."""
    error: str | None = None
    """Why the tools could not be listed."""
    fix: str | None = None
    """For an unmatched server: how to give its tools to an agent."""
    renamed: dict[str, str] = field(default_factory=dict)
    """Visible name -> the server's own name, for names changed to be valid or unique."""
    descriptions: dict[str, str] = field(default_factory=dict)
    """Visible name -> the tool's description (for routing)."""
    started: bool = True
    """False when the server was left unstarted (``troupe tree`` without ``--check``)."""


async def describe_servers(
    config: Config,
    *,
    timeout: float = LIST_TIMEOUT,
    start: bool = True,
    approve_unjailed: Callable[[McpServer], bool] | None = None,
) -> list[McpServerReport]:
    """List every configured server's tools at once, for ``troupe tree``.

    With ``start`` False no server is started or contacted: each report says
    where the server's tools would go, and nothing runs (a config entry is a
    command line; showing the tree must not execute it). ``approve_unjailed``
    is asked about each stdio server that would start outside the jail.

    Raises:
        ConfigError: an entry names a prefix or agent the topology lacks, or
            two servers offer the same tool name.
    """
    from ..topology import SINGLE_AGENT_NAME, resolve_topology

    topology = resolve_topology(config.topology)
    placements = place_servers(config.mcp_servers, topology)
    claims = ToolClaims()

    async def one(placement: McpPlacement) -> McpServerReport:
        owner = placement.owner if config.multi_agent else SINGLE_AGENT_NAME
        fix = None
        if owner is None:
            fix = unmatched_fix(placement.server.name, topology)
        if not start:
            return McpServerReport(placement, owner, [], None, fix, started=False)
        try:
            listing = await list_tools(
                placement, timeout=timeout, claims=claims, approve_unjailed=approve_unjailed
            )
        except McpUnavailableError as exc:
            return McpServerReport(placement, owner, [], str(exc), fix)
        return McpServerReport(
            placement, owner, listing.names, None, fix, listing.renamed, listing.descriptions
        )

    return list(await asyncio.gather(*(one(p) for p in placements)))
