"""What one evaluated request produced."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .dataset import CANNOT, DIRECT

NO_ROUTE = "(none)"
"""Confusion-matrix column for a request that reached no decision (an error,
or only invalid agent names)."""

_DECLINES = re.compile(
    r"\b(?:cannot|can ?not|can't|can’t|unable|not able|no (?:agent|tool|team member)s?\b"
    r"|(?:don't|do not|don’t) have (?:a |any )?(?:tool|way|access))",
    re.IGNORECASE,
)
"""Phrases by which a reply says the request cannot be done."""


def says_cannot(reply: str | None) -> bool:
    """True when ``reply`` says the request cannot be done (the honest answer to
    a request no agent has the tool for)."""
    return bool(reply) and _DECLINES.search(reply or "") is not None


@dataclass
class RequestResult:
    """The orchestrator's routing decision for one request, and what it cost."""

    text: str
    """The request."""
    expected: tuple[str, ...]
    """Acceptable routes; the first is the label."""
    kind: str
    """plain, paraphrase, typo, compound or language."""
    lang: str
    """Language code."""
    routed: str | None
    """The first agent actually transferred to, ``orchestrator`` for a direct
    answer, None when no decision was reached."""
    invalid_names: list[str] = field(default_factory=list)
    """Names the model used that are not in the tree: transfer targets, agents
    called as functions, calls written as text, an echoed [REJECT]."""
    repairs: list[tuple[str, str]] = field(default_factory=list)
    """(what the model wrote, what it became) for each reply repaired in flight."""
    model_calls: int = 0
    """Model calls until the decision, over every agent, as the model answered them."""
    prompt_tokens: int = 0
    """Prompt tokens over those calls, as the model reported them."""
    output_tokens: int = 0
    """Output tokens (answer and thoughts) over those calls."""
    latency_ms: float = 0.0
    """Wall time from sending the request to the decision."""
    error: str | None = None
    """Why the request failed, when it did."""
    router: str | None = None
    """The fast-path router's decision: ``route`` (it transferred, no model call),
    ``greeting`` or ``direct`` (it classed the message as one the orchestrator
    answers itself), ``defer`` or None (router off)."""
    steps: tuple[str, ...] = ()
    """For a compound request, the agent each step needs (see ``RoutingCase.steps``)."""
    ran: list[str] = field(default_factory=list)
    """Agents that ran at least one of their tools in the turn, in order (plan
    steps included; a transfer or a hand-over to a plan step does not count)."""
    reply: str | None = None
    """The turn's last visible answer (kept for ``cannot`` requests and compound ones)."""

    @property
    def router_decided(self) -> bool:
        """True when the router made the decision itself (a route, a greeting
        or a general question)."""
        return self.router in ("route", "greeting", "direct")

    @property
    def label(self) -> str:
        """The primary expected route."""
        return self.expected[0]

    @property
    def correct(self) -> bool:
        """True when the request got what it needs.

        A compound request: every step's agent ran a tool (the plan was carried
        out, not just written). A request no agent can serve (``cannot``): the
        orchestrator answered itself and said it cannot be done. Any other: the
        route is one of the expected ones (repaired or not).
        """
        if self.steps:
            return all(agent in self.ran for agent in self.steps)
        if self.label == CANNOT:
            return self.routed == DIRECT and says_cannot(self.reply)
        return self.routed is not None and self.routed in self.expected

    @property
    def total_tokens(self) -> int:
        """Prompt plus output tokens."""
        return self.prompt_tokens + self.output_tokens

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the result."""
        return {
            "text": self.text,
            "expected": list(self.expected),
            "kind": self.kind,
            "lang": self.lang,
            "routed": self.routed,
            "correct": self.correct,
            "invalid_names": list(self.invalid_names),
            "repairs": [list(pair) for pair in self.repairs],
            "model_calls": self.model_calls,
            "prompt_tokens": self.prompt_tokens,
            "output_tokens": self.output_tokens,
            "latency_ms": round(self.latency_ms, 2),
            "error": self.error,
            "router": self.router,
            "steps": list(self.steps),
            "ran": list(self.ran),
            "reply": self.reply[:500] if self.reply else self.reply,
        }
