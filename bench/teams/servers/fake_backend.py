"""What the benchmark teams' fake MCP servers share: the server class, annotations, checks.

Every server in ``bench/teams/servers/`` is a stdio MCP server run as a script
(``python bench/teams/servers/shop_orders.py``) that imports this module from
beside it (Python puts a script's folder on ``sys.path``, and troupe's jail
shows a server's folder to it):

* ``FastMCP``: the ``mcp`` package's server class under either of its names
  (``MCPServer`` in mcp 2.x, ``FastMCP`` in 1.x);
* ``READ_ONLY``, ``CHANGES`` and ``DESTRUCTIVE``: the tool annotations a real
  backend would declare (a lookup, a booking, a cancellation);
* ``rng``: a random generator seeded from the arguments, so the same question
  always gets the same fake answer;
* ``need_*``: input checks that raise :class:`InputError` with the value, what
  is wrong and the fix, as a real backend's validation would.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random
import re
from collections.abc import Mapping

from mcp.types import ToolAnnotations

try:  # mcp 2.x renamed FastMCP to MCPServer.
    from mcp.server.mcpserver import MCPServer as FastMCP
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError:  # pragma: no cover - mcp 1.x
    from mcp.server.fastmcp import FastMCP  # type: ignore[no-redef, attr-defined]
    from mcp.server.fastmcp.exceptions import ToolError  # type: ignore[no-redef, import-not-found]

__all__ = [
    "CHANGES",
    "DESTRUCTIVE",
    "READ_ONLY",
    "FastMCP",
    "InputError",
    "need_choice",
    "need_code",
    "need_date",
    "need_email",
    "need_int",
    "need_money",
    "need_pattern",
    "need_text",
    "rng",
]

READ_ONLY = ToolAnnotations.model_validate({"readOnlyHint": True})
CHANGES = ToolAnnotations.model_validate({"readOnlyHint": False, "destructiveHint": False})
DESTRUCTIVE = ToolAnnotations.model_validate({"readOnlyHint": False, "destructiveHint": True})

_EMAIL = re.compile(r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$")


class InputError(ToolError, ValueError):
    """An argument a real backend would refuse; the message names the value and the fix.

    A ``ToolError``, so the server sends the message to the caller as a failed
    call (mcp 2.x hides the text of any other exception as a crash).
    """


def rng(*parts: object) -> random.Random:
    """A generator seeded from ``parts`` (case and surrounding spaces ignored)."""
    key = "|".join(str(part).strip().lower() for part in parts)
    seed = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big")
    return random.Random(seed)


def need_text(name: str, value: str, *, max_len: int = 80) -> str:
    """``value`` stripped; refused when empty or longer than ``max_len``."""
    text = (value or "").strip()
    if not text:
        raise InputError(f"{name} is empty: give a {name.replace('_', ' ')}.")
    if len(text) > max_len:
        raise InputError(f"{name} is {len(text)} characters long: at most {max_len} are accepted.")
    return text


def need_pattern(name: str, value: str, pattern: str, example: str) -> str:
    """``value`` stripped and upper-cased when it matches ``pattern`` in full."""
    text = (value or "").strip().upper()
    if not re.fullmatch(pattern, text):
        raise InputError(f"{name} {value!r} is not valid: it looks like {example}.")
    return text


def need_date(name: str, value: str) -> dt.date:
    """A calendar date written YYYY-MM-DD, between 2000 and 2099."""
    text = (value or "").strip()
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        raise InputError(
            f"{name} {value!r} is not a date: write it as YYYY-MM-DD, e.g. 2025-06-14."
        ) from None
    if not 2000 <= day.year <= 2099:
        raise InputError(f"{name} {value!r} is out of range: give a date between 2000 and 2099.")
    return day


def need_email(name: str, value: str) -> str:
    """An e-mail address, lower-cased."""
    text = (value or "").strip().lower()
    if not _EMAIL.fullmatch(text):
        raise InputError(
            f"{name} {value!r} is not an e-mail address: write it like anna@example.com."
        )
    return text


def need_int(name: str, value: int, low: int, high: int) -> int:
    """An integer from ``low`` to ``high``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{name} {value!r} is not a whole number: give one from {low} to {high}.")
    if not low <= value <= high:
        raise InputError(f"{name} {value} is out of range: give a number from {low} to {high}.")
    return value


def need_money(name: str, value: float, *, maximum: float) -> float:
    """A positive amount of at most ``maximum``, rounded to cents."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise InputError(f"{name} {value!r} is not an amount: give a number such as 25.50.")
    if value <= 0:
        raise InputError(f"{name} {value} must be more than 0.")
    if value > maximum:
        raise InputError(f"{name} {value} is more than the {maximum:g} this service accepts.")
    return round(float(value), 2)


def need_choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    """``value`` lower-cased when it is one of ``choices``."""
    text = (value or "").strip().lower()
    if text not in choices:
        raise InputError(f"{name} {value!r} is not one of: {', '.join(choices)}.")
    return text


def need_code(name: str, value: str, known: Mapping[str, object], what: str) -> str:
    """An upper-cased code that is a key of ``known`` (a currency, a country ...)."""
    text = (value or "").strip().upper()
    if text not in known:
        sample = ", ".join(sorted(known)[:6])
        raise InputError(f"{name} {value!r} is not a known {what}: use a code such as {sample}.")
    return text
