"""The :class:`Assistant`: ADK's Runner plus troupe's recovery around each turn.

Around every user message it

* retries once with a correction when the model names an agent that does not
  exist (the specified behaviour; with transfer repair on, this is rare);
* re-routes a task a specialist rejected with ``[REJECT]``, without showing
  the refusal, never back to an agent that refused, and answers directly
  after two refusals;
* nudges a turn that ended without any user-visible text once, then falls
  back to the last tool result with a note.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator

from google.adk.agents.base_agent import BaseAgent
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types

from ..errors import InvalidRequestError, UnknownAgentError
from ..prompts import (
    NUDGE_MESSAGE,
    answer_directly_message,
    correction_message,
    handoff_message,
    is_rejection,
    redo_message,
    reroute_message,
)
from ..tool_results import readable_result
from .events import is_failure
from .guards import Guards, TurnRecord, stop_message
from .session_lock import session_turns
from .tracing import TraceStore, build_trace

logger = logging.getLogger("troupe.runtime")

DEFAULT_APP_NAME = "troupe"
DEFAULT_USER_ID = "user"
NOTE_AUTHOR = "troupe"
MAX_REJECTIONS = 2
FALLBACK_RESULT_LIMIT = 4000
"""Characters of the last tool result shown when a turn ends without an answer."""

# ADK 2.13 (its scheduler, then the agent resuming a transfer, then a
# transfer outside the tree), older ADK Python releases, and the Go release.
_UNKNOWN_AGENT_PATTERNS = (
    re.compile(r"Transfer target agent '([^']+)' not found"),
    re.compile(r"Agent '([^']+)' not found\."),
    re.compile(r"Cannot transfer from '[^']*' to unrelated agent '([^']+)'"),
    re.compile(r"Agent '?([^'\s]+)'? not found in the agent tree"),
    re.compile(r"failed to find agent: (\S+)"),
)


def unknown_agent_name(error: BaseException) -> str | None:
    """The agent name in an ADK 'agent not found' error, else None."""
    message = str(error)
    for pattern in _UNKNOWN_AGENT_PATTERNS:
        if match := pattern.search(message):
            return match.group(1)
    return None


def visible_text(event: Event) -> str:
    """The user-visible text of an event: model text, no thoughts, no partials."""
    if event.partial or event.author == "user" or not event.content:
        return ""
    return "".join(
        part.text for part in event.content.parts or [] if part.text and not part.thought
    )


def note_event(text: str, invocation_id: str = "") -> Event:
    """An event troupe adds itself (not from a model), e.g. a fallback answer."""
    return Event(
        author=NOTE_AUTHOR,
        invocation_id=invocation_id or "troupe-note",
        content=types.Content(role="model", parts=[types.Part(text=text)]),
    )


class Assistant:
    """Runs an agent tree over ADK's Runner, with sessions created on first use."""

    def __init__(
        self,
        root_agent: BaseAgent,
        session_service: BaseSessionService | None = None,
        *,
        app_name: str = DEFAULT_APP_NAME,
        user_id: str = DEFAULT_USER_ID,
        trace_store: TraceStore | None = None,
    ) -> None:
        self.root_agent = root_agent
        self.session_service = session_service or InMemorySessionService()
        self.app_name = app_name
        self.user_id = user_id
        self.runner = Runner(
            app_name=app_name,
            agent=root_agent,
            session_service=self.session_service,
            auto_create_session=False,
        )
        self._agent_runners: dict[str, Runner] = {}
        self.trace_store = trace_store
        """Where each turn's trace is written (None: traces are not kept)."""
        self.last_turn: TurnRecord | None = None
        self.last_trace_id: str | None = None
        """What the guards recorded for the most recent turn."""

    @property
    def agent_names(self) -> list[str]:
        """Names of the agents a transfer may target (the root's sub-agents)."""
        return [agent.name for agent in self.root_agent.sub_agents]

    @property
    def guards(self) -> Guards | None:
        """The tree's guards, when the tree was built by troupe."""
        return getattr(self.root_agent, "troupe_guards", None)

    async def ensure_session(self, session_id: str) -> None:
        """Create the session if it does not exist yet."""
        found = await self.session_service.get_session(
            app_name=self.app_name, user_id=self.user_id, session_id=session_id
        )
        if found is None:
            await self.session_service.create_session(
                app_name=self.app_name, user_id=self.user_id, session_id=session_id
            )

    async def _run_once(
        self, session_id: str, text: str | types.Content, agent: str | None = None
    ) -> AsyncGenerator[Event, None]:
        message = (
            text
            if isinstance(text, types.Content)
            else types.Content(role="user", parts=[types.Part(text=text)])
        )
        async for event in self._runner_for(agent).run_async(
            user_id=self.user_id, session_id=session_id, new_message=message
        ):
            yield event

    async def _run_with_retry(
        self, session_id: str, text: str | types.Content, agent: str | None = None
    ) -> AsyncGenerator[Event, None]:
        """One run; on an unknown agent, one more run after a correction message."""
        try:
            async for event in self._run_once(session_id, text, agent):
                yield event
            return
        except Exception as exc:
            bad = unknown_agent_name(exc)
            if bad is None:
                raise
        valid = self.agent_names
        logger.warning("Model transferred to unknown agent %r; retrying once.", bad)
        try:
            async for event in self._run_once(session_id, correction_message(bad, valid)):
                yield event
        except Exception as exc:
            again = unknown_agent_name(exc)
            if again is None:
                raise
            raise UnknownAgentError(again, valid) from exc

    async def run(self, session_id: str, text: str | types.Content) -> AsyncGenerator[Event, None]:
        """Send ``text`` and yield ADK events as they happen.

        ``text`` may also be a ready ``Content``, e.g. the answer to a tool
        confirmation request, which resumes the paused turn.

        When the model transfers to an agent that does not exist, a correction
        naming the valid agents is sent in the same session and the turn is
        retried once; a second failure raises :class:`UnknownAgentError`.
        With guards on, rejections are re-routed, empty turns nudged, and a
        turn that outlives its time limit ends with a message.

        Turns on one session run one at a time: a second message waits until
        the first has finished (see :mod:`troupe.runtime.session_lock`).
        """
        _check_message(session_id, text)
        turns = session_turns(self.session_service)
        async with (
            turns.hold(self.app_name, self.user_id, session_id),
            contextlib.aclosing(self._run_turn(session_id, text)) as events,
        ):
            async for event in events:
                yield event

    async def _run_turn(
        self, session_id: str, text: str | types.Content
    ) -> AsyncGenerator[Event, None]:
        await self.ensure_session(session_id)
        guards = self.guards
        turn = guards.begin_turn(session_id) if guards is not None else None
        timeout = guards.settings.turn_timeout_s if guards is not None else None
        started_at, clock = time.time(), time.perf_counter()
        seen: list[Event] = []
        outcome, error = "answered", None
        try:
            async for event in _with_deadline(self._turn(session_id, text, turn), timeout):
                seen.append(event)
                yield event
        except TurnTimeout:
            outcome = "timeout"
            if turn is not None:
                turn.stop_reason = f"it took longer than {timeout:g} seconds"
                note = note_event(stop_message(turn))
            else:
                note = note_event(f"This message took longer than {timeout:g} seconds.")
            seen.append(note)
            yield note
        except Exception as exc:
            outcome, error = "error", f"{type(exc).__name__}: {exc}"
            raise
        finally:
            record = guards.end_turn(session_id) if guards is not None else None
            self.last_turn = record
            if self.trace_store is not None:
                trace = build_trace(
                    session_id,
                    _message_text(text),
                    seen,
                    record,
                    outcome=outcome,
                    error=error,
                    started_at=started_at,
                    duration_s=time.perf_counter() - clock,
                )
                self.trace_store.add(trace)
                self.last_trace_id = trace.id

    async def _turn(
        self, session_id: str, text: str | types.Content, turn: TurnRecord | None
    ) -> AsyncGenerator[Event, None]:
        recovering = (
            turn is not None and self.guards is not None and (self.guards.settings.enforce_limits)
        )
        message: str | types.Content | None = text
        agent: str | None = None
        answered = False
        nudged = False
        paused = False
        failed = False
        while message is not None:
            pending, pending_agent = message, agent
            message, agent = None, None
            rejected_now = False
            async for event in self._run_with_retry(session_id, pending, pending_agent):
                if event.long_running_tool_ids:
                    paused = True  # waiting for a person, e.g. to approve a tool call
                if is_failure(event):
                    failed = True  # e.g. a remote agent failed: the error is the last word
                shown = visible_text(event)
                specialist = event.author != self.root_agent.name
                if recovering and shown and specialist and is_rejection(shown):
                    logger.info("%s rejected the task: %s", event.author, shown.strip())
                    rejected_now = True
                    continue
                if shown:
                    answered = True
                yield event
            if failed or paused or not recovering or turn is None or turn.stop_reason is not None:
                break
            if rejected_now and not answered:
                target = self._handoff_target(turn)
                if target is not None:
                    yield self._hand_off(target, turn)
                    message = handoff_message(turn.rejected_by[-1], target)
                    agent = target
                else:
                    message = self._after_rejection(turn)
            elif not answered and not nudged:
                nudged = True
                # Nothing delegated yet: the orchestrator's reply was empty or
                # malformed, so ask for a decision rather than a report.
                delegated = turn.reached or turn.tool_calls
                message = NUDGE_MESSAGE if delegated else redo_message(self.agent_names)
        if recovering and turn is not None and not answered and not paused and not failed:
            yield note_event(self._fallback_text(turn))

    def _handoff_target(self, turn: TurnRecord) -> str | None:
        """The agent a rejection named, when it can take the task straight away."""
        guards = self.guards
        if guards is None or len(turn.rejected_by) >= MAX_REJECTIONS or not turn.reject_targets:
            return None
        target = turn.reject_targets[-1]
        if target not in self.agent_names or target in turn.rejected_by:
            return None
        if turn.delegations >= guards.settings.max_delegation_rounds:
            return None
        return target

    def _hand_off(self, target: str, turn: TurnRecord) -> Event:
        """Count a hand-off to ``target`` and describe it as a transfer event.

        The task then runs on ``target`` directly (see :meth:`_runner_for`),
        without another orchestrator model call.
        """
        turn.delegations += 1
        turn.reached.append(target)
        logger.info("Handing the rejected task straight to %s", target)
        return Event(
            author=self.root_agent.name,
            invocation_id="troupe-handoff",
            actions=EventActions(transfer_to_agent=target),
        )

    def _runner_for(self, agent_name: str | None) -> Runner:
        """The runner that starts at ``agent_name`` (the root's runner for None)."""
        if agent_name is None:
            return self.runner
        if agent_name not in self._agent_runners:
            agent = self.root_agent.find_agent(agent_name)
            if agent is None:
                raise KeyError(agent_name)
            self._agent_runners[agent_name] = Runner(
                app_name=self.app_name,
                agent=agent,
                session_service=self.session_service,
                auto_create_session=False,
            )
        return self._agent_runners[agent_name]

    def _after_rejection(self, turn: TurnRecord) -> str:
        refused = list(dict.fromkeys(turn.rejected_by))
        if len(turn.rejected_by) >= MAX_REJECTIONS:
            return answer_directly_message(refused)
        return reroute_message(turn.rejected_by[-1], None, refused)

    @staticmethod
    def _fallback_text(turn: TurnRecord) -> str:
        if turn.last_result is not None:
            tool, result = turn.last_result
            return (
                f"The agents finished without writing an answer. The last result, from "
                f"{tool}, was:\n{readable_result(result, FALLBACK_RESULT_LIMIT)}"
            )
        return "No answer was produced for this message; please try rephrasing it."

    async def run_and_collect(self, session_id: str, text: str | types.Content) -> str:
        """Send ``text`` and return the user-visible reply."""
        chunks = [visible_text(event) async for event in self.run(session_id, text)]
        return "\n".join(chunk for chunk in chunks if chunk)


def _check_message(session_id: object, text: object) -> None:
    """Refuse a session id or message that cannot start a turn, naming the value."""
    if not isinstance(session_id, str) or not session_id.strip():
        raise InvalidRequestError(
            f"session_id must be a non-empty string, not {session_id!r}; "
            "use any stable id for the conversation, e.g. 'default'."
        )
    if isinstance(text, types.Content):
        return
    if not isinstance(text, str):
        raise InvalidRequestError(
            f"The message must be text (or a google.genai Content), not {type(text).__name__} "
            f"{text!r}."
        )
    if not text.strip():
        raise InvalidRequestError("The message is empty; send the user's request as text.")


class TurnTimeout(Exception):
    """A turn ran past its time limit."""


async def _with_deadline(
    events: AsyncIterator[Event], timeout: float | None
) -> AsyncGenerator[Event, None]:
    """``events``, ending with TurnTimeout once ``timeout`` seconds have passed."""
    if not timeout:
        async for event in events:
            yield event
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    iterator = events.__aiter__()
    while True:
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise TurnTimeout
        try:
            event = await asyncio.wait_for(iterator.__anext__(), remaining)
        except StopAsyncIteration:
            return
        except TimeoutError:
            raise TurnTimeout from None
        yield event


def _message_text(message: str | types.Content) -> str:
    if isinstance(message, str):
        return message
    texts = [p.text for p in message.parts or [] if p.text]
    return " ".join(texts) if texts else "(reply to a confirmation request)"
