"""How long a turn waits for its session, and what it says when it cannot have it.

Kept apart from :mod:`troupe.stores.session_lock` so the settings can name
the defaults without importing ADK.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_WAIT_S = 30.0
"""Seconds a turn waits for its session by default before :class:`SessionBusyError`."""
DEFAULT_LEASE_S = 30.0
"""Seconds a PostgreSQL session lease lasts unless renewed: how long a stalled or dead
holder keeps its session at most."""
DEFAULT_RECORD_TTL_S = 24 * 3600.0
"""Seconds a keyed turn's record lives after its last change, by default."""


class SessionBusyError(RuntimeError):
    """Another turn held the session for longer than this turn may wait."""

    def __init__(self, session_id: str, waited_s: float, retry_after_s: int) -> None:
        self.session_id = session_id
        self.retry_after_s = retry_after_s
        super().__init__(
            f"session {session_id!r} is busy with another turn (waited {waited_s:g} s); "
            f"retry in {retry_after_s} s"
        )


class LeaseLostError(RuntimeError):
    """This turn's lease on its session was taken over: it may run and write nothing more."""

    def __init__(self, session_id: str, lease_s: float) -> None:
        self.session_id = session_id
        super().__init__(
            f"interrupted: this replica stopped renewing its lease on session {session_id!r} "
            f"for longer than turn_lock_lease_s ({lease_s:g} s) and another turn took the "
            "session over; this turn runs no further tool and writes nothing more"
        )


@dataclass(frozen=True)
class LockLimits:
    """How long a turn waits for its session, and how long a stalled holder keeps it."""

    wait_s: float = DEFAULT_WAIT_S
    lease_s: float = DEFAULT_LEASE_S

    @property
    def retry_after_s(self) -> int:
        """What to tell a client that was refused: a stalled holder is gone by then."""
        return max(1, min(int(self.lease_s + 0.999), 3600))
