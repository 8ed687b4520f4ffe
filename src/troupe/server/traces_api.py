"""``GET /traces`` and ``GET /traces/{id}``: how each turn ended, over HTTP.

The same traces, in the same words (answered, failed, cancelled, awaiting
approval, interrupted, ...: :data:`troupe.stores.traces.OUTCOMES`), as
``troupe trace list --json`` and ``troupe trace show --json``. A client that
sent a turn over ``/run`` reads here whether it is waiting for an approval.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from typing import Any

from fastapi import FastAPI, HTTPException, Query

from ..stores.traces import TraceStore

MAX_LISTED = 500


def add_trace_routes(app: FastAPI, store: TraceStore) -> None:
    """Add the two read-only trace routes to ``app`` (behind its token, when it has one)."""

    @app.get("/traces")
    async def list_traces(
        session_id: str | None = None, limit: int = Query(20, ge=1, le=MAX_LISTED)
    ) -> list[dict[str, Any]]:
        """The newest traces first, as ``troupe trace list --json``."""
        # Off the event loop: the store may be a PostgreSQL database away.
        found = await asyncio.to_thread(store.list, limit, session_id)
        return [trace.summary() for trace in found]

    @app.get("/traces/{trace_id}")
    async def show_trace(trace_id: str) -> dict[str, Any]:
        """One trace in full, as ``troupe trace show --json`` (an id or a unique prefix)."""
        trace = await asyncio.to_thread(store.get, trace_id)
        if trace is None:
            raise HTTPException(
                404, f"no single trace matches {trace_id!r}; GET /traces lists them"
            )
        return asdict(trace)
