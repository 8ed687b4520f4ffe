"""The :class:`Assistant`: troupe's App on ADK's Runner, one user turn at a time.

The runner is built from :func:`troupe.runtime.app.build_app`, the same App
every other door runs, so the guards, the re-routing of rejected tasks, the
nudge of an empty turn, usage counts, the turn timeout and traces are ADK
plugins shared by all of them. Around each message the Assistant only

* creates the session on first use and writes the turn's trace;
* retries once with a correction when the model names an agent that does not
  exist and transfer repair is off (the specified behaviour).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field

from google.adk.agents.base_agent import BaseAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.apps import App
from google.adk.events.event import Event
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types

from .._adk_compat import unknown_agent_name
from ..errors import InvalidRequestError, UnknownAgentError
from ..guards.turn import Guards, TurnRecord
from ..prompts import correction_message
from ..stores.lock_limits import LeaseLostError
from ..stores.session_lock import answered_approvals, session_turns
from ..stores.traces import (
    ANSWERED,
    AWAITING_APPROVAL,
    CANCELLED,
    FAILED,
    INTERRUPTED,
    TIMEOUT,
    TraceStore,
)
from ..stores.turn_records import close_dangling
from .app import DEFAULT_APP_NAME, build_app
from .events import Step, steps
from .plugins import NOTE_AUTHOR, message_text, note_event
from .tracing import answers_confirmation, build_trace, record_trace

logger = logging.getLogger("troupe.runtime")

__all__ = ["DEFAULT_APP_NAME", "NOTE_AUTHOR", "Assistant", "TurnResult", "note_event"]

DEFAULT_USER_ID = "user"
CANCELLED_RESULT = {
    "error": "cancelled: the user stopped this turn before the tool answered; "
    "the call may have been cut off part way",
    "cancelled": True,
}
"""The function response that closes a call its cancelled turn never answered."""


def visible_text(event: Event) -> str:
    """The user-visible text of an event: model text, no thoughts, no partials."""
    if event.partial or event.author == "user" or not event.content:
        return ""
    return "".join(
        part.text for part in event.content.parts or [] if part.text and not part.thought
    )


@dataclass(frozen=True)
class TurnResult:
    """What one user turn produced, from :meth:`Assistant.run_turn`."""

    text: str
    """The user-visible reply (what :meth:`Assistant.run_and_collect` returns)."""
    path: list[str]
    """The agents the turn went through, starting at the root."""
    steps: list[Step]
    """Every transfer, tool call, tool result and text, in order."""
    events: list[Event] = field(repr=False)
    """The raw ADK events."""
    model_calls: int
    """Model calls made (calls a guard answered in place of the model excluded)."""
    prompt_tokens: int
    """Prompt tokens over all model calls, from the models' usage metadata."""
    output_tokens: int
    """Output tokens over all model calls."""
    repairs: list[tuple[str, str]]
    """(name the model used, agent it was repaired to) for each repaired transfer."""
    stopped: str | None
    """Why the turn was ended early (a limit or the time limit), or None."""
    trace_id: str | None = None
    """The id of the turn's trace, when traces are kept."""


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
        stream: bool = False,
    ) -> None:
        self.root_agent = root_agent
        self.session_service = session_service or InMemorySessionService()
        self.app_name = app_name
        self.user_id = user_id
        self.app: App = build_app(root_agent, name=app_name)
        """The ADK App every door runs: the tree plus troupe's runtime plugins."""
        self.runner = Runner(
            app=self.app, session_service=self.session_service, auto_create_session=False
        )
        self.trace_store = trace_store
        """Where each turn's trace is written (None: traces are not kept)."""
        self.stream = stream
        """Ask models that stream for their text as it comes: ``run`` then also
        yields partial events (``event.partial``) ahead of each final one."""
        self.last_turn: TurnRecord | None = None
        self.last_trace_id: str | None = None
        """What the guards recorded for the most recent turn."""
        self._allowed: dict[str, set[str]] = {}

    def allowed_tools(self, session_id: str) -> set[str]:
        """The tools the user allowed for the rest of ``session_id`` ("always"):
        a set the approval loop adds to and each of the session's traces shows."""
        return self._allowed.setdefault(session_id, set())

    def paused_turn_cancelled(self, session_id: str) -> None:
        """Record the session's last turn, paused for an approval, as cancelled: the
        user stopped it at the question, or before the approved call began."""
        if self.trace_store is None:
            return
        found = self.trace_store.list(limit=1, session_id=session_id)
        trace = found[0] if found else None
        if trace is not None and trace.outcome == AWAITING_APPROVAL:
            trace.outcome = CANCELLED
            self.trace_store.add(trace)

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
        self, session_id: str, text: str | types.Content
    ) -> AsyncGenerator[Event, None]:
        message = (
            text
            if isinstance(text, types.Content)
            else types.Content(role="user", parts=[types.Part(text=text)])
        )
        config = RunConfig(streaming_mode=StreamingMode.SSE) if self.stream else None
        async for event in self.runner.run_async(
            user_id=self.user_id, session_id=session_id, new_message=message, run_config=config
        ):
            yield event

    async def _run_with_retry(
        self, session_id: str, text: str | types.Content
    ) -> AsyncGenerator[Event, None]:
        """One run; on an unknown agent, one more run after a correction message."""
        try:
            async for event in self._run_once(session_id, text):
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
        With guards on, the runtime plugins re-route rejections, nudge empty
        turns, and end a turn that outlives its time limit with a message.

        Turns on one session run one at a time: a second message waits until
        the first has finished (see :mod:`troupe.stores.session_lock`).
        """
        _check_message(session_id, text)
        turns = session_turns(self.session_service)
        async with (
            turns.hold(
                self.app_name,
                self.user_id,
                session_id,
                answering=answered_approvals(text if isinstance(text, types.Content) else None),
            ),
            contextlib.aclosing(self._run_turn(session_id, text)) as events,
        ):
            async for event in events:
                yield event

    async def _run_turn(
        self, session_id: str, text: str | types.Content
    ) -> AsyncGenerator[Event, None]:
        await self.ensure_session(session_id)
        guards = self.guards
        if guards is not None:
            guards.begin_turn(session_id)  # one record for the turn, retry included
        seen: list[Event] = []
        outcome, error = ANSWERED, None
        started_at, clock = time.time(), time.perf_counter()
        try:
            async for event in self._run_with_retry(session_id, text):
                seen.append(event)
                yield event
        except asyncio.CancelledError:
            outcome = CANCELLED
            # The calls the cancelled turn left without an answer are answered as
            # cancelled, so the session's next turn reads a whole history.
            await close_dangling(
                self.session_service,
                self.app_name,
                self.user_id,
                session_id,
                result=CANCELLED_RESULT,
            )
            raise
        except Exception as exc:
            # A turn whose process lost the session to another was closed by that one.
            outcome = INTERRUPTED if isinstance(exc, LeaseLostError) else FAILED
            error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            record = guards.end_turn(session_id) if guards is not None else None
            self.last_turn = record
            if record is not None and record.timed_out and outcome == ANSWERED:
                outcome = TIMEOUT
            if self.trace_store is not None:
                trace = build_trace(
                    session_id,
                    message_text(text),
                    seen,
                    record,
                    outcome=outcome,
                    error=error,
                    started_at=started_at,
                    duration_s=time.perf_counter() - clock,
                    allowed=self.allowed_tools(session_id),
                )
                trace = record_trace(self.trace_store, trace, answers_confirmation(text))
                self.last_trace_id = trace.id

    async def run_and_collect(self, session_id: str, text: str | types.Content) -> str:
        """Send ``text`` and return the user-visible reply."""
        chunks = [visible_text(event) async for event in self.run(session_id, text)]
        return _join(chunks)

    async def run_turn(self, session_id: str, text: str | types.Content) -> TurnResult:
        """Send ``text`` and return the reply with what the turn did and cost."""
        self.last_trace_id = None
        events = [event async for event in self.run(session_id, text)]
        done = [step for event in events for step in steps(event)]
        record = self.last_turn
        calls = record.trace.model_calls if record is not None else []
        path = [self.root_agent.name] if done and done[0].author == self.root_agent.name else []
        return TurnResult(
            text=_join([visible_text(event) for event in events]),
            path=path + [s.name for s in done if s.kind == "transfer" and s.name],
            steps=done,
            events=events,
            model_calls=record.model_calls if record is not None else len(calls),
            prompt_tokens=sum(call.prompt_tokens for call in calls),
            output_tokens=sum(call.output_tokens for call in calls),
            repairs=list(record.repairs) if record is not None else [],
            stopped=record.stop_reason if record is not None else None,
            trace_id=self.last_trace_id,
        )


def _join(chunks: Sequence[str]) -> str:
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
