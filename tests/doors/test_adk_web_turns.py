"""``adk web`` queues turns per session too: ADK builds its runner, so the queue is a
plugin on troupe's App. Ten concurrent ``/run`` calls on one session of ADK's own
dev server app (``get_fast_api_app`` on ``adk_agents/``, sessions in SQLite)
each get their own answer and the stored history holds them one after another;
turns on different sessions still run at the same time."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import httpx
from door_models import Visits
from door_runs import ADK_APP_FOLDER, BASE, adk_web_app, run_body
from google.adk.events.event import Event

from fakes.session_turns import GatedModel, assert_turns_kept_apart, turn_request
from troupe.stores.sessions import close_session_store, open_session_store

USER = "u1"


async def _runs(api: Any, sessions: list[str], requests: list[tuple[str, str]]) -> list[Any]:
    """Create ``sessions``, then post every (session, text) of ``requests`` at once."""
    transport = httpx.ASGITransport(app=api)
    async with httpx.AsyncClient(transport=transport, base_url=BASE, timeout=120.0) as client:
        for sid in sessions:
            created = await client.post(
                f"/apps/{ADK_APP_FOLDER}/users/{USER}/sessions", json={"session_id": sid}
            )
            assert created.status_code == 200, created.text
        posts = [
            client.post("/run", json=run_body(sid, text, ADK_APP_FOLDER)) for sid, text in requests
        ]
        return list(await asyncio.gather(*posts))


async def _stored(store: str, session_id: str) -> list[Event]:
    service = open_session_store(store)
    try:
        session = await service.get_session(
            app_name=ADK_APP_FOLDER, user_id=USER, session_id=session_id
        )
        assert session is not None
        return list(session.events)
    finally:
        await close_session_store(service)


def test_ten_concurrent_adk_web_runs_on_one_session_each_get_their_answer_in_order(
    visit_for: Visits, tmp_path: Path
) -> None:
    model = GatedModel(lambda: asyncio.sleep(0.02))
    visit = visit_for.patched(model, {}, "")
    store = f"sqlite:///{(tmp_path / 'web-sessions.db').as_posix()}"
    sid = f"shared-{uuid.uuid4().hex[:8]}"

    with adk_web_app(visit, store) as api:
        responses = asyncio.run(_runs(api, [sid], [(sid, turn_request(n)) for n in range(10)]))

    for n, response in enumerate(responses):
        assert response.status_code == 200, response.text
        assert f"{turn_request(n)} done" in response.text, f"run {n} did not get its own answer"
    assert model.most_at_once == 1
    assert_turns_kept_apart(asyncio.run(_stored(store, sid)), 10)


def test_adk_web_turns_on_different_sessions_run_at_the_same_time(
    visit_for: Visits, tmp_path: Path
) -> None:
    barrier = asyncio.Barrier(2)

    async def both_inside() -> None:
        # Fails (timeout) unless the two turns are in the model together.
        await asyncio.wait_for(barrier.wait(), timeout=30)

    model = GatedModel(both_inside)
    visit = visit_for.patched(model, {}, "")
    store = f"sqlite:///{(tmp_path / 'web-sessions.db').as_posix()}"
    sessions = [f"apart-{uuid.uuid4().hex[:8]}" for _ in range(2)]

    with adk_web_app(visit, store) as api:
        requests = [(sid, turn_request(n)) for n, sid in enumerate(sessions)]
        responses = asyncio.run(_runs(api, sessions, requests))

    for n, response in enumerate(responses):
        assert response.status_code == 200, response.text
        assert f"{turn_request(n)} done" in response.text
    assert model.most_at_once == 2
