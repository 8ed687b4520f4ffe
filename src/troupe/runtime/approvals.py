"""Approvals: answer ADK's tool-confirmation requests by a policy.

A tool marked dangerous does not run when the model first calls it. ADK
pauses the turn with an ``adk_request_confirmation`` call naming the tool and
its arguments; :func:`run_with_approvals` answers each such request (ask the
user, approve everything, or deny everything) and sends the answer back on
the same session, so ADK either runs the tool or tells the model it was
declined (see :func:`troupe.tool_approval.refusal`).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

from google.adk.events.event import Event
from google.adk.flows.llm_flows.functions import REQUEST_CONFIRMATION_FUNCTION_CALL_NAME
from google.adk.tools.tool_confirmation import ToolConfirmation
from google.genai import types

from ..errors import ConfigError
from ..sandbox.jail import OUTSIDE, UNCONFINED

if TYPE_CHECKING:
    from .assistant import Assistant

logger = logging.getLogger("troupe.runtime")

ApprovalPolicy = Literal["ask", "auto", "deny"]
APPROVAL_POLICIES: tuple[ApprovalPolicy, ...] = ("ask", "auto", "deny")
REQUEST_CONFIRMATION = REQUEST_CONFIRMATION_FUNCTION_CALL_NAME
MAX_APPROVAL_ROUNDS = 25
"""How many times one user message may pause for approval before troupe stops asking."""


@dataclass(frozen=True)
class ApprovalRequest:
    """A dangerous tool call waiting for a yes or no."""

    agent: str
    """The agent that wants to call the tool."""
    tool: str
    """The tool's name."""
    args: dict[str, Any] = field(default_factory=dict)
    """The arguments the model gave (secret references stay unresolved)."""
    request_id: str = ""
    """The id of ADK's ``adk_request_confirmation`` call; the answer quotes it."""
    effect: dict[str, Any] = field(default_factory=dict)
    """What approving would do, as the tool describes it (see ``Tool.effect``):
    e.g. the skill body that would run and its sha256, or the page typed into.
    The approval holds for exactly this effect; a call whose effect changed
    before it ran is refused."""


@dataclass(frozen=True)
class ApprovalDecision:
    """The answer to one :class:`ApprovalRequest`."""

    approved: bool
    """True runs the tool; False sends the model a refusal."""
    reason: str
    """Why, in words the model and the user can read."""
    for_session: bool = False
    """Approved by the session's allow list, or answered "always" (added to it)."""


ALWAYS = "always"
"""What an :data:`AskUser` returns to approve this call and every later call of the
same tool in the session without asking again."""
Answer = bool | Literal["always"]
AskUser = Callable[[ApprovalRequest], Answer | Awaitable[Answer]]
"""Asks a person about one request; True approves, ``"always"`` approves the tool
for the rest of the session. May be sync or async."""
OnDecision = Callable[[ApprovalRequest, ApprovalDecision], None]
"""Told about every decision, e.g. to print it."""


def parse_policy(value: object) -> ApprovalPolicy:
    """``value`` as an approval policy; a bad one raises ConfigError naming it."""
    if isinstance(value, str) and value.strip().lower() in APPROVAL_POLICIES:
        return cast(ApprovalPolicy, value.strip().lower())
    raise ConfigError(
        f"Unknown approval policy {value!r}; use one of: {', '.join(APPROVAL_POLICIES)}."
    )


def default_policy(*, interactive: bool) -> ApprovalPolicy:
    """``ask`` when a person is at the terminal, otherwise ``deny``."""
    return "ask" if interactive else "deny"


def approval_requests(event: Event) -> list[ApprovalRequest]:
    """The confirmation requests an event carries (usually none)."""
    if event.author == "user" or not event.content:
        return []
    found = []
    for call in event.get_function_calls():
        if call.name != REQUEST_CONFIRMATION or not call.id:
            continue
        original = (call.args or {}).get("originalFunctionCall") or {}
        asked = (call.args or {}).get("toolConfirmation") or {}
        payload = asked.get("payload") if isinstance(asked, dict) else None
        effect = payload.get("effect") if isinstance(payload, dict) else None
        step = payload.get("step") if isinstance(payload, dict) else None
        if isinstance(step, dict):
            # A plan step paused: the question is about the tool inside the step.
            original = {"name": step.get("tool"), "args": step.get("args")}
        found.append(
            ApprovalRequest(
                agent=str(step.get("agent")) if isinstance(step, dict) else event.author,
                tool=str(original.get("name") or "?"),
                args=dict(original.get("args") or {}),
                request_id=call.id,
                effect=dict(effect) if isinstance(effect, dict) else {},
            )
        )
    return found


def is_approval_plumbing(event: Event) -> bool:
    """True for the events ADK emits only to pause for approval.

    That is the ``adk_request_confirmation`` call and the placeholder result
    ("requires confirmation") of the paused tool; a chat display hides both
    and shows the question and the decision instead.
    """
    calls = event.get_function_calls()
    if calls and all(c.name == REQUEST_CONFIRMATION for c in calls):
        return True
    waiting = event.actions.requested_tool_confirmations or {}
    responses = event.get_function_responses()
    return bool(waiting and responses and all(r.id in waiting for r in responses))


async def decide(
    request: ApprovalRequest,
    policy: ApprovalPolicy,
    ask: AskUser | None = None,
    allowed: set[str] | None = None,
) -> ApprovalDecision:
    """Apply ``policy`` to one request; ``ask`` is used by the ``ask`` policy, and
    under ``auto`` for a call that would run unconfined (an ``unconfined`` effect:
    bubblewrap cannot create namespaces here, or no process limit can apply), which
    only a person may allow.

    ``allowed`` is the session's allow list: a tool in it was allowed by the user
    for the whole session and runs without asking; an ``always`` answer adds to it.
    """
    if allowed is not None and request.tool in allowed and policy != "deny":
        return ApprovalDecision(
            True, f"the user allowed {request.tool} for this session", for_session=True
        )
    if policy == "auto" and (why := request.effect.get(UNCONFINED)):
        if ask is None:
            said = why if isinstance(why, str) else OUTSIDE
            return ApprovalDecision(
                False,
                f"{request.tool}: {said}, and --approve auto does not cover that; a person "
                "must approve it: rerun with --approve ask",
            )
    elif policy == "auto":
        return ApprovalDecision(True, "approved automatically (--approve auto)")
    if policy == "deny":
        return ApprovalDecision(
            False,
            f"{request.tool} needs the user's approval and approvals are set to deny "
            "(--approve deny, the default when no terminal is attached); the user can "
            "rerun with --approve ask or --approve auto",
        )
    if ask is None:
        return ApprovalDecision(False, f"nobody was available to approve {request.tool}")
    try:
        answer = ask(request)
        if inspect.isawaitable(answer):
            answer = await answer
    except (EOFError, KeyboardInterrupt):
        answer = False
    if answer == ALWAYS and allowed is not None:
        allowed.add(request.tool)
        return ApprovalDecision(
            True, "approved by the user for the rest of this session", for_session=True
        )
    if answer:
        return ApprovalDecision(True, "approved by the user")
    return ApprovalDecision(False, f"the user declined to run {request.tool}")


def confirmation_part(request: ApprovalRequest, decision: ApprovalDecision) -> types.Part:
    """The function response that answers ``request`` with ``decision``."""
    confirmation = ToolConfirmation(
        confirmed=decision.approved, payload={"reason": decision.reason}
    )
    return types.Part(
        function_response=types.FunctionResponse(
            id=request.request_id,
            name=REQUEST_CONFIRMATION,
            response=confirmation.model_dump(by_alias=True, exclude_none=True),
        )
    )


async def run_with_approvals(
    assistant: Assistant,
    session_id: str,
    text: str,
    *,
    policy: ApprovalPolicy,
    ask: AskUser | None = None,
    on_decision: OnDecision | None = None,
    max_rounds: int = MAX_APPROVAL_ROUNDS,
) -> AsyncGenerator[Event, None]:
    """Like :meth:`Assistant.run`, answering confirmation requests by ``policy``.

    Every event is yielded, the approval plumbing included (filter it with
    :func:`is_approval_plumbing`). After a turn pauses for approval, each
    request is decided and the answers are sent on the same session; the
    resumed turn's events follow, until a turn ends without asking.
    """
    policy = parse_policy(policy)
    pending: list[ApprovalRequest] = []
    async for event in assistant.run(session_id, text):
        pending.extend(approval_requests(event))
        yield event
    try:
        async for event in _answer_until_done(
            assistant, session_id, pending, policy, ask, on_decision, max_rounds
        ):
            yield event
    except asyncio.CancelledError:
        # Cancelled at the question, or before the resumed turn wrote its trace:
        # the paused turn's trace says so instead of "awaiting approval".
        assistant.paused_turn_cancelled(session_id)
        raise


async def _answer_until_done(
    assistant: Assistant,
    session_id: str,
    pending: list[ApprovalRequest],
    policy: ApprovalPolicy,
    ask: AskUser | None,
    on_decision: OnDecision | None,
    max_rounds: int,
) -> AsyncGenerator[Event, None]:
    rounds = 0
    while pending:
        rounds += 1
        if rounds > max_rounds:
            logger.warning(
                "Stopped after %d approval rounds in one turn; the model keeps calling "
                "tools that need approval.",
                max_rounds,
            )
            return
        parts = []
        for request in pending:
            decision = await decide(request, policy, ask, assistant.allowed_tools(session_id))
            if on_decision is not None:
                on_decision(request, decision)
            parts.append(confirmation_part(request, decision))
        pending = []
        answer = types.Content(role="user", parts=parts)
        async for event in assistant.run(session_id, answer):
            pending.extend(approval_requests(event))
            yield event
