"""Traces as stored: one row per turn, in SQLite or in the sessions' PostgreSQL.

What a trace holds and how a turn becomes one is :mod:`troupe.runtime.tracing`;
``troupe trace`` reads them back from here.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .postgres import Postgres, open_store, postgres_schema

ANSWERED = "answered"
FAILED = "failed"
CANCELLED = "cancelled"
AWAITING_APPROVAL = "awaiting approval"
INTERRUPTED = "interrupted"
STOPPED = "stopped"
TIMEOUT = "timeout"
FALLBACK = "fallback"
OUTCOMES: dict[str, str] = {
    ANSWERED: "the agents answered",
    FAILED: "an error ended the turn (the trace keeps it)",
    CANCELLED: "the user stopped the turn (Ctrl-C), or the caller cancelled it",
    AWAITING_APPROVAL: "the turn paused for a tool call nobody has approved or declined yet",
    INTERRUPTED: "the process running the turn stopped, or another replica took the session "
    "over; the turn was closed, not replayed",
    STOPPED: "a limit ended the turn (model calls, repeats, transfers)",
    TIMEOUT: "the turn outlived turn_timeout_s",
    FALLBACK: "no agent wrote an answer; the last tool result was shown instead",
}
"""How a turn ended: the words ``troupe trace``, ``troupe sessions`` and ``GET /traces`` use."""
_OLDER_WORDS = {"error": FAILED}
"""Words of traces written by earlier versions, read as today's."""


@dataclass
class Trace:
    """One turn, as stored and shown."""

    id: str
    session_id: str
    started_at: float
    duration_ms: float
    request: str
    outcome: str
    """How the turn ended: one of :data:`OUTCOMES`."""
    answer: str = ""
    path: list[str] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)
    model_calls: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    repairs: list[list[str]] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    invalid_names: list[str] = field(default_factory=list)
    """Names and shapes the model wrote that do not exist, repaired or not."""
    rejections: list[str] = field(default_factory=list)
    reached: list[str] = field(default_factory=list)
    stop_reason: str | None = None
    error: str | None = None
    allowed: list[str] = field(default_factory=list)
    """The tools the user allowed for the rest of the session ("always") by the turn's end."""

    def __post_init__(self) -> None:
        self.outcome = _OLDER_WORDS.get(self.outcome, self.outcome)

    @staticmethod
    def new_id() -> str:
        return uuid.uuid4().hex[:12]

    def tokens(self) -> int:
        return sum(c["prompt_tokens"] + c["output_tokens"] for c in self.model_calls)

    def summary(self) -> dict[str, Any]:
        """The trace in brief: what ``trace list --json`` and ``GET /traces`` give for it."""
        return {
            "id": self.id,
            "started_at": self.started_at,
            "session_id": self.session_id,
            "request": self.request,
            "path": self.path,
            "outcome": self.outcome,
            "error": self.error,
            "model_calls": len(self.model_calls),
            "tokens": self.tokens(),
            "duration_ms": self.duration_ms,
        }

    def cached_share(self) -> float:
        """The share of prompt tokens the provider served from its cache (0 to 1)."""
        prompt = sum(c["prompt_tokens"] for c in self.model_calls)
        cached = sum(c.get("cached_tokens", 0) for c in self.model_calls)  # older traces: none
        return cached / prompt if prompt else 0.0


_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS traces (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        started_at REAL NOT NULL,
        data TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS traces_started ON traces(started_at)",
)

_PG_SCHEMA_NAME = "troupe_traces"
_PG_SCHEMA = postgres_schema(_SCHEMA)


class TraceStore:
    """Traces in ``traces.db`` in the data directory, or in the ``troupe_traces``
    schema of the PostgreSQL database the sessions use (every replica's traces)."""

    def __init__(self, path: str | Path | Postgres) -> None:
        self.store: Any = open_store(path, _PG_SCHEMA_NAME, _SCHEMA, _PG_SCHEMA)

    def open(self) -> None:
        """Create the store now; a location that cannot hold it raises StoreError."""
        self.store.open()

    def add(self, trace: Trace) -> None:
        with self.store.write() as conn:
            conn.execute(
                """INSERT INTO traces (id, session_id, started_at, data) VALUES (?,?,?,?)
                   ON CONFLICT (id) DO UPDATE SET session_id = excluded.session_id,
                   started_at = excluded.started_at, data = excluded.data""",
                (trace.id, trace.session_id, trace.started_at, json.dumps(asdict(trace))),
            )

    def list(self, limit: int = 20, session_id: str | None = None) -> list[Trace]:
        query = "SELECT data FROM traces"
        params: tuple[Any, ...] = ()
        if session_id:
            query += " WHERE session_id = ?"
            params = (session_id,)
        query += " ORDER BY started_at DESC LIMIT ?"
        with self.store.read() as conn:
            rows = conn.execute(query, (*params, limit)).fetchall()
        return [Trace(**json.loads(r[0])) for r in rows]

    def get(self, trace_id: str) -> Trace | None:
        """The trace with this id, or the only one whose id starts with it."""
        with self.store.read() as conn:
            rows = conn.execute(
                "SELECT data FROM traces WHERE id LIKE ? ORDER BY started_at DESC LIMIT 2",
                (trace_id + "%",),
            ).fetchall()
        return Trace(**json.loads(rows[0][0])) if len(rows) == 1 else None
