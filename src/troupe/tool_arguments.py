"""Checks on the arguments a model sends a tool, made before the tool runs.

A model can send anything: a list where a path belongs, words where a number
belongs, a NUL byte, ten megabytes of text. :func:`argument_problem` compares
the arguments with the annotations of the tool's function and returns what is
wrong (naming the argument and what to send instead), or ``None``. The checks
are deliberately few and lenient where models are sloppy but harmless (``"5"``
for an integer is let through; the tool decides).
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

MAX_ARGUMENT_CHARS = 1_000_000
"""The longest text any one argument may hold (all its strings together)."""


@dataclass(frozen=True)
class ArgumentProblem:
    """Why a call's arguments were refused, and what the tool accepts instead."""

    message: str
    accepted: str


def argument_problem(func: Callable[..., Any], args: Mapping[str, Any]) -> ArgumentProblem | None:
    """What is wrong with ``args`` for the tool function ``func``, if anything."""
    hints = _hints(func)
    for name, value in args.items():
        problem = _content_problem(name, value) or _type_problem(name, value, hints.get(name))
        if problem is not None:
            return problem
    return None


def _hints(func: Callable[..., Any]) -> dict[str, Any]:
    target = inspect.unwrap(func)
    try:
        return typing.get_type_hints(target)
    except Exception:  # an annotation that cannot be evaluated: check types not at all
        return {}


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _content_problem(name: str, value: Any) -> ArgumentProblem | None:
    total = 0
    for text in _strings(value):
        if "\x00" in text:
            return ArgumentProblem(
                f"{name} contains a NUL byte (\\x00)",
                "text without NUL characters",
            )
        total += len(text)
    if total > MAX_ARGUMENT_CHARS:
        return ArgumentProblem(
            f"{name} is {total} characters long, over the limit of {MAX_ARGUMENT_CHARS}",
            f"at most {MAX_ARGUMENT_CHARS} characters; split the work into smaller calls",
        )
    return None


_KINDS: dict[type, str] = {
    str: "text (a string)",
    int: "a whole number",
    float: "a number",
    bool: "true or false",
}


def _type_problem(name: str, value: Any, hint: Any) -> ArgumentProblem | None:
    if value is None or hint is None:
        return None
    allowed = _simple_types(hint)
    if not allowed or _fits(value, allowed):
        return None
    wanted = " or ".join(_KINDS[kind] for kind in allowed)
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return ArgumentProblem(
        f"{name} must be {wanted}, got {type(value).__name__} {shown}",
        wanted,
    )


def _simple_types(hint: Any) -> tuple[type, ...]:
    """The plain scalar types ``hint`` allows; empty when it allows anything else too."""
    if hint in _KINDS:
        return (hint,)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        members = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        if all(member in _KINDS for member in members):
            return tuple(members)
    return ()


def _fits(value: Any, allowed: tuple[type, ...]) -> bool:
    for kind in allowed:
        if kind is str and isinstance(value, str):
            return True
        if kind is bool and isinstance(value, bool | str):
            return True
        if kind in (int, float) and not isinstance(value, bool):
            if isinstance(value, int | float):
                return True
            if isinstance(value, str) and _numeric(value):
                return True
    return False


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
