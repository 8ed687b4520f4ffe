"""The prompt contract: every string the model, the instructions and the runtime share.

troupe talks to models through a few fixed phrases: the ``[REJECT]`` line a
specialist writes when a task is not its own, the ``[System: ...]`` notes the
runtime sends after a bad transfer, a rejection or an empty turn, the errors
its guards return in place of a tool result, and the stop message that ends a
turn early. The instructions teach these phrases, the guards and repairs
write and read them, and the offline model parses them to act like a model
that follows its instructions. Declaring them here, with the parsers beside
the builders, keeps the writers and the readers from drifting apart.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

REJECT_MARKER = "[REJECT]"
"""Start of a specialist's refusal of a task that is not its own."""
TRANSFER_TOOL = "transfer_to_agent"
"""The name of ADK's delegation tool, as the instructions and the model see it."""
TRANSFER_ARG = "agent_name"
"""The argument of :data:`TRANSFER_TOOL` that names the target agent."""
TRANSFER_REASON_ARG = "transfer_reason"
"""The optional argument of :data:`TRANSFER_TOOL` that carries the task's text."""
SYSTEM_PREFIX = "[System:"
"""Start of every note the runtime sends to a model in the user's place."""
REJECT_FORMAT = f"{REJECT_MARKER} This task requires <agent>: <one-sentence reason>"
"""The rejection line as the specialists' instructions teach it."""

NUDGE_MESSAGE = (
    f"{SYSTEM_PREFIX} The last step produced no answer for the user. Report the result of the "
    "work done so far to the user now, in plain words, without delegating.]"
)
"""Sent once when a turn ended without any text for the user."""
DELEGATION_LIMIT_ERROR = "delegation limit reached; answer with what you have."
"""A transfer's result once the turn has used all its delegation rounds."""

_REJECT_TARGET = re.compile(
    re.escape(REJECT_MARKER) + r"\s*This task requires\s+`?([\w-]+)`?", re.I
)
_DELEGATE_TO = re.compile(r"Delegate the user's previous request to (\w+)\.")
_DECLINED = re.compile(r"(\w+) already declined|Do not delegate it to ([\w, ]+)\.")
_NUDGE_MARK = "Report the result of the work done so far"
_DIRECT_MARK = "answer the user directly"


# -- the [REJECT] protocol -----------------------------------------------------
def reject_line(target: str, reason: str) -> str:
    """A specialist's refusal naming the agent the task needs."""
    return f"{REJECT_MARKER} This task requires {target}: {reason}"


def is_rejection(text: str) -> bool:
    """True for text that opens with :data:`REJECT_MARKER`."""
    return text.lstrip().startswith(REJECT_MARKER)


def rejection_target(text: str) -> str | None:
    """The agent a ``[REJECT]`` line names, or None when it names none."""
    match = _REJECT_TARGET.search(text)
    return match.group(1) if match else None


# -- notes the runtime sends in the user's place -------------------------------
def is_system_note(text: str) -> bool:
    """True for a note troupe sent, as opposed to something the user wrote."""
    return text.lstrip().startswith(SYSTEM_PREFIX)


def _note(*sentences: str) -> str:
    """A note from the runtime: the system prefix, the sentences, the closing bracket."""
    return f"{SYSTEM_PREFIX} {' '.join(sentences)}]"


def _declined(who: str, request: str = "previous request") -> str:
    return f"{who} declined the user's {request}"


def correction_message(bad_name: str, valid_names: Sequence[str]) -> str:
    """The note sent after the model named an agent that does not exist."""
    return _note(
        f'Agent "{bad_name}" does not exist. Valid agents: {", ".join(valid_names)}.',
        "Please retry using one of the valid agent names listed above.",
    )


def reroute_message(refused_by: str, target: str | None, refused: Sequence[str]) -> str:
    """Asks the orchestrator to send a rejected task elsewhere."""
    if target:
        why = f"{_declined(refused_by, 'request')} because it needs {target}."
        where = target
    else:
        why = f"{_declined(refused_by, 'request')}."
        where = "the best other agent"
    return _note(
        why,
        f"Delegate the user's previous request to {where}.",
        f"Do not delegate it to {', '.join(refused)}.",
    )


def answer_directly_message(refused: Sequence[str]) -> str:
    """Tells the orchestrator to stop delegating after repeated refusals."""
    return _note(
        f"{_declined(', '.join(refused))}.",
        f"Do not delegate again: {_DIRECT_MARK} and say what could not be done.",
    )


def handoff_message(refused_by: str, target: str) -> str:
    """Tells the agent a rejected task was handed to that it is now its task."""
    return _note(
        f"{_declined(refused_by)} as outside its role.", f"{target}, it is yours now: handle it."
    )


def redo_message(valid_names: Sequence[str]) -> str:
    """Sent once when the orchestrator's reply neither answered nor delegated."""
    return _note(
        "Your last reply neither answered the user nor delegated.",
        f"Call {TRANSFER_TOOL} with one of {', '.join(valid_names)}, or answer the user's "
        "previous request directly in plain words.",
    )


def delegate_target(note: str) -> str | None:
    """The agent a re-route note asks to delegate to, if it names one."""
    match = _DELEGATE_TO.search(note)
    return match.group(1) if match else None


def declined_agents(text: str) -> set[str]:
    """Agents a note or a guard's error says not to delegate to again."""
    found: set[str] = set()
    for match in _DECLINED.finditer(text):
        names = match.group(1) or match.group(2) or ""
        found.update(n.strip() for n in names.split(",") if n.strip())
    return found


def asks_direct_answer(note: str) -> bool:
    """True for :func:`answer_directly_message` notes."""
    return _DIRECT_MARK in note


def asks_report(note: str) -> bool:
    """True for :data:`NUDGE_MESSAGE`."""
    return _NUDGE_MARK in note


# -- errors the guards return in place of a tool's result ----------------------
def unknown_agent_error(requested: str, valid_names: Sequence[str]) -> str:
    """A transfer's result when its target does not exist and cannot be resolved."""
    return (
        f"Agent {requested!r} does not exist. Valid agents: {', '.join(valid_names)}. "
        f"Call {TRANSFER_TOOL} again with one of these exact names."
    )


def no_handoff_error(agent: str) -> str:
    """A specialist's transfer result: specialists do not hand tasks on."""
    return (
        f"{agent} cannot hand tasks on. Do the task with your own tools, or reply: {REJECT_FORMAT}"
    )


def already_declined_error(target: str, others: Sequence[str]) -> str:
    """A transfer's result when ``target`` already refused this request."""
    return (
        f"{target} already declined this request. Choose another agent "
        f"({', '.join(others) or 'none left'}) or answer the user directly."
    )


def repeated_call_error(earlier: int) -> str:
    """A tool's result when the same call was already made ``earlier`` times."""
    return (
        f"stopped: this exact call was already made {earlier} times; its result is above. "
        "Report it instead."
    )


# -- ending a turn -------------------------------------------------------------
def unknown_agent_stop_reason(name: str, valid_names: Sequence[str]) -> str:
    """Why a turn ended after the model named the same missing agent twice."""
    return (
        f"the model asked twice for an agent named {name!r}, which does not exist "
        f"(the agents are: {', '.join(valid_names)})"
    )


def stop_message(reason: str, done: Sequence[str], last_result: tuple[str, str] | None) -> str:
    """A short, honest account of a stopped turn: why, what was done, what was not.

    ``done`` lists the finished steps, ``last_result`` is (tool, readable result).
    """
    lines = [f"I stopped working on this message because {reason}."]
    lines.append(
        f"Done so far: {', '.join(done)}." if done else "Nothing was completed before the stop."
    )
    if last_result is not None:
        tool, text = last_result
        lines.append(f"Last result ({tool}):\n{text}")
    lines.append("Not done: the rest of the request. Try rephrasing it or splitting it up.")
    return "\n".join(lines)


# -- the router's hint -----------------------------------------------------------
ROUTER_HINT_HEADING = "## Router hint"
"""Heading of the router's candidates, appended to the orchestrator's instruction
when the router leaves the choice to the model."""
_HINT_LINE = "Router candidates (best first, score 0-1): "
_HINT_ITEM = re.compile(r"(\w+) (\d+\.\d+)")
HINT_COMPOUND = "The request has steps for different agents."
HINT_DIRECT = "It reads like a greeting or a general question: answer it yourself."
HINT_NOBODY = (
    "No agent's work is named in it: if it needs a tool the team lacks, say it cannot be done here."
)
HINT_STEPS = (
    "Its parts may be steps for different agents: if it asks for more than one "
    "thing, the planner orders them."
)


def router_hint(
    candidates: Sequence[tuple[str, float]],
    *,
    compound: bool = False,
    direct: bool = False,
    nobody: bool = False,
    steps: bool = False,
) -> str:
    """The router's ranked candidates as a section of the orchestrator's instruction."""
    shown = ", ".join(f"{name} {score:.2f}" for name, score in candidates) or "none"
    flags = (
        (compound, HINT_COMPOUND),
        (direct, HINT_DIRECT),
        (nobody, HINT_NOBODY),
        (steps, HINT_STEPS),
    )
    notes = [note for flag, note in flags if flag]
    return f"{ROUTER_HINT_HEADING}\n{_HINT_LINE}{shown}." + "".join(f" {n}" for n in notes)


def _hint_line(system: str) -> str:
    _, found, rest = system.partition(ROUTER_HINT_HEADING)
    line = rest.strip().splitlines()[0] if found and rest.strip() else ""
    return line if line.startswith(_HINT_LINE) else ""


def router_candidates(system: str) -> list[tuple[str, float]] | None:
    """The candidates of the router hint in ``system``, best first; empty when
    the hint says to answer directly or that no agent does this, None when
    there is no hint."""
    line = _hint_line(system)
    if not line:
        return None
    if HINT_DIRECT in line or HINT_NOBODY in line:
        return []
    return [(m.group(1), float(m.group(2))) for m in _HINT_ITEM.finditer(line[len(_HINT_LINE) :])]


def router_says_compound(system: str) -> bool:
    """True when the router hint in ``system`` says the request has steps for
    different agents."""
    return HINT_COMPOUND in _hint_line(system)


def router_says_steps(system: str) -> bool:
    """True when the router hint in ``system`` says the request's parts may be
    steps for different agents, which it could not name."""
    return HINT_STEPS in _hint_line(system)


def router_says_nobody(system: str) -> bool:
    """True when the router hint in ``system`` says no agent's work is named."""
    return HINT_NOBODY in _hint_line(system)
