"""Every request that can run a tool is keyed: an approval answer by its confirmation,
an A2A message by its messageId, a /run by its Idempotency-Key. A retry never runs a
tool twice, and a turn that failed after a tool ran is interrupted, not rerun."""

from __future__ import annotations

import os
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from troupe_servers import TEST_VAULT_KEY, run_body

from troupe.server import ServeOptions, build_app
from troupe.settings import load_settings
from troupe.stores.budget import DatabaseBusyError
from troupe.stores.sessions import JournaledInMemorySessionService
from troupe.testing import ScriptedModel, call

POSTGRES_ENV = "TROUPE_TEST_POSTGRES_URL"
APPEND = "run `echo ran >> ran.log`"
"""A command that writes, so it asks for approval first."""


def _client(tmp_path: Path, store: str, **options: Any) -> TestClient:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    settings = load_settings(workspace=workspace, data_dir=tmp_path / "data", session_store=store)
    settings.config.model = "offline"
    return TestClient(
        build_app(settings, ServeOptions(**options)), base_url="http://127.0.0.1:8000"
    )


def _confirmation(events: list[dict[str, Any]]) -> dict[str, Any]:
    [question] = [
        part["functionCall"]
        for event in events
        for part in (event.get("content") or {}).get("parts") or []
        if (part.get("functionCall") or {}).get("name") == "adk_request_confirmation"
    ]
    return question


def _approval(sid: str, question: dict[str, Any]) -> dict[str, Any]:
    answer = {
        "id": question["id"],
        "name": "adk_request_confirmation",
        "response": {"confirmed": True},
    }
    body = run_body(sid, "")
    body["new_message"] = {"role": "user", "parts": [{"functionResponse": answer}]}
    return body


def test_an_approval_answered_twice_runs_its_tool_once(tmp_path: Path, session_store: str) -> None:
    sid = f"approve-{uuid.uuid4().hex[:8]}"
    with _client(tmp_path, session_store) as web:
        web.post("/apps/troupe/users/u/sessions", json={"session_id": sid}).raise_for_status()
        asked = web.post("/run", json=run_body(sid, APPEND))
        assert asked.status_code == 200, asked.text
        approval = _approval(sid, _confirmation(asked.json()))
        first = web.post("/run", json=approval)
        again = web.post("/run", json=approval)  # a retry with no key at all
        other_key = web.post("/run", json=approval, headers={"Idempotency-Key": "another"})
        session = web.get(f"/apps/troupe/users/u/sessions/{sid}").json()
    assert first.status_code == again.status_code == other_key.status_code == 200
    assert again.json() == first.json() == other_key.json()
    assert (
        again.headers["Idempotent-Replayed"] == other_key.headers["Idempotent-Replayed"] == "true"
    )
    assert (tmp_path / "ws" / "ran.log").read_text() == "ran\n"
    answers = [
        part
        for event in session["events"]
        for part in (event.get("content") or {}).get("parts") or []
        if (part.get("functionResponse") or {}).get("name") == "adk_request_confirmation"
    ]
    assert len(answers) == 1  # the approval is stored once


def test_a_keyed_turn_that_failed_after_its_tool_ran_is_interrupted_not_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database gives out as the answer is stored (after the tool ran): the client gets
    503 with Retry-After, and its retry is told the turn was interrupted, not run again."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    settings = load_settings(
        workspace=workspace, data_dir=tmp_path / "data", session_store="memory://"
    )
    model = ScriptedModel(
        replies=[
            call("transfer_to_agent", agent_name="librarian"),
            call("save_knowledge", text="the nightly job runs at 02:00"),
            "Saved the note.",
        ]
    )
    settings.config.model = model
    settings.config.router = "off"  # the scripted model makes the transfer
    store = JournaledInMemorySessionService.append_event
    failures = [DatabaseBusyError("QueuePool limit reached, connection timed out")]

    async def flaky(self: Any, session: Any, event: Any) -> Any:
        if failures and any(p.text == "Saved the note." for p in event.content.parts or ()):
            raise failures.pop()
        return await store(self, session, event)

    monkeypatch.setattr(JournaledInMemorySessionService, "append_event", flaky)
    headers = {"Idempotency-Key": "write-1"}
    with TestClient(build_app(settings, ServeOptions()), base_url="http://127.0.0.1:8000") as web:
        web.post("/apps/troupe/users/u/sessions", json={"session_id": "s"}).raise_for_status()
        failed = web.post("/run", json=run_body("s", "write the note"), headers=headers)
        retry = web.post("/run", json=run_body("s", "write the note"), headers=headers)
        session = web.get("/apps/troupe/users/u/sessions/s").json()
    assert failed.status_code == 503 and int(failed.headers["Retry-After"]) >= 1
    assert retry.status_code == 409 and retry.json()["state"] == "interrupted"
    assert model.remaining == 0  # the retry asked the model nothing: nothing ran again
    saved = sqlite3.connect(tmp_path / "data" / "knowledge.db").execute(
        "SELECT count(*) FROM entries WHERE text LIKE '%nightly job%'"
    )
    assert saved.fetchone() == (1,)  # the tool ran once
    users = [e for e in session["events"] if e["author"] == "user" and _texts(e)]
    assert [_texts(e) for e in users] == [["write the note"]]  # stored once
    last = session["events"][-1]
    assert last["author"] == "troupe"
    assert last["customMetadata"] == {"troupe_outcome": "interrupted"}


def test_a_keyed_turn_that_failed_before_storing_anything_runs_on_retry(tmp_path: Path) -> None:
    settings = load_settings(
        workspace=tmp_path, data_dir=tmp_path / "data", session_store="memory://"
    )
    settings.config.model = "offline"
    headers = {"Idempotency-Key": "k"}
    with TestClient(build_app(settings, ServeOptions()), base_url="http://127.0.0.1:8000") as web:
        missing = web.post("/run", json=run_body("nowhere", "hello"), headers=headers)
        web.post("/apps/troupe/users/u/sessions", json={"session_id": "nowhere"}).raise_for_status()
        retry = web.post("/run", json=run_body("nowhere", "hello"), headers=headers)
    assert missing.status_code == 404  # no session yet: nothing stored, no record kept
    assert retry.status_code == 200 and "Idempotent-Replayed" not in retry.headers


def test_an_a2a_message_sent_twice_runs_once_and_replays_with_the_retrys_id(
    tmp_path: Path, session_store: str
) -> None:
    message_id = uuid.uuid4().hex
    message = {"role": "ROLE_USER", "messageId": message_id, "parts": [{"text": "run `echo a2a`"}]}

    def send(rpc_id: int) -> dict[str, Any]:
        rpc = {
            "jsonrpc": "2.0",
            "id": rpc_id,
            "method": "SendMessage",
            "params": {"message": message},
        }
        reply = web.post("/a2a/", json=rpc, headers={"A2A-Version": "1.0"})
        assert reply.status_code == 200, reply.text
        return {"reply": reply.json(), "replayed": reply.headers.get("Idempotent-Replayed")}

    with _client(tmp_path, session_store, a2a=True) as web:
        first, second = send(1), send(2)
        context = first["reply"]["result"]["task"]["contextId"]
        session = web.get(f"/apps/troupe/users/A2A_USER_{context}/sessions/{context}").json()
    assert (first["reply"]["id"], second["reply"]["id"]) == (1, 2)
    assert second["replayed"] == "true" and first["replayed"] is None
    assert second["reply"]["result"] == first["reply"]["result"]
    assert "TASK_STATE_COMPLETED" in str(first["reply"])
    calls = [
        part["functionCall"]
        for event in session["events"]
        for part in (event.get("content") or {}).get("parts") or []
        if (part.get("functionCall") or {}).get("name") == "exec_shell"
    ]
    assert len(calls) == 1


def _answers_to(session: dict[str, Any], call_id: str) -> list[dict[str, Any]]:
    """The responses the session holds to the function call ``call_id``."""
    return [
        part["functionResponse"]["response"]
        for event in session["events"]
        for part in (event.get("content") or {}).get("parts") or []
        if (part.get("functionResponse") or {}).get("id") == call_id
    ]


def _dying_before_the_first_key_is_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> TestClient:
    """A server over ``tmp_path/ws`` whose process "dies" (an error) as it is about to
    mark its first keyed turn done: the turn ran and answered, its key stays running."""
    from troupe.stores.turn_records import TurnRecords

    finish = TurnRecords.finish
    dying = ["the process died here"]

    async def die_before_finishing(self: TurnRecords, *args: Any, **kwargs: Any) -> bool:
        if dying:
            raise RuntimeError(dying.pop())
        return await finish(self, *args, **kwargs)

    monkeypatch.setattr(TurnRecords, "finish", die_before_finishing)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    settings = load_settings(
        workspace=workspace, data_dir=tmp_path / "data", session_store="memory://"
    )
    settings.config.model = "offline"
    app = build_app(settings, ServeOptions())
    return TestClient(app, base_url="http://127.0.0.1:8000", raise_server_exceptions=False)


def _texts(event: dict[str, Any]) -> list[str]:
    return [p["text"] for p in (event.get("content") or {}).get("parts") or [] if p.get("text")]


def test_an_approval_cut_off_before_its_answer_was_stored_is_closed_not_left_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process dies as it starts the approved turn: the key stays claimed and
    nothing of the turn is stored. The retry is told the turn was interrupted, the
    command never runs, and the session shows the approval answered as interrupted,
    not waiting for an answer that would only be refused."""
    from troupe.stores.turn_records import TurnRecords

    claim = TurnRecords.claim
    dying: list[str] = []

    async def claim_then_die(self: TurnRecords, key: str, scope: str, fence: str) -> bool:
        claimed = await claim(self, key, scope, fence)
        if dying:
            raise RuntimeError(dying.pop())
        return claimed

    monkeypatch.setattr(TurnRecords, "claim", claim_then_die)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    settings = load_settings(
        workspace=workspace, data_dir=tmp_path / "data", session_store="memory://"
    )
    settings.config.model = "offline"
    app = build_app(settings, ServeOptions())
    with TestClient(app, base_url="http://127.0.0.1:8000", raise_server_exceptions=False) as web:
        web.post("/apps/troupe/users/u/sessions", json={"session_id": "s"}).raise_for_status()
        asked = web.post("/run", json=run_body("s", APPEND))
        question = _confirmation(asked.json())
        dying.append("the process died here")
        cut = web.post("/run", json=_approval("s", question))
        retry = web.post("/run", json=_approval("s", question))
        session = web.get("/apps/troupe/users/u/sessions/s").json()
    assert cut.status_code == 500
    assert retry.status_code == 409 and retry.json()["state"] == "interrupted"
    assert not (workspace / "ran.log").exists()
    answers = _answers_to(session, question["id"])
    assert [answer.get("interrupted") for answer in answers] == [True]
    assert session["events"][-1]["customMetadata"] == {"troupe_outcome": "interrupted"}


def test_a_keyed_turn_cut_off_after_it_asked_for_approval_closes_the_approval_on_retry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The turn ended waiting for approval, but its process died before its key was
    marked done. The retry is told the turn was interrupted, and the session agrees:
    the approval it asked for is closed as interrupted, so answering it runs nothing."""
    workspace = tmp_path / "ws"
    headers = {"Idempotency-Key": "append-1"}
    with _dying_before_the_first_key_is_done(tmp_path, monkeypatch) as web:
        web.post("/apps/troupe/users/u/sessions", json={"session_id": "s"}).raise_for_status()
        asked = web.post("/run", json=run_body("s", APPEND), headers=headers)
        question = _confirmation(asked.json())
        retry = web.post("/run", json=run_body("s", APPEND), headers=headers)
        late = web.post("/run", json=_approval("s", question))
        session = web.get("/apps/troupe/users/u/sessions/s").json()
    assert retry.status_code == 409 and retry.json()["state"] == "interrupted"
    assert late.status_code == 409 and late.json()["state"] == "answered"
    assert not (workspace / "ran.log").exists()
    answers = _answers_to(session, question["id"])
    assert [answer.get("interrupted") for answer in answers] == [True]


def test_an_approval_asked_by_a_cut_off_keyed_turn_can_still_be_answered_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client saw the question before the process died: its answer, keyed by the
    confirmation, runs the command once, though the asking turn's key was never done."""
    workspace = tmp_path / "ws"
    with _dying_before_the_first_key_is_done(tmp_path, monkeypatch) as web:
        web.post("/apps/troupe/users/u/sessions", json={"session_id": "s"}).raise_for_status()
        asked = web.post("/run", json=run_body("s", APPEND), headers={"Idempotency-Key": "a-1"})
        approved = web.post("/run", json=_approval("s", _confirmation(asked.json())))
    assert approved.status_code == 200, approved.text
    assert (workspace / "ran.log").read_text() == "ran\n"


async def _ask_approval(service: Any, session: Any, *confirmations: str) -> None:
    """Store a turn that asked for approval: its message, then ADK's confirmation calls."""
    from google.adk.events.event import Event
    from google.genai import types

    message = types.Content(role="user", parts=[types.Part(text="run `echo a >> ran.log`")])
    await service.append_event(session, Event(author="user", content=message))
    for confirmation in confirmations:
        call = types.FunctionCall(id=confirmation, name="adk_request_confirmation", args={})
        await service.append_event(
            session,
            Event(
                author="operator",
                content=types.Content(role="model", parts=[types.Part(function_call=call)]),
                long_running_tool_ids={confirmation},
            ),
        )


async def test_a_taken_over_turn_that_asked_for_approval_closes_the_approval() -> None:
    """A holder stalled after its turn asked for approval: the replica that takes the
    session over closes that turn, and its approval with it (the stalled holder tells
    its own client "interrupted" and may write nothing), never an earlier turn's."""
    from troupe.stores.sessions import close_stalled, open_session_store, store_parts
    from troupe.stores.turn_records import session_scope, turn_key

    service = open_session_store("memory://")
    records = store_parts(service).turn_records
    key = ("troupe", "u", "s")
    session = await service.create_session(app_name="troupe", user_id="u", session_id="s")
    await _ask_approval(service, session, "asked-earlier")  # an earlier turn, still waiting
    row = turn_key(*key, "key:k")
    assert await records.claim(row, session_scope(*key), "stalled-holder:7")
    await _ask_approval(service, session, "asked-by-the-cut-off-turn")

    await close_stalled(service, records, key)

    stored = await service.get_session(app_name="troupe", user_id="u", session_id="s")
    assert stored is not None
    answered = {r.id: r.response for e in stored.events for r in e.get_function_responses()}
    assert set(answered) == {"asked-by-the-cut-off-turn"}
    assert (answered["asked-by-the-cut-off-turn"] or {}).get("interrupted") is True
    record = await records.get(row)
    assert record is not None and record.state == "interrupted"


async def test_a_takeover_by_the_answer_to_the_cut_off_turns_approval_keeps_it_waiting() -> None:
    """The holder sent its turn's question, then died before marking the turn done.
    The client's answer takes the session over: the turn is closed, but the approval
    that answer answers stays waiting, so it runs once instead of being refused."""
    from troupe.stores.sessions import close_stalled, open_session_store, store_parts
    from troupe.stores.turn_records import session_scope, turn_key

    service = open_session_store("memory://")
    records = store_parts(service).turn_records
    key = ("troupe", "u", "s")
    session = await service.create_session(app_name="troupe", user_id="u", session_id="s")
    row = turn_key(*key, "key:k")
    assert await records.claim(row, session_scope(*key), "dead-holder:3")
    await _ask_approval(service, session, "answered-now", "not-answered")

    await close_stalled(service, records, key, frozenset({"answered-now"}))

    stored = await service.get_session(app_name="troupe", user_id="u", session_id="s")
    assert stored is not None
    answered = {r.id for e in stored.events for r in e.get_function_responses()}
    assert answered == {"not-answered"}
    record = await records.get(row)
    assert record is not None and record.state == "interrupted"


@pytest.mark.skipif(not os.environ.get(POSTGRES_ENV), reason="needs .ci/postgres.sh's server")
def test_an_approval_answered_after_its_turns_replica_died_runs_once_on_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL, as replicas share it: the replica that asked for approval sent the
    question and died before it marked the turn done or let the session go. The
    answer, on another replica, waits out the dead one's lease, takes the session
    over and runs the command once; it is not told the approval was answered."""
    import psycopg

    from troupe.stores.turn_records import session_scope, turn_key

    monkeypatch.setenv("TROUPE_SECRET_KEY", TEST_VAULT_KEY)
    monkeypatch.setenv("TROUPE_TURN_LOCK_LEASE_S", "2")
    store = os.environ[POSTGRES_ENV]
    sid = f"s-{uuid.uuid4().hex[:12]}"
    workspace = tmp_path / "ws"
    with _client(tmp_path, store) as web:
        web.post("/apps/troupe/users/u/sessions", json={"session_id": sid}).raise_for_status()
        claimed_at = time.time()
        asked = web.post("/run", json=run_body(sid, APPEND), headers={"Idempotency-Key": "a-1"})
        question = _confirmation(asked.json())
        with psycopg.connect("postgresql://" + store.split("://", 1)[1]) as db:
            # What the dead replica left: its turn still running since its claim, and
            # the lease still its own.
            db.execute(
                "UPDATE troupe_turn_records SET state = 'running', updated_at = %s"
                " WHERE turn_key = %s",
                (claimed_at, turn_key("troupe", "u", sid, "key:a-1")),
            )
            db.execute(
                "INSERT INTO troupe_session_leases (session_key, holder, token, expires_at)"
                " VALUES (%s, 'dead-replica', 7, clock_timestamp() + interval '1 second')",
                (session_scope("troupe", "u", sid),),
            )
        approved = web.post("/run", json=_approval(sid, question))
        session = web.get(f"/apps/troupe/users/u/sessions/{sid}").json()
    assert approved.status_code == 200, approved.text
    assert (workspace / "ran.log").read_text() == "ran\n"
    [answer] = _answers_to(session, question["id"])
    assert answer.get("confirmed") is True
