"""Turn a model's malformed reply into the call it meant, or into an honest empty reply.

Small models rarely fail by saying nothing useful; they say it in the wrong
shape. Each shape real models produce is a row of :data:`SHAPES`:

* **agent as function**: ``operator(command="ls")`` instead of a transfer. At
  the orchestrator it becomes ``transfer_to_agent`` to the agent the name
  resolves to, with the arguments kept as the task text (ADK records them as
  the transfer's reason, and the specialist reads them in its context). At a
  specialist it becomes that agent's own tool when the arguments fit exactly
  one, or a ``[REJECT]`` line naming the agent it meant, which the runtime
  then re-routes.
* **call written as text**: the call as JSON, in a fenced ``json`` block, in
  ``<tool_call>{...}</tool_call>`` tags, or as a bare Python-style call
  ``fs_list(path=".")`` becomes the real function call; an empty block or
  ``{}`` is an empty reply.
* **echoed [REJECT]**: the orchestrator copying the rejection line from its
  own instruction is not a rejection: it becomes the transfer the line names,
  or an empty reply when it names no agent.
* **specialist transfer**: a specialist calling ``transfer_to_agent`` to a
  sibling is the reject protocol said the wrong way: it becomes the
  ``[REJECT]`` line naming that sibling, which the runtime re-routes (and
  counts toward the delegation rounds). A transfer back to the orchestrator,
  or to no agent, is left to the transfer guard, which refuses it.

Everything here is a pure function of one :class:`LlmResponse` and what the
agent that produced it may call (:class:`Caller`); the runtime's after-model
hook applies the result and counts each :class:`Finding`. A name that
resolves to nothing is not guessed: at the orchestrator it stays a transfer
to that name, so the transfer guard answers it and counts the attempt.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.adk.models.llm_response import LlmResponse
from google.genai import types

from .. import prompts
from ..prompts import TRANSFER_ARG, TRANSFER_REASON_ARG, TRANSFER_TOOL

AGENT_AS_FUNCTION = "agent_as_function"
JSON_TEXT = "json_text"
TOOL_CALL_TAG = "tool_call_tag"
PYTHON_CALL_TEXT = "python_call_text"
EMPTY_JSON = "empty_json"
ECHOED_REJECT = "echoed_reject"
UNKNOWN_FUNCTION = "unknown_function"
SPECIALIST_TRANSFER = "specialist_transfer"

SHAPES: Mapping[str, str] = {
    AGENT_AS_FUNCTION: "a function call named for an agent (or one of its tools) "
    "instead of a transfer",
    JSON_TEXT: "a transfer or tool call written as JSON text or in a fenced json block",
    TOOL_CALL_TAG: "a call written in <tool_call>{...}</tool_call> tags",
    PYTHON_CALL_TEXT: 'a call written as Python text, fs_list(path=".")',
    EMPTY_JSON: "an empty json block or {} instead of an answer",
    ECHOED_REJECT: "the orchestrator echoing the [REJECT] line of its instruction",
    UNKNOWN_FUNCTION: "a function the agent does not have and no agent owns",
    SPECIALIST_TRANSFER: "a specialist's own transfer_to_agent to another specialist",
}
"""Every malformed-reply shape this module recognises, with what it looks like."""

EMPTY_REPLY = "(empty reply)"
"""What a reply that carried nothing usable became, as a finding reports it."""

_NAME_KEYS = ("name", "function", "tool", "tool_name", "function_name", "action")
_ARG_KEYS = ("arguments", "args", "parameters", "params", "input", "action_input")
_AGENT_KEYS = (TRANSFER_ARG, "agent")
_REASON_KEYS = (TRANSFER_REASON_ARG, "task", "reason", "request")
_CALL_KEYS = frozenset((*_NAME_KEYS, *_ARG_KEYS, *_AGENT_KEYS, *_REASON_KEYS, "id", "type"))
_TASK_KEYS = ("task", "request", "query", "input", "message", "prompt", "instruction", "text")

_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.S)
_FENCE = re.compile(r"```[ \t]*(?:json|JSON|tool_call)?[ \t]*\n?(.*?)```", re.S)
_MAX_PYTHON_CALL = 2000
"""Longer text is an answer, not a call: it is not parsed as one."""


@dataclass(frozen=True)
class Caller:
    """The agent whose reply is examined, and what it may call."""

    agent: str
    """Its name."""
    functions: Mapping[str, frozenset[str]]
    """The functions declared to it, each with its parameter names."""
    is_root: bool
    """True for the orchestrator, whose only action is a transfer."""


@dataclass(frozen=True)
class Finding:
    """One malformed piece of a reply, and what it became."""

    shape: str
    """A key of :data:`SHAPES`."""
    asked: str
    """What the model wrote: the name it called, or the marker it echoed."""
    became: str | None
    """The agent or tool it became, :data:`EMPTY_REPLY`, or None when left alone."""
    invalid_name: bool = True
    """True when what the model wrote names nothing that exists as written."""

    @property
    def repaired(self) -> bool:
        """True when the reply was rewritten for this finding."""
        return self.became is not None


@dataclass(frozen=True)
class Outcome:
    """The result of examining one reply."""

    findings: tuple[Finding, ...]
    """What was wrong with it (empty when nothing was)."""
    parts: list[types.Part] | None = field(default=None)
    """The parts to send on instead, or None to keep the reply as it was."""

    def response(self, original: LlmResponse) -> LlmResponse | None:
        """``original`` with the repaired parts, or None when nothing changes."""
        if self.parts is None:
            return None
        content = types.Content(role="model", parts=self.parts)
        return original.model_copy(update={"content": content})


Resolve = Callable[[str], "str | None"]
"""Maps a name a model wrote to the one agent it must mean, or None."""


def examine(response: LlmResponse, caller: Caller, resolve: Resolve) -> Outcome:
    """What is malformed in ``response`` from ``caller``, and the reply it should be."""
    outcome = _examine(response, caller, resolve)
    if caller.is_root or response.partial or response.content is None:
        return outcome
    return _transfer_as_rejection(outcome, response.content.parts or [], caller, resolve)


def _examine(response: LlmResponse, caller: Caller, resolve: Resolve) -> Outcome:
    if response.partial or response.content is None:
        return Outcome(findings=())
    parts = [p for p in response.content.parts or [] if not p.thought]
    if any(p.function_call for p in parts):
        return _examine_calls(response.content.parts or [], caller, resolve)
    text = "".join(p.text or "" for p in parts)
    if not text.strip():
        return Outcome(findings=())
    written = calls_in_text(text)
    if written is not None:
        shape, calls = written
        if not calls:
            return Outcome(findings=(Finding(EMPTY_JSON, _snippet(text), EMPTY_REPLY),), parts=[])
        return _examine_written(calls, shape, caller, resolve)
    if caller.is_root and prompts.is_rejection(text):
        named = prompts.rejection_target(text)
        target = resolve(named) if named else None
        if target is None:
            return Outcome(
                findings=(Finding(ECHOED_REJECT, prompts.REJECT_MARKER, EMPTY_REPLY),), parts=[]
            )
        finding = Finding(ECHOED_REJECT, prompts.REJECT_MARKER, target)
        return Outcome(findings=(finding,), parts=[transfer_part(target, "")])
    return Outcome(findings=())


def _transfer_as_rejection(
    outcome: Outcome, original: Sequence[types.Part], caller: Caller, resolve: Resolve
) -> Outcome:
    """A specialist's transfer to another specialist, as the ``[REJECT]`` line naming it.

    The whole reply becomes that one line, so the runtime sees a rejection
    and hands the task on; anything else the reply held was meant for the
    agent it tried to reach.
    """
    parts = outcome.parts if outcome.parts is not None else original
    for part in parts:
        call = part.function_call
        if call is None or call.name != TRANSFER_TOOL:
            continue
        args = call.args or {}
        asked = str(args.get(TRANSFER_ARG, ""))
        target = resolve(asked)
        if target is None or target == caller.agent:
            return outcome  # the transfer guard refuses it
        reason = str(args.get(TRANSFER_REASON_ARG) or "") or f"{caller.agent} passed it on"
        finding = Finding(SPECIALIST_TRANSFER, asked, target, invalid_name=target != asked)
        line = types.Part(text=prompts.reject_line(target, reason))
        return Outcome(findings=(*outcome.findings, finding), parts=[line])
    return outcome


def _examine_calls(parts: Sequence[types.Part], caller: Caller, resolve: Resolve) -> Outcome:
    findings: list[Finding] = []
    new_parts: list[types.Part] = []
    changed = False
    for part in parts:
        call = part.function_call
        if call is None or not call.name:
            new_parts.append(part)
            continue
        fixed, finding = _fix_call(call.name, dict(call.args or {}), caller, resolve)
        if finding is not None:
            findings.append(finding)
        if fixed is None:
            new_parts.append(part)
        else:
            changed = True
            new_parts.append(fixed)
    return Outcome(findings=tuple(findings), parts=new_parts if changed else None)


def _examine_written(
    calls: list[tuple[str, dict[str, Any]]], shape: str, caller: Caller, resolve: Resolve
) -> Outcome:
    """Calls the model wrote as text become real calls, when they call something real."""
    findings: list[Finding] = []
    new_parts: list[types.Part] = []
    for name, args in calls:
        known = name == TRANSFER_TOOL or name in caller.functions or resolve(name) is not None
        if shape == PYTHON_CALL_TEXT and not known:
            return Outcome(findings=())  # prose that happens to look like a call
        fixed, _ = _fix_call(name, args, caller, resolve)
        if fixed is None and (name == TRANSFER_TOOL or name in caller.functions):
            fixed = _call_part(name, args)
        if fixed is None:
            # Text that names nothing callable is the model's answer, not a call.
            return Outcome(findings=())
        findings.append(Finding(shape, f"{name} written as text", _part_target(fixed)))
        new_parts.append(fixed)
    return Outcome(findings=tuple(findings), parts=new_parts)


def _fix_call(
    name: str, args: dict[str, Any], caller: Caller, resolve: Resolve
) -> tuple[types.Part | None, Finding | None]:
    """A replacement for the call ``name(args)``, or None to leave it; and its finding."""
    if name == TRANSFER_TOOL or name in caller.functions:
        return None, None
    target = resolve(name)
    if caller.is_root:
        # An unresolvable name stays a transfer attempt, so the transfer guard
        # answers it with the valid names and counts it toward the limits.
        finding = Finding(AGENT_AS_FUNCTION, name, target) if target else None
        return transfer_part(target or name, task_text(args)), finding
    if target is not None and target != caller.agent:
        reason = f"the task needs {target}: {task_text(args) or name}"
        return types.Part(text=prompts.reject_line(target, reason)), Finding(
            AGENT_AS_FUNCTION, name, target
        )
    shape = AGENT_AS_FUNCTION if target is not None else UNKNOWN_FUNCTION
    own = matching_tool(args, caller.functions)
    if own is not None:
        return _call_part(own, args), Finding(shape, name, own)
    return None, Finding(shape, name, None)


def matching_tool(args: Mapping[str, Any], functions: Mapping[str, frozenset[str]]) -> str | None:
    """The one declared function (other than a transfer) that takes every key of ``args``."""
    if not args:
        return None
    keys = set(args)
    fits = [n for n, params in functions.items() if n != TRANSFER_TOOL and keys <= params]
    return fits[0] if len(fits) == 1 else None


def task_text(args: Mapping[str, Any]) -> str:
    """Arguments of a call meant as a hand-off, as the task's text."""
    if not args:
        return ""
    if len(args) == 1:
        key, value = next(iter(args.items()))
        if key in _TASK_KEYS and isinstance(value, str):
            return value
    return "; ".join(f"{k}: {_plain(v)}" for k, v in args.items())


def transfer_part(agent: str, task: str) -> types.Part:
    """A ``transfer_to_agent`` call to ``agent``, carrying ``task`` as its reason."""
    args: dict[str, Any] = {TRANSFER_ARG: agent}
    if task:
        args[TRANSFER_REASON_ARG] = task
    return _call_part(TRANSFER_TOOL, args)


def calls_in_text(text: str) -> tuple[str, list[tuple[str, dict[str, Any]]]] | None:
    """(shape, [(name, args)]) for calls written in ``text``; None when it holds none.

    An empty list means the text was only an empty block or ``{}``.
    """
    stripped = text.strip()
    for shape, pattern in ((TOOL_CALL_TAG, _TAG), (JSON_TEXT, _FENCE)):
        blocks = [m.group(1).strip() for m in pattern.finditer(stripped)]
        if not blocks:
            continue
        calls: list[tuple[str, dict[str, Any]]] = []
        for block in blocks:
            found = _calls_in_block(block)
            if found is None:
                return None
            calls.extend(found)
        if not calls and pattern.sub("", stripped).strip():
            return None  # an empty block beside an answer: the answer stands
        return shape, calls
    if stripped.startswith(("{", "[")) and stripped.endswith(("}", "]")):
        found = _calls_in_block(stripped)
        return (JSON_TEXT, found) if found is not None else None
    if (call := _python_call(stripped.strip("`"))) is not None:
        return PYTHON_CALL_TEXT, [call]
    return None


def _python_call(text: str) -> tuple[str, dict[str, Any]] | None:
    """(name, args) for text that is exactly ``name(key=literal, ...)``."""
    if len(text) > _MAX_PYTHON_CALL or not text.endswith(")"):
        return None
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.args:
        return None
    args: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            return None
        try:
            args[keyword.arg] = ast.literal_eval(keyword.value)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            return None
    return node.func.id, args


def _calls_in_block(block: str) -> list[tuple[str, dict[str, Any]]] | None:
    """The calls in one JSON block ([] for an empty one), or None when it is data."""
    if not block:
        return []
    value = _load(block)
    if value is None:
        return None
    items = value if isinstance(value, list) else [value]
    calls = []
    for item in items:
        if item == {}:
            continue
        call = _as_call(item)
        if call is None:
            return None
        calls.append(call)
    return calls


def _load(block: str) -> Any:
    try:
        return json.loads(block)
    except ValueError:
        pass
    try:  # a Python-style dict with single quotes, as small models often write
        return ast.literal_eval(block)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _as_call(item: Any) -> tuple[str, dict[str, Any]] | None:
    """(name, args) when ``item`` is shaped like a call, else None."""
    if not isinstance(item, dict) or not set(item) <= _CALL_KEYS:
        return None
    name = next((item[k] for k in _NAME_KEYS if k in item), None)
    if isinstance(name, dict):  # OpenAI's {"function": {"name": ..., "arguments": ...}}
        return _as_call(name)
    args = next((item[k] for k in _ARG_KEYS if k in item), None)
    if isinstance(args, str):
        args = _load(args) if args.strip() else {}
    if args is not None and not isinstance(args, dict):
        return None
    args = dict(args or {})
    agent = next((item[k] for k in _AGENT_KEYS if k in item), None)
    if isinstance(name, str) and name:
        return name, args
    if isinstance(agent, str) and agent:
        reason = next((item[k] for k in _REASON_KEYS if isinstance(item.get(k), str)), "")
        transfer: dict[str, Any] = {TRANSFER_ARG: agent}
        if reason:
            transfer[TRANSFER_REASON_ARG] = reason
        return TRANSFER_TOOL, transfer
    return None


def _call_part(name: str, args: Mapping[str, Any]) -> types.Part:
    return types.Part(function_call=types.FunctionCall(name=name, args=dict(args)))


def _part_target(part: types.Part) -> str:
    call = part.function_call
    if call is None:
        return prompts.rejection_target(part.text or "") or EMPTY_REPLY
    if call.name == TRANSFER_TOOL:
        return str((call.args or {}).get(TRANSFER_ARG, ""))
    return str(call.name)


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _snippet(text: str, limit: int = 40) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def declared_functions(tools: Sequence[Any]) -> dict[str, frozenset[str]]:
    """Function name -> parameter names, from a request's ``config.tools``."""
    found: dict[str, frozenset[str]] = {}
    for tool in tools:
        for decl in getattr(tool, "function_declarations", None) or []:
            if decl.name:
                found[decl.name] = frozenset(_parameter_names(decl))
    return found


def _parameter_names(decl: types.FunctionDeclaration) -> list[str]:
    if decl.parameters_json_schema and isinstance(decl.parameters_json_schema, dict):
        return list((decl.parameters_json_schema.get("properties") or {}).keys())
    if decl.parameters is not None and decl.parameters.properties:
        return list(decl.parameters.properties)
    return []
