"""Reading an ADK LlmRequest: its system instruction and the user's texts."""

from __future__ import annotations

from google.adk.models.llm_request import LlmRequest
from google.genai import types


def system_text(request: LlmRequest) -> str:
    """The system instruction of ``request`` as plain text."""
    si = request.config.system_instruction
    if si is None:
        return ""
    if isinstance(si, str):
        return si
    if isinstance(si, types.Content):
        return "\n".join(p.text or "" for p in si.parts or [])
    return str(si)


def user_texts(request: LlmRequest) -> list[str]:
    """The texts of the user-role contents of ``request``, oldest first."""
    return [
        part.text
        for content in request.contents
        if content.role == "user"
        for part in content.parts or []
        if part.text
    ]
