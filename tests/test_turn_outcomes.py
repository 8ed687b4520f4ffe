"""How a turn ended, said truthfully: answered, failed (with the error), cancelled,
awaiting approval; one trace for a turn that paused for approval and resumed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from google.genai import types

from fakes.scripted import scripted_assistant
from troupe import Assistant, Tool
from troupe.runtime.approvals import (
    approval_requests,
    confirmation_part,
    decide,
    run_with_approvals,
)
from troupe.stores.traces import Trace, TraceStore
from troupe.testing import ScriptedModel, call

STARTED = asyncio.Event()


async def exec_wait(seconds: float) -> dict[str, object]:
    """Wait for a while, like a long shell command."""
    STARTED.set()
    await asyncio.sleep(seconds)
    return {"waited": seconds}


def exec_touch(name: str) -> dict[str, object]:
    """Create a file (asks first)."""
    return {"created": name}


def _asking_first(tmp_path: Path) -> tuple[TraceStore, Assistant]:
    """An assistant whose model calls exec_touch, a tool that asks first, then answers."""
    store = TraceStore(tmp_path / "traces.db")
    model = ScriptedModel(replies=[call("exec_touch", name="a"), "made it"])
    tools = [Tool.from_function(exec_touch, dangerous=True)]
    return store, scripted_assistant(model, tools, trace_store=store, multi_agent=False)


async def test_a_cancelled_turn_is_traced_as_cancelled_and_the_session_carries_on(
    tmp_path: Path,
) -> None:
    store = TraceStore(tmp_path / "traces.db")
    model = ScriptedModel(replies=[call("exec_wait", seconds=60), "after", "second answer"])
    tools = [Tool.from_function(exec_wait)]
    assistant = scripted_assistant(model, tools, trace_store=store, multi_agent=False)
    STARTED.clear()

    turn = asyncio.create_task(assistant.run_and_collect("s1", "wait a minute"))
    await asyncio.wait_for(STARTED.wait(), 30)
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn

    [cancelled] = store.list()
    assert cancelled.outcome == "cancelled" and cancelled.request == "wait a minute"
    session = await assistant.session_service.get_session(
        app_name=assistant.app_name, user_id=assistant.user_id, session_id="s1"
    )
    assert session is not None
    answers = [r.response for e in session.events for r in e.get_function_responses()]
    assert answers and answers[-1] is not None and answers[-1].get("cancelled") is True
    # The next message runs on the same session; the model reads the cut-off call answered.
    assert await assistant.run_and_collect("s1", "and now?") == "after"
    assert store.list(limit=1)[0].outcome == "answered"


async def test_a_failed_turn_says_failed_with_its_error(tmp_path: Path) -> None:
    store = TraceStore(tmp_path / "traces.db")
    model = ScriptedModel(replies=[RuntimeError("the provider is down")])
    assistant = scripted_assistant(model, trace_store=store, multi_agent=False, model_retries=0)

    with pytest.raises(Exception, match="provider is down"):
        await assistant.run_and_collect("s1", "hello")

    [trace] = store.list()
    assert trace.outcome == "failed" and trace.error and "provider is down" in trace.error


async def test_a_turn_paused_for_approval_says_so_until_answered_then_is_one_trace(
    tmp_path: Path,
) -> None:
    store, assistant = _asking_first(tmp_path)

    # As over HTTP: the turn pauses and nobody has answered yet.
    events = [e async for e in assistant.run("s1", "make a")]
    assert events
    [paused] = store.list()
    assert paused.outcome == "awaiting approval"

    # Answered (here by the approval loop): the same trace, now answered.
    async def answer_it() -> None:
        requests = [r for e in events for r in approval_requests(e)]
        decision = await decide(requests[0], "auto")
        reply = types.Content(role="user", parts=[confirmation_part(requests[0], decision)])
        async for _ in assistant.run("s1", reply):
            pass

    await answer_it()
    [whole] = store.list()
    assert whole.id == paused.id and whole.request == "make a"
    assert whole.outcome == "answered" and whole.answer == "made it"
    asked, ran = whole.tool_calls
    assert asked["tool"] == ran["tool"] == "exec_touch"
    assert asked["paused_for_approval"] and asked["error"] is None
    assert not ran["paused_for_approval"]


async def test_cancelled_at_the_approval_question_the_paused_trace_says_cancelled(
    tmp_path: Path,
) -> None:
    store, assistant = _asking_first(tmp_path)

    def ask(request: object) -> bool:
        raise asyncio.CancelledError  # what Ctrl-C at the question becomes

    with pytest.raises(asyncio.CancelledError):
        async for _ in run_with_approvals(assistant, "s1", "make a", policy="ask", ask=ask):
            pass

    [trace] = store.list()
    assert trace.outcome == "cancelled" and trace.request == "make a"


def test_traces_written_before_the_words_changed_read_error_as_failed() -> None:
    old = Trace(id="x", session_id="s", started_at=0, duration_ms=1, request="r", outcome="error")

    assert old.outcome == "failed"
