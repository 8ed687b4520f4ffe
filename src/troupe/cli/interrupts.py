"""Ctrl-C during a chat turn: the turn is cancelled, the chat goes on.

While a turn runs, SIGINT cancels the turn's task (the model call, the tool or
the shell command in flight, see :func:`troupe.builtins._process.run_process`)
instead of raising KeyboardInterrupt somewhere inside the event loop. The
Assistant records the turn as cancelled and answers the calls it left open,
so the next message runs on a whole session. At a question asked during the
turn (an approval), Ctrl-C is a KeyboardInterrupt again, turned into the
same cancellation.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from types import FrameType, TracebackType
from typing import Any, ClassVar


class TurnInterrupts:
    """One turn as a task on ``loop``, cancelled by Ctrl-C while the block runs."""

    _asking: ClassVar[bool] = False

    def __init__(self, loop: asyncio.AbstractEventLoop, turn: Coroutine[Any, Any, Any]) -> None:
        self.loop = loop
        self.task = loop.create_task(turn)
        self._previous: Any = None

    def __enter__(self) -> TurnInterrupts:
        # Signal handlers belong to the main thread; elsewhere Ctrl-C is not ours.
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.getsignal(signal.SIGINT)
            signal.signal(signal.SIGINT, self._on_sigint)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        if TurnInterrupts._asking:
            raise KeyboardInterrupt
        self.loop.call_soon_threadsafe(self.task.cancel)

    async def wait(self) -> Any:
        """The turn's result; CancelledError when Ctrl-C cancelled it."""
        return await self.task

    @staticmethod
    @contextmanager
    def asking() -> Iterator[None]:
        """Around a question read during a turn: Ctrl-C there cancels the turn."""
        TurnInterrupts._asking = True
        try:
            yield
        except KeyboardInterrupt:
            raise asyncio.CancelledError from None
        finally:
            TurnInterrupts._asking = False
