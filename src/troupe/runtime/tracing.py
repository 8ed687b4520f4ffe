"""Traces: what happened in each turn, kept in SQLite and shown by ``troupe trace``.

A trace records the path through the agents, every model call (agent, tokens,
latency), every tool call (arguments with secrets masked, result size,
duration), the repairs, rejections and hand-offs, and how the turn ended.
ADK's own OpenTelemetry spans are untouched, for users with a collector.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Collection
from dataclasses import asdict, replace
from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext

from ..guards.calls import ModelCall, ToolCall, TraceLog
from ..stores.traces import (
    ANSWERED,
    AWAITING_APPROVAL,
    FAILED,
    FALLBACK,
    STOPPED,
    Trace,
    TraceStore,
)

MASK = "***"
_SENSITIVE_KEY = re.compile(r"password|passwd|secret|token|api_?key|credential|private", re.I)
_SECRET_TOOLS_VALUE_KEYS = {"value", "plaintext"}
_MAX_TEXT = 2000


def mask_args(tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """``args`` with secret-looking values replaced by ***."""
    out: dict[str, Any] = {}
    for key, value in args.items():
        secret_value = tool.startswith("secrets_") and key in _SECRET_TOOLS_VALUE_KEYS
        if secret_value or _SENSITIVE_KEY.search(key):
            out[key] = MASK
        elif isinstance(value, dict):
            out[key] = mask_args(tool, value)
        else:
            out[key] = value
    return out


def _output_tokens(usage: Any) -> int:
    """Answer plus thought tokens, as billed."""
    if usage is None:
        return 0
    return (usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0)


class Tracer:
    """ADK callbacks that time model and tool calls into the current turn's log."""

    def __init__(self, logs: Any) -> None:
        # ``logs`` maps a callback context to the TraceLog of its turn.
        self._logs = logs

    def before_model(
        self, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        log: TraceLog = self._logs(callback_context)
        log._model_started[callback_context.agent_name] = time.perf_counter()
        return None

    def after_model(
        self, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        if llm_response.partial:
            return None
        log: TraceLog = self._logs(callback_context)
        started = log._model_started.pop(callback_context.agent_name, None)
        usage = llm_response.usage_metadata
        log.model_calls.append(
            ModelCall(
                agent=callback_context.agent_name,
                prompt_tokens=(usage.prompt_token_count or 0) if usage else 0,
                output_tokens=_output_tokens(usage),
                cached_tokens=(usage.cached_content_token_count or 0) if usage else 0,
                latency_ms=round((time.perf_counter() - started) * 1000, 2) if started else 0.0,
            )
        )
        return None

    def before_tool(
        self, tool: BaseTool, args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        log: TraceLog = self._logs(tool_context)
        log._tool_started[tool_context.function_call_id or tool.name] = time.perf_counter()
        return None

    def after_tool(
        self, tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, tool_response: Any
    ) -> dict[str, Any] | None:
        log: TraceLog = self._logs(tool_context)
        started = log._tool_started.pop(tool_context.function_call_id or tool.name, None)
        text = json.dumps(tool_response, default=str, ensure_ascii=False)
        error = tool_response.get("error") if isinstance(tool_response, dict) else None
        asked = tool_context.actions.requested_tool_confirmations or {}
        paused = tool_context.function_call_id in asked
        log.tool_calls.append(
            ToolCall(
                agent=tool_context.agent_name,
                tool=tool.name,
                args=mask_args(tool.name, dict(args)),
                result_chars=len(text),
                duration_ms=round((time.perf_counter() - started) * 1000, 2) if started else 0.0,
                error=str(error) if error and not paused else None,
                paused_for_approval=paused,
            )
        )
        return None


def awaits_approval(events: list[Any]) -> bool:
    """True when the turn ended on a confirmation request nobody has answered."""
    from .approvals import approval_requests

    asked = {r.request_id for e in events for r in approval_requests(e)}
    answered = {r.id for e in events for r in e.get_function_responses()}
    return bool(asked - answered)


def answers_confirmation(message: Any) -> bool:
    """True for a user message that answers a confirmation request (an approval reply)."""
    from .approvals import REQUEST_CONFIRMATION

    parts = getattr(message, "parts", None) or []
    return any(
        p.function_response is not None and p.function_response.name == REQUEST_CONFIRMATION
        for p in parts
    )


def continued(paused: Trace, resumed: Trace) -> Trace:
    """One trace for a turn that paused for approval and resumed after the answer:
    the paused turn's request, id and start, both halves' calls, the resumed half's end."""
    path = list(paused.path)
    for name in resumed.path:
        if not path or path[-1] != name:
            path.append(name)
    return replace(
        resumed,
        id=paused.id,
        session_id=paused.session_id,
        started_at=paused.started_at,
        duration_ms=round(paused.duration_ms + resumed.duration_ms, 2),
        request=paused.request,
        answer=resumed.answer or paused.answer,
        path=path,
        steps=paused.steps + resumed.steps,
        model_calls=paused.model_calls + resumed.model_calls,
        tool_calls=paused.tool_calls + resumed.tool_calls,
        repairs=paused.repairs + resumed.repairs,
        unresolved=paused.unresolved + resumed.unresolved,
        invalid_names=paused.invalid_names + resumed.invalid_names,
        rejections=paused.rejections + resumed.rejections,
        reached=paused.reached + [r for r in resumed.reached if r not in paused.reached],
    )


def resumes_approval(message: Any, session_events: list[Any] | None = None) -> bool:
    """True when a turn answers a confirmation request: its message does, or (ADK
    resumes a paused invocation with its first message) the session's last user event."""
    if answers_confirmation(message):
        return True
    for event in reversed(session_events or []):
        if getattr(event, "author", None) == "user":
            return answers_confirmation(event.content)
    return False


def record_trace(store: TraceStore, trace: Trace, resumed: bool) -> Trace:
    """Write ``trace``; a turn ``resumed`` by an approval answer continues the
    session's paused trace instead of starting another."""
    if resumed:
        last = store.list(limit=1, session_id=trace.session_id)
        if last and last[0].outcome == AWAITING_APPROVAL:
            trace = continued(last[0], trace)
    store.add(trace)
    return trace


def clip(text: str, limit: int = _MAX_TEXT) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def build_trace(
    session_id: str,
    request: str,
    events: list[Any],
    record: Any,
    *,
    outcome: str,
    error: str | None,
    started_at: float,
    duration_s: float,
    allowed: Collection[str] = (),
) -> Trace:
    """A :class:`Trace` from a turn's events and its guard record (may be None)."""
    from .events import steps as event_steps

    all_steps = [s for e in events for s in event_steps(e)]
    answer = "\n".join(s.text for s in all_steps if s.kind == "text").strip()
    first = all_steps[0].author if all_steps else None
    path = [first] if first in ("orchestrator", "router") else []
    path += [s.name for s in all_steps if s.kind == "transfer" and s.name]
    failure = next((s for s in all_steps if s.kind == "error"), None)
    if failure is not None and outcome == ANSWERED:
        outcome, error = FAILED, failure.text
    if record is not None and outcome == ANSWERED:
        if record.stop_reason:
            outcome = STOPPED
        elif getattr(record, "fell_back", False) or (
            all_steps and all_steps[-1].author == "troupe"
        ):
            outcome = FALLBACK
    if outcome == ANSWERED and awaits_approval(events):
        outcome = AWAITING_APPROVAL
    log = record.trace if record is not None else TraceLog()
    return Trace(
        id=Trace.new_id(),
        session_id=session_id,
        started_at=started_at,
        duration_ms=round(duration_s * 1000, 2),
        request=clip(request),
        outcome=outcome,
        answer=clip(answer),
        path=path,
        steps=[
            {"author": s.author, "kind": s.kind, "name": s.name, "text": clip(s.text, 500)}
            for s in all_steps
        ],
        model_calls=[asdict(c) for c in log.model_calls],
        tool_calls=[asdict(c) for c in log.tool_calls],
        repairs=[list(r) for r in (record.repairs if record else [])],
        unresolved=list(record.unresolved if record else []),
        invalid_names=list(record.invalid_names if record else []),
        rejections=list(record.rejected_by if record else []),
        reached=list(record.reached if record else []),
        stop_reason=record.stop_reason if record else None,
        error=error,
        allowed=sorted(allowed),
    )
