"""How long a turn waits for its session, and what it says when it cannot have it.

Kept apart from :mod:`troupe.stores.session_lock` so the settings can name
the defaults without importing ADK.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_WAIT_S = 30.0
"""Seconds a turn waits for its session by default before :class:`SessionBusyError`."""
DEFAULT_LEASE_S = 30.0
"""Seconds a stalled PostgreSQL lock holder keeps its lock by default."""
DEFAULT_POOL_SIZE = 20
"""Connections one process uses for PostgreSQL session locks by default."""


class SessionBusyError(RuntimeError):
    """Another turn held the session for longer than this turn may wait."""

    def __init__(self, session_id: str, waited_s: float, retry_after_s: int) -> None:
        self.session_id = session_id
        self.retry_after_s = retry_after_s
        super().__init__(
            f"session {session_id!r} is busy with another turn (waited {waited_s:g} s); "
            f"retry in {retry_after_s} s"
        )


@dataclass(frozen=True)
class LockLimits:
    """How long a turn waits for its session, and how long a stalled holder keeps it."""

    wait_s: float = DEFAULT_WAIT_S
    lease_s: float = DEFAULT_LEASE_S
    pool_size: int = DEFAULT_POOL_SIZE

    @property
    def retry_after_s(self) -> int:
        """What to tell a client that was refused: a stalled holder is gone by then."""
        return max(1, min(int(self.lease_s + 0.999), 3600))
