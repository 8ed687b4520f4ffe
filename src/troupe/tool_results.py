"""A tool result as text a person can read: the form every user-facing message uses."""

from __future__ import annotations

import json
from typing import Any

TRUNCATED = "\n... (truncated)"


def readable_result(value: Any, limit: int | None = None) -> str:
    """``value`` as plain lines ('key: value', list items one a line, empty fields left out).

    With ``limit``, text beyond that many characters is cut and marked as cut.
    """
    text = _render(value)
    if limit is None or len(text) <= limit:
        return text
    return text[:limit] + TRUNCATED


def _render(value: Any) -> str:
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            if item is None or item is False or item in ("", [], {}):
                continue
            if isinstance(item, str) and "\n" in item.strip():
                lines.append(f"{key}:\n{_indent(item.rstrip())}")
            elif isinstance(item, list):
                lines.append(f"{key}:\n" + _indent("\n".join(_render(i) for i in item)))
            elif isinstance(item, dict):
                lines.append(f"{key}:\n{_indent(_render(item))}")
            else:
                lines.append(f"{key}: {str(item).strip()}")
        return "\n".join(lines)
    if isinstance(value, list):
        return "\n".join(_render(i) for i in value)
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())
