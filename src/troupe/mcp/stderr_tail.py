"""A stdio MCP server's stderr: copied to troupe's log as it comes, its last lines kept.

Servers often answer a failed call with a bare "Error executing tool X" and
write the reason (a traceback, an npm error) to stderr. The log keeps all of
it; the tool's error gets the last line written during the call, so the model,
the chat and the trace see why.
"""

from __future__ import annotations

import asyncio
import collections
import os
import re
import threading
import time
from typing import IO

_KEPT = 50
_SETTLE_S = 0.2
"""How long a failed call waits for stderr written just before the answer."""
_ERRORISH = re.compile(
    r"err|exception|traceback|fail|cannot|can't|denied|not found|no such|refused|timed? ?out",
    re.IGNORECASE,
)


class StderrTail:
    """The write end a server's stderr goes to, and what came through it."""

    def __init__(self, server: str, sink: IO[str]) -> None:
        read_fd, write_fd = os.pipe()
        self.stream: IO[str] = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        """Pass as the server's ``errlog``: a real file descriptor, as a child needs."""
        self._server = server
        self._lines: collections.deque[str] = collections.deque(maxlen=_KEPT)
        self._count = 0
        self._changed = time.monotonic()
        self._lock = threading.Lock()
        thread = threading.Thread(
            target=self._pump, args=(read_fd, sink), name=f"mcp-stderr-{server}", daemon=True
        )
        thread.start()

    def _pump(self, read_fd: int, sink: IO[str]) -> None:
        with os.fdopen(read_fd, encoding="utf-8", errors="replace") as source:
            for line in source:
                try:
                    sink.write(line)
                    sink.flush()
                except (OSError, ValueError):  # the log closed at exit
                    pass
                with self._lock:
                    self._lines.append(line.rstrip("\n"))
                    self._count += 1
                    self._changed = time.monotonic()

    def mark(self) -> int:
        """A position: :meth:`reason_since` reads what came after it."""
        with self._lock:
            return self._count

    async def reason_since(self, mark: int, tool: str) -> str | None:
        """The line written after ``mark`` that says why ``tool`` failed (waiting
        briefly for lines still on their way), or None when there is none.

        The server library's own record of the failure ("Tool 'x' failed: Error
        executing tool x", often wrapped over several lines) only repeats the
        answer, so lines naming the tool are passed over; of the rest, the last
        that reads like an error wins, else the last line.
        """
        deadline = time.monotonic() + _SETTLE_S
        while True:
            with self._lock:
                fresh = list(self._lines)[-(self._count - mark) :] if self._count > mark else []
                quiet = time.monotonic() - self._changed
            if (fresh and quiet > 0.05) or time.monotonic() >= deadline:
                break
            await asyncio.sleep(0.02)
        said = [line.strip() for line in fresh if line.strip()]
        said = [line for line in said if tool not in line and "executing tool" not in line]
        errors = [line for line in said if _ERRORISH.search(line)]
        chosen = errors[-1] if errors else said[-1] if said else None
        return chosen[:300] if chosen else None
