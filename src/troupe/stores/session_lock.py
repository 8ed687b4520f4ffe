"""One turn at a time per session, in this process and across processes.

ADK loads a session at the start of a turn and refuses to append to it once
another turn has written in between (``StaleSessionError``). Two turns on the
same session must therefore queue, and the queue must be joined before the
runner loads the session. :class:`SessionTurns` is that queue:

* in this process, a first-come-first-served ``asyncio.Lock`` per
  (app, user, session);
* across processes, a guard in the store itself: a PostgreSQL advisory lock
  (``pg_try_advisory_lock`` on a pooled connection held for the turn), or for
  a SQLite file an exclusive ``flock`` on a lock file beside it. Both are
  released by the server or the kernel when the holder dies, so a killed
  ``troupe chat`` never leaves a session locked.

The wait is bounded: a turn that cannot take its session within ``wait_s``
raises :class:`SessionBusyError` (``troupe serve`` answers 409 with
``Retry-After``). On PostgreSQL a holder that stalls (a stopped or hung
process, a dead host) loses the lock too: its connection runs with
``idle_session_timeout`` set to the lease, and a live holder pings it every
third of the lease, so the server ends the session of one that stopped
pinging and drops its lock. A session-level advisory lock was kept over a
lease row because PostgreSQL itself then releases the lock on every kind of
holder death (process, connection, host via TCP keepalives), with no clock
comparisons between machines and no sweeper.

:class:`QueuedRunner` is ADK's ``Runner`` whose ``run_async`` waits its turn;
:func:`session_turns` gives the queue a session service shares with every
runner and :class:`~troupe.runtime.assistant.Assistant` over it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from pathlib import Path
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
from .lock_limits import LockLimits, SessionBusyError

SessionKey = tuple[str, str, str]
"""(app name, user id, session id)."""

POLL_FIRST_S = 0.005
POLL_MAX_S = 0.1
"""Seconds between tries for a store lock another process holds: doubling up to this."""


class StoreGuard(Protocol):
    """The cross-process half of the queue: a lock kept in or beside the store."""

    def hold(
        self, key: SessionKey, deadline: float
    ) -> contextlib.AbstractAsyncContextManager[None]:
        """Wait until no other process runs a turn on ``key``, and keep it so.

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


class PostgresGuard:
    """A session-level advisory lock on a pooled connection, held for the turn.

    Lock connections come from an engine of their own whose pool holds at most
    ``limits.pool_size`` connections: a turn waiting for its lock borrows one
    only for each try, so waiting turns never hold a connection each, and the
    turns running never wait behind them for the session store's connections.
    Every lock connection runs with ``idle_session_timeout`` at the lease and
    TCP keepalives, and its holder pings it while the turn runs, so the lock
    of a holder that stalls or dies is dropped by the server within the lease.
    """

    def __init__(self, url: str, limits: LockLimits | None = None) -> None:
        self.url = url
        self.limits = limits or LockLimits()
        self._engine: Any = None

    def _engine_for_loop(self) -> Any:
        if self._engine is None:
            from sqlalchemy.ext.asyncio import create_async_engine

            lease_ms = int(self.limits.lease_s * 1000)
            self._engine = create_async_engine(
                self.url,
                pool_size=self.limits.pool_size,
                max_overflow=0,
                pool_pre_ping=True,  # the server ends idle pooled connections too
                connect_args={
                    "server_settings": {
                        "idle_session_timeout": str(lease_ms),
                        "tcp_keepalives_idle": "5",
                        "tcp_keepalives_interval": "2",
                        "tcp_keepalives_count": "3",
                        "application_name": "troupe-session-lock",
                    }
                },
            )
        return self._engine

    @contextlib.asynccontextmanager
    async def hold(self, key: SessionKey, deadline: float) -> AsyncIterator[None]:
        from sqlalchemy import text

        number = int.from_bytes(_digest(key), "big", signed=True)
        engine = self._engine_for_loop()
        loop = asyncio.get_running_loop()
        held: Any = None

        async def attempt() -> bool:
            nonlocal held
            left = deadline - loop.time()
            if left <= 0:
                return False
            async with asyncio.timeout(left):
                conn = await engine.connect()
            try:
                taken = await conn.scalar(text("SELECT pg_try_advisory_lock(:n)"), {"n": number})
                await conn.commit()
            except BaseException:
                await conn.invalidate()
                await conn.close()
                raise
            if taken:
                held = conn
                return True
            await conn.close()  # back to the pool for the next try
            return False

        await _poll(attempt, deadline)
        in_query = asyncio.Event()
        heartbeat = asyncio.create_task(self._ping(held, in_query))
        try:
            yield
        finally:
            heartbeat.cancel()
            broken = in_query.is_set()  # cut off mid-query: the connection's state is unknown
            try:
                await heartbeat
            except asyncio.CancelledError:
                pass
            except Exception:  # the server ended the connection (the lease ran out)
                broken = True
            await self._release(held, number, broken=broken)

    async def _ping(self, conn: Any, in_query: asyncio.Event) -> None:
        """Keep the holder's connection busy enough that the server does not end it."""
        from sqlalchemy import text

        while True:
            await asyncio.sleep(self.limits.lease_s / 3)
            in_query.set()
            await conn.execute(text("SELECT 1"))
            await conn.commit()
            in_query.clear()

    async def _release(self, conn: Any, number: int, *, broken: bool) -> None:
        from sqlalchemy import text

        if not broken:
            try:
                await conn.scalar(text("SELECT pg_advisory_unlock(:n)"), {"n": number})
                await conn.commit()
                await conn.close()
                return
            except Exception:  # the connection is gone; so is its lock
                pass
        # Ending the connection ends its server session and every lock it held.
        with contextlib.suppress(Exception):
            await conn.invalidate()
        with contextlib.suppress(Exception):
            await conn.close()

    async def close(self) -> None:
        engine, self._engine = self._engine, None
        if engine is not None:
            await engine.dispose()


_HELD: ContextVar[frozenset[SessionKey]] = ContextVar("troupe_held_sessions", default=frozenset())
"""The sessions whose turn the current task (and the tasks it starts) is running."""


@dataclass
class _Slot:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


class SessionTurns:
    """The queue of turns for every session of one store."""

    def __init__(self, guard: StoreGuard | None = None, limits: LockLimits | None = None) -> None:
        self.guard = guard
        self.limits = limits or LockLimits()
        self._slots: dict[tuple[asyncio.AbstractEventLoop, SessionKey], _Slot] = {}

    @contextlib.asynccontextmanager
    async def hold(self, app_name: str, user_id: str, session_id: str) -> AsyncIterator[None]:
        """Wait until no other turn runs on this session, and keep it until the block ends.

        Code already inside this session's turn (the same task or one it
        started) passes straight through, so a turn may run several runner
        calls (a retry, a re-route) inside it. Waiting, in this process and
        for other processes together, is bounded by ``limits.wait_s``.

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
                token = _HELD.set(held | {key})
                try:
                    if self.guard is None:
                        yield
                    else:
                        async with contextlib.AsyncExitStack() as stack:
                            try:
                                await stack.enter_async_context(self.guard.hold(key, deadline))
                            except TimeoutError:
                                raise self._busy(session_id) from None
                            yield
                finally:
                    _forget(token, held)
            finally:
                slot.lock.release()
        finally:
            slot.users -= 1
            if slot.users == 0:
                self._slots.pop(slot_key, None)

    def _busy(self, session_id: str) -> SessionBusyError:
        return SessionBusyError(session_id, self.limits.wait_s, self.limits.retry_after_s)

    async def close(self) -> None:
        """Release the guard's connections."""
        if self.guard is not None:
            await self.guard.close()


def _forget(token: Token[frozenset[SessionKey]], held: frozenset[SessionKey]) -> None:
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
        async with session_turns(self.session_service).hold(self.app_name, user_id, session_id):
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
