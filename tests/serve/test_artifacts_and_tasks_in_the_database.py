"""ADK artifacts and A2A tasks kept in the session store's database (SQLite or
PostgreSQL), read back through another service object as another replica would."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from a2a.server.context import ServerCallContext
from a2a.types.a2a_pb2 import ListTasksRequest, Task, TaskState, TaskStatus
from google.adk.errors.input_validation_error import InputValidationError
from google.genai import types

from fakes.records_db import dialects, open_records
from troupe.errors import ConfigError
from troupe.server.a2a_tasks import RecordsTaskStore
from troupe.stores.artifacts import DatabaseArtifactService, open_artifact_store


@pytest.fixture(params=dialects())
def dialect(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_artifact_versions_are_read_back_by_another_service(
    dialect: str, tmp_path: Path
) -> None:
    user, sid = f"u{uuid.uuid4().hex[:6]}", "s1"
    async with open_records(dialect, tmp_path) as db:
        writer, reader = DatabaseArtifactService(db), DatabaseArtifactService(db)
        first = types.Part.from_bytes(data=b"\x00\x01binary", mime_type="image/png")
        second = types.Part(text="version two")
        assert (
            await writer.save_artifact(
                app_name="troupe", user_id=user, session_id=sid, filename="plot.png", artifact=first
            )
            == 0
        )
        assert await writer.save_artifact(
            app_name="troupe", user_id=user, session_id=sid, filename="plot.png",
            artifact=second, custom_metadata={"by": "test"},
        ) == 1  # fmt: skip
        await writer.save_artifact(
            app_name="troupe", user_id=user, filename="user:profile", artifact=types.Part(text="p")
        )

        latest = await reader.load_artifact(
            app_name="troupe", user_id=user, session_id=sid, filename="plot.png"
        )
        oldest = await reader.load_artifact(
            app_name="troupe", user_id=user, session_id=sid, filename="plot.png", version=0
        )
        keys = await reader.list_artifact_keys(app_name="troupe", user_id=user, session_id=sid)
        other_session = await reader.list_artifact_keys(
            app_name="troupe", user_id=user, session_id="s2"
        )
        versions = await reader.list_artifact_versions(
            app_name="troupe", user_id=user, session_id=sid, filename="plot.png"
        )
        await reader.delete_artifact(
            app_name="troupe", user_id=user, session_id=sid, filename="plot.png"
        )
        gone = await writer.load_artifact(
            app_name="troupe", user_id=user, session_id=sid, filename="plot.png"
        )
        with pytest.raises(InputValidationError):
            await writer.save_artifact(
                app_name="troupe", user_id=user, filename="no-session.txt", artifact=second
            )

    assert latest is not None and latest.text == "version two"
    assert oldest is not None and oldest.inline_data is not None
    assert oldest.inline_data.data == b"\x00\x01binary"
    assert oldest.inline_data.mime_type == "image/png"
    assert keys == ["plot.png", "user:profile"]
    assert other_session == ["user:profile"]  # a user's files follow them across sessions
    assert [(v.version, v.mime_type, v.custom_metadata) for v in versions] == [
        (0, "image/png", {}),
        (1, "text/plain", {"by": "test"}),
    ]
    assert versions[1].canonical_uri.endswith("/sessions/s1/artifacts/plot.png/versions/1")
    assert gone is None


async def test_an_artifact_reference_is_followed_within_the_callers_scope(
    dialect: str, tmp_path: Path
) -> None:
    async with open_records(dialect, tmp_path) as db:
        service = DatabaseArtifactService(db)
        await service.save_artifact(
            app_name="troupe", user_id="u", session_id="s", filename="a.txt",
            artifact=types.Part(text="the target"),
        )  # fmt: skip
        uri = "artifact://apps/troupe/users/u/sessions/s/artifacts/a.txt/versions/0"
        await service.save_artifact(
            app_name="troupe", user_id="u", session_id="s", filename="link",
            artifact=types.Part(file_data=types.FileData(file_uri=uri)),
        )  # fmt: skip
        followed = await service.load_artifact(
            app_name="troupe", user_id="u", session_id="s", filename="link"
        )
        with pytest.raises(InputValidationError):
            await service.save_artifact(
                app_name="troupe", user_id="intruder", session_id="s", filename="steal",
                artifact=types.Part(file_data=types.FileData(file_uri=uri)),
            )  # fmt: skip
    assert followed is not None and followed.text == "the target"


def test_an_unknown_artifact_store_is_refused_naming_the_choices(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        open_artifact_store("ftp://files/artifacts", None)  # type: ignore[arg-type]
    assert "ftp://files/artifacts" in str(caught.value) and "gs://bucket" in str(caught.value)


async def test_a2a_tasks_survive_in_the_database_and_list_per_owner(
    dialect: str, tmp_path: Path
) -> None:
    context = ServerCallContext()
    ctx = f"ctx-{uuid.uuid4().hex[:6]}"
    async with open_records(dialect, tmp_path) as db:
        for number, state in enumerate(
            (TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_WORKING)
        ):
            task = Task(id=f"{ctx}-{number}", context_id=ctx, status=TaskStatus(state=state))
            await RecordsTaskStore(db).save(task, context)
        reread = RecordsTaskStore(db)  # another replica's store over the same database
        found = await reader_get(reread, f"{ctx}-0", context)
        listed = await reread.list(ListTasksRequest(context_id=ctx), context)
        working = await reread.list(
            ListTasksRequest(context_id=ctx, status=TaskState.TASK_STATE_WORKING), context
        )
        await reread.delete(f"{ctx}-0", context)
        deleted = await reread.get(f"{ctx}-0", context)
    assert found is not None and found.status.state == TaskState.TASK_STATE_COMPLETED
    assert sorted(t.id for t in listed.tasks) == [f"{ctx}-0", f"{ctx}-1"]
    assert [t.id for t in working.tasks] == [f"{ctx}-1"]
    assert deleted is None


async def reader_get(store: RecordsTaskStore, task_id: str, context: ServerCallContext) -> Task:
    task = await store.get(task_id, context)
    assert task is not None
    return task
