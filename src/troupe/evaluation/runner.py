"""Runs the routing set through the orchestrator and records what each request got.

Every request goes through :class:`~troupe.runtime.assistant.Assistant` in a
fresh session, on the team the configuration builds (``troupe eval``: its
topology, MCP servers and remote agents, over the built-in tools in a scratch
workspace).
A single-agent request is scored on its routing decision, so its run is closed
as soon as the orchestrator has transferred (to the target actually used, after
any repair) or answered directly; with ``end_to_end`` it runs to its end too,
and is also scored on whether its agent ran one of its own tools without an
error (``RequestResult.done``). A compound request runs to its end, every
approval granted, and is scored on which agents actually ran a tool without
an error, in order: a plan that was written but not carried out does not count.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.events.event import Event

from ..config import Config
from ..errors import ConfigError, TroupeError
from ..guards.turn import TurnRecord
from ..models.resolve import ModelLike
from ..prompts import TRANSFER_ARG, TRANSFER_TOOL
from ..runtime.approvals import is_approval_plumbing, run_with_approvals
from ..runtime.assistant import Assistant, visible_text
from ..tools import Tool
from ..tree import build_agent_tree
from .dataset import CANNOT, DIRECT, RoutingCase
from .results import RequestResult, ToolRun

ABORT_AFTER = 5
"""Stop when this many requests in a row failed at the start of a run: the
model or its key is wrong, and the rest would fail the same way."""


REQUEST_TIMEOUT_S = 300.0
"""Seconds one request may take, to its end: a request that takes longer is a
failed result (a hung turn must not hang the evaluation)."""


class EvaluationAbortedError(TroupeError):
    """The first requests of an evaluation all failed."""


def build_eval_tree(
    model: ModelLike | None,
    *,
    tools: Sequence[Tool],
    api_base: str | None = None,
    router: str | None = None,
    router_threshold: float | None = None,
) -> LlmAgent:
    """The default topology over ``tools``, with ``model`` on every agent and the
    fast-path router ``auto`` or ``off`` (None: ``TROUPE_ROUTER``, else auto)."""
    config = Config(
        model=model,
        api_base=api_base,
        router=router,
        router_threshold=router_threshold,
        tools=list(tools),
    )
    return eval_tree(config)


def eval_tree(config: Config, tools: Sequence[Tool] | None = None) -> LlmAgent:
    """The tree ``troupe eval`` scores for ``config``: the team it configures
    (its topology, tools, MCP servers and remote agents), with its model
    options, built as chat builds it (:func:`~troupe.build_agent_tree`), always
    as a team. ``tools``, when given, replace the config's own tools."""
    update: dict[str, Any] = {"multi_agent": True}
    if tools is not None:
        update["tools"] = list(tools)
    return build_agent_tree(config.model_copy(update=update))


def check_labels(cases: Sequence[RoutingCase], root: LlmAgent) -> None:
    """Refuse a routing set whose labels name an agent the team does not have.

    Raises:
        ConfigError: naming the unknown agents, a request that uses one, and
            the team's agents.
    """
    team = [agent.name for agent in root.sub_agents]
    allowed = {*team, DIRECT, CANNOT}
    for case in cases:
        unknown = [n for n in (*case.expected, *case.steps) if n not in allowed]
        if unknown:
            raise ConfigError(
                f"The routing set names {', '.join(map(repr, dict.fromkeys(unknown)))}, which "
                f"is not on the team (first in {case.text[:60]!r}); the team's agents are "
                f"{', '.join(team)}, plus 'orchestrator' (answered directly) and 'cannot'. "
                "Label the requests with these names, or evaluate the team they were "
                "written for (-c its troupe.yaml)."
            )


def invalid_transfer_names(event: Event, valid: set[str]) -> list[str]:
    """Agent names in the event's transfer_to_agent calls that are not in the tree,
    as the model wrote them (before any repair)."""
    if event.partial or not event.content:
        return []
    names = []
    for call in event.get_function_calls():
        if call.name == TRANSFER_TOOL:
            name = (call.args or {}).get(TRANSFER_ARG)
            if name not in valid:
                names.append(str(name))
    return names


def routing_decision(event: Event, root_name: str) -> str | None:
    """The agent a transfer in ``event`` actually reached, ``root_name`` for a
    direct answer by the orchestrator, or None when the event decides nothing."""
    if event.actions and event.actions.transfer_to_agent:
        return event.actions.transfer_to_agent
    if (
        event.author == root_name
        and not event.partial
        and not event.get_function_calls()
        and visible_text(event)
    ):
        return root_name
    return None


def _usage(event: Event) -> tuple[int, int]:
    usage = event.usage_metadata
    if usage is None or event.partial:
        return 0, 0
    prompt = usage.prompt_token_count or 0
    total = usage.total_token_count or prompt + (usage.candidates_token_count or 0)
    return prompt, max(0, total - prompt)


async def evaluate_case(
    assistant: Assistant,
    case: RoutingCase,
    session_id: str,
    *,
    timeout_s: float = REQUEST_TIMEOUT_S,
    end_to_end: bool = False,
) -> RequestResult:
    """Send one request and record where the orchestrator routed it and, for a
    compound request (every request with ``end_to_end``), which agents ran a
    tool before the turn ended, every approval granted (within ``timeout_s``;
    past it the request is a failure)."""
    valid = set(assistant.agent_names)
    root_name = assistant.root_agent.name
    result = RequestResult(
        text=case.text,
        expected=case.expected,
        kind=case.kind,
        lang=case.lang,
        routed=None,
        steps=case.steps,
        planner=next(
            (a.name for a in assistant.root_agent.sub_agents if getattr(a, "plans", False)), None
        ),
    )
    to_the_end = bool(case.steps) or end_to_end
    result.to_the_end = to_the_end
    turns: list[TurnRecord] = []
    reported_calls = 0
    assistant.last_turn = None
    start = time.perf_counter()
    try:
        stream = (
            run_with_approvals(assistant, session_id, case.text, policy="auto")
            if to_the_end
            else assistant.run(session_id, case.text)
        )
        async with asyncio.timeout(timeout_s), aclosing(stream) as events:
            async for event in events:
                _note_turn(assistant, turns)
                if is_approval_plumbing(event):
                    continue
                result.invalid_names.extend(invalid_transfer_names(event, valid))
                prompt, output = _usage(event)
                if event.usage_metadata is not None and not event.partial:
                    reported_calls += 1
                result.prompt_tokens += prompt
                result.output_tokens += output
                decision = routing_decision(event, root_name)
                if result.routed is None:
                    result.routed = decision
                text = visible_text(event) if not event.partial else ""
                if text:
                    result.reply = text
                if decision is not None and not to_the_end:
                    break
    except TimeoutError:
        result.error = f"TimeoutError: no end after {timeout_s:g} s"
    except Exception as exc:  # a failed request is a result, not the end of the run
        result.error = f"{type(exc).__name__}: {exc}"[:500]
    result.latency_ms = (time.perf_counter() - start) * 1000
    _note_turn(assistant, turns)
    if turns:
        # What reached the model and came back, counted at the model boundary:
        # events miss replies the guards replaced and calls of other agents
        # (a plan step's agent runs in a nested run whose events stay inside it).
        calls = [call for turn in turns for call in turn.trace.model_calls]
        result.invalid_names = [name for turn in turns for name in turn.invalid_names]
        result.repairs = [pair for turn in turns for pair in turn.repairs]
        result.model_calls = len(calls)
        result.prompt_tokens = sum(c.prompt_tokens for c in calls)
        result.output_tokens = sum(c.output_tokens for c in calls)
        result.router = turns[0].router
        result.runs = _tool_runs(turns, valid)
        result.handed = sum(
            1 for turn in turns for call in turn.trace.tool_calls if call.tool in valid
        )
    else:
        result.model_calls = reported_calls
    return result


def _note_turn(assistant: Assistant, turns: list[TurnRecord]) -> None:
    """Keep each turn record of the request (one more after each approval round)."""
    turn = assistant.last_turn
    if turn is not None and all(turn is not seen for seen in turns):
        turns.append(turn)


def _tool_runs(turns: Sequence[TurnRecord], agents: set[str]) -> list[ToolRun]:
    """The tools the agents ran, in order, each with whether it answered without
    an error: a transfer, or a planner handing a step to a teammate (a tool
    named after the agent), is not the work itself, nor is a call that only
    asked for approval."""
    return [
        ToolRun(call.agent, call.tool, ok=call.error is None)
        for turn in turns
        for call in turn.trace.tool_calls
        if call.tool != TRANSFER_TOOL
        and call.tool not in agents
        and not call.paused_for_approval  # it asked; its run, once approved, comes later
    ]


@dataclass
class _Progress:
    results: list[RequestResult | None]
    finished: list[RequestResult] = field(default_factory=list)
    next_index: int = 0
    abort: str | None = None


async def evaluate_cases(
    root: LlmAgent,
    cases: Sequence[RoutingCase],
    *,
    concurrency: int = 1,
    on_result: Callable[[RequestResult], None] | None = None,
    end_to_end: bool = False,
) -> list[RequestResult]:
    """Evaluate ``cases`` against the tree ``root``, ``concurrency`` at a time
    (with ``end_to_end``, every request runs to its end: see :func:`evaluate_case`).

    Results come back in the order of ``cases``.

    Raises:
        EvaluationAbortedError: when the first requests all fail.
    """
    if concurrency < 1:
        raise TroupeError(f"concurrency must be at least 1, got {concurrency}.")
    baseline = asyncio.all_tasks()
    state = _Progress(results=[None] * len(cases))

    async def worker() -> None:
        # One Assistant per worker: its last_turn belongs to its own request.
        assistant = Assistant(root)
        while state.abort is None and state.next_index < len(cases):
            index = state.next_index
            state.next_index += 1
            result = await evaluate_case(
                assistant, cases[index], f"eval-{index}", end_to_end=end_to_end
            )
            state.results[index] = result
            state.finished.append(result)
            if on_result is not None:
                on_result(result)
            first = state.finished[:ABORT_AFTER]
            if len(first) == min(ABORT_AFTER, len(cases)) and all(r.error for r in first):
                state.abort = first[-1].error

    await asyncio.gather(*(worker() for _ in range(min(concurrency, len(cases)))))
    await _settle(baseline)
    if state.abort is not None:
        raise EvaluationAbortedError(
            f"The first {min(ABORT_AFTER, len(cases))} requests all failed, so the evaluation "
            f"stopped. Last error: {state.abort}. Check the model name, its API key "
            "(GOOGLE_API_KEY, OPENAI_API_KEY, ...) and --api-base."
        )
    return [r for r in state.results if r is not None]


async def run_evaluation(
    cases: Sequence[RoutingCase],
    *,
    model: ModelLike | None = None,
    tools: Sequence[Tool] = (),
    api_base: str | None = None,
    router: str | None = None,
    config: Config | None = None,
    concurrency: int = 1,
    on_result: Callable[[RequestResult], None] | None = None,
    end_to_end: bool = False,
) -> list[RequestResult]:
    """Evaluate ``cases`` on the team ``config`` configures (its topology, tools,
    MCP servers and remote agents), or, without a config, on the default
    topology over ``tools`` with ``model``.

    Raises:
        ConfigError: when a label names an agent the team does not have.
        EvaluationAbortedError: when the first requests all fail.
    """
    if config is not None:
        root = eval_tree(config)
    else:
        root = build_eval_tree(model, tools=tools, api_base=api_base, router=router)
    check_labels(cases, root)
    return await evaluate_cases(
        root, cases, concurrency=concurrency, on_result=on_result, end_to_end=end_to_end
    )


async def _settle(
    baseline: set[asyncio.Task[Any]], *, idle: float = 0.05, timeout: float = 2.0
) -> None:
    """Let ADK finish closing the runs stopped early (it does so in tasks of its own).

    Returns when no task started during the run is left, or when a wait of
    ``idle`` seconds ends none of them: what remains is long-lived, such as
    LiteLLM's logging worker.
    """
    current = asyncio.current_task()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pending = {t for t in asyncio.all_tasks() - baseline if t is not current and not t.done()}
        if not pending:
            return
        done, _ = await asyncio.wait(pending, timeout=idle, return_when=asyncio.FIRST_COMPLETED)
        if not done:
            return
