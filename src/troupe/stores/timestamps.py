"""Timestamps as the stores give them back: ISO 8601 in UTC, to the second."""

from __future__ import annotations

from datetime import UTC, datetime


def iso(timestamp: float) -> str:
    """A UNIX timestamp as ISO 8601 in UTC, to the second."""
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="seconds")
