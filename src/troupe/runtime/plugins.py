"""troupe's runtime as ADK plugins, so every door (CLI, ``troupe serve``, ``adk web``,
``adk run``, A2A) runs the same guards, usage counts, time limit and traces.

Each plugin does one job and keeps its per-turn state in the
:class:`~troupe.guards.turn.TurnRecord` of the invocation (or of the
Assistant's turn, when one is open for the session):

* :class:`UsagePlugin` times model and tool calls and counts tokens;
* :class:`GuardPlugin` runs the :class:`~troupe.guards.turn.Guards`;
* :class:`TurnTimeoutPlugin` ends a turn that outlives ``turn_timeout_s``
  with the stop message, by aborting the invocation;
* :class:`TracePlugin` keeps the turn's events and writes its trace.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events.event import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from .._adk_compat import enqueue_event_nowait
from ..guards.turn import Guards, TurnRecord, stop_message
from ..stores.lock_limits import LeaseLostError
from ..stores.traces import ANSWERED, FAILED, INTERRUPTED, TIMEOUT, TraceStore
from ..turn_state import NOTE_AUTHOR
from .tracing import Tracer, build_trace, record_trace, resumes_approval

logger = logging.getLogger("troupe.runtime")


def note_event(text: str, invocation_id: str = "") -> Event:
    """An event troupe adds itself, e.g. a stop message or a fallback answer."""
    return Event(
        author=NOTE_AUTHOR,
        invocation_id=invocation_id or "troupe-note",
        content=types.Content(role="model", parts=[types.Part(text=text)]),
    )


def message_text(message: types.Content | str | None) -> str:
    """The text of a user message, for traces."""
    if message is None:
        return ""
    if isinstance(message, str):
        return message
    texts = [p.text for p in message.parts or [] if p.text]
    return " ".join(texts) if texts else "(reply to a confirmation request)"


class _Callbacks(Protocol):
    """Agent-style callbacks: the shape of :class:`Guards` and :class:`Tracer`."""

    def before_model(
        self, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None: ...

    def after_model(
        self, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None: ...

    def before_tool(
        self, tool: BaseTool, args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None: ...

    def after_tool(
        self, tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, tool_response: Any
    ) -> dict[str, Any] | None: ...


class _CallbackPlugin(BasePlugin):
    """A plugin that runs one set of agent-style callbacks for every agent."""

    def __init__(self, name: str, callbacks: _Callbacks) -> None:
        super().__init__(name=name)
        self._callbacks = callbacks

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        return self._callbacks.before_model(callback_context, llm_request)

    async def after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        return self._callbacks.after_model(callback_context, llm_response)

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        return self._callbacks.before_tool(tool, tool_args, tool_context)

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        return self._callbacks.after_tool(tool, tool_args, tool_context, result)


class UsagePlugin(_CallbackPlugin):
    """Model calls with prompt/output tokens and latency, tool calls with timings."""

    def __init__(self, guards: Guards) -> None:
        super().__init__("troupe_usage", Tracer(lambda ctx: guards.turn_for(ctx).trace))


class GuardPlugin(_CallbackPlugin):
    """Transfer and reply repair, limits, repeat detection and ``[REJECT]`` bookkeeping."""

    def __init__(self, guards: Guards) -> None:
        super().__init__("troupe_guards", guards)
        self.guards = guards

    async def after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        repaired = self.guards.after_model(callback_context, llm_response)
        if repaired is not None:
            # Repaired in place, so the plugins after this one (recovery)
            # still see the reply: ADK stops at the first plugin that returns one.
            llm_response.content = repaired.content
        return None


class RouterPlugin(BasePlugin):
    """The fast-path router: answers the orchestrator's model call itself when sure."""

    def __init__(
        self,
        before_model: Callable[[CallbackContext, LlmRequest], Awaitable[LlmResponse | None]],
        after_model: Callable[[CallbackContext, LlmResponse], None] | None = None,
    ) -> None:
        super().__init__(name="troupe_router")
        self._before_model = before_model
        self._after_model = after_model

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        return await self._before_model(callback_context, llm_request)

    async def after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        # In place, and None: the plugins after this one still see the reply.
        if self._after_model is not None:
            self._after_model(callback_context, llm_response)
        return None


class TurnTimeoutPlugin(BasePlugin):
    """Ends a turn at ``turn_timeout_s`` with the stop message, through any door.

    A timer starts with the first invocation of the turn. When it fires, the
    stop message is queued as the invocation's next event and the invocation
    is aborted: ADK cancels the model or tool call in flight and seals its
    pending calls, so the turn ends on time whoever runs it.
    """

    def __init__(self, guards: Guards) -> None:
        super().__init__(name="troupe_turn_timeout")
        self.guards = guards
        self._timers: dict[str, asyncio.TimerHandle] = {}

    @property
    def timeout(self) -> float | None:
        return self.guards.settings.turn_timeout_s

    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        timeout = self.timeout
        if not timeout:
            return None
        turn = self.guards.turn_for(invocation_context)
        loop = asyncio.get_running_loop()
        if turn.deadline is None:
            turn.deadline = loop.time() + timeout
        remaining = turn.deadline - loop.time()
        if remaining <= 0:
            self._mark(turn)
            return types.Content(role="model", parts=[types.Part(text=stop_message(turn))])
        self._timers[invocation_context.invocation_id] = loop.call_later(
            remaining, self._expire, invocation_context, turn
        )
        return None

    def _mark(self, turn: TurnRecord) -> None:
        turn.timed_out = True
        if turn.stop_reason is None:
            turn.stop_reason = f"it took longer than {self.timeout:g} seconds"

    def _expire(self, ctx: InvocationContext, turn: TurnRecord) -> None:
        self._timers.pop(ctx.invocation_id, None)
        if ctx.is_aborted:
            return
        self._mark(turn)
        logger.warning("Turn timed out: %s", turn.stop_reason)
        note = note_event(stop_message(turn), ctx.invocation_id)
        # The runner drains what is queued before it stops for the abort.
        if not enqueue_event_nowait(ctx, note):
            turn.events.append(note)
        ctx.abort()

    def _cancel(self, ctx: InvocationContext) -> None:
        timer = self._timers.pop(ctx.invocation_id, None)
        if timer is not None:
            timer.cancel()

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        self._cancel(invocation_context)

    async def on_run_error_callback(
        self, *, invocation_context: InvocationContext, error: Exception
    ) -> None:
        self._cancel(invocation_context)


class TracePlugin(BasePlugin):
    """Keeps each turn's events and, for turns no caller owns, writes the trace.

    The Assistant writes the trace of the turns it opens itself (a turn there
    may span several invocations); every other door gets one trace per
    invocation from here.
    """

    def __init__(self, guards: Guards, store: TraceStore | None) -> None:
        super().__init__(name="troupe_trace")
        self.guards = guards
        self.store = store

    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        self.guards.turn_for(invocation_context).events.append(event)
        return None

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        await self._finish(invocation_context, error=None)

    async def on_run_error_callback(
        self, *, invocation_context: InvocationContext, error: Exception
    ) -> None:
        # A turn whose replica lost the session to another was closed by that one.
        failed = INTERRUPTED if isinstance(error, LeaseLostError) else FAILED
        await self._finish(
            invocation_context, error=f"{type(error).__name__}: {error}", failed=failed
        )

    async def _finish(
        self, ctx: InvocationContext, *, error: str | None, failed: str = FAILED
    ) -> None:
        turn = self.guards.end_invocation(ctx)
        if turn is None or self.store is None:
            return
        outcome = failed if error else TIMEOUT if turn.timed_out else ANSWERED
        trace = build_trace(
            ctx.session.id,
            message_text(ctx.user_content),
            turn.events,
            turn,
            outcome=outcome,
            error=error,
            started_at=turn.started_at,
            duration_s=turn_duration(turn),
        )
        try:
            # Off the event loop: the store may be a PostgreSQL database away.
            resumed = resumes_approval(ctx.user_content, ctx.session.events)
            await asyncio.to_thread(record_trace, self.store, trace, resumed)
        except Exception as exc:  # a full disk must not fail the user's turn
            logger.warning("Could not write the trace of turn %s: %s", trace.id, exc)


def turn_duration(turn: TurnRecord) -> float:
    """Seconds since the turn started."""
    return time.perf_counter() - turn.clock
