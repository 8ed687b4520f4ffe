"""Store URLs: redacted for messages, and the sync PostgreSQL URL of a session store."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def redact(url: str) -> str:
    """``url`` without its password, for messages and logs."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
    except ValueError:
        return "<unparseable URL>"
    netloc = f"{parts.username}:***@{host}" if parts.username else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def postgres_url(session_store: str | None) -> str | None:
    """The sync (psycopg) SQLAlchemy URL of a PostgreSQL session store, else None."""
    if not session_store or "://" not in session_store:
        return None
    scheme, rest = session_store.split("://", 1)
    if not scheme.lower().startswith("postgres"):
        return None
    return "postgresql+psycopg://" + rest
