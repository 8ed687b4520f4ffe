"""``troupe serve`` bounds request bodies and keeps answering while one is sent.

A body over ``max_request_bytes`` (1 MiB by default) gets a JSON 413 naming
the limit: at once when its ``Content-Length`` says so, and as soon as the
count passes the limit when it streams without one. ``/healthz`` answers
while a slow 50 MB body is being sent on another connection.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx
import pytest
from troupe_servers import ServerFactory

pytestmark = pytest.mark.serve

LIMIT = 1024 * 1024
HUGE = 50 * 1024 * 1024
CHUNK = 64 * 1024


def _slow_body(total: int, pause: float) -> Iterator[bytes]:
    sent = 0
    while sent < total:
        yield b"x" * CHUNK
        sent += CHUNK
        time.sleep(pause)


def _post(url: str, **kwargs: object) -> httpx.Response | Exception:
    try:
        return httpx.post(url, timeout=60.0, **kwargs)  # type: ignore[arg-type]
    except httpx.HTTPError as exc:  # the server may close while the client still sends
        return exc


def test_a_body_declared_over_the_limit_gets_a_413_naming_the_limit(
    servers: ServerFactory,
) -> None:
    server = servers.start()

    answer = httpx.post(
        f"{server.url}/run",
        content=b'{"app_name": "troupe", "pad": "' + b"x" * (2 * LIMIT) + b'"}',
        headers={"content-type": "application/json"},
        timeout=60.0,
    )

    assert answer.status_code == 413
    assert answer.json()["max_request_bytes"] == LIMIT
    assert "max_request_bytes" in answer.json()["detail"]


def test_healthz_answers_while_a_slow_huge_body_streams_and_the_body_is_cut(
    servers: ServerFactory,
) -> None:
    server = servers.start()
    outcome: list[httpx.Response | Exception] = []
    upload = threading.Thread(
        target=lambda: outcome.append(
            _post(
                f"{server.url}/run",
                content=_slow_body(HUGE, pause=0.05),
                headers={"content-type": "application/json"},
            )
        )
    )
    upload.start()
    try:
        time.sleep(0.3)  # the upload is under way
        probes = [httpx.get(f"{server.url}/healthz", timeout=10.0) for _ in range(5)]
    finally:
        upload.join(timeout=120)

    assert [p.status_code for p in probes] == [200] * 5
    assert not upload.is_alive()
    (result,) = outcome
    # Cut after about 1 MiB of the 50 (some 16 chunks), not read to the end.
    assert isinstance(result, httpx.Response), result
    assert result.status_code == 413
    assert result.json()["max_request_bytes"] == LIMIT


def test_serve_max_request_bytes_sets_the_limit(servers: ServerFactory) -> None:
    server = servers.start("--max-request-bytes", "4096")

    answer = httpx.post(
        f"{server.url}/run",
        content=b'{"app_name": "troupe", "pad": "' + b"x" * 5000 + b'"}',
        headers={"content-type": "application/json"},
        timeout=60.0,
    )

    assert answer.status_code == 413
    assert answer.json()["max_request_bytes"] == 4096
