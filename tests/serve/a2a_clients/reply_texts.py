"""What both A2A client scripts share: pulling texts out of a reply as plain data.

Each script runs as ``python SCRIPT`` (its folder is on ``sys.path``), under
either SDK version, so this module imports nothing from a2a.
"""

from __future__ import annotations

from typing import Any


def texts(value: Any) -> list[str]:
    """Every string under a ``text`` key, depth first."""
    if isinstance(value, dict):
        found = [value["text"]] if isinstance(value.get("text"), str) else []
        return found + [t for v in value.values() for t in texts(v)]
    if isinstance(value, list | tuple):
        return [t for v in value for t in texts(v)]
    return []


def confirmation_requests(value: Any) -> list[dict[str, Any]]:
    """Every ``adk_request_confirmation`` call in a reply (ADK's approval question)."""
    if isinstance(value, dict):
        found = (
            [value] if value.get("name") == "adk_request_confirmation" and "args" in value else []
        )
        return found + [c for v in value.values() for c in confirmation_requests(v)]
    if isinstance(value, list | tuple):
        return [c for v in value for c in confirmation_requests(v)]
    return []
