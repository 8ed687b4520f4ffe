"""Session leases on PostgreSQL: waiting holds no connection, a stalled holder is
taken over, and a holder whose lease was taken writes and runs nothing."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from pathlib import Path

import pytest

from fakes.records_db import needs_postgres, open_records
from troupe.stores.budget import PoolBudget
from troupe.stores.lock_limits import LeaseLostError, LockLimits
from troupe.stores.session_lock import Lease, LeaseGuard, SessionKey, SessionTurns, held_lease

pytestmark = needs_postgres()


def _key() -> SessionKey:
    return ("troupe", "u", f"lease-{uuid.uuid4().hex[:8]}")


async def test_turns_waiting_for_a_session_hold_no_pooled_connection(tmp_path: Path) -> None:
    """Eight turns wait on a session while its holder runs, on a pool of two connections:
    the waiters borrow one only for each try, so a turn on another session still gets one
    at once, and the holder's renewals keep its lease."""
    budget = PoolBudget(size=3)  # two connections for leases and the rest
    assert budget.turn_connections == 2
    async with open_records("postgresql", tmp_path, budget) as db:
        turns = SessionTurns(LeaseGuard(db, LockLimits(wait_s=20, lease_s=2)))
        busy = _key()
        holding, release = asyncio.Event(), asyncio.Event()

        async def holder() -> None:
            async with turns.hold(*busy):
                holding.set()
                await release.wait()

        async def waiter() -> float:
            async with turns.hold(*busy):
                return time.monotonic()

        first = asyncio.create_task(holder())
        await holding.wait()
        waiters = [asyncio.create_task(waiter()) for _ in range(8)]
        await asyncio.sleep(0.5)
        started = time.monotonic()
        async with turns.hold(*_key()):  # another session: no connection is kept from it
            got_other = time.monotonic() - started
        await asyncio.sleep(2.5)  # past a lease: the holder renewed it
        assert not any(w.done() for w in waiters)
        release.set()
        await first
        await asyncio.gather(*waiters)
    assert got_other < 1.0


async def test_a_stalled_holder_is_taken_over_and_cannot_write_or_run_tools(
    tmp_path: Path,
) -> None:
    async with open_records("postgresql", tmp_path) as db:
        closed: list[tuple[SessionKey, frozenset[str]]] = []

        async def close(key: SessionKey, answering: frozenset[str]) -> None:
            lease = held_lease(key)
            assert lease is not None  # the closing writes run under the new lease
            closed.append((key, answering))

        guard = LeaseGuard(db, LockLimits(wait_s=10, lease_s=2))
        turns = SessionTurns(guard, on_takeover=close)
        key = _key()
        async with turns.hold(*key):  # creates the table, and shows a clean release
            pass
        # A holder that stopped renewing (as a SIGSTOPped process does): its row
        # lasts one more second and names it.
        async with db.transaction() as tx:
            await tx.execute(
                "INSERT INTO troupe_session_leases (session_key, holder, token, expires_at)"
                " VALUES (:k, 'stalled-holder', 7, clock_timestamp() + interval '1 second')",
                {"k": json.dumps(list(key))},
            )
        old = Lease(guard, key, "stalled-holder", 7)
        await old.check()  # still its own
        started = time.monotonic()
        async with turns.hold(*key, answering=("asked-before-it-stalled",)):
            new = held_lease(key)
            waited = time.monotonic() - started
            assert new is not None and new.token == 8 and not new.taken_over
            with pytest.raises(LeaseLostError):
                await old.check()  # a tool of the old holder: refused
            with pytest.raises(LeaseLostError):
                async with old.fence():  # a write of the old holder: refused
                    pytest.fail("a lost lease must not open a write")
            await new.check()
        async with turns.hold(*key):  # released normally: no second takeover
            pass
        await guard.close()
    # The closing is told which approvals the turn taking over answers.
    assert closed == [(key, frozenset({"asked-before-it-stalled"}))]
    assert 0.5 < waited < 6.0
