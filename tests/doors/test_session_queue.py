"""The session queue troupe's App carries for runners it did not build (ADK's own
``Runner`` over ADK's own session service, as ``adk web`` and ``adk run`` make):
a turn that never finishes its run (cancelled) still gives the session back,
and a turn waits for another process's turn on the same SQLite store."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from google.adk.runners import Runner
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types

import troupe
from fakes.session_turns import GatedModel
from troupe.stores.session_lock import FileGuard, LeaseGuard, session_turns
from troupe.stores.sessions import close_session_store, open_session_store, store_guard
from troupe_bench.stub_tools import stub_tools


def _runner(model: GatedModel, service: BaseSessionService) -> Runner:
    app = troupe.build_app(troupe.Config(model=model, tools=stub_tools()))
    return Runner(app=app, session_service=service)


async def _turn(runner: Runner, text: str) -> str:
    message = types.Content(role="user", parts=[types.Part(text=text)])
    events = runner.run_async(user_id="u", session_id="s", new_message=message)
    contents = [e.content async for e in events if e.content is not None]
    return " ".join(p.text or "" for c in contents for p in c.parts or [])


async def test_a_cancelled_turn_gives_its_session_to_the_next_turn() -> None:
    entered = asyncio.Event()

    async def first_call_hangs() -> None:
        if not entered.is_set():
            entered.set()
            await asyncio.sleep(3600)

    model = GatedModel(first_call_hangs)
    runner = _runner(model, InMemorySessionService())
    await runner.session_service.create_session(app_name="troupe", user_id="u", session_id="s")

    first = asyncio.create_task(_turn(runner, "first"))
    await asyncio.wait_for(entered.wait(), timeout=30)
    first.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await first

    assert "second done" in await asyncio.wait_for(_turn(runner, "second"), timeout=30)


async def test_a_turn_waits_for_another_process_turn_on_the_same_sqlite_store(
    tmp_path: Path,
) -> None:
    db = tmp_path / "sessions.db"
    order: list[str] = []

    async def note_call() -> None:
        order.append("model")

    # ADK's own SQLite service, as `adk web --session_service_uri sqlite:///...` builds it.
    runner = _runner(GatedModel(note_call), SqliteSessionService(db_path=str(db)))
    await runner.session_service.create_session(app_name="troupe", user_id="u", session_id="s")
    # Another process's queue on the same file (troupe chat or troupe serve),
    # holding the session in a task of its own, as another process would.
    other = open_session_store(f"sqlite:///{db.as_posix()}")
    holding, done = asyncio.Event(), asyncio.Event()

    async def other_process_turn() -> None:
        async with session_turns(other).hold("troupe", "u", "s"):
            holding.set()
            await done.wait()
            order.append("released")

    try:
        holder = asyncio.create_task(other_process_turn())
        await asyncio.wait_for(holding.wait(), timeout=30)
        turn = asyncio.create_task(_turn(runner, "waits"))
        await asyncio.sleep(1.0)  # time enough to reach the model, were it not queued
        done.set()
        await holder
        assert "waits done" in await asyncio.wait_for(turn, timeout=30)
    finally:
        await close_session_store(other)

    assert order == ["released", "model"]


def test_adk_built_services_get_the_store_lock_troupe_chat_takes(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    troupes = session_turns(open_session_store(f"sqlite:///{db.as_posix()}")).guard
    adks = store_guard(SqliteSessionService(db_path=str(db)))
    assert isinstance(troupes, FileGuard) and isinstance(adks, FileGuard)
    assert adks.folder == troupes.folder

    url = "postgresql+asyncpg://troupe:secret@127.0.0.1:1/sessions"
    postgres = store_guard(DatabaseSessionService(db_url=url))
    assert isinstance(postgres, LeaseGuard)
    shared = postgres.records.engine.url.render_as_string(hide_password=False)
    assert shared == "postgresql+psycopg://troupe:secret@127.0.0.1:1/sessions"
