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


_CONTENT_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
# fmt: off
_FILLER = frozenset((
    "the", "and", "for", "you", "your", "are", "was", "not", "but", "can", "all", "any",
    "has", "had", "his", "her", "its", "our", "out", "one", "how", "who", "why", "now",
    "get", "got", "let", "may", "use", "please", "could", "would", "should", "there",
    "their", "about", "with", "from", "that", "this", "what", "when", "where", "which",
    "have", "just", "also", "into", "some", "them", "they", "then", "than", "will", "want",
    "need", "help", "make", "sure", "team", "agent", "agents", "tool", "tools", "request",
    "cannot", "unable", "sorry", "able", "does", "don", "doesn", "isn", "won",
))
# fmt: on
"""Words too common to show that a refusal names what was asked."""


def _content_words(text: str) -> set[str]:
    return {w.lower() for w in _CONTENT_WORD.findall(text)} - _FILLER


def _same_word(a: str, b: str) -> bool:
    """One word is the start of the other, up to five letters ("pay" and
    "payments", "flight" and "flights")."""
    short, long = sorted((a, b), key=len)
    return long.startswith(short[:5])


def declines_request(reply: str | None, request: str) -> bool:
    """True when ``reply`` says it cannot do what ``request`` asks and names it:
    a refusal that shares a content word with the request ("I can't book
    flights" to "book me a flight to Rome"). A fallback that says "no agent
    matches" to anything it does not understand names nothing, and does not count."""
    if not says_cannot(reply):
        return False
    asked = _content_words(request)
    return any(_same_word(w, a) for w in _content_words(reply or "") for a in asked)


@dataclass(frozen=True)
class ToolRun:
    """One tool call an agent made during the request."""

    agent: str
    tool: str
    ok: bool
    """False when the tool answered with an error (a refused or failed call)."""


def _in_order(wanted: tuple[str, ...], done: list[str]) -> bool:
    """``wanted`` appears in ``done`` in order (others may come between)."""
    remaining = iter(done)
    return all(any(agent == want for agent in remaining) for want in wanted)


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
    runs: list[ToolRun] = field(default_factory=list)
    """Every tool the agents ran in the turn, in order (plan steps included; a
    transfer or a hand-over to a plan step is not the work itself)."""
    reply: str | None = None
    """The turn's last visible answer (kept for ``cannot`` requests and compound ones)."""
    planner: str | None = None
    """The team's planning agent, when it has one: a right route for a compound request."""
    handed: int = 0
    """Steps the planning agent handed to a teammate during the turn."""
    to_the_end: bool = False
    """The turn ran to its end, every approval granted (a compound request
    always; every request with ``troupe eval --end-to-end``), so :attr:`done`
    can say whether the work was done, not only where it went."""

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
    def ran(self) -> list[str]:
        """Agents that ran a tool without error, in order, once each."""
        return list(dict.fromkeys(run.agent for run in self.runs if run.ok))

    @property
    def routed_right(self) -> bool:
        """True when the routing decision was right, whatever came after it: the
        expected agent (repaired or not); for a compound request also the team's
        planning agent, or the one agent all its steps belong to (it does them
        one after the other); for a greeting, a general question or a request
        no agent can serve, the orchestrator answering itself. The router's
        precision is counted on this, as it holds for any model behind the router."""
        if self.label in (CANNOT, DIRECT):
            return self.routed == DIRECT
        planned = self.routed is not None and self.routed == self.planner
        if self.steps and (planned or set(self.steps) == {self.routed}):
            return True
        return self.routed is not None and self.routed in self.expected

    @property
    def correct(self) -> bool:
        """True when the request got what it needs.

        A compound request: each step's agent ran one of its tools without an
        error, in the order of the steps (a plan written but not carried out,
        a failed call, or steps done out of order do not count). A request no
        agent can serve (``cannot``): no agent was handed it or ran a tool, and
        the answer declines what was asked (see :func:`declines_request`). A
        general question or greeting: answered by the orchestrator, no agent
        ran. Any other: the route is one of the expected ones (repaired or not).
        """
        if self.steps:
            return _in_order(self.steps, [run.agent for run in self.runs if run.ok])
        if self.label == CANNOT:
            return (
                self.routed == DIRECT and not self.runs and declines_request(self.reply, self.text)
            )
        if self.label == DIRECT:
            return self.routed == DIRECT and not self.runs
        return self.routed is not None and self.routed in self.expected

    @property
    def done(self) -> bool | None:
        """True when the request's work was done, end to end: as :attr:`correct`,
        and for a single-agent request also one of its agent's own tools ran
        without an error (a route to the right agent whose call failed, or that
        answered without calling anything, is not the work). The team's
        planning agent has no tools of its own: its work is the plan it
        answers with, so a request for a plan counts when it was routed
        there and the plan was written, not handed out step by step. None
        when the turn was closed at the routing decision, so nobody knows."""
        if self.steps or self.label in (CANNOT, DIRECT):
            return self.correct
        if not self.to_the_end:
            return None
        if self.label == self.planner:
            return self.correct and not self.handed and not self.runs
        return self.correct and any(run.ok and run.agent in self.expected for run in self.runs)

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
            "done": self.done,
            "routed_right": self.routed_right,
            "invalid_names": list(self.invalid_names),
            "repairs": [list(pair) for pair in self.repairs],
            "model_calls": self.model_calls,
            "prompt_tokens": self.prompt_tokens,
            "output_tokens": self.output_tokens,
            "latency_ms": round(self.latency_ms, 2),
            "error": self.error,
            "router": self.router,
            "steps": list(self.steps),
            "runs": [[run.agent, run.tool, run.ok] for run in self.runs],
            "reply": self.reply[:500] if self.reply else self.reply,
        }
