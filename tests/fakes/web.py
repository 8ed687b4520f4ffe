"""Web pages served on 127.0.0.1 for the browser tests."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def loopback_site(handler: Callable[..., BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` (a handler class, or a partial of one) on a free 127.0.0.1 port
    while the block runs; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
