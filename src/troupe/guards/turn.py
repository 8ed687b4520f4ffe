"""Guards that keep a turn on track: transfer repair, limits, repeat detection.

They run as the callbacks of one ADK plugin, for every agent (no patch to ADK):

* ``before_tool``: repairs a ``transfer_to_agent`` target that names no agent
  (or answers with the valid names so the model corrects itself in the same
  run), refuses a specialist's transfer the repairs did not turn into a
  ``[REJECT]`` (back to the orchestrator, or to no agent), refuses to send a
  task back to an agent that rejected it, counts delegations against the
  limit, and stops a tool call repeated with identical arguments;
* ``before_model``: counts model calls against the per-turn cap, ends a
  stopped turn with an honest message instead of calling the model again,
  and drops ADK's own list of transfer targets from the orchestrator's
  request, which repeats the routing table;
* ``after_model``: repairs a malformed reply in flight (an agent called as a
  function, a call written as text, the orchestrator echoing ``[REJECT]``; see
  :mod:`troupe.guards.repairs`), counts each as an invalid name and a repair,
  and remembers a specialist's ``[REJECT]``;
* ``after_tool``: remembers results.

They are registered on the ADK ``App`` as a plugin (see
:mod:`troupe.runtime.plugins`), so every door runs them. State lives per user
turn. The :class:`~troupe.runtime.assistant.Assistant` opens a turn per user
message so that its retry after an unknown agent keeps counting; without it
(``troupe serve``, ``adk web``, A2A), each invocation is its own turn, keyed
by invocation id.
"""

from __future__ import annotations

import itertools
import json
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from .. import prompts
from .._adk_compat import without_transfer_list
from ..prompts import TRANSFER_ARG, TRANSFER_TOOL
from ..routing.repair import AgentNameResolver
from ..tool_arguments import refused_call_error
from ..tool_results import readable_result
from ..turn_state import parent_turn
from .calls import TraceLog
from .repairs import Caller, declared_functions, examine

logger = logging.getLogger("troupe.guards")

_MAX_TRACKED_TURNS = 4096
STOP_RESULT_LIMIT = 400
"""Characters of the last tool result quoted in a stop message."""


@dataclass(frozen=True, kw_only=True)
class GuardSettings:
    """Which guards run and their limits."""

    transfer_repair: bool = True
    """Rewrite resolvable bad transfer targets and malformed replies in flight; answer
    unresolvable names with the valid ones."""
    enforce_limits: bool = True
    """Delegation limit, model-call cap, repeat detection, ping-pong refusal."""
    max_delegation_rounds: int = 5
    """Transfers allowed per user turn."""
    max_model_calls: int = 24
    """Model calls allowed per user turn, over all agents."""
    max_repeated_calls: int = 3
    """Identical tool calls (same agent, tool, arguments) in a row before stopping."""
    turn_timeout_s: float | None = None
    """Seconds a user turn may take before it is ended with a message; None: no limit."""
    trim_transfer_list: bool = True
    """Drop ADK's transfer-target list from the orchestrator's request."""


@dataclass
class TurnRecord:
    """What happened in one user turn, as the guards saw it."""

    delegations: int = 0
    model_calls: int = 0
    repairs: list[tuple[str, str]] = field(default_factory=list)
    """(what the model wrote, what it became) for each transfer or reply repaired."""
    invalid_names: list[str] = field(default_factory=list)
    """Every name or shape the model wrote that does not exist, repaired or not."""
    shapes: list[str] = field(default_factory=list)
    """The :data:`~troupe.guards.repairs.SHAPES` key of each malformed reply."""
    unresolved: list[str] = field(default_factory=list)
    """Transfer targets that could not be resolved."""
    rejected_by: list[str] = field(default_factory=list)
    """Agents that answered [REJECT] in this turn."""
    reject_targets: list[str] = field(default_factory=list)
    """Agents named by those rejections."""
    reached: list[str] = field(default_factory=list)
    """Agents transferred to, in order."""
    tool_calls: list[tuple[str, str]] = field(default_factory=list)
    """(agent, tool) of each tool that ran."""
    last_result: tuple[str, Any] | None = None
    """(tool, response) of the latest tool result."""
    stop_reason: str | None = None
    """Why the turn was stopped early, if it was."""
    router: str | None = None
    """The fast-path router's decision: route, greeting or defer (None: not asked)."""
    trace: TraceLog = field(default_factory=TraceLog)
    """Model and tool calls with timings, for the turn's trace."""
    caller_owned: bool = False
    """True when a caller (the Assistant) opened the turn and writes its trace."""
    started_at: float = field(default_factory=time.time)
    """When the turn started (seconds since the epoch)."""
    clock: float = field(default_factory=time.perf_counter)
    """``time.perf_counter()`` at the start, for the duration."""
    deadline: float | None = None
    """Event-loop time at which the turn times out, once a timer was started."""
    timed_out: bool = False
    """True when the turn was ended by its time limit."""
    events: list[Any] = field(default_factory=list)
    """The ADK events the turn produced, in order."""
    nudged: bool = False
    """True once the turn's empty reply was answered with the nudge."""
    fell_back: bool = False
    """True when the turn's answer is the last tool result, for want of one."""
    notes: dict[str, str] = field(default_factory=dict)
    """A note for an agent's next model request (agent name -> text)."""
    requests: dict[str, Any] = field(default_factory=dict)
    """Each agent's latest model request and model: (LlmRequest, BaseLlm)."""
    declared: dict[str, dict[str, frozenset[str]]] = field(default_factory=dict)
    """Functions declared to each agent in its latest request, with their parameters."""
    _last_signature: str | None = None
    _repeats: int = 0


class Guards:
    """Callbacks shared by every agent of one tree; see the module docstring."""

    def __init__(
        self,
        settings: GuardSettings,
        *,
        resolver: AgentNameResolver,
        root_name: str,
    ) -> None:
        self.settings = settings
        self.resolver = resolver
        self.root_name = root_name
        self._turns: OrderedDict[str, TurnRecord] = OrderedDict()
        self._active: dict[str, str] = {}
        self._turn_numbers = itertools.count()

    # -- turn bookkeeping ---------------------------------------------------
    def begin_turn(self, session_id: str) -> TurnRecord:
        """Start counting a new user turn in ``session_id``."""
        key = f"turn:{session_id}:{next(self._turn_numbers)}"
        self._active[session_id] = key
        record = self._record(key)
        record.caller_owned = True
        return record

    def end_turn(self, session_id: str) -> TurnRecord | None:
        """Stop counting for ``session_id`` and return what was recorded."""
        key = self._active.pop(session_id, None)
        return self._turns.pop(key, None) if key else None

    def current(self, session_id: str) -> TurnRecord | None:
        """The record of the open turn in ``session_id``, if any."""
        key = self._active.get(session_id)
        return self._turns.get(key) if key else None

    def _record(self, key: str) -> TurnRecord:
        record = self._turns.get(key)
        if record is None:
            record = self._turns[key] = TurnRecord()
            while len(self._turns) > _MAX_TRACKED_TURNS:
                self._turns.popitem(last=False)
        return record

    def turn_for(self, ctx: CallbackContext | ToolContext | InvocationContext) -> TurnRecord:
        """The record of the turn a callback or invocation context belongs to."""
        session_id, invocation_id = ctx.session.id, ctx.invocation_id
        parent = parent_turn(ctx.session.state)
        if parent is not None and parent[0] != session_id:
            # A plan step's nested run: its calls count against the turn that ran it.
            session_id, invocation_id = parent
        key = self._active.get(session_id) or f"inv:{invocation_id}"
        return self._record(key)

    def end_invocation(self, ctx: InvocationContext) -> TurnRecord | None:
        """Forget the turn of an invocation no caller opened, and return it."""
        if ctx.session.id in self._active:
            return None
        return self._turns.pop(f"inv:{ctx.invocation_id}", None)

    # -- callbacks ----------------------------------------------------------
    def before_model(
        self, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        turn = self.turn_for(callback_context)
        turn.declared[callback_context.agent_name] = declared_functions(
            llm_request.config.tools or []
        )
        if self.settings.trim_transfer_list:
            _trim_transfer_list(llm_request, root=callback_context.agent_name == self.root_name)
        if self.settings.enforce_limits:
            if turn.stop_reason is None and turn.model_calls >= self.settings.max_model_calls:
                turn.stop_reason = (
                    f"it reached the limit of {self.settings.max_model_calls} model calls "
                    "per message"
                )
            if turn.stop_reason is not None:
                logger.warning("Stopping turn: %s", turn.stop_reason)
                return _text_response(stop_message(turn))
        turn.model_calls += 1
        return None

    def after_model(
        self, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        turn = self.turn_for(callback_context)
        agent = callback_context.agent_name
        replaced = self.repair_reply(turn, agent, llm_response)
        text = _response_text(replaced or llm_response)
        if agent != self.root_name and prompts.is_rejection(text):
            turn.rejected_by.append(agent)
            if target := prompts.rejection_target(text):
                turn.reject_targets.append(target)
        return replaced

    def repair_reply(
        self, turn: TurnRecord, agent: str, response: LlmResponse
    ) -> LlmResponse | None:
        """``agent``'s malformed reply repaired and counted, or None when it stands."""
        caller = Caller(
            agent=agent, functions=turn.declared.get(agent, {}), is_root=agent == self.root_name
        )
        outcome = examine(response, caller, self.resolver.resolve)
        repair = self.settings.transfer_repair
        for finding in outcome.findings:
            if finding.invalid_name:
                turn.invalid_names.append(finding.asked)
            turn.shapes.append(finding.shape)
            if repair and finding.became is not None:
                logger.warning(
                    "Repaired %s: %r -> %r", finding.shape, finding.asked, finding.became
                )
                turn.repairs.append((finding.asked, finding.became))
        return outcome.response(response) if repair else None

    def before_tool(
        self, tool: BaseTool, args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        if (refused := refused_call_error(tool.name, args)) is not None:
            return refused
        turn = self.turn_for(tool_context)
        if tool.name == TRANSFER_TOOL:
            return self._check_transfer(args, tool_context, turn)
        if not self.settings.enforce_limits:
            return None
        signature = json.dumps(
            [tool_context.agent_name, tool.name, args], sort_keys=True, default=str
        )
        if signature == turn._last_signature:
            turn._repeats += 1
        else:
            turn._last_signature, turn._repeats = signature, 1
        if turn._repeats >= self.settings.max_repeated_calls:
            turn.stop_reason = (
                f"{tool_context.agent_name} called {tool.name} with the same arguments "
                f"{turn._repeats} times in a row"
            )
            logger.warning("Stopping repeated tool call: %s", turn.stop_reason)
            return {"error": prompts.repeated_call_error(turn._repeats - 1)}
        return None

    def after_tool(
        self,
        tool: BaseTool,
        args: dict[str, Any],
        tool_context: ToolContext,
        tool_response: Any,
    ) -> dict[str, Any] | None:
        if tool.name != TRANSFER_TOOL:
            turn = self.turn_for(tool_context)
            turn.tool_calls.append((tool_context.agent_name, tool.name))
            turn.last_result = (tool.name, tool_response)
        return None

    # -- transfers ----------------------------------------------------------
    def _check_transfer(
        self, args: dict[str, Any], ctx: ToolContext, turn: TurnRecord
    ) -> dict[str, Any] | None:
        return self.admit_transfer(args, turn, agent=ctx.agent_name)

    def admit_transfer(
        self, args: dict[str, Any], turn: TurnRecord, *, agent: str | None = None
    ) -> dict[str, Any] | None:
        """Check and count one transfer ``agent`` (default: the orchestrator) asked for.

        A resolvable bad name is rewritten in ``args``; the result is the
        error to answer the transfer with, or None when it may go ahead.
        """
        requested = str(args.get(TRANSFER_ARG, ""))
        limits = self.settings.enforce_limits
        # Every attempt counts toward the rounds, failed ones included, so
        # neither ping-pong nor a stream of bad names outlives the limit.
        if limits and turn.delegations >= self.settings.max_delegation_rounds:
            turn.stop_reason = (
                f"it used all {self.settings.max_delegation_rounds} delegation rounds "
                "allowed per message"
            )
            return {"error": prompts.DELEGATION_LIMIT_ERROR}
        turn.delegations += 1
        if limits and agent is not None and agent != self.root_name:
            return {"error": prompts.no_handoff_error(agent)}
        valid = self.resolver.valid
        target = requested if requested in valid else None
        if target is None:
            turn.invalid_names.append(requested)
        if target is None and self.settings.transfer_repair:
            target = self.resolver.resolve(requested)
            if target is not None:
                logger.warning("Repaired transfer target %r -> %r", requested, target)
                turn.repairs.append((requested, target))
                args[TRANSFER_ARG] = target
            else:
                logger.warning("Unresolvable transfer target %r", requested)
                if limits and requested in turn.unresolved:
                    turn.stop_reason = prompts.unknown_agent_stop_reason(requested, valid)
                turn.unresolved.append(requested)
                return {"error": prompts.unknown_agent_error(requested, valid)}
        if target is None:
            return None  # no repair: let ADK fail as it always has
        if limits and target in turn.rejected_by:
            others = [n for n in valid if n not in turn.rejected_by]
            return {"error": prompts.already_declined_error(target, others)}
        turn.reached.append(target)
        return None


def stop_message(turn: TurnRecord) -> str:
    """A short, honest account of a stopped turn: why, what was done, what was not."""
    done = [f"{tool} ({agent})" for agent, tool in turn.tool_calls]
    last = None
    if turn.last_result is not None:
        tool, result = turn.last_result
        last = (tool, readable_result(result, STOP_RESULT_LIMIT))
    return prompts.stop_message(str(turn.stop_reason), done, last)


def _text_response(text: str) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


def _response_text(response: LlmResponse) -> str:
    if not response.content:
        return ""
    return "".join(p.text or "" for p in response.content.parts or [] if not p.thought)


def _trim_transfer_list(request: LlmRequest, *, root: bool) -> None:
    """Drop ADK's list of transfer targets: the orchestrator's routing table says
    more, and specialists hand tasks on only through the runtime (a rejection)."""
    if not root:
        _drop_transfer_declaration(request)
    si = request.config.system_instruction
    if isinstance(si, str) and (not root or "## Routing table" in si):
        request.config.system_instruction = without_transfer_list(si)


def _drop_transfer_declaration(request: LlmRequest) -> None:
    """Keep ``transfer_to_agent`` out of a specialist's declared tools.

    ADK declares it once peers are transfer targets (the runtime's hand-off
    needs that); the specialist's model is not offered it. A call it makes
    anyway still reaches the guards, which refuse it.
    """
    kept: list[Any] = []
    for tool in request.config.tools or []:
        if isinstance(tool, types.Tool) and tool.function_declarations:
            remaining = [d for d in tool.function_declarations if d.name != TRANSFER_TOOL]
            if not remaining:
                continue
            tool = tool.model_copy(update={"function_declarations": remaining})
        kept.append(tool)
    if request.config.tools is not None:
        request.config.tools = kept
