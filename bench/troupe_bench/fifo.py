"""Releasing a tool blocked on a named pipe, for the benchmarks and tests that stall one."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path


async def release_fifo(fifo: Path, text: str, timeout_s: float = 30.0) -> bool:
    """Write ``text`` to ``fifo`` once a reader has it open; False if none did in time
    (never blocks: opening a FIFO to write with no reader would)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: no reader yet
            await asyncio.sleep(0.1)
            continue
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)
        return True
    return False


def running(*argv: str) -> bool:
    """True when a process runs the command ``argv`` exactly (Linux ``/proc``): a tool
    blocked in ``cat slow.fifo`` is inside the tool, not just asked for it."""
    wanted = "\0".join(argv).encode() + b"\0"
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if cmdline.read_bytes() == wanted:
                return True
        except OSError:
            continue
    return False


async def wait_running(*argv: str, timeout_s: float = 60.0) -> bool:
    """Wait until :func:`running` (``argv``); False when it did not start in time."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if await asyncio.to_thread(running, *argv):
            return True
        await asyncio.sleep(0.1)
    return False
