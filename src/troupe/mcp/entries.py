"""MCP server entries: the ``McpServer`` dataclass, its checks, and the YAML model."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from ..environment import process_environ
from ..errors import ConfigError

DEFAULT_TIMEOUT = 30.0
"""Seconds to wait for a server to start and for each tool call."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass(frozen=True, kw_only=True)
class McpServer:
    """One MCP server whose tools join the team.

    Exactly one of ``command`` (a local server over stdio) and ``url`` (a
    streamable HTTP server) is set. ``prefix`` or ``agent`` decides which
    specialist gets the tools; with neither they are unmatched.
    """

    name: str
    """A short name for messages and ``troupe tree``, e.g. ``files``."""
    command: str | None = None
    """Program that runs a stdio server, e.g. ``uvx`` or ``python``."""
    args: Sequence[str] = ()
    """Arguments of ``command``."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Environment of a stdio server, on top of a minimal one (PATH, HOME, ...);
    ``${VAR}`` in a value is read from troupe's environment."""
    url: str | None = None
    """URL of a streamable HTTP server, e.g. ``http://127.0.0.1:8000/mcp``."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """HTTP headers sent to a ``url`` server; ``${VAR}`` is read from the environment."""
    prefix: str | None = None
    """A routed prefix (``fs_``, ``browser_``): tools are shown as ``fs_<name>`` and
    go to the agent that owns it."""
    agent: str | None = None
    """An agent of the topology that gets the tools (named with its first prefix)."""
    tools: Sequence[str] | None = None
    """Only these tools of the server, by the server's own names (None: all)."""
    dangerous: bool = False
    """Ask the user before every call to one of these tools."""
    jail: bool = True
    """Run a stdio server in the bubblewrap jail (see
    docs/security.md). False starts it as an ordinary process of yours: only for a
    server you trust with everything your user can reach."""
    workspace: str | Path | None = None
    """The folder the server works in and its tools' path arguments must stay
    in (default: the current directory); ``troupe.yaml`` sets it to the
    team's workspace."""
    data_dir: str | Path | None = None
    """troupe's data directory, hidden from the server and refused as a path
    (default: the usual one); ``troupe.yaml`` sets it to the team's."""
    config_files: Sequence[Path] = ()
    """Files troupe read as configuration; inside the workspace the server sees
    them read-only (``troupe.yaml`` sets them)."""
    hidden_files: Sequence[Path] = ()
    """Files inside the workspace the server must not see (the vault's key file)."""
    timeout: float = DEFAULT_TIMEOUT
    """Seconds to wait for the server to start, for each call, and for it to stop.

    Stopping a stdio server that ignores the end of its input takes the MCP
    client about 2 s (a grace period, then a kill). ``troupe tree`` waits for
    that whatever the timeout; a tree's toolsets closed with a timeout below
    3 s may leave such a server to stop after the close returns."""

    environ: Mapping[str, str] | None = field(default=None, repr=False, compare=False)
    """The environment ``${VAR}`` is read from and the default data directory comes
    from: ``troupe.yaml`` passes the settings' snapshot; None is this process's own."""

    def __post_init__(self) -> None:
        problem = _structure_problem(self)
        if problem:
            raise ConfigError(f"mcp_servers entry {self.name!r}: {problem}.")

    def environment(self) -> Mapping[str, str]:
        """:attr:`environ`, else a snapshot of this process's environment."""
        return self.environ if self.environ is not None else process_environ()

    @property
    def transport(self) -> str:
        """``stdio`` or ``http``."""
        return "stdio" if self.command else "http"


def _structure_problem(server: McpServer) -> str | None:
    """What is wrong with an entry's own fields, or None."""
    if not isinstance(server.name, str) or not _NAME.match(server.name):
        return "the name must be letters, digits, '_', '.' or '-', e.g. 'files'"
    if server.command and server.url:
        return (
            "it sets both command and url; keep command (and args) for a local stdio "
            "server or url for a streamable HTTP server"
        )
    if not server.command and not server.url:
        return (
            "it has neither command nor url; add command (and args) to start a stdio "
            "server, or url for a streamable HTTP server"
        )
    if server.url:
        parts = urlsplit(server.url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return f"url {server.url!r} is not an http(s) URL, e.g. http://127.0.0.1:8000/mcp"
        if server.args or server.env:
            return "args and env only apply to a command; pass settings to a url server in headers"
    if server.command and server.headers:
        return "headers only apply to a url; pass settings to a command in args or env"
    if server.prefix is not None and server.agent is not None:
        return (
            f"it sets both prefix {server.prefix!r} and agent {server.agent!r}; keep one "
            "(prefix names the tools and picks the agent that owns it)"
        )
    if server.prefix is not None and not server.prefix.strip():
        return "prefix is empty; use a routed prefix such as fs_ or browser_"
    if isinstance(server.tools, str):
        return f"tools must be a list of tool names, not {server.tools!r}"
    if not server.timeout > 0:
        return f"timeout must be a positive number of seconds, not {server.timeout!r}"
    return None


class McpServerEntry(BaseModel):
    """One ``mcp_servers`` item of ``troupe.yaml``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Short name used in messages and `troupe tree`.")
    command: str | None = Field(default=None, description="Program of a stdio server.")
    args: list[str] = Field(default_factory=list, description="Arguments of command.")
    env: dict[str, str] = Field(
        default_factory=dict, description="Environment of a stdio server (${VAR} allowed)."
    )
    url: str | None = Field(default=None, description="URL of a streamable HTTP server.")
    headers: dict[str, str] = Field(
        default_factory=dict, description="HTTP headers for url (${VAR} allowed)."
    )
    prefix: str | None = Field(default=None, description="Routed prefix, e.g. fs_ or browser_.")
    agent: str | None = Field(default=None, description="Agent that gets the tools.")
    tools: list[str] | None = Field(default=None, description="Only these server tools.")
    dangerous: bool = Field(default=False, description="Ask before every call.")
    jail: bool = Field(
        default=True, description="Run a stdio server in the bubblewrap jail (false: trusted)."
    )
    timeout: float = Field(default=DEFAULT_TIMEOUT, gt=0, description="Seconds per start/call.")

    def to_server(
        self,
        *,
        workspace: str | Path | None = None,
        data_dir: str | Path | None = None,
        environ: Mapping[str, str] | None = None,
        config_files: Sequence[Path] = (),
        hidden_files: Sequence[Path] = (),
    ) -> McpServer:
        """The :class:`McpServer` this entry describes (raises ConfigError when invalid).

        ``workspace`` and ``data_dir`` are the team's, which confine the server;
        ``environ`` is the settings' snapshot of the environment ``${VAR}`` reads;
        ``config_files`` and ``hidden_files`` are read-only and hidden in its jail.
        """
        return McpServer(
            name=self.name,
            command=self.command,
            args=tuple(self.args),
            env=dict(self.env),
            url=self.url,
            headers=dict(self.headers),
            prefix=self.prefix,
            agent=self.agent,
            tools=tuple(self.tools) if self.tools is not None else None,
            dangerous=self.dangerous,
            jail=self.jail,
            workspace=workspace,
            data_dir=data_dir,
            config_files=tuple(config_files),
            hidden_files=tuple(hidden_files),
            timeout=self.timeout,
            environ=environ,
        )
