"""Where conversations are kept: ADK's own session services, chosen by URL.

troupe writes no storage of its own. A ``session_store`` URL picks one of the
services ADK registers (``cli/service_registry.py``): ``sqlite:///`` for the
default file in the data directory, ``postgresql+asyncpg://`` for a server,
``memory://`` for nothing at all. A URL the registry does not know goes to
ADK's SQLAlchemy ``DatabaseSessionService``, as ``adk api_server`` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from google.adk.events.event import Event
from google.adk.sessions.base_session_service import BaseSessionService

from .errors import ConfigError
from .runtime.events import Step, steps

SESSION_STORE_ENV = "TROUPE_SESSION_STORE"
"""Environment variable that overrides the configured session store URL."""
SESSIONS_FILE = "sessions.db"
"""Name of the default SQLite file inside the data directory."""

_EXAMPLES = (
    "sqlite:////absolute/path/sessions.db, sqlite:///relative.db, "
    "postgresql+asyncpg://user:password@127.0.0.1:5432/troupe or memory://"
)


def default_session_store(data_dir: Path) -> str:
    """The SQLite URL of ``sessions.db`` in ``data_dir`` (an absolute path)."""
    # SQLAlchemy's convention, which ADK follows: three slashes and a relative
    # path, or four slashes for an absolute one.
    return f"sqlite:///{(data_dir.expanduser().resolve() / SESSIONS_FILE).as_posix()}"


def redact(url: str) -> str:
    """``url`` without its password, for messages and logs."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    netloc = f"{parts.username}:***@{host}" if parts.username else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def sqlite_file(url: str) -> Path | None:
    """The file a ``sqlite://`` URL points at, or None for other stores."""
    parts = urlsplit(url)
    if parts.scheme not in ("sqlite", "sqlite+aiosqlite") or not parts.path:
        return None
    return Path(parts.path[1:]) if parts.path.startswith("/") else Path(parts.path)


def open_session_store(url: str) -> BaseSessionService:
    """ADK's session service for ``url``.

    Raises:
        ConfigError: the URL is malformed, names a driver that is not
            installed, or a synchronous driver; the message names the URL
            and gives working examples.
    """
    if "://" not in url:
        raise ConfigError(f"session_store {url!r} is not a URL. Use one of: {_EXAMPLES}.")
    if file := sqlite_file(url):
        file.parent.mkdir(parents=True, exist_ok=True)
    from google.adk.cli.service_registry import get_service_registry

    try:
        service = get_service_registry().create_session_service(url)
        if service is None:
            from google.adk.sessions.database_session_service import DatabaseSessionService

            service = DatabaseSessionService(db_url=url)
    except ImportError as exc:
        raise ConfigError(
            f"session_store {redact(url)!r} needs a database driver that is not installed "
            f"({exc}). For PostgreSQL: pip install 'troupe[postgres]'."
        ) from None
    except (ValueError, RuntimeError) as exc:
        raise ConfigError(
            f"session_store {redact(url)!r} cannot be used: {exc} Use one of: {_EXAMPLES}."
        ) from None
    return service


async def probe_session_store(service: BaseSessionService, *, app_name: str) -> None:
    """Raise if the store cannot answer a query (used for readiness)."""
    await service.list_sessions(app_name=app_name, user_id="__troupe_readiness__")


async def close_session_store(service: BaseSessionService) -> None:
    """Release the store's connections, for services that hold any."""
    close = getattr(service, "close", None)
    if close is not None:
        result = close()
        if hasattr(result, "__await__"):
            await result


@dataclass(frozen=True)
class Line:
    """One line of a stored conversation: who said or did what."""

    author: str
    """``user`` or the agent's name."""
    kind: str
    """``message`` for the user's text, else a :class:`~troupe.runtime.events.Step` kind."""
    name: str | None
    """The transfer target or the tool, when there is one."""
    text: str
    """What was said, the call's arguments or the tool's result."""


def conversation(events: list[Event]) -> list[Line]:
    """The stored events of a session as lines: user messages, transfers, tools, answers."""
    lines: list[Line] = []
    for event in events:
        if event.author == "user":
            text = "".join(
                part.text
                for part in (event.content.parts if event.content else None) or []
                if part.text
            )
            if text:
                lines.append(Line("user", "message", None, text))
            continue
        for step in steps(event):
            lines.append(_line(step))
    return lines


def _line(step: Step) -> Line:
    return Line(step.author, step.kind, step.name, step.text)
