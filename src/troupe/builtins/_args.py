"""Argument checks shared by the built-in tools, and the guard that turns failures into dicts.

A model can send anything: a number where text belongs, an empty string, a
list of the wrong things. Each check raises :class:`BadArgument`, naming the
argument and what it accepts; :func:`guarded` turns that (and a store
failure) into the structured error every built-in tool returns.
"""

from __future__ import annotations

import functools
import inspect
import logging
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from ..errors import BadArgument, TroupeError, unexpected_failure
from .workspace import PathOutsideWorkspace, tool_error

logger = logging.getLogger("troupe.builtins")

F = TypeVar("F", bound=Callable[..., Any])

MAX_TEXT_CHARS = 100_000
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_RELATIVE = re.compile(r"^\s*(\d+)\s*(m|min|mins|minutes?|h|hours?|d|days?|w|weeks?)\s*(ago)?\s*$")
_UNIT_SECONDS = {"m": 60, "h": 3600, "d": 86400, "w": 604800}


def guarded(fn: F) -> F:
    """Wrap a tool so that bad arguments and store failures return an error dict.

    The wrapper keeps the function's name, docstring and signature, which ADK
    reads to build the declaration the model sees.
    """

    def failure(exc: BaseException) -> dict[str, Any]:
        if isinstance(exc, BadArgument):
            return tool_error(str(exc), exc.accepted)
        if isinstance(exc, PathOutsideWorkspace):
            return tool_error(f"refused: {exc}", "a path inside the workspace")
        if isinstance(exc, TroupeError):
            return tool_error(str(exc))
        if isinstance(exc, OSError):
            return tool_error(f"{fn.__name__} could not use a file: {exc}")
        # A bug should not end the user's turn; the debug log keeps the traceback.
        logger.debug("built-in tool %s failed", fn.__name__, exc_info=exc)
        return tool_error(unexpected_failure(exc))

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return await fn(*args, **kwargs)
            except Exception as exc:
                return failure(exc)

        return async_wrapper  # type: ignore[return-value]

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            return failure(exc)

    return wrapper  # type: ignore[return-value]


def text_arg(name: str, value: Any, *, example: str, max_chars: int = MAX_TEXT_CHARS) -> str:
    """A required, non-empty string, stripped."""
    if not isinstance(value, str):
        raise BadArgument(
            f"{name} must be text, got {type(value).__name__} {value!r}",
            f"a non-empty string such as {example!r}",
        )
    if not value.strip():
        raise BadArgument(f"{name} is empty", f"a non-empty string such as {example!r}")
    if len(value) > max_chars:
        raise BadArgument(
            f"{name} is {len(value)} characters long, over the limit of {max_chars}",
            f"at most {max_chars} characters",
        )
    return value.strip()


def optional_text(name: str, value: Any, *, example: str) -> str | None:
    """None or an empty string as None; otherwise :func:`text_arg`."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return text_arg(name, value, example=example)


def name_arg(name: str, value: Any, *, example: str) -> str:
    """A short identifier: letters, digits, '_', '-' and '.', starting with a letter or digit."""
    text = text_arg(name, value, example=example, max_chars=64)
    if not _NAME.match(text):
        raise BadArgument(
            f"{name} {text!r} has characters that are not allowed",
            f"1-64 letters, digits, '_', '-' or '.', starting with a letter or digit, "
            f"such as {example!r}",
        )
    return text


def int_arg(name: str, value: Any, *, default: int, low: int, high: int) -> int:
    """An integer in [low, high]; None gives ``default``; digit strings are accepted."""
    if value is None:
        return default
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadArgument(
            f"{name} must be a whole number, got {value!r}", f"an integer from {low} to {high}"
        )
    if not low <= value <= high:
        raise BadArgument(f"{name} is {value}, out of range", f"an integer from {low} to {high}")
    return value


def tags_arg(name: str, value: Any) -> list[str]:
    """Tags as a list of short strings; a comma-separated string is split."""
    if value is None or value == "":
        return []
    items: Sequence[Any]
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, list | tuple):
        items = value
    else:
        raise BadArgument(
            f"{name} must be a list of strings, got {type(value).__name__} {value!r}",
            "a list of short strings such as ['python', 'sqlite'], or 'python, sqlite'",
        )
    tags: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise BadArgument(
                f"{name} contains {item!r}, which is not a string",
                "a list of short strings such as ['python', 'sqlite']",
            )
        tag = item.strip().lower()
        if len(tag) > 64:
            raise BadArgument(f"tag {tag[:20]!r}... is too long", "tags of at most 64 characters")
        if tag and tag not in tags:
            tags.append(tag)
    if len(tags) > 32:
        raise BadArgument(f"{name} has {len(tags)} tags", "at most 32 tags")
    return tags


def time_arg(name: str, value: Any, *, now: datetime | None = None) -> float | None:
    """A point in time as a UNIX timestamp, or None when not given.

    Accepts ISO 8601 (``2025-01-31``, ``2025-01-31T14:00``, with or without a
    zone; no zone means UTC), ``now``, ``today``, ``yesterday``, and ages
    such as ``30m``, ``2h``, ``3 days`` or ``1w ago``.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    accepted = (
        "an ISO date or time such as '2025-01-31' or '2025-01-31T14:00Z', 'today', "
        "'yesterday', or an age such as '2h', '3 days' or '1w ago'"
    )
    if not isinstance(value, str):
        raise BadArgument(f"{name} must be text, got {value!r}", accepted)
    current = now or datetime.now(UTC)
    text = value.strip().lower()
    if text == "now":
        return current.timestamp()
    midnight = current.replace(hour=0, minute=0, second=0, microsecond=0)
    if text == "today":
        return midnight.timestamp()
    if text == "yesterday":
        return (midnight - timedelta(days=1)).timestamp()
    if match := _RELATIVE.match(text):
        amount, unit = int(match.group(1)), match.group(2)[0]
        return (current - timedelta(seconds=amount * _UNIT_SECONDS[unit])).timestamp()
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise BadArgument(f"{name} {value!r} is not a time troupe understands", accepted) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()
