"""A2A tasks in the session store's database, with or without SQLAlchemy.

On PostgreSQL the tasks go to a2a-sdk's own ``DatabaseTaskStore`` (table
``tasks``) on the engine the session service uses, so they count in the
process's connection budget. The default install has no SQLAlchemy, so with a
SQLite session store (and ``memory://``) :class:`RecordsTaskStore` keeps them
in the same file as the sessions (table ``troupe_a2a_tasks``) through
:mod:`troupe.stores.database`: a task written before a restart is there after
it. Listing loads the caller's tasks and lets a2a-sdk's in-memory store filter,
order and page them, so the answers are the library's.
"""

from __future__ import annotations

import base64
import time
from typing import Any

from a2a.server.owner_resolver import resolve_user_scope
from a2a.server.tasks import InMemoryTaskStore
from a2a.server.tasks.task_store import TaskStore
from a2a.types.a2a_pb2 import ListTasksRequest, ListTasksResponse, Task

from ..stores.database import Records

TABLES = {
    dialect: (
        "CREATE TABLE IF NOT EXISTS troupe_a2a_tasks ("
        " owner TEXT NOT NULL, task_id TEXT NOT NULL, context_id TEXT NOT NULL,"
        " task TEXT NOT NULL, updated_at DOUBLE PRECISION NOT NULL,"
        " PRIMARY KEY (owner, task_id))",
    )
    for dialect in ("postgresql", "sqlite")
}


def task_store(records: Records) -> TaskStore:
    """Where the A2A endpoint keeps its tasks, in ``records``' database."""
    engine = getattr(records, "engine", None)
    if records.dialect == "postgresql" and engine is not None:
        from a2a.server.tasks import DatabaseTaskStore

        # a2a-sdk's own table, "tasks" (another name makes a new model class per app).
        store: TaskStore = DatabaseTaskStore(engine)
        return store
    return RecordsTaskStore(records)


class RecordsTaskStore(TaskStore):
    """a2a-sdk's ``TaskStore`` over :class:`~troupe.stores.database.Records`."""

    def __init__(self, records: Records) -> None:
        self.records = records
        self.owner_resolver = resolve_user_scope

    async def _ready(self) -> None:
        await self.records.ensure("troupe_a2a_tasks", TABLES)

    async def save(self, task: Task, context: Any) -> None:
        await self._ready()
        row = {
            "o": self.owner_resolver(context),
            "i": task.id,
            "c": task.context_id,
            "t": base64.b64encode(task.SerializeToString()).decode("ascii"),
            "u": time.time(),
        }
        await self.records.run(
            "INSERT INTO troupe_a2a_tasks (owner, task_id, context_id, task, updated_at)"
            " VALUES (:o, :i, :c, :t, :u) ON CONFLICT (owner, task_id) DO UPDATE SET"
            " context_id = excluded.context_id, task = excluded.task,"
            " updated_at = excluded.updated_at",
            row,
        )

    async def get(self, task_id: str, context: Any) -> Task | None:
        await self._ready()
        found = await self.records.run(
            "SELECT task FROM troupe_a2a_tasks WHERE owner = :o AND task_id = :i",
            {"o": self.owner_resolver(context), "i": task_id},
        )
        row = found.first()
        return None if row is None else _task(row[0])

    async def list(self, params: ListTasksRequest, context: Any) -> ListTasksResponse:
        await self._ready()
        sql = "SELECT task FROM troupe_a2a_tasks WHERE owner = :o"
        values = {"o": self.owner_resolver(context)}
        if params.context_id:
            sql += " AND context_id = :c"
            values["c"] = params.context_id
        rows = (await self.records.run(sql, values)).rows
        page = InMemoryTaskStore(owner_resolver=self.owner_resolver)
        for row in rows:
            await page.save(_task(row[0]), context)
        return await page.list(params, context)

    async def delete(self, task_id: str, context: Any) -> None:
        await self._ready()
        await self.records.run(
            "DELETE FROM troupe_a2a_tasks WHERE owner = :o AND task_id = :i",
            {"o": self.owner_resolver(context), "i": task_id},
        )


def _task(stored: str) -> Task:
    task = Task()
    task.ParseFromString(base64.b64decode(stored))
    return task
