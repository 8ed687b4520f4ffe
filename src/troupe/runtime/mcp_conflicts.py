"""Failing a turn whose agent lost an MCP server to a tool-name clash.

Two MCP servers offering one tool name would leave the model one tool for two
jobs. ``troupe tree`` refuses such a config; in a turn ADK would only log the
second server's failed listing and run the agent without its tools, so the
model would answer as though they never existed. This plugin turns that into
a failed turn: an event with error code :data:`~troupe.mcp.toolset.TOOL_NAME_CONFLICT`
and the message naming both servers and the tool, before the model is called.
"""

from __future__ import annotations

from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin

from .._adk_compat import end_invocation
from ..mcp.toolset import TOOL_NAME_CONFLICT, tool_name_conflict


class McpConflictPlugin(BasePlugin):
    """Ends the turn with the clash's error instead of calling the model without the tools."""

    def __init__(self) -> None:
        super().__init__(name="troupe_mcp_conflicts")

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        # ADK lists an agent's toolsets before this callback, so a clash is known here.
        conflict = tool_name_conflict(callback_context.get_invocation_context().agent)
        if conflict is None:
            return None
        end_invocation(callback_context)
        return LlmResponse(error_code=TOOL_NAME_CONFLICT, error_message=conflict)
