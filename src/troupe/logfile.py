"""troupe's log file: full details (tracebacks, MCP servers' stderr) kept out of the chat.

On the terminal, :class:`OneLineFormatter` prints the first line of a record
and no traceback.

The terminal shows one line per problem; the log file, ``troupe.log`` in the
data directory, keeps everything needed to debug it. The CLI attaches it once
it knows the data directory (:func:`attach_log_file`); MCP servers write their
stderr to it (:func:`log_stream`).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import IO, cast

from .sandbox.private import private_file
from .terminal_text import visible

LOG_NAME = "troupe.log"
"""The log file's name inside the data directory."""
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

_handler: logging.FileHandler | None = None


class KeepOutThirdParty(logging.Filter):
    """Drops ADK's records from the terminal: ADK logs each failure it passes
    on with its traceback, and troupe reports that failure itself, once."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.name.startswith(("google_adk", "google.adk"))


class VisibleFormatter(logging.Formatter):
    """Records with their control characters shown escaped: a message may quote a
    model, a server's stderr or a file name, and the log reaches a terminal."""

    def format(self, record: logging.LogRecord) -> str:
        return visible(super().format(record))


class OneLineFormatter(logging.Formatter):
    """A record's first line only: no traceback, no provider's multi-line dump."""

    def format(self, record: logging.LogRecord) -> str:
        lines = record.getMessage().strip().splitlines()
        return visible(lines[0]) if lines else ""


def attach_log_file(data_dir: Path) -> Path:
    """Send every log record (with tracebacks) to ``troupe.log`` in ``data_dir``.

    Replaces a log file attached before, so calling it again is safe.
    """
    global _handler
    path = data_dir.expanduser() / LOG_NAME
    if _handler is not None and Path(_handler.baseFilename) == path.resolve():
        return path
    detach_log_file()
    private_file(path)  # 0600 before the handler opens it for appending
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(VisibleFormatter(_FORMAT))
    logging.getLogger().addHandler(handler)
    _handler = handler
    return path


def detach_log_file() -> None:
    """Stop writing to the attached log file, if any."""
    global _handler
    if _handler is not None:
        logging.getLogger().removeHandler(_handler)
        _handler.close()
        _handler = None


def log_stream() -> IO[str]:
    """The open log file, for a child process's stderr.

    Without an attached one, ``troupe.log`` in the default data directory is
    attached first.
    """
    if _handler is None:
        from .environment import process_environ
        from .paths import default_data_dir

        attach_log_file(default_data_dir(process_environ()))
    assert _handler is not None
    _handler.flush()
    return cast("IO[str]", _handler.stream)
