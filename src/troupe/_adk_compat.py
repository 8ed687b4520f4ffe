"""Every place troupe reaches past ADK's public API, and only here.

ADK (``google-adk``) is pinned to one minor release; a new one may rename a
private attribute, reword an error or an instruction it injects, or stop
offering a hook troupe overrides. Each piece below is one such reach, named
for what troupe needs, with the ADK release it was checked against and the
public API that would replace it. ``tests/adk_compat/`` runs each one against
the installed ADK, so an upgrade fails there first;
``tests/architecture/test_adk_private_surface.py`` fails when any other module
of troupe touches ADK's private names, assigns ``__class__``, or matches
ADK's messages with a regex.

Everything else in troupe uses public API: plugins and callbacks,
``CallbackContext`` properties and ``get_invocation_context()``,
``LlmRequest.append_tools``, ``McpTool.raw_mcp_tool``, ``BaseTool`` methods.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar, cast

from google.adk.tools.function_tool import FunctionTool
from google.genai import types

if TYPE_CHECKING:
    from google.adk.agents.callback_context import CallbackContext
    from google.adk.agents.invocation_context import InvocationContext
    from google.adk.apps import App
    from google.adk.events.event import Event
    from google.adk.runners import Runner
    from google.adk.sessions.session import Session
    from google.adk.sessions.sqlite_session_service import SqliteSessionService
    from google.adk.tools.mcp_tool.mcp_tool import McpTool

CHECKED_AGAINST = "2.13.0"
"""The google-adk release every piece below was checked against (see ``uv.lock``)."""

_Tool = TypeVar("_Tool", bound="McpTool")
_Server = TypeVar("_Server")


# -- callbacks -----------------------------------------------------------------

CLIENT_CALL_ID_PREFIX = "adk-"
"""How the ids ADK gives function calls start; ADK removes such ids from a
request before the model sees it.

Checked against 2.13.0: ``AF_FUNCTION_CALL_ID_PREFIX`` in the private
``google.adk.utils._function_call_names``, stripped by the flows'
``remove_client_function_call_id``. Public replacement: the constant in a
public module (none in 2.13)."""


def end_invocation(callback_context: CallbackContext) -> None:
    """End the invocation a callback runs in, as ADK's own processors do.

    Checked against 2.13.0: ``CallbackContext._invocation_context`` is the live
    context; the public ``get_invocation_context()`` returns a copy whose
    ``end_invocation`` ADK never reads. Public replacement: an
    ``end_invocation`` setter on ``Context`` (none in 2.13).
    """
    callback_context._invocation_context.end_invocation = True


def enqueue_event_nowait(ctx: InvocationContext, event: Event) -> bool:
    """Hand ``event`` to the runner of ``ctx`` from outside the agent's flow
    (a timer); False when the runner has no event queue (then nothing is sent).

    Checked against 2.13.0: the runner drains ``InvocationContext._event_queue``
    (items are ``(event, processed)``) before it stops for an abort. Public
    replacement: none; ``Runner`` offers no way to emit an event from a timer.
    """
    queue = getattr(ctx, "_event_queue", None)
    if not isinstance(queue, asyncio.Queue):
        return False
    queue.put_nowait((event, None))
    return True


# -- tools ---------------------------------------------------------------------


class NamedFunctionTool(FunctionTool):
    """A FunctionTool declared to the model under ``name`` and ``description``
    rather than its function's ``__name__`` and docstring.

    Checked against 2.13.0: ``FunctionTool`` names its declaration after the
    function, and every consumer (``LlmRequest.append_tools``, the live flow,
    MCP conversion) reads ``_get_declaration()``, which ``BaseTool`` documents
    as the hook subclasses override. Public replacement: ``name`` and
    ``description`` arguments on ``FunctionTool`` (none in 2.13).
    """

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str,
        description: str,
        require_confirmation: bool | Callable[..., bool] = False,
    ) -> None:
        super().__init__(func=func, require_confirmation=require_confirmation)
        self.name = name
        self.description = description

    def _get_declaration(self) -> types.FunctionDeclaration | None:
        decl = super()._get_declaration()
        if decl is not None:
            decl.name = self.name
            decl.description = self.description
        return decl


def adopt_mcp_tool(tool: McpTool, subclass: type[_Tool]) -> _Tool:
    """``tool`` (an McpTool a toolset listed) turned into ``subclass`` in place.

    Checked against 2.13.0: ``McpToolset.get_tools`` constructs ``McpTool(...)``
    itself from private state (its session manager, progress callback), with
    no factory to override, so troupe's subclass is applied to each listed
    tool. ``subclass`` may add methods and class-level defaults only: no
    ``__init__``, no ``__slots__``. Public replacement: a tool-class or
    tool-factory argument on ``McpToolset`` (none in 2.13).
    """
    base = type(tool)
    if not issubclass(subclass, base) or "__init__" in vars(subclass):
        raise TypeError(f"{subclass.__name__} must subclass {base.__name__} without __init__")
    if "__slots__" in vars(subclass):
        raise TypeError(f"{subclass.__name__} must not declare __slots__")
    tool.__class__ = subclass
    return cast(_Tool, tool)


# -- the API server ------------------------------------------------------------


def server_with_runner(
    server_cls: type[_Server], make_runner: Callable[[Any, App, str], Runner], *, name: str
) -> type[_Server]:
    """``server_cls`` (ADK's ``ApiServer`` or ``DevServer``) as a subclass called
    ``name`` that builds each app's runner with ``make_runner(server, app,
    app_name)`` instead of a plain Runner.

    Checked against 2.13.0: ``ApiServer.get_runner_async`` assembles the App
    (extra plugins included) and passes it to ``_create_runner``. Public
    replacement: a runner-factory argument on ``ApiServer`` (none in 2.13);
    filling the public ``runner_dict`` instead would skip the extra plugins.
    """

    class WithRunner(server_cls):  # type: ignore[valid-type,misc]
        def _create_runner(self, agentic_app: App, app_name: str) -> Runner:
            return make_runner(self, agentic_app, app_name)

    WithRunner.__name__ = WithRunner.__qualname__ = name
    return WithRunner


# -- sessions ------------------------------------------------------------------


def sqlite_session_path(service: SqliteSessionService) -> str:
    """The database path ADK's SQLite session service was opened on.

    Checked against 2.13.0: kept only as ``SqliteSessionService._db_path``.
    Public replacement: a ``db_path`` property (none in 2.13).
    """
    return str(service._db_path)


def storage_marker(session: Session) -> str | None:
    """The store's revision of ``session`` as loaded (None: the store keeps none).

    Checked against 2.13.0: ``Session._storage_update_marker``, set by the
    database and MongoDB services and compared on ``append_event`` to refuse a
    stale write. Public replacement: none.
    """
    return session._storage_update_marker


def set_storage_marker(session: Session, marker: str | None) -> None:
    """Mark ``session`` as being at the store's revision ``marker`` (see
    :func:`storage_marker`), after its events and state were reloaded in place."""
    session._storage_update_marker = marker


# -- A2A ------------------------------------------------------------------------


def a2a_user_id(context_id: str) -> str:
    """The user id ADK's A2A executor runs an unauthenticated caller's message as.

    Checked against 2.13.0: ``a2a.converters.request_converter._get_user_id``
    names the caller ``A2A_USER_<context id>`` unless the A2A server
    authenticated a user (troupe's bearer token names none), and the session is
    the context id. troupe needs it to take that session's lock before the
    executor runs. Public replacement: a public function giving the user id of
    a request context (none in 2.13).
    """
    return f"A2A_USER_{context_id}"


# -- ADK's words ---------------------------------------------------------------

# The messages of ADK 2.13 (its scheduler, then the agent resuming a transfer,
# then a transfer outside the tree), of older ADK Python releases, and of the
# Go release. Public replacement: a typed "unknown agent" error (none in 2.13:
# they are ValueErrors).
_UNKNOWN_AGENT_PATTERNS = (
    re.compile(r"Transfer target agent '([^']+)' not found"),
    re.compile(r"Agent '([^']+)' not found\."),
    re.compile(r"Cannot transfer from '[^']*' to unrelated agent '([^']+)'"),
    re.compile(r"Agent '?([^'\s]+)'? not found in the agent tree"),
    re.compile(r"failed to find agent: (\S+)"),
)


def unknown_agent_name(error: BaseException) -> str | None:
    """The agent name in an ADK 'agent not found' error, else None."""
    message = str(error)
    for pattern in _UNKNOWN_AGENT_PATTERNS:
        if match := pattern.search(message):
            return match.group(1)
    return None


# What ADK 2.13's agent-transfer request processor appends to an agent's
# system instruction when it has transfer targets. Public replacement: an
# option to leave the list out (none in 2.13).
_TRANSFER_BLOCK = re.compile(
    r"\n*You have a list of other agents to transfer to:.*?"
    r"\*\*NOTE\*\*: the only available agents for `transfer_to_agent` function are\n[^\n]*\n?",
    re.S,
)


def without_transfer_list(system_instruction: str) -> str:
    """``system_instruction`` without the list of transfer targets ADK appended."""
    return _TRANSFER_BLOCK.sub("\n", system_instruction).rstrip() + "\n"


# ADK 2.13's MCP session context prefixes each failure to connect; a retry
# wraps it again. Public replacement: a typed connection error (none in 2.13).
_MCP_SESSION_PREFIX = re.compile(r"^(Failed to create MCP session: )+")


def without_mcp_session_prefix(message: str) -> str:
    """An MCP connection error's message without ADK's repeated lead-in."""
    return _MCP_SESSION_PREFIX.sub("", message).strip()


# How ADK 2.13 relays another agent's turn to the next agent's model: a user
# message starting "For context:" with the other agent's words fenced between
# quote markers (the markers are private to ADK's flows). Older releases
# started such messages "[agent] said". Public replacement: none.
_RELAYED_PREFIXES = ("For context:", "[orchestrator]")
_QUOTE_MARKER = "<<<BEGIN_QUOTED"
_RELAYED_RESULT = re.compile(
    r"`(\w+)` tool returned result:\n<<<BEGIN_QUOTED_AGENT_CONTENT>>>\n(.*?)\n<<<END_QUOTED", re.S
)


def is_relayed_context(text: str) -> bool:
    """True for a user-role text ADK wrote to relay another agent's turn."""
    return text.startswith(_RELAYED_PREFIXES) or _QUOTE_MARKER in text


def relayed_tool_results(text: str) -> Iterator[tuple[str, str]]:
    """(tool, result) for each tool result ADK relays in ``text``, in order."""
    for match in _RELAYED_RESULT.finditer(text):
        yield match.group(1), match.group(2)
