"""A role's tools as one class: its state on the instance, one method per tool.

Each built-in toolset (operator, vault, librarian, chronicler, navigator)
subclasses :class:`Toolset` and lists its tools as data in ``specs``; a
tool's method keeps the name, parameters and docstring ADK turns into the
declaration the model sees. :meth:`Toolset.tools` builds the tool list from
that table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, ParamSpec

from ..tools import Tool

P = ParamSpec("P")


@dataclass(frozen=True)
class ToolSpec:
    """One tool of a toolset: the method that implements it and how it is approved."""

    method: str
    """The method's name, which is also the tool's name."""
    dangerous: bool | str = False
    """True to ask before every call; the name of a predicate method to ask when it says so."""
    effect: str | None = None
    """The name of a method describing what an approved call will do, if any."""
    needs: str | None = None
    """An attribute that must not be None for the tool to exist (e.g. a store)."""

    def build(self, toolset: Toolset) -> Tool | None:
        """The tool bound to ``toolset``, or None when what it needs is missing."""
        if self.needs is not None and getattr(toolset, self.needs) is None:
            return None
        dangerous: bool | Callable[..., bool] = (
            getattr(toolset, self.dangerous) if isinstance(self.dangerous, str) else self.dangerous
        )
        effect: Callable[..., Any] | None = (
            getattr(toolset, self.effect) if self.effect is not None else None
        )
        return Tool.from_function(getattr(toolset, self.method), dangerous=dangerous, effect=effect)


class Toolset:
    """Base of the built-in toolsets: subclasses set ``specs`` and define the methods."""

    specs: ClassVar[tuple[ToolSpec, ...]] = ()

    def __deepcopy__(self, memo: dict[int, Any]) -> Toolset:
        # A tool is a bound method, and ADK deep-copies requests that hold tools;
        # the toolset (stores, jail, browser) is shared, as a function's closure is.
        return self

    def tools(self) -> list[Tool]:
        """The toolset's tools, in the order of ``specs``."""
        return [tool for spec in self.specs if (tool := spec.build(self)) is not None]


def tool_list_factory(cls: Callable[P, Toolset], name: str, doc: str) -> Callable[P, list[Tool]]:
    """A function taking ``cls``'s arguments and returning its tools (e.g. ``operator_tools``)."""

    def build(*args: P.args, **kwargs: P.kwargs) -> list[Tool]:
        return cls(*args, **kwargs).tools()

    build.__name__ = build.__qualname__ = name
    build.__doc__ = doc
    return build
