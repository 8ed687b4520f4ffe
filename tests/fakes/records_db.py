"""The databases troupe's own rows live in, for tests: a SQLite file, and the test
PostgreSQL when ``TROUPE_TEST_POSTGRES_URL`` is set (``.ci/postgres.sh``)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from troupe.stores.budget import PoolBudget
from troupe.stores.database import PostgresRecords, Records, SqliteRecords, async_engine

POSTGRES_ENV = "TROUPE_TEST_POSTGRES_URL"


def dialects() -> list[str]:
    """``sqlite``, and ``postgresql`` when the test server is there."""
    return ["sqlite", "postgresql"] if os.environ.get(POSTGRES_ENV) else ["sqlite"]


def needs_postgres() -> pytest.MarkDecorator:
    return pytest.mark.skipif(
        not os.environ.get(POSTGRES_ENV), reason="needs .ci/postgres.sh's server"
    )


@asynccontextmanager
async def open_records(
    dialect: str, tmp_path: Path, budget: PoolBudget | None = None
) -> AsyncIterator[Records]:
    """A :class:`Records` of ``dialect``, closed (its pool disposed) afterwards."""
    records: Records
    if dialect == "postgresql":
        records = PostgresRecords(async_engine(os.environ[POSTGRES_ENV], budget or PoolBudget()))
    else:
        records = SqliteRecords(tmp_path / "records.db")
    try:
        yield records
    finally:
        await records.close()
