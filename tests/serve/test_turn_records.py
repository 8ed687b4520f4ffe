"""Keyed-turn records: claimed under a fence, kept until they expire, never
overwritten by a holder that lost its session (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from fakes.records_db import dialects, open_records
from troupe.stores.turn_records import DONE, INTERRUPTED, RUNNING, TurnRecords


@pytest.fixture(params=dialects())
def dialect(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _key() -> str:
    return uuid.uuid4().hex


async def test_a_claimed_key_cannot_be_claimed_again_until_it_expires(
    dialect: str, tmp_path: Path
) -> None:
    async with open_records(dialect, tmp_path) as db:
        records = TurnRecords(db, ttl_s=0.5)
        key = _key()
        assert await records.claim(key, "scope", "fence-1")
        assert not await records.claim(key, "scope", "fence-2")
        assert await records.finish(key, "fence-1", DONE, "answer")
        found = await records.get(key)
        assert found is not None and (found.state, found.response) == (DONE, "answer")
        await asyncio.sleep(0.6)  # past the TTL: the key's record is gone, the key is free
        assert await records.get(key) is None
        assert await records.claim(key, "scope", "fence-3")


async def test_a_holder_that_lost_its_fence_cannot_finish_or_forget_the_record(
    dialect: str, tmp_path: Path
) -> None:
    async with open_records(dialect, tmp_path) as db:
        records = TurnRecords(db)
        key = _key()
        scope = _key()
        assert await records.claim(key, scope, "old-holder")
        # The holder that took the session over closes the stalled turn.
        assert await records.interrupt_running(scope) is not None
        assert not await records.finish(key, "old-holder", DONE, "late answer")
        await records.forget(key, "old-holder")
        found = await records.get(key)
        assert found is not None and found.state == INTERRUPTED and found.response is None


async def test_only_the_sessions_other_running_records_are_interrupted(
    dialect: str, tmp_path: Path
) -> None:
    async with open_records(dialect, tmp_path) as db:
        records = TurnRecords(db)
        mine, other, elsewhere, done = _key(), _key(), _key(), _key()
        here, there = _key(), _key()  # two sessions' scopes, new in a shared database
        for key, scope in ((mine, here), (other, here), (elsewhere, there), (done, here)):
            assert await records.claim(key, scope, "f")
        assert await records.finish(done, "f", DONE, "x")
        since = await records.interrupt_running(here, keep=mine)
        states = {k: (await records.get(k)) for k in (mine, other, elsewhere, done)}
        assert {k: r.state for k, r in states.items() if r} == {
            mine: RUNNING,
            other: INTERRUPTED,
            elsewhere: RUNNING,
            done: DONE,
        }
        interrupted = states[other]
        assert interrupted is not None and since == interrupted.claimed_at  # kept its claim time
        assert await records.interrupt_running(here, keep=mine) is None  # none left running
        claimed = states[mine]
        assert claimed is not None
        assert await records.finish(mine, "f", INTERRUPTED)
        failed = await records.get(mine)  # a turn that failed keeps its claim time too
        assert failed is not None and failed.claimed_at == claimed.claimed_at
