"""The orchestrator's and the specialists' instructions.

The orchestrator reads a routing table built from the topology: exact agent
names, roles described by capabilities, keywords, inputs, outputs and what
each agent cannot do. Raw tool names never appear in it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..prompts import REJECT_FORMAT, REJECT_MARKER, TRANSFER_TOOL
from ..tools import Tool
from ..topology import Topology
from .capabilities import capability_description

DEFAULT_MAX_DELEGATION_ROUNDS = 5

DEFAULT_SYSTEM_PROMPT = (
    "You are troupe, a helpful assistant backed by a team of specialist agents. "
    "Be accurate and brief; say plainly when something could not be done."
)


@dataclass(frozen=True)
class RouteEntry:
    """One row of the routing table: an agent the orchestrator may delegate to."""

    name: str
    role: str
    capabilities: str = ""
    keywords: Sequence[str] = ()
    accepts: str = ""
    returns: str = ""
    cannot_do: Sequence[str] = ()
    match_phrases: Sequence[str] = ()
    """Matched by the router and the offline model; never written into an instruction."""
    examples: Sequence[str] = ()
    """Requests the agent serves: the router compares requests with them for
    meaning; never written into an instruction."""
    plans: bool = False
    """The agent carries out requests of several steps (the team's planner)."""
    synonyms: Sequence[str] = ()
    """Other names its author gave it (``courier``, ``forecaster``): words of
    its work for the router; never written into an instruction."""


def effective_rounds(max_delegation_rounds: int | None) -> int:
    """The delegation limit in force: 5 when zero or unset."""
    if not max_delegation_rounds or max_delegation_rounds <= 0:
        return DEFAULT_MAX_DELEGATION_ROUNDS
    return max_delegation_rounds


def agent_description(role: str, tools: Sequence[Tool], topology: Topology | None = None) -> str:
    """An agent's description: its role plus its capabilities, never tool names."""
    if not tools:
        return role
    return f"{role} Capabilities: {capability_description(tools, topology)}."


def _route_block(entry: RouteEntry) -> str:
    lines = [f"### {entry.name}"]
    role = entry.role.strip()
    if entry.capabilities:
        role = f"{role} Capabilities: {entry.capabilities}."
    lines.append(f"- Role: {role}")
    if entry.keywords:
        lines.append(f"- Keywords: {', '.join(entry.keywords)}")
    if entry.accepts:
        lines.append(f"- Accepts: {entry.accepts}")
    if entry.returns:
        lines.append(f"- Returns: {entry.returns}")
    if entry.cannot_do:
        lines.append(f"- Cannot do: {'; '.join(entry.cannot_do)}")
    return "\n".join(lines)


def build_orchestrator_instruction(
    entries: Sequence[RouteEntry],
    *,
    system_prompt: str | None = None,
    unmatched: Sequence[Tool] = (),
    max_delegation_rounds: int | None = 0,
) -> str:
    """The full orchestrator instruction for the registered agents ``entries``."""
    names = [e.name for e in entries]
    rounds = effective_rounds(max_delegation_rounds)
    sections: list[str] = [(system_prompt or DEFAULT_SYSTEM_PROMPT).strip()]
    sections.append("## Routing table\n" + "\n\n".join(_route_block(e) for e in entries))
    if unmatched:
        summaries = "; ".join(
            t.description.splitlines()[0] if t.description else "an unnamed action"
            for t in unmatched
        )
        sections.append(
            "## Tools no agent owns\n"
            f"{len(unmatched)} registered tool(s) fit no agent on the team, so nobody "
            f"can run them: {summaries}. If a request needs one of these, tell the user "
            "it is unavailable instead of delegating it."
        )
    protocol = [
        "## Decision protocol",
        "You are the orchestrator: you have no tools, so delegate what needs one.",
        "1. Classify: answer it yourself or delegate it (rules below).",
        "2. Match: compare it with each agent's keywords and accepts.",
        "3. Select: the single agent whose role covers it.",
        "4. Verify: it is not in that agent's cannot-do list; the name is exact.",
        f"5. Delegate: call {TRANSFER_TOOL} with that name and write nothing else.",
    ]
    planner = next((e.name for e in entries if e.plans), None)
    if planner is not None:
        protocol.insert(
            5, f"   A request for several agents or ordered steps goes to {planner} first."
        )
    sections.append("\n".join(protocol))
    sections.append(
        "## Rejections\n"
        f"A reply starting with {REJECT_MARKER} names the agent the task needs; never show "
        "it to the user. Delegate the task to the named agent if it exists, else to "
        "the next best match, and never send the same task back to an "
        "agent that rejected it. After two rejections, answer the user directly."
    )
    sections.append(
        "## Delegation rules\n"
        "- Answer greetings, opinions and general-knowledge questions yourself, "
        "without delegating.\n"
        f"- Use at most {rounds} delegation rounds per user message, then answer with "
        "what you have.\n"
        "- One task at a time; pass each result on faithfully."
    )
    sections.append(
        "## Agent names\n"
        f"The only valid agent names are: {', '.join(names) if names else '(none)'}.\n"
        "NEVER invent or abbreviate agent names; any other name fails the transfer."
    )
    return "\n\n".join(sections) + "\n"


def build_specialist_instruction(
    *,
    name: str,
    role: str,
    guidance: str,
    tools: Sequence[Tool],
    accepts: str,
    returns: str,
    cannot_do: Sequence[str],
    team: Sequence[RouteEntry],
    keywords: Sequence[str] = (),
    topology: Topology | None = None,
    toolsets: bool = False,
) -> str:
    """The instruction of one specialist, with the [REJECT] protocol.

    ``toolsets``: the agent also holds tools listed at run time (MCP servers)
    whose prefix the topology does not describe."""
    described = capability_description(tools, topology)
    if tools:
        capabilities = described
    elif toolsets:
        capabilities = "the tools listed below"
    else:
        capabilities = "reasoning only, no tools"
    peers = [e for e in team if e.name != name]
    peer_lines = "\n".join(
        f"- {e.name}: {e.capabilities or e.role}"
        + (f" (keywords: {', '.join(e.keywords)})" if e.keywords else "")
        for e in peers
    )
    constraints = [
        "- Use only your own tools, and only for the task you were given.",
        "- Never claim a result you did not get; if a tool fails, say what failed.",
    ]
    constraints += [f"- You cannot {item}." for item in cannot_do]
    reject = (
        f"If the task is outside your role, do not attempt it. Reply with one line:\n"
        f"{REJECT_FORMAT}\n"
        "where <agent> is the team member below whose role fits."
    )
    parts = [
        f"You are {name}, a specialist on a team led by the orchestrator.",
        f"## What You Do\n{role}\nCapabilities: {capabilities}."
        + (f"\nKeywords: {', '.join(keywords)}" if keywords else ""),
        f"## Input Format\n{accepts or 'A task delegated by the orchestrator.'}",
        f"## Output Format\n{returns or 'A clear answer.'}\n{guidance}".rstrip(),
        "## Constraints\n" + "\n".join(constraints),
        "## Rejecting a task\n" + reject,
    ]
    if peer_lines:
        parts.append("## Team\n" + peer_lines)
    return "\n\n".join(parts) + "\n"
