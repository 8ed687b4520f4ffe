"""Routing decisions off the event loop, encoded together when turns arrive together.

Every decision runs on one worker thread (``troupe-router``): the encoder is
a model forward pass, which must never run on the event loop, and the
encoder and the phrase cache are not shared between threads. When the worker
is free it takes every request waiting, up to :data:`MAX_BATCH`, and decides
them in one :meth:`Router.decide_many` (one encoder pass). It never waits for
more: a lone turn is decided at once, and batches form only when turns queue
up behind one another. Batching saves the per-call overhead of the encoder on
short messages of similar length; on the development set's requests, whose
lengths vary, ``bench/router_batch.py`` measured no clear saving on this
project's machine (see docs/benchmarks.md), and decisions made in a batch are
the same as those made alone.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from .router import RouteDecision, Router

MAX_BATCH = 32
"""At most this many messages encoded in one pass."""


@dataclass(frozen=True)
class _Waiting:
    router: Router
    text: str
    future: asyncio.Future[RouteDecision]
    loop: asyncio.AbstractEventLoop


class DecisionBatcher:
    """Decides routing requests on one worker thread, in batches of what is waiting."""

    def __init__(self, max_batch: int = MAX_BATCH) -> None:
        self.max_batch = max_batch
        self._waiting: list[_Waiting] = []
        self._lock = threading.Lock()
        self._draining = False
        self._worker: ThreadPoolExecutor | None = None

    async def decide(self, router: Router, text: str) -> RouteDecision:
        """``router``'s decision for ``text``, made on the worker thread."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[RouteDecision] = loop.create_future()
        with self._lock:
            self._waiting.append(_Waiting(router, text, future, loop))
            start = not self._draining
            self._draining = True
            if self._worker is None:
                self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="troupe-router")
        if start:
            self._worker.submit(self._drain)
        return await future

    def _drain(self) -> None:
        while True:
            with self._lock:
                batch = self._waiting[: self.max_batch]
                del self._waiting[: self.max_batch]
                if not batch:
                    self._draining = False
                    return
            for router, items in _by_router(batch):
                try:
                    decisions = router.decide_many([w.text for w in items])
                except Exception as exc:  # each waiting turn hears of the failure
                    for waiting in items:
                        waiting.loop.call_soon_threadsafe(_fail, waiting.future, exc)
                    continue
                for waiting, decision in zip(items, decisions, strict=True):
                    waiting.loop.call_soon_threadsafe(_settle, waiting.future, decision)


def _by_router(batch: list[_Waiting]) -> list[tuple[Router, list[_Waiting]]]:
    groups: dict[int, tuple[Router, list[_Waiting]]] = {}
    for waiting in batch:
        groups.setdefault(id(waiting.router), (waiting.router, []))[1].append(waiting)
    return list(groups.values())


def _settle(future: asyncio.Future[RouteDecision], decision: RouteDecision) -> None:
    if not future.done():  # the turn may have been cancelled meanwhile
        future.set_result(decision)


def _fail(future: asyncio.Future[RouteDecision], exc: Exception) -> None:
    if not future.done():
        future.set_exception(exc)


_BATCHER = DecisionBatcher()


def decision_batcher() -> DecisionBatcher:
    """The process's one batcher (one encoder, one worker thread)."""
    return _BATCHER
