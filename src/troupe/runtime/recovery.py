"""Recovery inside the invocation: re-routing a rejected task and nudging an empty turn.

:class:`RecoveryPlugin` is an ADK plugin, so every door gets it. It acts on a
model's reply, in flight, without starting another run:

* a specialist's ``[REJECT] This task requires <agent>`` hands the task to
  that agent straight away (the scheduler's own transfer, set on the reply),
  with a note in the agent's first request that the task is now its own;
* a rejection naming no agent that can take it goes back to the
  orchestrator: its last request is sent again with a note saying who
  declined (after two refusals: answer directly), and what it answers, a
  transfer or text, replaces the refusal;
* a reply with neither text nor a call is answered once with the nudge (the
  same request, plus the note); a second empty reply is replaced by the last
  tool result with a note.

The refusal and the empty reply never reach the user. The extra model calls
count toward the turn's model-call cap and appear in its usage counts.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.genai import types

from .. import prompts
from ..guards.calls import ModelCall
from ..guards.turn import Guards, TurnRecord, stop_message
from ..prompts import TRANSFER_ARG, TRANSFER_TOOL
from ..tool_results import readable_result

logger = logging.getLogger("troupe.runtime")

MAX_REJECTIONS = 2
"""Refusals in one turn after which the orchestrator is told to answer directly."""
MAX_REROUTE_ASKS = 2
"""Orchestrator replies tried when re-routing, before giving up honestly."""
FALLBACK_RESULT_LIMIT = 4000
"""Characters of the last tool result shown when a turn ends without an answer."""


def fallback_text(turn: TurnRecord) -> str:
    """What a turn that produced no answer shows instead: its last tool result."""
    if turn.last_result is not None:
        tool, result = turn.last_result
        return (
            f"The agents finished without writing an answer. The last result, from "
            f"{tool}, was:\n{readable_result(result, FALLBACK_RESULT_LIMIT)}"
        )
    return "No answer was produced for this message; please try rephrasing it."


def declined_text(turn: TurnRecord) -> str:
    """The honest end of a turn every agent asked declined."""
    refused = ", ".join(dict.fromkeys(turn.rejected_by))
    return (
        f"This request could not be done: {refused} declined it as outside their role, "
        "and no other agent took it."
    )


def _text(response: LlmResponse) -> str:
    parts = response.content.parts if response.content else None
    return "".join(p.text or "" for p in parts or [] if not p.thought)


def _calls(response: LlmResponse) -> list[types.FunctionCall]:
    parts = response.content.parts if response.content else None
    return [p.function_call for p in parts or [] if p.function_call is not None]


def _text_response(text: str) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


def _is_empty(response: LlmResponse) -> bool:
    """A final reply with nothing for the user and nothing to run."""
    if response.partial or response.error_code:
        return False
    return not _text(response).strip() and not _calls(response)


class RecoveryPlugin(BasePlugin):
    """Re-routes rejections and nudges empty replies; see the module docstring."""

    def __init__(self, guards: Guards) -> None:
        super().__init__(name="troupe_recovery")
        self.guards = guards

    @property
    def _on(self) -> bool:
        return self.guards.settings.enforce_limits

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        if not self._on:
            return None
        turn = self.guards.turn_for(callback_context)
        agent = callback_context.agent_name
        if note := turn.notes.pop(agent, None):
            llm_request.contents.append(types.Content(role="user", parts=[types.Part(text=note)]))
        model = getattr(callback_context.get_invocation_context().agent, "canonical_model", None)
        if isinstance(model, BaseLlm):
            turn.requests[agent] = (llm_request, model)
        return None

    async def after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        if not self._on or llm_response.partial:
            return None
        turn = self.guards.turn_for(callback_context)
        if turn.stop_reason is not None:
            return None
        agent = callback_context.agent_name
        if agent != self.guards.root_name and prompts.is_rejection(_text(llm_response)):
            logger.info("%s rejected the task: %s", agent, _text(llm_response).strip())
            return await self._after_rejection(callback_context, turn, agent)
        if _is_empty(llm_response):
            return await self._after_empty(callback_context, turn, agent)
        return None

    # -- rejections ---------------------------------------------------------
    async def _after_rejection(
        self, ctx: CallbackContext, turn: TurnRecord, agent: str
    ) -> LlmResponse:
        if target := self._handoff_target(turn):
            return self._hand_off(ctx, turn, agent, target)
        refused = list(dict.fromkeys(turn.rejected_by))
        if len(turn.rejected_by) >= MAX_REJECTIONS:
            note = prompts.answer_directly_message(refused)
        else:
            note = prompts.reroute_message(agent, None, refused)
        return await self._reroute(ctx, turn, agent, note)

    def _handoff_target(self, turn: TurnRecord) -> str | None:
        """The agent a rejection named, when it can take the task straight away."""
        if len(turn.rejected_by) >= MAX_REJECTIONS or not turn.reject_targets:
            return None
        named = turn.reject_targets[-1]
        resolver = self.guards.resolver
        target = named if named in resolver.valid else resolver.resolve(named)
        if target is None or target in turn.rejected_by:
            return None
        if turn.delegations >= self.guards.settings.max_delegation_rounds:
            return None
        turn.delegations += 1
        turn.reached.append(target)
        return target

    def _hand_off(
        self, ctx: CallbackContext, turn: TurnRecord, refused_by: str, target: str
    ) -> LlmResponse:
        """Replace the refusal by a transfer to ``target`` (already counted)."""
        logger.info("Handing the rejected task straight to %s", target)
        turn.notes[target] = prompts.handoff_message(refused_by, target)
        ctx.actions.transfer_to_agent = target
        note = f"{refused_by} handed the request to {target}."
        return LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=note, thought=True)])
        )

    async def _reroute(
        self, ctx: CallbackContext, turn: TurnRecord, refused_by: str, note: str
    ) -> LlmResponse:
        """Ask the orchestrator again; its transfer or answer replaces the refusal."""
        root = self.guards.root_name
        extra: list[types.Content] = [types.Content(role="user", parts=[types.Part(text=note)])]
        for _ in range(MAX_REROUTE_ASKS):
            reply = await self._ask(turn, root, extra)
            if reply is None or turn.stop_reason is not None:
                break
            calls = [c for c in _calls(reply) if c.name == TRANSFER_TOOL]
            if not calls:
                text = _text(reply).strip()
                if text and not prompts.is_rejection(text):
                    return _text_response(text)
                break
            args: dict[str, Any] = {TRANSFER_ARG: str((calls[0].args or {}).get(TRANSFER_ARG, ""))}
            error = self.guards.admit_transfer(args, turn)
            target = args[TRANSFER_ARG]
            if error is None and target in self.guards.resolver.valid and target != refused_by:
                return self._hand_off(ctx, turn, refused_by, target)
            if turn.stop_reason is not None:
                break
            message = (error or {}).get("error") or prompts.already_declined_error(target, [])
            extra += [
                types.Content(role="model", parts=[types.Part(function_call=calls[0])]),
                types.Content(
                    role="user",
                    parts=[
                        types.Part(
                            function_response=types.FunctionResponse(
                                id=calls[0].id, name=TRANSFER_TOOL, response={"error": message}
                            )
                        )
                    ],
                ),
            ]
        if turn.stop_reason is not None:
            return _text_response(stop_message(turn))
        return _text_response(declined_text(turn))

    # -- empty replies ------------------------------------------------------
    async def _after_empty(self, ctx: CallbackContext, turn: TurnRecord, agent: str) -> LlmResponse:
        if not turn.nudged:
            turn.nudged = True
            # Nothing delegated or run yet: the reply was empty or malformed,
            # so ask for a decision rather than a report.
            undecided = agent == self.guards.root_name and not (turn.reached or turn.tool_calls)
            if undecided:
                text = prompts.redo_message(self.guards.resolver.valid)
            else:
                text = prompts.NUDGE_MESSAGE
            nudge = types.Content(role="user", parts=[types.Part(text=text)])
            reply = await self._ask(turn, agent, [nudge])
            if reply is not None and not _is_empty(reply):
                return reply
        turn.fell_back = True
        return _text_response(fallback_text(turn))

    # -- one more model call ------------------------------------------------
    async def _ask(
        self, turn: TurnRecord, agent: str, extra: list[types.Content]
    ) -> LlmResponse | None:
        """``agent``'s latest request with ``extra`` appended, sent to its model."""
        saved = turn.requests.get(agent)
        if saved is None:
            return None
        request, model = saved
        limit = self.guards.settings.max_model_calls
        if turn.model_calls >= limit:
            turn.stop_reason = f"it reached the limit of {limit} model calls per message"
            return None
        asked: LlmRequest = request.model_copy(deep=True)
        asked.contents = [*asked.contents, *extra]
        turn.model_calls += 1
        started = time.perf_counter()
        reply: LlmResponse | None = None
        try:
            async for response in model.generate_content_async(asked, stream=False):
                if not response.partial:
                    reply = response
        except Exception as exc:  # the turn ends honestly instead of failing
            logger.warning("Recovery model call for %s failed: %s", agent, exc)
            return None
        if reply is not None:
            # The answer to a note gets the same in-flight repairs as any reply.
            reply = self.guards.repair_reply(turn, agent, reply) or reply
        usage = reply.usage_metadata if reply is not None else None
        turn.trace.model_calls.append(
            ModelCall(
                agent=agent,
                prompt_tokens=(usage.prompt_token_count or 0) if usage else 0,
                output_tokens=(usage.candidates_token_count or 0) if usage else 0,
                latency_ms=round((time.perf_counter() - started) * 1000, 2),
            )
        )
        return reply
