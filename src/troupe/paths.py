"""Where troupe keeps its data when nothing else is configured."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

DATA_DIR_ENV = "TROUPE_DATA_DIR"
SESSIONS_FILE = "sessions.db"
"""The default session store's file in the data directory."""
ROUTER_CACHE_DIR = "router-cache"
"""The router's phrase-vector cache folder (in the cache or the data directory)."""


def default_data_dir(environ: Mapping[str, str]) -> Path:
    """TROUPE_DATA_DIR, else $XDG_DATA_HOME/troupe, else ~/.local/share/troupe,
    as ``environ`` (a snapshot of the environment) says."""
    if env := environ.get(DATA_DIR_ENV):
        return Path(env).expanduser()
    base = environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "troupe"


def default_cache_dir(environ: Mapping[str, str]) -> Path:
    """$XDG_CACHE_HOME/troupe, else ~/.cache/troupe: files troupe can always rebuild."""
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "troupe"


def default_session_store(data_dir: Path) -> str:
    """The SQLite URL of ``sessions.db`` in ``data_dir`` (an absolute path)."""
    # SQLAlchemy's convention, which ADK follows: three slashes and a relative
    # path, or four slashes for an absolute one.
    return f"sqlite:///{(data_dir.expanduser().resolve() / SESSIONS_FILE).as_posix()}"
