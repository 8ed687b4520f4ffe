"""Checks on the arguments a model sends a tool, made before the tool runs.

A model can send anything: a list where a path belongs, words where a number
belongs, a NUL byte, ten megabytes of text. :func:`argument_problem` compares
the arguments with the annotations of the tool's function and returns what is
wrong (naming the argument, the shape it must have and an example), or
``None``. Text, numbers, true/false, lists and objects (and their items) are
checked against the annotations, so ``tags="notalist"`` for ``list[str]`` or
``env=["A=1"]`` for ``dict[str, str]`` is refused before the tool runs. The
checks stay lenient where models are sloppy but harmless (``"5"`` for an
integer, ``"true"`` for a flag: the tool converts).
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections import abc
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

MAX_ARGUMENT_CHARS = 1_000_000
"""The longest text any one argument may hold (all its strings together)."""
MAX_ARGUMENT_DEPTH = 32
"""How deeply a call's arguments may nest lists and objects."""
MAX_ARGUMENTS_BYTES = 16 * 1024 * 1024
"""How large one call's arguments may be in all (UTF-8 text, keys included)."""
REFUSED_ARGUMENTS = "__troupe_refused_arguments__"
"""The one argument a call refused by :func:`shape_problem` is left with: the reason."""


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


def shape_problem(args: Mapping[str, Any]) -> str | None:
    """Why a call's arguments are too deep or too large to handle at all, if they are.

    Walks without recursion, so no nesting a model sends can exhaust the
    stack here; the checks that recurse run only on arguments that pass this.
    """
    size = 0
    stack: list[tuple[Any, int]] = [(args, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_ARGUMENT_DEPTH:
            return f"arguments nested deeper than {MAX_ARGUMENT_DEPTH} levels"
        if isinstance(value, str):
            size += len(value.encode("utf-8", "surrogatepass"))
        elif isinstance(value, Mapping):
            for key, item in value.items():
                size += len(str(key).encode("utf-8", "surrogatepass"))
                stack.append((item, depth + 1))
        elif isinstance(value, list | tuple):
            stack.extend((item, depth + 1) for item in value)
        else:
            size += 8
        if size > MAX_ARGUMENTS_BYTES:
            return f"arguments larger than {MAX_ARGUMENTS_BYTES} bytes"
    return None


def refused_call_error(tool: str, args: Mapping[str, Any]) -> dict[str, str] | None:
    """The tool error for a call whose arguments were refused as it arrived, else None."""
    problem = args.get(REFUSED_ARGUMENTS)
    if not isinstance(problem, str):
        return None
    return {
        "error": f"{tool} was not run: its {problem}.",
        "accepted": "flatter, smaller arguments; split the work into several calls",
    }


def _hints(func: Callable[..., Any]) -> Mapping[str, Any]:
    target = inspect.unwrap(func)
    try:
        return _hints_of(target)
    except TypeError:  # an unhashable callable: read its annotations each time
        return _read_hints(target)


@functools.lru_cache(maxsize=1024)
def _hints_of(target: Callable[..., Any]) -> Mapping[str, Any]:
    # Evaluating string annotations compiles them: once per function, not per call.
    return types.MappingProxyType(_read_hints(target))


def _read_hints(target: Callable[..., Any]) -> dict[str, Any]:
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
_EXAMPLES: dict[type, str] = {str: '"text"', int: "5", float: "2.5", bool: "true"}
_BOOL_WORDS = frozenset({"true", "false"})
_SEQUENCES = (list, tuple, set, frozenset, abc.Sequence, abc.Collection, abc.Iterable, abc.Set)
_MAPPINGS = (dict, abc.Mapping, abc.MutableMapping)


def _type_problem(name: str, value: Any, hint: Any) -> ArgumentProblem | None:
    if hint is None or _fits(value, hint):
        return None
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    wanted = _describe(hint)
    example = _example(hint)
    return ArgumentProblem(
        f"{name} must be {wanted}, got {type(value).__name__} {shown}",
        f"{wanted}, e.g. {name}={example}" if example else wanted,
    )


def _members(hint: Any) -> tuple[Any, ...] | None:
    """The members of a union (``X | None``, ``Optional[X]``), else None."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return typing.get_args(hint)
    return None


def _container(hint: Any, kinds: tuple[Any, ...]) -> bool:
    return hint in kinds or typing.get_origin(hint) in kinds


def _fits(value: Any, hint: Any) -> bool:
    """True when ``value`` (decoded JSON) has the shape ``hint`` describes.

    Only what the annotation says plainly is checked: text, numbers, true or
    false, lists, objects, literal choices and unions of them; any other class
    (a model of its own, ``Any``) is the tool's to check.
    """
    if value is None:
        return True  # null: as if left out; the tool applies its default or says what is missing
    if (members := _members(hint)) is not None:
        return any(_fits(value, member) for member in members if member is not type(None))
    if hint in _KINDS:
        return _fits_scalar(value, hint)
    if typing.get_origin(hint) is typing.Literal:
        return value in typing.get_args(hint)
    args = typing.get_args(hint)
    if _container(hint, _SEQUENCES):
        item = args[0] if args else Any
        return isinstance(value, list | tuple) and all(_fits(v, item) for v in value)
    if _container(hint, _MAPPINGS):
        item = args[1] if len(args) == 2 else Any
        return isinstance(value, Mapping) and all(_fits(v, item) for v in value.values())
    return True


def _fits_scalar(value: Any, kind: type) -> bool:
    if kind is str:
        return isinstance(value, str)
    if kind is bool:
        return isinstance(value, bool) or (
            isinstance(value, str) and value.strip().lower() in _BOOL_WORDS
        )
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    return isinstance(value, str) and _numeric(value)  # "5" for 5: the tool converts


def _describe(hint: Any) -> str:
    """``hint`` in words a model (and a person) reads."""
    if (members := _members(hint)) is not None:
        return " or ".join(_describe(m) for m in members if m is not type(None))
    if hint in _KINDS:
        return _KINDS[hint]
    if typing.get_origin(hint) is typing.Literal:
        return "one of " + ", ".join(repr(v) for v in typing.get_args(hint))
    args = typing.get_args(hint)
    if _container(hint, _SEQUENCES):
        return f"a list whose items are {_describe(args[0])}" if args else "a list"
    if _container(hint, _MAPPINGS):
        if len(args) == 2:
            return f"an object whose values are {_describe(args[1])}"
        return "an object"
    return getattr(hint, "__name__", str(hint))


def _example(hint: Any) -> str | None:
    """A JSON value of the shape ``hint`` describes, or None."""
    if (members := _members(hint)) is not None:
        found = [_example(m) for m in members if m is not type(None)]
        return next((e for e in found if e is not None), None)
    if hint in _EXAMPLES:
        return _EXAMPLES[hint]
    args = typing.get_args(hint)
    if _container(hint, _SEQUENCES):
        item = _example(args[0]) if args else '"a"'
        return f"[{item}, {item}]" if item else "[...]"
    if _container(hint, _MAPPINGS):
        value = _example(args[1]) if len(args) == 2 else '"value"'
        return f'{{"NAME": {value}}}' if value else "{...}"
    return None


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
