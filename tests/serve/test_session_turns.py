"""Concurrent turns on one session are queued, in every store, through ``/run`` and the CLI.

Each turn runs ``echo turn-N`` through the operator, so every answer can be
matched to its request, and the stored history shows whether turns were kept
apart: every event of one turn shares an invocation id, so a queued history is
one contiguous block per turn, each opened by its own user message.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.events.event import Event
from troupe_servers import ServerFactory, troupe_env

import troupe
from fakes.session_turns import GatedModel, assert_turns_kept_apart, turn_request
from troupe.stores.sessions import close_session_store, open_session_store

APP = "troupe"
CLI_USER = "user"
CHAT = [sys.executable, "-m", "troupe", "chat", "--json", "--approve", "auto"]


async def _stored_events(store: str, user: str, session_id: str) -> list[Event]:
    service = open_session_store(store)
    try:
        session = await service.get_session(app_name=APP, user_id=user, session_id=session_id)
        assert session is not None
        return list(session.events)
    finally:
        await close_session_store(service)


async def _post_runs(base: str, user: str, session_id: str, count: int) -> list[httpx.Response]:
    async with httpx.AsyncClient(base_url=base, timeout=120.0) as client:
        created = await client.post(
            f"/apps/{APP}/users/{user}/sessions", json={"session_id": session_id}
        )
        assert created.status_code == 200, created.text

        async def run(n: int) -> httpx.Response:
            body = {
                "app_name": APP,
                "user_id": user,
                "session_id": session_id,
                "new_message": {"role": "user", "parts": [{"text": turn_request(n)}]},
            }
            return await client.post("/run", json=body)

        return list(await asyncio.gather(*(run(n) for n in range(count))))


def test_ten_concurrent_runs_on_one_session_each_get_their_answer_in_order(
    servers: ServerFactory, session_store: str
) -> None:
    server = servers.start(env={"TROUPE_SESSION_STORE": session_store})
    session_id = f"shared-{uuid.uuid4().hex[:8]}"

    responses = asyncio.run(_post_runs(server.url, "u1", session_id, 10))

    for n, response in enumerate(responses):
        assert response.status_code == 200, response.text
        assert f"turn-{n}" in response.text, f"run {n} did not get its own answer"
    events = asyncio.run(_stored_events(session_store, "u1", session_id))
    assert_turns_kept_apart(events, 10)


@pytest.mark.timeout(300)  # six interpreters start at once on a shared machine
def test_six_concurrent_cli_chats_on_one_session_each_get_their_answer_in_order(
    tmp_path: Path, session_store: str, workspace: Path
) -> None:
    session_id = f"shared-{uuid.uuid4().hex[:8]}"
    env = troupe_env(tmp_path / "data", TROUPE_SESSION_STORE=session_store)
    chats = [
        subprocess.Popen(
            [*CHAT, "--session", session_id, turn_request(n)],
            cwd=workspace,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for n in range(6)
    ]
    outputs = [chat.communicate(timeout=180)[0] for chat in chats]

    for n, (chat, output) in enumerate(zip(chats, outputs, strict=True)):
        assert chat.returncode == 0, output
        assert f"turn-{n}" in output and '"kind": "error"' not in output, output
    events = asyncio.run(_stored_events(session_store, CLI_USER, session_id))
    assert_turns_kept_apart(events, 6)


def _assistants(store: str, model: GatedModel, count: int) -> list[troupe.Assistant]:
    """``count`` assistants, each with its own connection to ``store``, as processes have."""
    agent = LlmAgent(name="solo", model=model, instruction="Answer.")
    return [troupe.Assistant(agent, open_session_store(store)) for _ in range(count)]


async def _close(assistants: list[troupe.Assistant]) -> None:
    for assistant in assistants:
        await close_session_store(assistant.session_service)


def test_turns_on_one_session_never_overlap_even_over_separate_store_connections(
    session_store: str,
) -> None:
    model = GatedModel(lambda: asyncio.sleep(0.05))
    session_id = f"one-{uuid.uuid4().hex[:8]}"

    async def scenario() -> list[str]:
        first, second = assistants = _assistants(session_store, model, 2)
        try:
            await first.ensure_session(session_id)
            return list(
                await asyncio.gather(
                    *(
                        (first if n % 2 else second).run_and_collect(session_id, turn_request(n))
                        for n in range(6)
                    )
                )
            )
        finally:
            await _close(assistants)

    replies = asyncio.run(scenario())

    assert replies == [f"{turn_request(n)} done" for n in range(6)]
    assert model.most_at_once == 1
    events = asyncio.run(_stored_events(session_store, CLI_USER, session_id))
    assert_turns_kept_apart(events, 6)


def test_turns_on_different_sessions_run_at_the_same_time(session_store: str) -> None:
    barrier = asyncio.Barrier(2)

    async def both_inside() -> None:
        # Fails (BrokenBarrierError/timeout) unless the two turns are in the model together.
        await asyncio.wait_for(barrier.wait(), timeout=30)

    model = GatedModel(both_inside)
    sessions = [f"apart-{uuid.uuid4().hex[:8]}" for _ in range(2)]

    async def scenario() -> list[str]:
        assistants = _assistants(session_store, model, 2)
        try:
            return list(
                await asyncio.gather(
                    *(
                        assistant.run_and_collect(session, turn_request(n))
                        for n, (assistant, session) in enumerate(
                            zip(assistants, sessions, strict=True)
                        )
                    )
                )
            )
        finally:
            await _close(assistants)

    replies = asyncio.run(scenario())

    assert replies == [f"{turn_request(n)} done" for n in range(2)]
    assert model.most_at_once == 2
