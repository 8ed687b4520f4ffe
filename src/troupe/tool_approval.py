"""A tool call that waits for the user's approval of what it will do.

The tool side of approvals, shared by every tool troupe wraps (its own tools
in :mod:`troupe.tree`, MCP tools in :mod:`troupe.mcp.toolset`): describe the
call's effect and pause for confirmation, refuse when it was declined, and
refuse again when what the call would do changed after it was approved. The
side that answers the requests (ask the user, approve or deny everything) is
:mod:`troupe.runtime.approvals`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from google.adk.tools.tool_confirmation import ToolConfirmation
from google.adk.tools.tool_context import ToolContext


def refusal(tool_name: str, confirmation: ToolConfirmation | None) -> dict[str, Any]:
    """What the model receives instead of a result when a call was not approved."""
    payload = confirmation.payload if confirmation is not None else None
    reason = payload.get("reason") if isinstance(payload, dict) else None
    reason = str(reason or f"the user declined to run {tool_name}")
    return {
        "error": f"not run: {reason}. Tell the user that {tool_name} was not run because "
        "it was not approved; do not retry it unless the user asks again.",
        "declined": True,
        "tool": tool_name,
    }


def approved_effect_key(tool_context: ToolContext) -> str:
    """State key: the effect that was approved for this call (see :func:`effect_changed`)."""
    return f"troupe.approved_effect.{tool_context.function_call_id}"


async def describe_effect(
    effect: Callable[..., Any], args: dict[str, Any], tool_context: ToolContext
) -> dict[str, Any]:
    """What a call with ``args`` would do, as ``effect`` describes it."""
    try:
        described = effect(**args, tool_context=tool_context)
        if inspect.isawaitable(described):
            described = await described
        return dict(described)
    except Exception as exc:  # a describer's failure must not crash the turn
        return {"summary": f"(could not describe the effect: {exc})"}


def ask_about_effect(
    tool_name: str, effect: dict[str, Any], tool_context: ToolContext
) -> dict[str, Any]:
    """Pause the call for approval, showing ``effect`` and remembering it.

    The effect is kept in the session's state (which neither the model nor
    the approver's answer can write), so :func:`effect_changed` can compare
    it with the effect at run time.
    """
    tool_context.state[approved_effect_key(tool_context)] = effect
    tool_context.request_confirmation(
        hint=f"Approve or reject {tool_name}: {effect.get('summary', '')}".rstrip(": "),
        payload={"effect": effect},
    )
    tool_context.actions.skip_summarization = True
    return {"error": "This tool call requires confirmation, please approve or reject."}


def effect_changed(
    tool_name: str, effect: dict[str, Any], tool_context: ToolContext
) -> dict[str, Any] | None:
    """None when ``effect`` is what was approved, else the refusal for the model."""
    key = approved_effect_key(tool_context)
    approved = tool_context.state.get(key)
    tool_context.state[key] = None  # one approval, one run
    if approved == effect:
        return None
    before = approved.get("summary") if isinstance(approved, dict) else None
    return {
        "error": f"refused: what {tool_name} would do changed after it was approved "
        f"(approved: {before or 'nothing recorded'}; now: {effect.get('summary', '?')}); "
        "nothing was run. Tell the user, and call the tool again so they can approve "
        "what it does now.",
        "declined": True,
        "tool": tool_name,
        "approved_effect": approved,
        "current_effect": effect,
    }
