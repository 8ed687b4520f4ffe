"""ADK toolsets for placed MCP servers: tool renaming, construction, and closing.

ADK's McpToolset is imported only when a toolset is built, so reading a
config file stays fast.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Callable, Collection, Mapping
from typing import IO, TYPE_CHECKING, Any

from ..errors import ConfigError
from ..logfile import log_stream
from .confinement import McpConfinement
from .stderr_tail import StderrTail

if TYPE_CHECKING:
    from google.adk.agents.base_agent import BaseAgent
    from google.adk.tools.base_toolset import BaseToolset

    from .entries import McpServer
    from .placement import McpPlacement

logger = logging.getLogger("troupe.mcp")

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]")
MAX_NAME = 64
"""The longest tool name model APIs accept (OpenAI: ``^[a-zA-Z0-9_-]{1,64}$``)."""
TOOL_NAME_CONFLICT = "MCP_TOOL_NAME_CONFLICT"
"""``error_code`` of the event that ends a turn whose agent has two MCP servers'
tools under one name (see :class:`ToolClaims`)."""


def visible_name(prefix: str, name: str) -> str:
    """``name`` carrying ``prefix`` exactly once.

    ``fs_`` + ``read_file`` gives ``fs_read_file``; a prefix without a trailing
    underscore is joined with one (``exec`` + ``run`` gives ``exec_run``); a name
    that already starts with the prefix is kept. (ADK's own ``tool_name_prefix``
    always joins with ``_``, so ``fs_`` would give ``fs__read_file``.)
    """
    if not prefix or name.startswith(prefix):
        return name
    joiner = "" if prefix.endswith("_") else "_"
    return f"{prefix}{joiner}{name}"


def safe_name(name: str, taken: Collection[str] = ()) -> str:
    """``name`` as model APIs accept it: ``[A-Za-z0-9_-]``, at most 64 characters,
    and not in ``taken`` (a clash gets ``_2``, ``_3``, ...).

    ``files.read`` gives ``files_read``; ``data/get`` gives ``data_get``.
    """
    base = _NOT_ALLOWED.sub("_", name)[:MAX_NAME] or "tool"
    candidate, number = base, 1
    while candidate in taken:
        number += 1
        suffix = f"_{number}"
        candidate = base[: MAX_NAME - len(suffix)] + suffix
    return candidate


class ToolClaims:
    """Which MCP server holds each visible tool name, across one tree.

    Two servers offering the same name would leave the model one tool for
    two jobs, so the second claim is an error naming both servers: ``troupe
    tree`` refuses the config, and a turn whose agent holds the second server
    fails with that error (:mod:`troupe.runtime.mcp_conflicts`).
    """

    def __init__(self) -> None:
        self._owners: dict[str, str] = {}

    def claim(self, name: str, server: str, original: str) -> None:
        """Record that ``server`` holds ``name``.

        Raises:
            ConfigError: another server already holds ``name``.
        """
        owner = self._owners.setdefault(name, server)
        if owner != server:
            message = (
                f"MCP servers {owner!r} and {server!r} both offer a tool named {name!r} "
                f"({original!r} on {server!r}); give one of the entries another prefix, "
                "or leave the tool out with its tools: list."
            )
            # The turn fails with this message; the log file keeps it too.
            logger.info("%s", message)
            raise ConfigError(message)


def _failure(name: str, result: Any) -> Any:
    """A tool result that reports failure as troupe's tools do ({"error": ...})
    when an MCP server answered with ``isError``; else ``result`` unchanged."""
    if not isinstance(result, dict) or not (result.get("isError") or result.get("is_error")):
        return result
    texts = [
        str(item.get("text"))
        for item in result.get("content") or []
        if isinstance(item, dict) and item.get("text")
    ]
    said = " ".join(texts).strip() or "no reason given"
    return {"error": f"MCP tool {name} failed: {said}"}


def _plain(result: Any) -> Any:
    """A successful MCP result as the data it carries: its structured content,
    else its one text part (parsed when it is JSON), so the model and the
    person read ``{"status": "shipped"}``, not a JSON string inside a content
    list; a result with images or several parts is left as it is."""
    if not isinstance(result, dict) or result.get("isError") or result.get("is_error"):
        return result
    structured = result.get("structuredContent") or result.get("structured_content")
    if isinstance(structured, dict) and structured:
        return structured
    content = result.get("content")
    if not isinstance(content, list) or len(content) != 1:
        return result
    (part,) = content
    if (
        not isinstance(part, dict)
        or part.get("type") != "text"
        or not isinstance(part.get("text"), str)
    ):
        return result
    try:
        parsed = json.loads(part["text"])
    except ValueError:
        return {"result": part["text"]}
    return parsed if isinstance(parsed, dict) else {"result": parsed}


def _expand(value: str, server: McpServer, environ: Mapping[str, str]) -> str:
    def replace(match: re.Match[str]) -> str:
        var = match.group(1)
        if var not in environ:
            raise ConfigError(
                f"mcp_servers entry {server.name!r}: environment variable {var!r} is not "
                "set; export it before starting troupe."
            )
        return environ[var]

    return _ENV_REF.sub(replace, value)


def _connection_params(server: McpServer, confinement: McpConfinement) -> Any:
    from google.adk.tools.mcp_tool.mcp_session_manager import (
        StdioConnectionParams,
        StreamableHTTPConnectionParams,
    )
    from mcp import StdioServerParameters
    from mcp.client.stdio import get_default_environment

    if server.command:
        environ = server.environment()
        env = {k: _expand(v, server, environ) for k, v in server.env.items()}
        command, args = confinement.command_line({**get_default_environment(), **env})
        return StdioConnectionParams(
            server_params=StdioServerParameters(
                command=command,
                args=args,
                env=env or None,
                cwd=confinement.workspace.root,
            ),
            timeout=server.timeout,
        )
    environ = server.environment()
    headers = {k: _expand(v, server, environ) for k, v in server.headers.items()}
    return StreamableHTTPConnectionParams(
        url=server.url or "", headers=headers or None, timeout=server.timeout
    )


def _declared_read_only(tool: object) -> bool:
    """True when the MCP server marked the tool ``readOnlyHint`` (any SDK spelling)."""
    raw = getattr(tool, "raw_mcp_tool", None)
    hints = getattr(raw, "annotations", None)
    return bool(getattr(hints, "read_only_hint", None) or getattr(hints, "readOnlyHint", None))


@functools.cache
def _toolset_class() -> Callable[..., BaseToolset]:
    from google.adk.agents.readonly_context import ReadonlyContext
    from google.adk.tools.base_tool import BaseTool
    from google.adk.tools.mcp_tool.mcp_tool import McpTool
    from google.adk.tools.mcp_tool.mcp_toolset import McpToolset
    from google.adk.tools.tool_context import ToolContext

    from .._adk_compat import adopt_mcp_tool
    from ..sandbox import unconfined_effect
    from ..tool_approval import ask_about_effect, effect_changed, refusal

    class TroupeMcpTool(McpTool):
        """An McpTool whose ``isError`` answers are failures ({"error": ...}),
        as the guards, traces and the path read every tool's failures, and
        whose path arguments are checked before anything is sent."""

        troupe_confinement: McpConfinement | None = None
        troupe_unconfined: bool = False
        """True when the server should run in the jail but the jail is not active here."""
        troupe_stderr: StderrTail | None = None
        """The server's stderr, for the reason behind a bare failure."""
        troupe_always_ask: bool = False
        """True when every call is asked about, whatever the toolset's own setting."""

        def _troupe_problem(self, args: dict[str, Any]) -> str | None:
            confinement = self.troupe_confinement
            return confinement.argument_problem(self.name, args) if confinement else None

        async def check_require_confirmation(
            self, args: dict[str, Any], tool_context: ToolContext
        ) -> bool:
            if self._troupe_problem(args) is not None:
                return False  # refused by run_async before anyone is asked
            if self.troupe_unconfined:
                return False  # run_async asks, marking the call unconfined
            if self.troupe_always_ask:
                return True
            return await super().check_require_confirmation(args, tool_context)

        async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
            if (problem := self._troupe_problem(args)) is not None:
                return {"error": problem, "accepted": "a path inside the workspace"}
            if self.troupe_unconfined:
                # The call is asked about with its effect marked unconfined, so only
                # a person (never --approve auto) lets a tool of an unjailed server run.
                confirmation = tool_context.tool_confirmation
                if confirmation is not None and not confirmation.confirmed:
                    return refusal(self.name, confirmation)
                server = self.troupe_confinement.server.name if self.troupe_confinement else "?"
                effect = unconfined_effect(
                    {"summary": f"call {self.name} on MCP server {server!r}"}
                )
                if confirmation is None:
                    return ask_about_effect(self.name, effect, tool_context)
                if (changed := effect_changed(self.name, effect, tool_context)) is not None:
                    return changed
            tail = self.troupe_stderr
            mark = tail.mark() if tail is not None else 0
            result = await super().run_async(args=args, tool_context=tool_context)
            failed = _failure(self.name, result)
            if failed is result:
                return _plain(result)
            if tail is None:
                return failed
            # A bare "Error executing tool X" says nothing: add what the server
            # wrote to stderr meanwhile (the whole of it is in troupe.log).
            own = getattr(self.raw_mcp_tool, "name", None) or self.name
            reason = await tail.reason_since(mark, own)
            if reason is not None and reason not in failed["error"]:
                failed = {"error": f"{failed['error']} (server said: {reason})"}
            return failed

    class TroupeMcpToolset(McpToolset):
        """An McpToolset whose tools carry the placement's prefix once, under
        names model APIs accept.

        Each ``get_tools`` call returns fresh McpTool objects, so renaming them
        is safe; an McpTool calls the server by the server's own name and
        declares itself to the model by ``name``. After each call
        ``troupe_renamed`` maps every visible name that differs from the
        prefixed server name to the server's name, and ``troupe_descriptions``
        holds each tool's description (for routing). ``troupe_conflict`` is the
        error of the last listing when another server holds one of the names
        (ADK then runs the agent without this toolset; the runtime fails the
        turn instead).
        """

        def __init__(
            self,
            *,
            placement: McpPlacement,
            exclude: Collection[str],
            claims: ToolClaims | None,
            stderr: StderrTail | None = None,
            **kwargs: Any,
        ) -> None:
            super().__init__(**kwargs)
            self.troupe_placement = placement
            self.troupe_renamed: dict[str, str] = {}
            self.troupe_descriptions: dict[str, str] = {}
            self.troupe_conflict: str | None = None
            self._troupe_exclude = frozenset(exclude)
            self.troupe_confinement = McpConfinement(placement.server)
            server = placement.server
            self._troupe_unjailed = (
                server.command is not None and server.jail and not self.troupe_confinement.jailed
            )
            self._troupe_claims = claims if claims is not None else ToolClaims()
            self.troupe_stderr = stderr
            self.troupe_start_approved = False
            """True once a person allowed this server to start outside the jail."""
            self._troupe_said_not_started = False

        def __repr__(self) -> str:
            return f"MCP server {self.troupe_placement.server.name!r}"

        @property
        def troupe_waits_for_approval(self) -> bool:
            """True while the server would start outside the jail (not active here)
            and nobody allowed that: it is not started, and offers no tools."""
            return self._troupe_unjailed and not self.troupe_start_approved

        async def get_tools(
            self, readonly_context: ReadonlyContext | None = None
        ) -> list[BaseTool]:
            if self.troupe_waits_for_approval:
                if not self._troupe_said_not_started:
                    self._troupe_said_not_started = True
                    logger.warning("%s", not_started_unjailed(self.troupe_placement.server.name))
                return []
            tools = await super().get_tools(readonly_context)
            server = self.troupe_placement.server.name
            visible: list[BaseTool] = []
            renamed: dict[str, str] = {}
            for tool in tools:
                wanted = visible_name(self.troupe_placement.prefix, tool.name)
                name = safe_name(wanted, [t.name for t in visible])
                if name in self._troupe_exclude:
                    logger.warning(
                        "MCP server %r: tool %r is hidden because %r is already a tool of "
                        "the same agent; drop it with the entry's tools: list.",
                        server,
                        tool.name,
                        name,
                    )
                    continue
                try:
                    self._troupe_claims.claim(name, server, tool.name)
                except ConfigError as exc:
                    self.troupe_conflict = str(exc)
                    raise
                if name != wanted:
                    renamed[name] = tool.name
                if isinstance(tool, McpTool):
                    adopted = adopt_mcp_tool(tool, TroupeMcpTool)
                    adopted.troupe_confinement = self.troupe_confinement
                    adopted.troupe_unconfined = self._troupe_unjailed
                    adopted.troupe_stderr = self.troupe_stderr
                    # Only a tool the server marks read-only runs without asking, and
                    # only when the server runs in the jail.
                    adopted.troupe_always_ask = (
                        not _declared_read_only(tool) or self._troupe_unjailed
                    )
                tool.name = name
                visible.append(tool)
            self.troupe_conflict = None
            self.troupe_renamed = renamed
            self.troupe_descriptions = {t.name: t.description for t in visible}
            return visible

    return TroupeMcpToolset


def not_started_unjailed(name: str) -> str:
    """Why the stdio server ``name`` was not started, and the two ways to start it."""
    return (
        f"MCP server {name!r} was not started: the sandbox is not active on this machine, "
        "so it would run unjailed with your user's privileges; approve it when `troupe "
        "chat` asks at a terminal, or set `jail: false` on its entry in a config file you "
        "trust (`troupe trust`)"
    )


def waiting_for_approval(root: BaseAgent) -> list[BaseToolset]:
    """The MCP toolsets under ``root`` whose server waits for a person's approval
    to start outside the jail (see :func:`approve_unjailed_start`)."""
    return [t for t in mcp_toolsets(root) if getattr(t, "troupe_waits_for_approval", False)]


def approve_unjailed_start(toolset: BaseToolset) -> None:
    """A person allowed ``toolset``'s server to start outside the jail."""
    toolset.troupe_start_approved = True  # type: ignore[attr-defined]


def build_toolset(
    placement: McpPlacement,
    *,
    exclude: Collection[str] = (),
    errlog: IO[str] | None = None,
    claims: ToolClaims | None = None,
) -> BaseToolset:
    """An ADK McpToolset for ``placement``; no process starts until it is used.

    Tools whose visible name is in ``exclude`` (the owner's other tools) are
    left out with a warning rather than silently shadowing one another.
    Toolsets sharing ``claims`` refuse a tool name another server already holds.
    ``errlog`` receives a stdio server's stderr (default: troupe's log file,
    never the chat).

    Raises:
        ConfigError: a ``${VAR}`` in env or headers is not set.
    """
    server = placement.server
    tail = None
    if errlog is None and server.command is not None:
        tail = StderrTail(server.name, log_stream())
        errlog = tail.stream
    return _toolset_class()(
        placement=placement,
        exclude=exclude,
        claims=claims,
        stderr=tail,
        connection_params=_connection_params(server, McpConfinement(server)),
        tool_filter=list(server.tools) if server.tools is not None else None,
        require_confirmation=server.dangerous,
        errlog=errlog if errlog is not None else log_stream(),
    )


def is_mcp_toolset(item: object) -> bool:
    """True for a toolset :func:`build_toolset` made."""
    return hasattr(item, "troupe_placement")


def tool_name_conflict(agent: object) -> str | None:
    """Why ``agent`` lost an MCP server's tools to a name another server holds,
    if it did (only the agent's own toolsets, not its sub-agents')."""
    for tool in getattr(agent, "tools", None) or []:
        if conflict := getattr(tool, "troupe_conflict", None):
            return str(conflict)
    return None


def mcp_toolsets(agent: BaseAgent) -> list[BaseToolset]:
    """Every MCP toolset held by ``agent`` and its sub-agents."""
    found: list[BaseToolset] = []
    for tool in getattr(agent, "tools", None) or []:
        if is_mcp_toolset(tool):
            found.append(tool)
    for sub in agent.sub_agents:
        found.extend(mcp_toolsets(sub))
    return found


async def mcp_tool_descriptions(agent: BaseAgent) -> dict[str, str]:
    """Every MCP tool under ``agent``, by visible name, with its description.

    Starts the servers that have not listed their tools yet (as the first
    model call would); for routing on what each tool does.
    """
    found: dict[str, str] = {}
    for toolset in mcp_toolsets(agent):
        await toolset.get_tools()
        found.update(getattr(toolset, "troupe_descriptions", {}))
    return found


async def close_toolsets(agent: BaseAgent) -> None:
    """Stop every MCP server the tree under ``agent`` started (safe to repeat)."""
    for toolset in mcp_toolsets(agent):
        await toolset.close()
