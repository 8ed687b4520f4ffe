"""The model and tool calls of one turn, as the trace records them.

The guards keep a :class:`TraceLog` in each turn's record; the runtime's
:class:`~troupe.runtime.tracing.Tracer` callbacks fill it in and
:func:`~troupe.runtime.tracing.build_trace` turns it into the stored trace.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ModelCall:
    agent: str
    prompt_tokens: int = 0
    output_tokens: int = 0
    latency_ms: float = 0.0
    cached_tokens: int = 0
    """Prompt tokens the provider served from its prompt cache (when it says so)."""


@dataclass
class ToolCall:
    agent: str
    tool: str
    args: dict[str, Any]
    result_chars: int = 0
    duration_ms: float = 0.0
    error: str | None = None
    paused_for_approval: bool = False
    """The call did not run: it asked for approval (its run, once approved, is another entry)."""


@dataclass
class TraceLog:
    """Model and tool calls of one turn, filled in by the runtime's tracer callbacks."""

    model_calls: list[ModelCall] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    _model_started: dict[str, float] = field(default_factory=dict)
    _tool_started: dict[str, float] = field(default_factory=dict)
