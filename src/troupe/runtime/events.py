"""A flat view of ADK events: who did what, for the CLI, JSON output and tests."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Literal

from google.adk.events.event import Event

from ..mcp.toolset import TOOL_NAME_CONFLICT
from ..prompts import TRANSFER_TOOL
from ..remote import REMOTE_FAILED
from ..routing.fastpath import ROUTER_NAME, is_router_call
from ..terminal_text import json_text
from .approvals import REQUEST_CONFIRMATION, approval_requests, is_approval_plumbing

FAILURE_CODES = frozenset({REMOTE_FAILED, TOOL_NAME_CONFLICT})
"""``error_code`` values of the events that end a turn as failed."""

EventKind = Literal["transfer", "tool_call", "tool_result", "text", "error"]


@dataclass(frozen=True)
class Step:
    """One thing an agent did."""

    author: str
    """The agent that produced it."""
    kind: EventKind
    """transfer, tool_call, tool_result, text, or error (the turn failed)."""
    name: str | None
    """Transfer target, the tool's name, or an error's code; None for text."""
    text: str
    """The text, the call's arguments as JSON, the result as JSON, or why it failed."""

    def to_json(self) -> str:
        """One JSON object: author, kind, name, text (control characters JSON-escaped)."""
        return json_text(asdict(self))


def _dump(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def partial_text(event: Event) -> str:
    """The text a streamed (partial) event adds; empty for any other event."""
    if not event.partial or event.author == "user" or event.content is None:
        return ""
    return "".join(p.text for p in event.content.parts or [] if p.text and not p.thought)


def steps(event: Event) -> list[Step]:
    """The steps one ADK event holds, in order."""
    if event.author == "user" or event.partial:
        return []
    if is_failure(event):
        return [Step(event.author, "error", event.error_code, event.error_message or "")]
    target = event.actions.transfer_to_agent if event.actions else None
    parts = event.content.parts or [] if event.content else []
    if target and not any(
        p.function_response is not None and p.function_response.name == TRANSFER_TOOL for p in parts
    ):
        # A hand-off the runtime made (a rejected task sent to the agent it
        # named) carries the transfer and at most a thought.
        return [Step(event.author, "transfer", target, "")]
    out: list[Step] = []
    for part in parts:
        if part.function_call is not None:
            call = part.function_call
            if call.name != TRANSFER_TOOL:
                out.append(Step(event.author, "tool_call", call.name, _dump(dict(call.args or {}))))
        elif part.function_response is not None:
            resp = part.function_response
            if resp.name == TRANSFER_TOOL and not _is_error(resp.response):
                # The target actually used: a repaired name differs from the call's.
                target = event.actions.transfer_to_agent if event.actions else None
                author = ROUTER_NAME if is_router_call(resp.id) else event.author
                out.append(Step(author, "transfer", str(target), ""))
                continue
            out.append(Step(event.author, "tool_result", resp.name, _dump(resp.response)))
        elif part.text and not part.thought:
            out.append(Step(event.author, "text", None, part.text))
    return out


def is_failure(event: Event) -> bool:
    """True for an event that ends the turn as failed: a remote agent that could
    not answer, or two MCP servers offering one tool name (:data:`FAILURE_CODES`).
    A model's own error fields (an empty or malformed reply) are left to the
    runtime's repairs."""
    return event.error_code in FAILURE_CODES


def _is_error(response: Any) -> bool:
    return isinstance(response, dict) and "error" in response


@dataclass(frozen=True)
class Line:
    """One line of a stored conversation: who said or did what."""

    author: str
    """``user`` or the agent's name."""
    kind: str
    """``message`` for the user's text, ``approval`` for a tool call waiting for
    the user's yes or no (``name`` the tool, ``text`` what it would do),
    ``decision`` for the user's answer, else a :class:`Step` kind."""
    name: str | None
    """The transfer target or the tool, when there is one."""
    text: str
    """What was said, the call's arguments or the tool's result."""


def conversation(events: list[Event]) -> list[Line]:
    """The stored events of a session as lines: user messages, transfers, tools,
    answers, and each approval asked for and given (ADK's
    ``adk_request_confirmation`` call and the paused tool's placeholder result
    are shown as the question and the answer, not as tools)."""
    lines: list[Line] = []
    for event in events:
        if event.author == "user":
            lines.extend(_user_lines(event))
            continue
        if is_approval_plumbing(event):
            lines.extend(_approval_asked(event))
            continue
        lines.extend(Line(s.author, s.kind, s.name, s.text) for s in steps(event))
    return lines


def _user_lines(event: Event) -> list[Line]:
    parts = (event.content.parts if event.content else None) or []
    text = "".join(part.text for part in parts if part.text)
    lines = [Line("user", "message", None, text)] if text else []
    for part in parts:
        answer = part.function_response
        if answer is not None and answer.name == REQUEST_CONFIRMATION:
            given = answer.response or {}
            verdict = "approved" if given.get("confirmed") else "declined"
            reason = (given.get("payload") or {}).get("reason")
            said = f"{verdict}: {reason}" if reason else verdict
            lines.append(Line("user", "decision", None, said))
    return lines


def _approval_asked(event: Event) -> list[Line]:
    """The question a paused tool call asks, one line per call (what it would
    do, else its arguments); the placeholder result ("requires confirmation")
    says nothing and is left out."""
    return [
        Line(asked.agent, "approval", asked.tool, asked.effect.get("summary") or _dump(asked.args))
        for asked in approval_requests(event)
    ]
