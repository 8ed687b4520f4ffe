"""A folder served over HTTP on 127.0.0.1, for tests that fetch pages."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from typing import Any

from fakes.web import loopback_site


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output quiet


@contextmanager
def serve_folder(folder: Path) -> Iterator[str]:
    """Serve ``folder`` on a free port of 127.0.0.1; yields the base URL."""
    with loopback_site(partial(_QuietHandler, directory=str(folder))) as url:
        yield url
