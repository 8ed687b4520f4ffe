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
from dataclasses import asdict
from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext

from ..guards.calls import ModelCall, ToolCall, TraceLog
from ..stores.traces import Trace

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
        log.tool_calls.append(
            ToolCall(
                agent=tool_context.agent_name,
                tool=tool.name,
                args=mask_args(tool.name, dict(args)),
                result_chars=len(text),
                duration_ms=round((time.perf_counter() - started) * 1000, 2) if started else 0.0,
                error=str(error) if error else None,
            )
        )
        return None


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
) -> Trace:
    """A :class:`Trace` from a turn's events and its guard record (may be None)."""
    from .events import steps as event_steps

    all_steps = [s for e in events for s in event_steps(e)]
    answer = "\n".join(s.text for s in all_steps if s.kind == "text").strip()
    first = all_steps[0].author if all_steps else None
    path = [first] if first in ("orchestrator", "router") else []
    path += [s.name for s in all_steps if s.kind == "transfer" and s.name]
    failure = next((s for s in all_steps if s.kind == "error"), None)
    if failure is not None and outcome == "answered":
        outcome, error = "error", failure.text
    if record is not None and outcome == "answered":
        if record.stop_reason:
            outcome = "stopped"
        elif getattr(record, "fell_back", False) or (
            all_steps and all_steps[-1].author == "troupe"
        ):
            outcome = "fallback"
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
    )
