"""One turn at a time per session, in this process and across processes.

ADK loads a session at the start of a turn and refuses to append to it once
another turn has written in between (``StaleSessionError``). Two turns on the
same session must therefore queue, and the queue must be joined before the
runner loads the session. :class:`SessionTurns` is that queue:

* in this process, a first-come-first-served ``asyncio.Lock`` per
  (app, user, session);
* across processes, a guard in the store itself: on PostgreSQL a lease row
  per session (:class:`LeaseGuard`), on a SQLite file an exclusive ``flock``
  on a lock file beside it (:class:`FileGuard`, released by the kernel when
  its holder dies).

The wait is bounded: a turn that cannot take its session within ``wait_s``
raises :class:`SessionBusyError` (``troupe serve`` answers 409 with
``Retry-After``). A PostgreSQL lease lasts ``lease_s`` and its holder renews
it while the turn runs; a holder that dies or stalls loses it when it
expires, and the turn that takes it over closes the stalled turn first
(``on_takeover``). The lease carries a fencing token: the holder checks it
before each tool call (:meth:`Lease.check`, from the runtime's plugin) and
each write to the session (:meth:`Lease.fence`, from the session service), so
a holder that wakes up after losing its lease runs no further tool and writes
nothing. A lease row rather than PostgreSQL's session-level advisory locks,
because those live in a server session that a transaction pooler (PgBouncer)
does not keep for a client, and because a lease can be checked by token.

:class:`QueuedRunner` is ADK's ``Runner`` whose ``run_async`` waits its turn;
:func:`session_turns` gives the queue a session service shares with every
runner and :class:`~troupe.runtime.assistant.Assistant` over it.
:class:`TurnJournal` counts what the current turn stored and which tools it
started, so a keyed turn that fails can tell whether anything of it is left.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import socket
import uuid
import weakref
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Collection,
    Iterator,
    Mapping,
)
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol

from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.run_config import RunConfig
from google.adk.events.event import Event
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import BaseSessionService
from google.genai import types
from typing_extensions import override

from .._adk_compat import set_storage_marker, storage_marker
from ..sandbox.private import private_dir
from .budget import DatabaseBusyError, is_lock_timeout
from .lock_limits import LeaseLostError, LockLimits, SessionBusyError

logger = logging.getLogger("troupe.sessions")

SessionKey = tuple[str, str, str]
"""(app name, user id, session id)."""

POLL_FIRST_S = 0.005
POLL_MAX_S = 0.1
"""Seconds between tries for a store lock another process holds: doubling up to this."""


class StoreGuard(Protocol):
    """The cross-process half of the queue: a lock kept in or beside the store."""

    def hold(
        self, key: SessionKey, deadline: float
    ) -> contextlib.AbstractAsyncContextManager[Lease | None]:
        """Wait until no other process runs a turn on ``key``, and keep it so; give the
        :class:`Lease` (None for guards without one).

        Raises :class:`TimeoutError` when ``deadline`` (loop time) passes first.
        """
        ...

    async def close(self) -> None:
        """Release what the guard keeps open."""
        ...


def _digest(key: SessionKey) -> bytes:
    return hashlib.blake2b("\0".join(key).encode("utf-8"), digest_size=8).digest()


async def _poll(attempt: Callable[[], Awaitable[bool]], deadline: float) -> None:
    """Call ``attempt`` until it returns True, sleeping a little longer each time.

    Raises :class:`TimeoutError` once the loop's clock passes ``deadline``.
    """
    loop = asyncio.get_running_loop()
    delay = POLL_FIRST_S
    while not await attempt():
        left = deadline - loop.time()
        if left <= 0:
            raise TimeoutError
        await asyncio.sleep(min(delay, left))
        delay = min(delay * 2, POLL_MAX_S)


class FileGuard:
    """``flock`` on one lock file per session, in a folder beside the SQLite file.

    The file is removed by its holder on release; a waiter that locked a file
    removed meanwhile notices (its inode is no longer at the path) and tries
    again, so no lock files are left behind.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @contextlib.asynccontextmanager
    async def hold(self, key: SessionKey, deadline: float) -> AsyncIterator[None]:
        import fcntl

        private_dir(self.folder)
        path = self.folder / f"{_digest(key).hex()}.lock"
        fd = -1

        async def attempt() -> bool:
            nonlocal fd
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                if os.fstat(fd).st_ino == os.stat(path).st_ino:
                    return True
            except OSError:  # held elsewhere, or removed by its last holder
                pass
            os.close(fd)
            fd = -1
            return False

        try:
            await _poll(attempt, deadline)
            yield
        finally:
            if fd >= 0:
                with contextlib.suppress(OSError):
                    path.unlink()
                os.close(fd)

    async def close(self) -> None:
        return None


LEASE_TABLES = {
    "postgresql": (
        "CREATE TABLE IF NOT EXISTS troupe_session_leases ("
        " session_key TEXT PRIMARY KEY, holder TEXT, token BIGINT NOT NULL,"
        " expires_at TIMESTAMPTZ NOT NULL, taken_from TEXT)",
    ),
}
"""One row per session whose turn runs now (or whose stalled turn is still to be closed)."""

_ACQUIRE = (
    "INSERT INTO troupe_session_leases AS l (session_key, holder, token, expires_at)"
    " VALUES (:k, :h, 1, clock_timestamp() + :lease * interval '1 second')"
    " ON CONFLICT (session_key) DO UPDATE SET holder = excluded.holder, token = l.token + 1,"
    " expires_at = excluded.expires_at, taken_from = coalesce(l.holder, l.taken_from)"
    " WHERE l.holder IS NULL OR l.expires_at < clock_timestamp()"
    " RETURNING token, taken_from"
)
"""Take a free or expired lease in one statement. ``taken_from`` names the holder that
stalled or died without releasing it (or one whose stalled turn was not closed yet)."""
_RENEW = (
    "UPDATE troupe_session_leases SET expires_at = clock_timestamp() + :lease * interval '1 second'"
    " WHERE holder = ANY(:holders) RETURNING holder"
)
"""Renew every lease this process holds, in one statement (a holder names one acquisition)."""
_CURRENT = (
    "SELECT 1 FROM troupe_session_leases WHERE session_key = :k AND holder = :h AND token = :t"
)
_FENCE = (
    "SELECT 1 FROM troupe_session_leases,"
    " set_config('lock_timeout', :lock, true) AS lock_timeout,"
    " set_config('idle_in_transaction_session_timeout', :idle, true) AS idle_timeout"
    " WHERE session_key = :k AND holder = :h AND token = :t FOR SHARE OF troupe_session_leases"
)
"""The lease's row, held until the write that follows commits, with the transaction's
timeouts set on the way (see :meth:`Lease.fence`)."""
_CLOSED = (
    "UPDATE troupe_session_leases SET taken_from = NULL"
    " WHERE session_key = :k AND holder = :h AND token = :t"
)
_RELEASE = (
    "DELETE FROM troupe_session_leases"
    " WHERE session_key = :k AND holder = :h AND token = :t AND taken_from IS NULL"
)
_RELEASE_UNCLOSED = (
    "UPDATE troupe_session_leases SET holder = NULL"
    " WHERE session_key = :k AND holder = :h AND token = :t"
)


class Lease:
    """The right to run the turn of one session now, with its fencing token.

    A holder that stalls longer than the lease may find it taken over: the row
    then names another holder and token, so :meth:`check` (before each tool
    call) and :meth:`fence` (around each write) refuse with
    :class:`LeaseLostError`, and the new holder's turn is never touched.
    """

    def __init__(self, guard: LeaseGuard, key: SessionKey, holder: str, token: int) -> None:
        self.guard = guard
        self.key = key
        self.holder = holder
        self.token = token
        self.taken_over = False
        """The previous holder stalled or died holding it: its turn is to be closed."""
        self.lost = False
        self.sure_until = 0.0
        """Loop time before which no one can have taken the lease over: the server set its
        expiry a lease after this holder asked, and asking came first (see :meth:`check`)."""

    def renewed(self, asked_at: float) -> None:
        """The server set the expiry a lease after a request sent at ``asked_at`` (loop time)."""
        self.sure_until = max(self.sure_until, asked_at + self.guard.limits.lease_s)

    @property
    def row_params(self) -> dict[str, Any]:
        return {"k": _key_text(self.key), "h": self.holder, "t": self.token}

    def _lost(self) -> LeaseLostError:
        self.lost = True
        return LeaseLostError(self.key[2], self.guard.limits.lease_s)

    async def check(self) -> None:
        """Raise :class:`LeaseLostError` unless this lease is still the session's.

        While the lease cannot have expired yet (its last renewal was asked less than a
        lease ago, minus a margin, on this process's monotonic clock, which runs on
        while the process is stopped), no one can have taken it over and the database
        is not asked; a holder that was stopped for longer asks it."""
        if self.lost:
            raise self._lost()
        margin = min(2.0, self.guard.limits.lease_s / 4)
        if asyncio.get_running_loop().time() < self.sure_until - margin:
            return
        found = (await self.guard.records.run(_CURRENT, self.row_params)).first()
        if found is None:
            raise self._lost()

    @contextlib.asynccontextmanager
    async def fence(self) -> AsyncIterator[Any]:
        """A connection in a transaction that holds this lease's row (``FOR SHARE``) until
        it commits: writes made on it land only while the lease is this holder's, and a
        takeover waits for them. Raises :class:`LeaseLostError` when the lease is gone."""
        if self.lost:
            raise self._lost()
        from sqlalchemy import text

        # One statement sets this transaction's timeouts (functions in FROM run before
        # the row is locked) and takes the lease's row: it waits longer for the row
        # than a stalled process may keep a transaction open on it, so such a process
        # is ended first and the write goes on; and if this process stalls now, the
        # server ends this transaction within half a lease.
        records = self.guard.records
        timeouts = {
            "lock": str(int(self.guard.limits.lease_s * 1000)),
            "idle": str(int(records.idle_timeout_s * 1000)),
        }
        async with records.engine.begin() as conn:
            try:
                found = await conn.scalar(text(_FENCE), {**self.row_params, **timeouts})
            except Exception as exc:
                if is_lock_timeout(exc):
                    raise DatabaseBusyError(f"the lease on {self.key[2]!r} stayed locked") from exc
                raise
            if found is None:
                raise self._lost()
            yield conn

    async def closed_stalled_turn(self) -> None:
        """Record that the stalled holder's turn has been closed."""
        await self.guard.records.run(_CLOSED, self.row_params)
        self.taken_over = False


class LeaseGuard:
    """A lease row per session in PostgreSQL, renewed while its turn runs.

    Taking the session is one ``INSERT ... ON CONFLICT DO UPDATE`` that
    succeeds when no one holds the row or its holder let it expire; every
    statement is its own short transaction on the process's pooled engine, so
    a turn waiting for its session holds no connection between tries, and
    nothing here needs a server session of its own: a transaction pooler
    (PgBouncer) may stand in between. Expiry is read on the server's clock
    only. Every third of ``limits.lease_s`` one statement renews all the
    leases the process holds (so renewals cost one pooled connection a period,
    however many turns run); a holder that stalls (``SIGSTOP``, a hung host)
    or dies (``kill -9``) loses its leases once they expire, and the next turn
    on each session takes it over and closes the stalled turn
    (:attr:`Lease.taken_over`).
    """

    def __init__(self, records: Any, limits: LockLimits | None = None) -> None:
        self.records = records
        """A :class:`~troupe.stores.database.PostgresRecords` (its engine is the process's)."""
        self.limits = limits or LockLimits()
        self._process = f"{socket.gethostname()}:{os.getpid()}"
        self._held: dict[str, Lease] = {}
        self._keeper: asyncio.Task[None] | None = None

    @contextlib.asynccontextmanager
    async def hold(self, key: SessionKey, deadline: float) -> AsyncIterator[Lease]:
        await self.records.ensure("troupe_session_leases", LEASE_TABLES)
        loop = asyncio.get_running_loop()
        holder = f"{self._process}:{uuid.uuid4().hex[:12]}"
        params = {"k": _key_text(key), "h": holder, "lease": self.limits.lease_s}
        lease: Lease | None = None

        async def attempt() -> bool:
            nonlocal lease
            left = deadline - loop.time()
            if left <= 0:
                return False
            asked_at = loop.time()
            try:
                async with asyncio.timeout(left):
                    row = (await self.records.run(_ACQUIRE, params)).first()
            except Exception as exc:
                if not is_lock_timeout(exc):
                    raise
                return False  # the row is locked by a transaction still open: try again
            if row is None:
                return False
            lease = Lease(self, key, holder, int(row[0]))
            lease.taken_over = row[1] is not None
            lease.renewed(asked_at)
            return True

        await _poll(attempt, deadline)
        assert lease is not None
        self._held[holder] = lease
        self._keep_renewing(loop)
        try:
            yield lease
        finally:
            self._held.pop(holder, None)
            await asyncio.shield(self._release(lease))

    def _keep_renewing(self, loop: asyncio.AbstractEventLoop) -> None:
        keeper = self._keeper
        if keeper is None or keeper.done() or keeper.get_loop() is not loop:
            self._keeper = loop.create_task(self._renew_all())

    async def _renew_all(self) -> None:
        """Renew every held lease each third of the lease, while any is held."""
        while self._held:
            await asyncio.sleep(self.limits.lease_s / 3)
            holders = list(self._held)
            if not holders:
                break
            params = {"holders": holders, "lease": self.limits.lease_s}
            asked_at = asyncio.get_running_loop().time()
            try:
                renewed = {row[0] for row in (await self.records.run(_RENEW, params)).rows}
            except Exception as exc:  # the database is unreachable: try again next time
                logger.debug("Could not renew %d lease(s): %s", len(holders), exc)
                continue
            for holder in holders:
                lease = self._held.get(holder)
                if lease is not None and holder in renewed:
                    lease.renewed(asked_at)
                elif lease is not None:
                    lease.lost = True
                    self._held.pop(holder, None)  # nothing more to renew
                    logger.warning(
                        "Lost the lease on session %r: another replica took it over.", lease.key[2]
                    )

    async def _release(self, lease: Lease) -> None:
        if lease.lost:
            return
        statement = _RELEASE_UNCLOSED if lease.taken_over else _RELEASE
        try:
            await self.records.run(statement, lease.row_params)
        except Exception as exc:  # the lease then expires on its own
            logger.warning("Could not release the lease on %r: %s", lease.key[2], exc)

    async def close(self) -> None:
        keeper, self._keeper = self._keeper, None
        if keeper is not None and not keeper.done():
            keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError, RuntimeError):
                await keeper


def _key_text(key: SessionKey) -> str:
    return json.dumps(list(key))


_HELD: ContextVar[Mapping[SessionKey, Lease | None]] = ContextVar(
    "troupe_held_sessions", default=MappingProxyType({})
)
"""The sessions whose turn the current task (and the tasks it starts) is running,
with their leases (None where the guard has none)."""


def held_lease(key: SessionKey) -> Lease | None:
    """The lease the current task holds on ``key``'s session, if any."""
    return _HELD.get().get(key)


def held_leases() -> list[Lease]:
    """Every lease the current task holds (a plan step's tools run under its turn's)."""
    return [lease for lease in _HELD.get().values() if lease is not None]


@dataclass
class TurnJournal:
    """What the current turn has done that a retry must not do again."""

    stored: int = 0
    """Events of the turn written to the session (its user message included)."""
    tools: int = 0
    """Tool calls the turn started."""


_JOURNAL: ContextVar[TurnJournal | None] = ContextVar("troupe_turn_journal", default=None)


@contextlib.contextmanager
def turn_journal() -> Iterator[TurnJournal]:
    """Count, for the block, what the turn stores and which tools it starts."""
    journal = TurnJournal()
    token = _JOURNAL.set(journal)
    try:
        yield journal
    finally:
        with contextlib.suppress(ValueError):
            _JOURNAL.reset(token)


def note_stored() -> None:
    """An event of the current turn reached the session store."""
    journal = _JOURNAL.get()
    if journal is not None:
        journal.stored += 1


def note_tool() -> None:
    """The current turn is about to run a tool."""
    journal = _JOURNAL.get()
    if journal is not None:
        journal.tools += 1


@dataclass
class _Slot:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


Takeover = Callable[[SessionKey, frozenset[str]], Awaitable[None]]
"""Closes the turn a stalled or dead holder left on a session (called under the new lease).
Its second argument holds the approvals the new turn answers: their question reached
the client before the holder died, so they stay waiting (see :func:`answered_approvals`)."""

CONFIRMATION = "adk_request_confirmation"
"""The name of ADK's confirmation call, which an approval answer answers."""


def answered_approvals(message: types.Content | None) -> frozenset[str]:
    """The ids of the confirmation calls ``message`` answers (an approval's yes or no)."""
    if message is None:
        return frozenset()
    return frozenset(
        part.function_response.id
        for part in message.parts or ()
        if part.function_response is not None
        and part.function_response.name == CONFIRMATION
        and part.function_response.id
    )


class SessionTurns:
    """The queue of turns for every session of one store."""

    def __init__(
        self,
        guard: StoreGuard | None = None,
        limits: LockLimits | None = None,
        on_takeover: Takeover | None = None,
    ) -> None:
        self.guard = guard
        self.limits = limits or LockLimits()
        self.on_takeover = on_takeover
        self._slots: dict[tuple[asyncio.AbstractEventLoop, SessionKey], _Slot] = {}

    @contextlib.asynccontextmanager
    async def hold(
        self,
        app_name: str,
        user_id: str,
        session_id: str,
        *,
        answering: Collection[str] = (),
    ) -> AsyncIterator[None]:
        """Wait until no other turn runs on this session, and keep it until the block ends.

        Code already inside this session's turn (the same task or one it
        started) passes straight through, so a turn may run several runner
        calls (a retry, a re-route) inside it. Waiting, in this process and
        for other processes together, is bounded by ``limits.wait_s``. A turn
        that takes over the lease of a stalled or dead holder first closes
        that holder's turn (``on_takeover``), keeping waiting the approvals in
        ``answering``: the ones this turn answers, which its client saw asked.

        Raises:
            SessionBusyError: the session stayed busy for the whole wait.
        """
        key = (app_name, user_id, session_id)
        held = _HELD.get()
        if key in held:
            yield
            return
        slot_key = (asyncio.get_running_loop(), key)
        slot = self._slots.setdefault(slot_key, _Slot())
        slot.users += 1
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.limits.wait_s
        try:
            try:
                # asyncio.timeout, not wait_for: Python 3.11's wait_for drops a
                # cancellation that arrives as the lock is granted (Ctrl-C in the chat).
                async with asyncio.timeout(self.limits.wait_s):
                    await slot.lock.acquire()
            except TimeoutError:
                raise self._busy(session_id) from None
            try:
                token = _HELD.set({**held, key: None})
                try:
                    if self.guard is None:
                        yield
                    else:
                        async with contextlib.AsyncExitStack() as stack:
                            try:
                                lease = await stack.enter_async_context(
                                    self.guard.hold(key, deadline)
                                )
                            except TimeoutError:
                                raise self._busy(session_id) from None
                            if lease is not None:
                                _HELD.set({**held, key: lease})
                                await self._take_over(lease, answering)
                            yield
                finally:
                    _forget(token, held)
            finally:
                slot.lock.release()
        finally:
            slot.users -= 1
            if slot.users == 0:
                self._slots.pop(slot_key, None)

    async def _take_over(self, lease: Lease, answering: Collection[str]) -> None:
        if not lease.taken_over:
            return
        logger.warning(
            "Took over session %r from a holder that stopped renewing its lease; "
            "closing its turn as interrupted.",
            lease.key[2],
        )
        if self.on_takeover is not None:
            await self.on_takeover(lease.key, frozenset(answering))
        await lease.closed_stalled_turn()

    def _busy(self, session_id: str) -> SessionBusyError:
        return SessionBusyError(session_id, self.limits.wait_s, self.limits.retry_after_s)

    async def close(self) -> None:
        """Release the guard's connections."""
        if self.guard is not None:
            await self.guard.close()


def _forget(
    token: Token[Mapping[SessionKey, Lease | None]], held: Mapping[SessionKey, Lease | None]
) -> None:
    try:
        _HELD.reset(token)
    except ValueError:  # ended from another context, e.g. a closing generator's
        _HELD.set(held)


_queues: weakref.WeakKeyDictionary[BaseSessionService, SessionTurns] = weakref.WeakKeyDictionary()


def attach_turns(service: BaseSessionService, turns: SessionTurns) -> None:
    """Make ``turns`` the queue of ``service`` (``open_session_store`` does this)."""
    _queues[service] = turns


def has_turns(service: BaseSessionService) -> bool:
    """True when ``service`` already has its queue (attached, or made on first use)."""
    return service in _queues


def session_turns(service: BaseSessionService) -> SessionTurns:
    """The queue every runner over ``service`` waits in (in-process only unless attached)."""
    turns = _queues.get(service)
    if turns is None:
        turns = _queues[service] = SessionTurns()
    return turns


class QueuedRunner(Runner):
    """ADK's Runner, running one turn at a time per session.

    The turn joins the session's queue before ADK loads the session, and
    leaves it when its last event has been consumed (or the run is closed).
    """

    @override
    async def run_async(
        self,
        *,
        user_id: str,
        session_id: str,
        invocation_id: str | None = None,
        new_message: types.Content | None = None,
        state_delta: dict[str, Any] | None = None,
        run_config: RunConfig | None = None,
        yield_user_message: bool = False,
        abort_signal: asyncio.Event | None = None,
    ) -> AsyncGenerator[Event, None]:
        async with session_turns(self.session_service).hold(
            self.app_name, user_id, session_id, answering=answered_approvals(new_message)
        ):
            events = super().run_async(
                user_id=user_id,
                session_id=session_id,
                invocation_id=invocation_id,
                new_message=new_message,
                state_delta=state_delta,
                run_config=run_config,
                yield_user_message=yield_user_message,
                abort_signal=abort_signal,
            )
            async with contextlib.aclosing(events):
                async for event in events:
                    yield event


class LeaseFencePlugin(BasePlugin):
    """Checks, right before each tool runs, that the turn still holds its session.

    A holder that stalled past its lease and then woke up finds the lease
    taken over: the check raises :class:`LeaseLostError`, the tool never runs
    and the turn ends. A tool that passes is counted in the turn's
    :class:`TurnJournal`, so a keyed turn that fails later is closed as
    interrupted instead of being run again.
    """

    def __init__(self) -> None:
        super().__init__(name="troupe_lease_fence")

    async def before_tool_callback(
        self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any
    ) -> dict[str, Any] | None:
        for lease in held_leases():
            await lease.check()
        note_tool()
        return None


class SessionQueuePlugin(BasePlugin):
    """The session queue for runners troupe did not build (``adk web``, ``adk run``).

    ADK loads the session before any plugin runs, so this plugin joins the
    queue at the first hook of the invocation (the user message, before it
    is stored), and then reloads the session in place when another turn
    wrote to it meanwhile: the turn sees that turn's events, and ADK's store
    never sees a stale write. ADK chose the agent to run from the older copy;
    that choice stands, since troupe's specialists cannot take a turn over
    from the orchestrator (``disallow_transfer_to_parent``), and a reply to
    a confirmation names a call stored before the user could answer it. It
    leaves the queue when the run ends (after run, on error, or when the task
    that ran the turn ends, e.g. a dropped stream). Under
    :class:`QueuedRunner` or the Assistant, which queue before the session
    loads, it does nothing.
    """

    def __init__(
        self, guard_for: Callable[[BaseSessionService], StoreGuard | None] | None = None
    ) -> None:
        """``guard_for`` gives the cross-process guard of a service no one attached a
        queue to (one ADK built), or None to queue its turns in this process only."""
        super().__init__(name="troupe_session_queue")
        self._held: dict[str, _Held] = {}
        self._guard_for = guard_for

    async def on_user_message_callback(
        self, *, invocation_context: InvocationContext, user_message: types.Content
    ) -> types.Content | None:
        await self._join(invocation_context)
        return None  # the message stands; the plugins after this one see it too

    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        # A resumed invocation has no new message: join here instead.
        await self._join(invocation_context)
        return None

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        await self._leave(invocation_context.invocation_id)

    async def on_run_error_callback(
        self, *, invocation_context: InvocationContext, error: Exception
    ) -> None:
        await self._leave(invocation_context.invocation_id)

    async def _join(self, ctx: InvocationContext) -> None:
        """Wait for the session's turn, then bring the session up to date."""
        session = ctx.session
        key = (session.app_name, session.user_id, session.id)
        if ctx.invocation_id in self._held or key in _HELD.get():
            return
        service = ctx.session_service
        if self._guard_for is not None and not has_turns(service):
            attach_turns(service, SessionTurns(self._guard_for(service)))
        stack = contextlib.AsyncExitStack()
        await stack.enter_async_context(session_turns(service).hold(*key))
        held = self._held[ctx.invocation_id] = _Held(stack)
        task = asyncio.current_task()
        if task is not None:
            held.watch(task, lambda: self._leave_soon(ctx.invocation_id))
        await _reload(ctx)

    async def _leave(self, invocation_id: str) -> None:
        held = self._held.pop(invocation_id, None)
        if held is not None:
            held.unwatch()
            await held.stack.aclose()

    def _leave_soon(self, invocation_id: str) -> None:
        held = self._held.get(invocation_id)
        if held is not None:
            held.closing = asyncio.get_running_loop().create_task(self._leave(invocation_id))


@dataclass
class _Held:
    """One invocation's place in its session's queue."""

    stack: contextlib.AsyncExitStack
    task: asyncio.Task[Any] | None = None
    callback: Callable[[asyncio.Task[Any]], None] | None = None
    closing: asyncio.Task[None] | None = None
    """The release started when the task ended without an after-run (kept from GC)."""

    def watch(self, task: asyncio.Task[Any], on_done: Callable[[], None]) -> None:
        self.task = task
        self.callback = lambda _task: on_done()
        task.add_done_callback(self.callback)

    def unwatch(self) -> None:
        if self.task is not None and self.callback is not None:
            self.task.remove_done_callback(self.callback)
        self.task = self.callback = None


async def _reload(ctx: InvocationContext) -> None:
    """Bring ``ctx.session`` up to date with the store, in place, if it is behind."""
    session = ctx.session
    fresh = await ctx.session_service.get_session(
        app_name=session.app_name,
        user_id=session.user_id,
        session_id=session.id,
        config=ctx.run_config.get_session_config if ctx.run_config else None,
    )
    if fresh is None:
        return
    mark = (fresh.last_update_time, storage_marker(fresh), len(fresh.events))
    if mark == (session.last_update_time, storage_marker(session), len(session.events)):
        return
    session.events[:] = fresh.events
    session.state.clear()
    session.state.update(fresh.state)
    session.last_update_time = fresh.last_update_time
    set_storage_marker(session, storage_marker(fresh))
