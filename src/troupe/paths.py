"""Where troupe keeps its data when nothing else is configured."""

from __future__ import annotations

import os
from pathlib import Path

DATA_DIR_ENV = "TROUPE_DATA_DIR"


def default_data_dir() -> Path:
    """TROUPE_DATA_DIR, else $XDG_DATA_HOME/troupe, else ~/.local/share/troupe."""
    if env := os.environ.get(DATA_DIR_ENV):
        return Path(env).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "troupe"
