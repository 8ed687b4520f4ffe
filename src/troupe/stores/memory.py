"""The chronicler's store: per-user memories and observations.

In ``memory.db`` in the data directory, or in the ``troupe_memory`` schema of
the PostgreSQL database the sessions use (see :mod:`troupe.stores.postgres`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .knowledge import fts_query, ts_query, ts_vector
from .postgres import Postgres, open_store, postgres_schema
from .timestamps import iso

FILENAME = "memory.db"
MEMORY = "memory"
OBSERVATION = "observation"
# Words of the request itself ("recall what I said about ..."), not of what to find.
_RECALL_WORDS = frozenset({"recall", "remember", "memory", "memories", "said", "told", "did"})

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS records (
        id INTEGER PRIMARY KEY,
        user_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('memory', 'observation')),
        text TEXT NOT NULL,
        category TEXT NOT NULL DEFAULT '',
        tags TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS records_user_time ON records(user_id, kind, created_at)",
    """CREATE VIRTUAL TABLE IF NOT EXISTS records_fts USING fts5(
        text, tags, category, content='records', content_rowid='id',
        tokenize='porter unicode61'
    )""",
    """CREATE TRIGGER IF NOT EXISTS records_ai AFTER INSERT ON records BEGIN
        INSERT INTO records_fts(rowid, text, tags, category)
        VALUES (new.id, new.text, new.tags, new.category);
    END""",
    """CREATE TRIGGER IF NOT EXISTS records_ad AFTER DELETE ON records BEGIN
        INSERT INTO records_fts(records_fts, rowid, text, tags, category)
        VALUES ('delete', old.id, old.text, old.tags, old.category);
    END""",
)

PG_SCHEMA_NAME = "troupe_memory"
_PG_DOCUMENT = ts_vector("r.text", "r.tags", "r.category")
PG_SCHEMA = (
    *postgres_schema(SCHEMA),
    f"CREATE INDEX IF NOT EXISTS records_search ON records USING GIN "
    f"(({ts_vector('text', 'tags', 'category')}))",
)


def _record(row: Any, score: float | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": row["id"], "text": row["text"], "at": iso(row["created_at"])}
    if row["category"]:
        out["category"] = row["category"]
    if row["tags"]:
        out["tags"] = row["tags"].split(",")
    if score is not None:
        out["score"] = float(f"{score:.4g}")
    return out


class MemoryStore:
    """Memories and observations, each belonging to one user id."""

    def __init__(self, path: str | Path | Postgres) -> None:
        self.store: Any = open_store(path, PG_SCHEMA_NAME, SCHEMA, PG_SCHEMA)

    @property
    def path(self) -> Path:
        """The SQLite file (a SQLite store only)."""
        return Path(self.store.path)

    def add(
        self,
        *,
        user_id: str,
        kind: str,
        text: str,
        category: str = "",
        tags: Sequence[str] = (),
        at: float | None = None,
    ) -> dict[str, Any]:
        """Store a memory or an observation for ``user_id``; returns it with its id."""
        with self.store.write() as conn:
            row = conn.execute(
                """INSERT INTO records(user_id, kind, text, category, tags, created_at)
                   VALUES (?, ?, ?, ?, ?, ?) RETURNING *""",
                (user_id, kind, text, category, ",".join(tags), at or time.time()),
            ).fetchone()
        return _record(row)

    def recall(
        self,
        *,
        user_id: str,
        kinds: Sequence[str],
        query: str | None,
        since: float | None,
        until: float | None,
        limit: int,
    ) -> list[dict[str, Any]]:
        """``user_id``'s records of ``kinds`` in the time range, best text match or newest first."""
        where = [f"r.user_id = ? AND r.kind IN ({','.join('?' * len(kinds))})"]
        params: list[Any] = [user_id, *kinds]
        if since is not None:
            where.append("r.created_at >= ?")
            params.append(since)
        if until is not None:
            where.append("r.created_at <= ?")
            params.append(until)
        with self.store.read() as conn:
            if query and self.store.dialect == "postgresql":
                rows = conn.execute(
                    f"""SELECT r.*, ts_rank({_PG_DOCUMENT}, q) AS rank
                        FROM records r, to_tsquery('english', ?) q
                        WHERE {_PG_DOCUMENT} @@ q AND {" AND ".join(where)}
                        ORDER BY rank DESC, r.created_at DESC LIMIT ?""",
                    (ts_query(query, ignore=_RECALL_WORDS), *params, limit),
                ).fetchall()
                return [_record(row, row["rank"]) for row in rows]
            if query:
                rows = conn.execute(
                    f"""SELECT r.*, bm25(records_fts) AS rank
                        FROM records_fts JOIN records r ON r.id = records_fts.rowid
                        WHERE records_fts MATCH ? AND {" AND ".join(where)}
                        ORDER BY rank, r.created_at DESC LIMIT ?""",
                    (fts_query(query, ignore=_RECALL_WORDS), *params, limit),
                ).fetchall()
                return [_record(row, -row["rank"]) for row in rows]
            rows = conn.execute(
                f"""SELECT r.* FROM records r WHERE {" AND ".join(where)}
                    ORDER BY r.created_at DESC, r.id DESC LIMIT ?""",
                (*params, limit),
            ).fetchall()
        return [_record(row) for row in rows]

    def count(self, *, user_id: str, kind: str) -> int:
        """How many records of ``kind`` ``user_id`` has."""
        with self.store.read() as conn:
            return int(
                conn.execute(
                    "SELECT count(*) FROM records WHERE user_id = ? AND kind = ?", (user_id, kind)
                ).fetchone()[0]
            )
