"""Plain-language capabilities for tool-name prefixes.

The orchestrator only ever sees these phrases, never raw tool names: a model
that reads ``browser_navigate`` tends to invent an agent called
``browser_agent``, while "web browsing" suggests no agent name at all.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..tools import Tool

GENERAL_ACTIONS = "general actions"
"""Capability of a tool whose name matches no known prefix."""

CAPABILITY_MAP: dict[str, str] = {
    # operator
    "exec": "command execution",
    "fs_": "file operations",
    "skill_": "skill execution",
    # navigator
    "browser_": "web browsing",
    # vault
    "crypto_": "cryptography",
    "secrets_": "secret management",
    "payment_": "blockchain payments (USDC on Base)",
    # librarian
    "search_": "information search",
    "rag_": "knowledge retrieval",
    "graph_": "knowledge graph",
    "save_knowledge": "knowledge storage",
    "save_learning": "learning capture",
    "create_skill": "skill creation",
    "list_skills": "skill catalogue",
    # chronicler
    "memory_": "memory storage and recall",
    "observe_": "event observation",
    "reflect_": "reflection on past events",
}
"""Tool-name prefix -> capability phrase. Matched by longest prefix."""

# Longest first, so "create_skill" wins over a shorter prefix it starts with.
_BY_LENGTH = sorted(CAPABILITY_MAP, key=len, reverse=True)


def tool_capability(name: str) -> str:
    """The capability of a tool name, by its longest matching prefix."""
    for prefix in _BY_LENGTH:
        if name.startswith(prefix):
            return CAPABILITY_MAP[prefix]
    return GENERAL_ACTIONS


def capability_list(tools: Iterable[Tool | str]) -> list[str]:
    """Capabilities of ``tools`` in first-seen order, without repeats."""
    seen: dict[str, None] = {}
    for tool in tools:
        name = tool if isinstance(tool, str) else tool.name
        seen.setdefault(tool_capability(name), None)
    return list(seen)


def capability_description(tools: Iterable[Tool | str]) -> str:
    """Capabilities of ``tools`` joined with ", " (first-seen order, deduplicated)."""
    return ", ".join(capability_list(tools))
