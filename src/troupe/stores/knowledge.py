"""The librarian's store: knowledge and learnings (FTS5 + embeddings), facts and skills.

One SQLite file, ``knowledge.db`` in the data directory, or the
``troupe_knowledge`` schema of the PostgreSQL database the sessions use (see
:mod:`troupe.stores.postgres`): full-text search is PostgreSQL's own
(``to_tsvector``/``ts_rank``), and semantic search ranks the stored
embeddings in troupe exactly as with SQLite. The operator reads the skills
table too, to run a saved skill.
"""

from __future__ import annotations

import re
import time
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import BadArgument
from .embeddings import Embedder, dot, normalize
from .postgres import NOCASE, Postgres, open_store, postgres_schema
from .timestamps import iso

FILENAME = "knowledge.db"
SKILL_KINDS = ("instruction", "script")
_EMBED_BATCH = 64
_WORD = re.compile(r"\w+", re.UNICODE)
# Words too common to help a full-text search; dropped unless nothing else is left.
_STOPWORDS = frozenset(
    (  # noqa: SIM905 (one string reads better than 45 quoted words)
        "a an and are as at be by do does for from how i in is it me my of on or "
        "please that the this to was what when where which who why with you your "
        "search find look up about knowledge tell show"
    ).split()
)

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS entries (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        text TEXT NOT NULL,
        tags TEXT NOT NULL DEFAULT '',
        source TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL
    )""",
    """CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts USING fts5(
        text, tags, source, content='entries', content_rowid='id',
        tokenize='porter unicode61'
    )""",
    """CREATE TRIGGER IF NOT EXISTS entries_ai AFTER INSERT ON entries BEGIN
        INSERT INTO entries_fts(rowid, text, tags, source)
        VALUES (new.id, new.text, new.tags, new.source);
    END""",
    """CREATE TRIGGER IF NOT EXISTS entries_ad AFTER DELETE ON entries BEGIN
        INSERT INTO entries_fts(entries_fts, rowid, text, tags, source)
        VALUES ('delete', old.id, old.text, old.tags, old.source);
    END""",
    """CREATE TABLE IF NOT EXISTS embeddings (
        entry_id INTEGER NOT NULL REFERENCES entries(id) ON DELETE CASCADE,
        model TEXT NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (entry_id, model)
    )""",
    """CREATE TABLE IF NOT EXISTS facts (
        id INTEGER PRIMARY KEY,
        subject TEXT NOT NULL COLLATE NOCASE,
        predicate TEXT NOT NULL COLLATE NOCASE,
        object TEXT NOT NULL COLLATE NOCASE,
        created_at REAL NOT NULL,
        UNIQUE (subject, predicate, object)
    )""",
    "CREATE INDEX IF NOT EXISTS facts_subject ON facts(subject)",
    "CREATE INDEX IF NOT EXISTS facts_object ON facts(object)",
    """CREATE TABLE IF NOT EXISTS skills (
        name TEXT PRIMARY KEY COLLATE NOCASE,
        kind TEXT NOT NULL CHECK (kind IN ('instruction', 'script')),
        body TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    )""",
)

PG_SCHEMA_NAME = "troupe_knowledge"


def ts_vector(*columns: str) -> str:
    """PostgreSQL's English text-search document of ``columns``, weighted A, B, C, ..."""
    weights = "ABCD"
    return " || ".join(
        f"setweight(to_tsvector('english', {column}), '{weights[i]}')"
        for i, column in enumerate(columns)
    )


_PG_DOCUMENT = ts_vector("e.text", "e.tags", "e.source")
PG_SCHEMA = (
    NOCASE,
    *postgres_schema(SCHEMA),
    f"CREATE INDEX IF NOT EXISTS entries_search ON entries USING GIN "
    f"(({ts_vector('text', 'tags', 'source')}))",
)


def _query_words(text: str, ignore: frozenset[str]) -> list[str]:
    tokens = [t.lower() for t in _WORD.findall(text)]
    useful = [t for t in tokens if t not in _STOPWORDS and t not in ignore] or tokens
    unique = list(dict.fromkeys(useful))
    if not unique:
        raise BadArgument(
            f"the query {text!r} has no words to search for",
            "a query with at least one word, such as 'sqlite wal mode'",
        )
    return unique


def fts_query(text: str, *, ignore: frozenset[str] = frozenset()) -> str:
    """A safe FTS5 query for free text: its words, any of which may match.

    BM25 ranks entries matching more (and rarer) words first, so OR keeps
    recall without losing precision at the top.
    """
    return " OR ".join(f'"{t}"' for t in _query_words(text, ignore))


def ts_query(text: str, *, ignore: frozenset[str] = frozenset()) -> str:
    """The same words as :func:`fts_query`, as a PostgreSQL ``to_tsquery`` text.

    Each word is a quoted lexeme (words are ``\\w+``, so no quote can occur).
    """
    return " | ".join(f"'{t}'" for t in _query_words(text, ignore))


def _entry(row: Any, score: float | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": row["id"],
        "kind": row["kind"],
        "text": row["text"],
        "tags": [t for t in row["tags"].split(",") if t],
        "source": row["source"] or None,
        "saved_at": iso(row["created_at"]),
    }
    if score is not None:
        # Significant digits, not decimals: BM25 scores in a small store are tiny.
        out["score"] = float(f"{score:.4g}")
    return out


class KnowledgeStore:
    """Knowledge entries, learnings, facts and skills in one SQLite file or PostgreSQL schema."""

    def __init__(self, path: str | Path | Postgres) -> None:
        self.store: Any = open_store(path, PG_SCHEMA_NAME, SCHEMA, PG_SCHEMA)

    @property
    def path(self) -> Path:
        """The SQLite file (a SQLite store only)."""
        return Path(self.store.path)

    @property
    def search_method(self) -> str:
        """How :meth:`search` ranks, for the tools' results."""
        if self.store.dialect == "postgresql":
            return "full-text (PostgreSQL ts_rank)"
        return "full-text (BM25)"

    # -- entries ---------------------------------------------------------
    def add_entry(
        self, *, kind: str, text: str, tags: Sequence[str] = (), source: str | None = None
    ) -> dict[str, Any]:
        """Store a knowledge entry or a learning; returns it with its id."""
        now = time.time()
        with self.store.write() as conn:
            row = conn.execute(
                """INSERT INTO entries(kind, text, tags, source, created_at)
                   VALUES (?, ?, ?, ?, ?) RETURNING *""",
                (kind, text, ",".join(tags), source or "", now),
            ).fetchone()
        return _entry(row)

    def count(self) -> int:
        """How many entries the store holds."""
        with self.store.read() as conn:
            return int(conn.execute("SELECT count(*) FROM entries").fetchone()[0])

    def search(self, query: str, *, limit: int) -> list[dict[str, Any]]:
        """Full-text search ranked by BM25 (SQLite) or ts_rank (PostgreSQL); higher is better."""
        if self.store.dialect == "postgresql":
            with self.store.read() as conn:
                rows = conn.execute(
                    f"""SELECT e.*, ts_rank({_PG_DOCUMENT}, q) AS rank
                        FROM entries e, to_tsquery('english', ?) q
                        WHERE {_PG_DOCUMENT} @@ q ORDER BY rank DESC, e.id LIMIT ?""",
                    (ts_query(query), limit),
                ).fetchall()
            return [_entry(row, row["rank"]) for row in rows]
        match = fts_query(query)
        with self.store.read() as conn:
            rows = conn.execute(
                """SELECT e.*, bm25(entries_fts, 1.0, 0.5, 0.25) AS rank
                   FROM entries_fts JOIN entries e ON e.id = entries_fts.rowid
                   WHERE entries_fts MATCH ? ORDER BY rank LIMIT ?""",
                (match, limit),
            ).fetchall()
        # FTS5's bm25() is lower-is-better; flip it so callers read "higher is better".
        return [_entry(row, -row["rank"]) for row in rows]

    def semantic_search(
        self, question: str, *, limit: int, embedder: Embedder
    ) -> list[dict[str, Any]]:
        """Entries nearest to ``question`` by cosine similarity of embeddings."""
        self._embed_missing(embedder)
        query = normalize(embedder.embed([question])[0])
        scored: list[tuple[float, int]] = []
        with self.store.read() as conn:
            for row in conn.execute(
                "SELECT entry_id, vector FROM embeddings WHERE model = ?", (embedder.name,)
            ):
                vector = array("f")
                vector.frombytes(bytes(row["vector"]))
                scored.append((dot(query, vector), int(row["entry_id"])))
            scored.sort(reverse=True)
            top = scored[:limit]
            results = []
            for score, entry_id in top:
                row = conn.execute("SELECT * FROM entries WHERE id = ?", (entry_id,)).fetchone()
                if row is not None:
                    results.append(_entry(row, score))
        return results

    def _embed_missing(self, embedder: Embedder) -> None:
        # Entries are embedded on first semantic use, not when saved: saving
        # stays instant, and installing the extra later covers old entries.
        with self.store.read() as conn:
            missing = conn.execute(
                """SELECT e.id, e.text FROM entries e
                   LEFT JOIN embeddings v ON v.entry_id = e.id AND v.model = ?
                   WHERE v.entry_id IS NULL ORDER BY e.id""",
                (embedder.name,),
            ).fetchall()
        for start in range(0, len(missing), _EMBED_BATCH):
            batch = missing[start : start + _EMBED_BATCH]
            vectors = embedder.embed([row["text"] for row in batch])
            with self.store.write() as conn:
                conn.executemany(
                    """INSERT INTO embeddings(entry_id, model, vector) VALUES (?, ?, ?)
                       ON CONFLICT (entry_id, model) DO UPDATE SET vector = excluded.vector""",
                    [
                        (row["id"], embedder.name, array("f", normalize(vec)).tobytes())
                        for row, vec in zip(batch, vectors, strict=True)
                    ],
                )

    # -- facts -----------------------------------------------------------
    def add_fact(self, subject: str, predicate: str, obj: str) -> dict[str, Any]:
        """Store a subject-predicate-object fact; storing it twice keeps one copy."""
        with self.store.write() as conn:
            cur = conn.execute(
                """INSERT INTO facts(subject, predicate, object, created_at)
                   VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING""",
                (subject, predicate, obj, time.time()),
            )
            total = conn.execute(
                "SELECT count(*) FROM facts WHERE subject = ? OR object = ?", (subject, subject)
            ).fetchone()[0]
        return {
            "fact": {"subject": subject, "predicate": predicate, "object": obj},
            "stored": cur.rowcount == 1,
            "already_known": cur.rowcount == 0,
            "facts_about_subject": int(total),
        }

    def traverse(self, node: str, *, depth: int, max_facts: int) -> dict[str, Any]:
        """Facts reachable from ``node`` within ``depth`` hops, in either direction."""
        frontier = {node.lower(): node}
        reached = {node.lower(): node}
        seen: set[int] = set()
        facts: list[dict[str, Any]] = []
        truncated = False
        with self.store.read() as conn:
            for hop in range(1, depth + 1):
                if not frontier:
                    break
                keys = list(frontier.values())
                marks = ",".join("?" * len(keys))
                rows = conn.execute(
                    f"""SELECT id, subject, predicate, object FROM facts
                        WHERE subject IN ({marks}) OR object IN ({marks}) ORDER BY id""",
                    (*keys, *keys),
                ).fetchall()
                frontier = {}
                for row in rows:
                    if row["id"] in seen:
                        continue
                    if len(facts) >= max_facts:
                        truncated = True
                        break
                    seen.add(row["id"])
                    facts.append(
                        {
                            "subject": row["subject"],
                            "predicate": row["predicate"],
                            "object": row["object"],
                            "hops": hop,
                        }
                    )
                    for name in (row["subject"], row["object"]):
                        if name.lower() not in reached:
                            reached[name.lower()] = name
                            frontier[name.lower()] = name
                if truncated:
                    break
        return {
            "node": node,
            "depth": depth,
            "facts": facts,
            "nodes": list(reached.values()),
            "truncated": truncated,
        }

    def node_named_in(self, text: str) -> str | None:
        """The longest node name that occurs in ``text`` as whole words, or None."""
        lowered = f" {' '.join(_WORD.findall(text.lower()))} "
        best: str | None = None
        with self.store.read() as conn:
            rows = conn.execute(
                "SELECT subject AS name FROM facts UNION SELECT object FROM facts LIMIT 20000"
            ).fetchall()
        for row in rows:
            name = row["name"]
            words = " ".join(_WORD.findall(name.lower()))
            if words and f" {words} " in lowered and (best is None or len(name) > len(best)):
                best = name
        return best

    # -- skills ----------------------------------------------------------
    def save_skill(
        self, *, name: str, kind: str, body: str, description: str, replace: bool
    ) -> dict[str, Any]:
        """Create a skill, or replace one when ``replace`` is true."""
        now = time.time()
        with self.store.write() as conn:
            existing = conn.execute("SELECT name FROM skills WHERE name = ?", (name,)).fetchone()
            if existing is not None and not replace:
                raise BadArgument(
                    f"a skill named {existing['name']!r} already exists",
                    "a new name, or replace=true to overwrite the skill",
                )
            conn.execute(
                """INSERT INTO skills(name, kind, body, description, created_at, updated_at)
                   VALUES (?, ?, ?, ?, ?, ?)
                   ON CONFLICT(name) DO UPDATE SET kind = excluded.kind, body = excluded.body,
                   description = excluded.description, updated_at = excluded.updated_at""",
                (name, kind, body, description, now, now),
            )
        return {"name": name, "kind": kind, "description": description, "replaced": bool(existing)}

    def get_skill(self, name: str) -> dict[str, Any] | None:
        """The skill named ``name`` (any case), or None."""
        with self.store.read() as conn:
            row = conn.execute("SELECT * FROM skills WHERE name = ?", (name,)).fetchone()
        if row is None:
            return None
        return {
            "name": row["name"],
            "kind": row["kind"],
            "body": row["body"],
            "description": row["description"],
        }

    def list_skills(self) -> list[dict[str, Any]]:
        """Every skill's name, kind and description, by name."""
        with self.store.read() as conn:
            rows = conn.execute(
                "SELECT name, kind, description, updated_at FROM skills ORDER BY name"
            ).fetchall()
        return [
            {
                "name": r["name"],
                "kind": r["kind"],
                "description": r["description"],
                "updated_at": iso(r["updated_at"]),
            }
            for r in rows
        ]
