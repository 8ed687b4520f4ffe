"""A forward proxy on 127.0.0.1 that every connection of the browser goes through.

The egress policy judges a URL by resolving its host, and whoever connects
resolves it again: a DNS server that answers with a public address the
first time and ``127.0.0.1`` the second (DNS rebinding) would get the page
past the check. Through this proxy the name is resolved once, the address is
checked, and the connection goes to exactly that address
(:meth:`~troupe.sandbox.egress.EgressPolicy.connect_address`). Playwright's fetches of
routed requests use ``CONNECT host:port`` for http and https alike; a plain
``GET http://host/...`` is forwarded too, one request per connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from .egress import EgressPolicy, EgressRefused

logger = logging.getLogger("troupe.browser")

MAX_HEAD_BYTES = 64 * 1024
HEAD_TIMEOUT_S = 10.0
CONNECT_TIMEOUT_S = 15.0
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class Verdict:
    """Why a connection through the proxy did not happen."""

    refusal: str | None = None
    """The egress policy refused the address (the reason)."""
    network_error: str | None = None
    """The address could not be reached: a Playwright abort code (``connectionrefused`` ...)."""


_ERRNO_CODES = {
    errno.ECONNREFUSED: "connectionrefused",
    errno.ECONNRESET: "connectionreset",
    errno.EHOSTUNREACH: "addressunreachable",
    errno.ENETUNREACH: "internetdisconnected",
}


def _network_error(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timedout"
    code = getattr(exc, "errno", None)
    if code is None and exc.__cause__ is not None:
        code = getattr(exc.__cause__, "errno", None)
    return _ERRNO_CODES.get(code or 0, "failed")


class EgressProxy:
    """Resolves, checks and connects for the browser; ``policy`` is read per connection."""

    def __init__(self, policy: Callable[[], EgressPolicy]) -> None:
        self._policy = policy
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._verdicts: dict[tuple[str, int], Verdict] = {}

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` while running."""
        if self._server is None:
            raise RuntimeError("the egress proxy is not running")
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def start(self) -> str:
        """Listen on a free port of 127.0.0.1; returns :attr:`url`."""
        if self._server is None:
            self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        return self.url

    def take_verdict(self, host: str, port: int) -> Verdict | None:
        """What went wrong with the last connection to ``host:port``, if anything (once)."""
        return self._verdicts.pop((_plain(host), port), None)

    async def close(self) -> None:
        """Stop listening and cut every open connection."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        if server is not None:
            with contextlib.suppress(Exception):
                await server.wait_closed()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._serve(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT_S)
        if len(head) > MAX_HEAD_BYTES:
            return await _answer(writer, 431, "request head too large")
        line, _, rest = head.partition(b"\r\n")
        try:
            method, target, version = line.decode("latin-1").split(" ", 2)
        except ValueError:
            return await _answer(writer, 400, "not an HTTP request")
        tunnel = method.upper() == "CONNECT"
        host, port, forward = _target(tunnel, method, target, version, rest)
        if host is None:
            return await _answer(writer, 400, f"cannot proxy {target!r}")
        key = (_plain(host), port)
        self._verdicts.pop(key, None)
        try:
            address = await asyncio.to_thread(self._policy().connect_address, host, port)
        except EgressRefused as exc:
            self._verdicts[key] = Verdict(refusal=str(exc))
            logger.info("egress proxy refused %s:%s: %s", host, port, exc)
            return await _answer(writer, 403, str(exc))
        try:
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection(address, port), CONNECT_TIMEOUT_S
            )
        except (OSError, TimeoutError) as exc:
            self._verdicts[key] = Verdict(network_error=_network_error(exc))
            return await _answer(writer, 502, f"cannot connect to {host}:{port}: {exc}")
        try:
            if tunnel:
                writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                await writer.drain()
            else:
                up_writer.write(forward)
                await up_writer.drain()
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            up_writer.close()


def _plain(host: str) -> str:
    return host.strip("[]").rstrip(".").lower()


def _target(
    tunnel: bool, method: str, target: str, version: str, rest: bytes
) -> tuple[str | None, int, bytes]:
    """Host, port and (for a plain request) the head to send on, in origin form."""
    if tunnel:
        host, sep, port = target.rpartition(":")
        if not sep or not port.isdigit():
            return None, 0, b""
        return host, int(port), b""
    parts = urlsplit(target)
    if parts.scheme.lower() != "http" or not parts.hostname:
        return None, 0, b""
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    kept = [
        h
        for h in rest.split(b"\r\n")
        if h and not h.lower().startswith((b"proxy-", b"connection:", b"keep-alive:"))
    ]
    head = f"{method} {path} {version}\r\n".encode("latin-1")
    head += b"\r\n".join([*kept, b"Connection: close"]) + b"\r\n\r\n"
    return parts.hostname, parts.port or 80, head


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(_CHUNK):
            writer.write(chunk)
            await writer.drain()
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            if writer.can_write_eof():
                writer.write_eof()


async def _answer(writer: asyncio.StreamWriter, status: int, reason: str) -> None:
    body = reason.encode("utf-8", "replace")
    phrase = {400: "Bad Request", 403: "Forbidden", 431: "Too Large", 502: "Bad Gateway"}
    writer.write(
        f"HTTP/1.1 {status} {phrase.get(status, 'Error')}\r\nContent-Type: text/plain\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode("latin-1")
        + body
    )
    await writer.drain()
