"""The orchestrator's choice as a JSON reply, for servers that constrain JSON.

Small local models often answer in prose where they should call
``transfer_to_agent``, and some servers (llama.cpp's among them) ignore
``tool_choice`` yet enforce a JSON schema given as ``response_format``. With
``router.agent_schema`` on, a request the router leaves to the model with a
best guess is sent without tools and with :func:`choice_schema`: the model
can only write one of the router's best few candidates, or ``"none"`` and
its answer.
:func:`read_choice` reads that reply back, and the router's after-model step
turns a named member into the transfer ADK performs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

NO_AGENT = "none"
"""The choice that means: the orchestrator answers the request itself."""
SCHEMA_TITLE = "agent_choice"
"""The title of :func:`choice_schema`, by which a model tells it from others."""


def choice_schema(names: Sequence[str]) -> dict[str, Any]:
    """JSON schema of the reply: ``agent`` first (one of ``names`` or
    :data:`NO_AGENT`), then ``answer``."""
    return {
        "title": SCHEMA_TITLE,
        "type": "object",
        "properties": {
            "agent": {"type": "string", "enum": [*names, NO_AGENT]},
            "answer": {"type": "string"},
        },
        "required": ["agent", "answer"],
        "additionalProperties": False,
    }


def choice_instruction(names: Sequence[str]) -> str:
    """What the model is told about the reply's form, in the instruction."""
    listed = ", ".join(names)
    return (
        "# Reply format\n"
        'Reply with JSON only: {"agent": ..., "answer": ...}. "agent" is the team '
        f"member who should handle the request (one of: {listed}; the likeliest "
        "first), or "
        f'"{NO_AGENT}" when you answer it yourself; "answer" is your answer when '
        f'"agent" is "{NO_AGENT}", otherwise an empty string.'
    )


@dataclass(frozen=True)
class Choice:
    """What a JSON reply chose."""

    agent: str | None
    """The team member named, or None when the model answers itself."""
    answer: str
    """The model's answer (empty when it named a member)."""


def read_choice(text: str, names: Sequence[str]) -> Choice | None:
    """The choice in ``text``, or None when it is not such a reply (not JSON,
    no ``agent``, or an agent outside ``names``): it is then left as it is."""
    try:
        data = json.loads(text.strip())
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("agent"), str):
        return None
    agent, answer = data["agent"], data.get("answer")
    answer = answer.strip() if isinstance(answer, str) else ""
    if agent in names:
        return Choice(agent, answer)
    if agent == NO_AGENT and answer:
        return Choice(None, answer)
    return None


def offered_agents(schema: object) -> list[str] | None:
    """The names a :func:`choice_schema` offers, or None when ``schema`` is
    not one (how a model tells that it is asked for a choice)."""
    if not isinstance(schema, dict) or schema.get("title") != SCHEMA_TITLE:
        return None
    names = schema.get("properties", {}).get("agent", {}).get("enum", [])
    return [n for n in names if isinstance(n, str) and n != NO_AGENT]


def choice_reply(agent: str | None, answer: str = "") -> str:
    """A JSON choice as a model writes it: ``agent`` None for :data:`NO_AGENT`."""
    return json.dumps({"agent": agent or NO_AGENT, "answer": answer}, ensure_ascii=False)
