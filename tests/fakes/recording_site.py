"""A page server on 127.0.0.1 that records every path it was asked for."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from http.server import BaseHTTPRequestHandler
from typing import Any

from fakes.planted import SECRET_TEXT
from fakes.web import loopback_site


@dataclass
class Site:
    """What a recording site serves and who reached it."""

    url: str = ""
    port: int = 0
    hits: list[str] = field(default_factory=list)
    """The paths requested, in order."""
    pages: dict[str, tuple[int, dict[str, str], str]] = field(default_factory=dict)
    """Path -> (status, headers, body); any other path serves :data:`SECRET_TEXT`."""


class _Recorder(BaseHTTPRequestHandler):
    def __init__(self, *args: Any, site: Site, **kwargs: Any) -> None:
        self.site = site
        super().__init__(*args, **kwargs)

    def do_GET(self) -> None:
        self.site.hits.append(self.path)
        status, headers, body = self.site.pages.get(
            self.path, (200, {}, f"<html><body>{SECRET_TEXT}</body></html>")
        )
        data = body.encode()
        self.send_response(status)
        for name, value in {"Content-Type": "text/html", **headers}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return


@contextmanager
def recording_site() -> Iterator[Site]:
    """A :class:`Site` served on a free port of 127.0.0.1 while the block runs."""
    site = Site()
    with loopback_site(partial(_Recorder, site=site)) as url:
        site.url = url
        site.port = int(url.rsplit(":", 1)[1])
        yield site


def page_reaching(other: Site, text: str) -> tuple[int, dict[str, str], str]:
    """A page showing ``text`` that loads an image, a frame and a ``fetch`` from ``other``."""
    return (
        200,
        {},
        f'<html><body>{text}<img src="{other.url}/img">'
        f'<iframe src="{other.url}/frame"></iframe>'
        f'<script>fetch("{other.url}/fetch").catch(() => 0)</script></body></html>',
    )
