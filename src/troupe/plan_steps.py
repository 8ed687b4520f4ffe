"""Plan steps: the planner's teammates as tools, and approvals inside a step.

The planner carries out a plan by calling each specialist as a tool (an ADK
``AgentTool``): the step runs in a nested run and its last reply comes back
as the tool's result. ADK cannot resume a nested run that paused for a
person's approval (its session is discarded), so a step whose agent calls a
dangerous tool would end with an error instead of asking.

:class:`PlanStepTool` and :class:`PlanStepApprovals` close that gap without
reaching into ADK:

1. While a step runs, the session's state names it (:data:`STEP_MARKER`).
   When a tool inside the step pauses for approval, the plugin records what
   was asked (agent, tool, arguments, effect) in the state, which ADK
   forwards from the nested run to the planner's.
2. The step tool sees the record and pauses the planner's own call for
   approval, carrying the inner request, so every door asks the person about
   ``secrets_set(...)`` on the vault, not about "the vault".
3. Once answered, ADK runs the step tool again with the answer. The step
   runs again from its start with the answer on record; when the inner agent
   makes exactly the approved call (same agent, tool and arguments; a tool
   that checks its effect also compares that), the plugin hands the call
   that answer, once, and ADK runs or refuses it. Tools that ran before the
   pause without asking run again: a step is one specialist's request, and
   its dangerous tools are the ones that ask.
4. ADK runs an approved call once and cannot pause it a second time. A step
   that asks again in that call (another dangerous tool, or a changed call)
   reports to the planner that it needs another approval; the planner's next
   call of the same step (same agent and request) asks at once, and a call
   that already ran under an answer gets its kept result instead of running
   again.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from google.adk.agents.invocation_context import InvocationContext
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_confirmation import ToolConfirmation
from google.adk.tools.tool_context import ToolContext
from typing_extensions import override

from .tool_approval import approved_effect_key
from .turn_state import PARENT_TURN_KEY, turn_of

STEP_MARKER = "troupe.plan_step.running"
"""State key: the plan step running now (None between steps), see :func:`step_id`."""


def step_id(agent: str, args: dict[str, Any]) -> str:
    """One plan step: its agent and the exact request it was given."""
    digest = hashlib.sha256(json.dumps(args, sort_keys=True, default=str).encode())
    return f"{agent}.{digest.hexdigest()[:16]}"


def asked_key(step_id: str) -> str:
    """State key: the request a step paused on (agent, tool, args, effect)."""
    return f"troupe.plan_step.asked.{step_id}"


def answers_key(step_id: str) -> str:
    """State key: the answers given to a step's requests, in order."""
    return f"troupe.plan_step.answers.{step_id}"


def _reason(confirmation: ToolConfirmation) -> str:
    payload = confirmation.payload
    reason = payload.get("reason") if isinstance(payload, dict) else None
    if reason:
        return str(reason)
    return "approved by the user" if confirmation.confirmed else "the user declined"


class PlanStepTool(AgentTool):
    """A specialist as one of the planner's tools; a step that needs approval asks."""

    @override
    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        step = step_id(self.name, args)
        state = tool_context.state
        asked = state.get(asked_key(step))
        confirmation = tool_context.tool_confirmation
        if confirmation is not None:
            if isinstance(asked, dict):
                answers = list(state.get(answers_key(step)) or [])
                answers.append(
                    {**asked, "approved": confirmation.confirmed, "reason": _reason(confirmation)}
                )
                state[answers_key(step)] = answers
            state[asked_key(step)] = None
        elif isinstance(asked, dict):
            # This step stopped on a request last time, in a call that could not
            # pause again (see below): ask now, before running anything.
            return self._ask(asked, tool_context)
        outer_step, outer_turn = state.get(STEP_MARKER), state.get(PARENT_TURN_KEY)
        state[STEP_MARKER] = step
        # The step's model and tool calls count against this turn's limits. A step
        # started inside another step (its agent handed the task to the planner)
        # counts against the outermost turn, so the limits bound the nesting too.
        state[PARENT_TURN_KEY] = (
            outer_turn
            if turn_of(outer_turn) is not None
            else {"session": tool_context.session.id, "invocation": tool_context.invocation_id}
        )
        try:
            result = await super().run_async(args=args, tool_context=tool_context)
        finally:
            state[STEP_MARKER] = outer_step
            state[PARENT_TURN_KEY] = outer_turn
        asked = state.get(asked_key(step))
        if not isinstance(asked, dict):
            state[answers_key(step)] = None  # the step is done: its answers are spent
            return result
        if confirmation is None:
            return self._ask(asked, tool_context)
        # ADK runs an approved call once and cannot pause it a second time, so a
        # step that needs a second approval reports that, and the next call of
        # the same step asks for it; what already ran keeps its result.
        return {
            "error": f"this step is not finished: {asked.get('agent')} also needs the "
            f"user's approval to run {asked.get('tool')}. Call {self.name} again with "
            "the same request to ask for it; what already ran will not run again.",
            "needs_approval": asked,
        }

    def _ask(self, asked: dict[str, Any], tool_context: ToolContext) -> dict[str, Any]:
        """Pause the planner's call to this step for the request the step paused on."""
        effect = asked.get("effect") or {}
        summary = effect.get("summary") if isinstance(effect, dict) else None
        tool_context.request_confirmation(
            hint=f"Approve or reject {asked.get('tool')} for step {self.name!r}"
            + (f": {summary}" if summary else ""),
            payload={"effect": effect, "step": asked},
        )
        tool_context.actions.skip_summarization = True
        return {"error": "This step needs the user's approval, please approve or reject."}


class PlanStepApprovals(BasePlugin):
    """Records the approval a plan step's tool asks for, and hands it the answer."""

    def __init__(self) -> None:
        super().__init__(name="troupe_plan_step_approvals")
        self._used: dict[str, set[int]] = {}
        """Per nested run: the answers already handed out (each holds for one call)."""
        self._answering: dict[tuple[str, str], int] = {}
        """(nested run, call id) -> the answer that call runs under."""

    @override
    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        step = tool_context.state.get(STEP_MARKER)
        if not step or tool_context.tool_confirmation is not None:
            return None
        answers = tool_context.state.get(answers_key(step)) or []
        used = self._used.setdefault(tool_context.invocation_id, set())
        for index, answer in enumerate(answers):
            if index in used or not _same_call(answer, tool, tool_args, tool_context):
                continue
            used.add(index)
            if "result" in answer:
                return dict(answer["result"])  # it ran in an earlier try: not again
            effect = answer.get("effect")
            if effect:
                # An effect-checking tool compares what it would do now with this.
                tool_context.state[approved_effect_key(tool_context)] = effect
            tool_context.tool_confirmation = ToolConfirmation(
                confirmed=bool(answer.get("approved")), payload={"reason": answer.get("reason")}
            )
            self._answering[(tool_context.invocation_id, tool_context.function_call_id or "")] = (
                index
            )
            return None
        return None

    @override
    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        step = tool_context.state.get(STEP_MARKER)
        call_id = tool_context.function_call_id or ""
        if not step:
            return None
        index = self._answering.pop((tool_context.invocation_id, call_id), None)
        if index is not None:
            answers = [dict(a) for a in tool_context.state.get(answers_key(step)) or []]
            answers[index]["result"] = _as_record(result)
            tool_context.state[answers_key(step)] = answers
            return None
        waiting = tool_context.actions.requested_tool_confirmations or {}
        if call_id not in waiting:
            return None
        payload = waiting[call_id].payload
        effect = payload.get("effect") if isinstance(payload, dict) else None
        tool_context.state[asked_key(step)] = {
            "agent": tool_context.agent_name,
            "tool": tool.name,
            "args": dict(tool_args),
            "effect": dict(effect) if isinstance(effect, dict) else {},
        }
        return None

    @override
    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        self._used.pop(invocation_context.invocation_id, None)
        for key in [k for k in self._answering if k[0] == invocation_context.invocation_id]:
            del self._answering[key]


def _as_record(result: object) -> dict[str, Any]:
    """A tool's result as it can be kept in the session's state (JSON)."""
    try:
        return dict(json.loads(json.dumps(result, default=str)))
    except (TypeError, ValueError):
        return {"result": str(result)}


def _same_call(
    answer: object, tool: BaseTool, args: dict[str, Any], tool_context: ToolContext
) -> bool:
    return (
        isinstance(answer, dict)
        and answer.get("agent") == tool_context.agent_name
        and answer.get("tool") == tool.name
        and answer.get("args") == args
    )
