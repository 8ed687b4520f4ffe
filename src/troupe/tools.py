"""The :class:`Tool` type: a named, described Python callable."""

from __future__ import annotations

import inspect
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import ConfigError

_SNAKE_CASE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")


@dataclass(frozen=True, kw_only=True)
class Tool:
    """A function the agents can call.

    The name decides which specialist owns the tool (see
    :func:`troupe.partition_tools`), so it must be a snake_case identifier.
    """

    name: str
    """Unique snake_case name, e.g. ``fs_read``. Its prefix routes it."""
    description: str
    """What the tool does, shown to the specialist model that owns it."""
    func: Callable[..., Any]
    """The callable run when the model calls the tool (sync or async)."""
    dangerous: bool | Callable[..., bool] = False
    """Ask the user before each call (ADK tool confirmation). A callable is
    given the call's arguments and says whether that call needs approval, so
    e.g. exec_shell can let ``uname -a`` through and ask about the rest."""
    effect: Callable[..., Any] | None = None
    """Describes what approving a call would do, shown with the approval
    request: given the call's arguments and ``tool_context``, it returns a
    JSON-able dict (e.g. a skill's body and hash, a page's URL). The approval
    is tied to it: when the approved call runs, the effect is described again
    and the call is refused if it changed."""

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        dangerous: bool | Callable[..., bool] = False,
        effect: Callable[..., Any] | None = None,
    ) -> Tool:
        """Build a tool from a function, taking its name and docstring."""
        tool_name: str = name or getattr(fn, "__name__", "") or ""
        description = inspect.cleandoc(fn.__doc__ or "").strip()
        if not description:
            description = tool_name.replace("_", " ")
        return cls(
            name=tool_name, description=description, func=fn, dangerous=dangerous, effect=effect
        )


def is_valid_tool_name(name: object) -> bool:
    """True when ``name`` is a snake_case identifier troupe can route."""
    return isinstance(name, str) and bool(_SNAKE_CASE.match(name))


def validate_tools(tools: Iterable[Tool]) -> list[Tool]:
    """Check names and uniqueness; raise one ConfigError naming every offender."""
    if isinstance(tools, str | bytes):
        raise ConfigError(
            f"Invalid tools: expected a list of troupe.Tool objects, not the string {tools!r}."
        )
    tool_list = list(tools)
    problems: list[str] = []
    not_tools = [repr(t) for t in tool_list if not isinstance(t, Tool)]
    if not_tools:
        problems.append(
            "not troupe.Tool objects: "
            + ", ".join(not_tools)
            + " (wrap functions with Tool.from_function)"
        )
    real = [t for t in tool_list if isinstance(t, Tool)]
    uncallable = [f"{t.name!r} (func={t.func!r})" for t in real if not callable(t.func)]
    if uncallable:
        problems.append(
            "tools whose func is not callable: "
            + ", ".join(uncallable)
            + " (pass the function itself, e.g. func=read_file)"
        )
    bad = [t.name for t in real if not is_valid_tool_name(t.name)]
    if bad:
        problems.append(
            "invalid tool names: "
            + ", ".join(repr(n) for n in bad)
            + " (use lowercase snake_case such as 'fs_read')"
        )
    counts = Counter(t.name for t in real)
    dupes = sorted(n for n, c in counts.items() if c > 1)
    if dupes:
        problems.append(
            "duplicate tool names: "
            + ", ".join(repr(n) for n in dupes)
            + " (every tool needs a unique name)"
        )
    if problems:
        raise ConfigError("Invalid tools: " + "; ".join(problems) + ".")
    return real


def tool_names(tools: Sequence[Tool]) -> list[str]:
    """The names of ``tools`` in order."""
    return [t.name for t in tools]
