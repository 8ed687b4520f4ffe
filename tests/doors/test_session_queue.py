"""The session queue troupe's App carries for runners it did not build (ADK's own
``Runner``, as ``adk web`` and ``adk run`` make): a turn that never finishes
its run (cancelled) still gives the session back."""

from __future__ import annotations

import asyncio
import contextlib

from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types

import troupe
from fakes.session_turns import GatedModel
from troupe.benchmarks.stub_tools import stub_tools


async def test_a_cancelled_turn_gives_its_session_to_the_next_turn() -> None:
    entered = asyncio.Event()

    async def first_call_hangs() -> None:
        if not entered.is_set():
            entered.set()
            await asyncio.sleep(3600)

    model = GatedModel(first_call_hangs)
    app = troupe.build_app(troupe.Config(model=model, tools=stub_tools()))
    runner = Runner(app=app, session_service=InMemorySessionService())
    await runner.session_service.create_session(app_name=app.name, user_id="u", session_id="s")

    async def turn(text: str) -> str:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        events = runner.run_async(user_id="u", session_id="s", new_message=message)
        contents = [e.content async for e in events if e.content is not None]
        return " ".join(p.text or "" for c in contents for p in c.parts or [])

    first = asyncio.create_task(turn("first"))
    await asyncio.wait_for(entered.wait(), timeout=30)
    first.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await first

    assert "second done" in await asyncio.wait_for(turn("second"), timeout=30)
