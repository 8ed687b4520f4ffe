"""``troupe serve``: ADK's API server (and A2A) over troupe's tree and session store."""

from __future__ import annotations

from .app import APP_NAME, ServeOptions, build_app

__all__ = ["APP_NAME", "ServeOptions", "build_app"]
