"""One SQLite file per store: WAL mode, one transaction per write, clear errors.

Every built-in store (knowledge, memory, vault) goes through :class:`Store`.
WAL mode plus a transaction around each write means a process killed in the
middle of a write leaves the file as it was before that write began; the busy
timeout lets two troupe processes share a file without failing at once.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

from ..environment import process_environ
from ..errors import TroupeError
from ..paths import default_data_dir
from ..sandbox.private import private_file
from .database import SQLITE_BUSY_TIMEOUT_S

DEFAULT_BUSY_TIMEOUT_S = SQLITE_BUSY_TIMEOUT_S
"""How long a write waits for another process's: the session store's wait
(six CLI chats started at once on a loaded machine had waited more than the
5 s this was before for the traces file, and one failed its turn)."""


class StoreError(TroupeError):
    """A store file that cannot be used: corrupt, locked or unreadable.

    The message names the file and says what to do about it.
    """


def resolve_data_dir(data_dir: str | Path | None = None) -> Path:
    """``data_dir`` if given, else troupe's default data directory (TROUPE_DATA_DIR, ...)."""
    if data_dir is not None:
        return Path(data_dir).expanduser()
    return default_data_dir(process_environ())


class Store:
    """A SQLite file with a schema, opened per operation.

    A connection per operation keeps the store safe to use from the worker
    threads ADK runs sync tools in; opening a local SQLite file is cheap.
    """

    dialect = "sqlite"

    def __init__(
        self,
        path: str | Path,
        *,
        schema: Sequence[str],
        busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
    ) -> None:
        self.path = Path(path).expanduser()
        self.schema = tuple(schema)
        self.busy_timeout_s = busy_timeout_s
        self._ready = False

    def _connect(self) -> sqlite3.Connection:
        try:
            if not self._ready:
                private_file(self.path)
        except OSError as exc:
            raise StoreError(
                f"cannot create the folder for store file {str(self.path)!r}: "
                f"{exc.strerror}; choose a writable data directory (--data-dir or "
                "TROUPE_DATA_DIR)"
            ) from None
        try:
            conn = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None)
        except sqlite3.Error as exc:
            raise self._explain(exc) from None
        try:
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            # FULL: a commit that returned survives a crash of the process and
            # of the machine; the stores are small, so the cost is negligible.
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            if not self._ready:
                with _transaction(conn):
                    for statement in self.schema:
                        conn.execute(statement)
                self._ready = True
        except sqlite3.Error as exc:
            conn.close()
            raise self._explain(exc) from None
        return conn

    @property
    def where(self) -> str:
        """The file, for messages."""
        return str(self.path)

    def exists(self) -> bool:
        """True once the file has been created."""
        return self.path.exists()

    def open(self) -> None:
        """Create the file and its schema now, so a bad location fails before any work."""
        with self.read():
            pass

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A connection for queries; errors become :class:`StoreError`."""
        conn = self._connect()
        try:
            yield conn
        except sqlite3.Error as exc:
            raise self._explain(exc) from None
        finally:
            conn.close()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A connection inside one transaction: all of the block is kept, or none."""
        conn = self._connect()
        try:
            with _transaction(conn):
                yield conn
        except sqlite3.Error as exc:
            raise self._explain(exc) from None
        finally:
            conn.close()

    def _explain(self, exc: sqlite3.Error) -> StoreError:
        where = str(self.path)
        text = str(exc)
        lowered = text.lower()
        if "locked" in lowered or "busy" in lowered:
            return StoreError(
                f"store file {where!r} is locked by another process (waited "
                f"{self.busy_timeout_s:g} s); close the other troupe process using it, "
                "or wait and try again"
            )
        if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
            return StoreError(
                f"store file {where!r} is corrupt or not a SQLite database ({text}); "
                f"move it aside (for example: mv {where} {where}.bad) so troupe starts "
                "a new one, or restore it from a backup"
            )
        if "readonly" in lowered or "unable to open" in lowered or "permission" in lowered:
            return StoreError(
                f"cannot open store file {where!r} for writing ({text}); check its "
                "permissions or choose another data directory (--data-dir or TROUPE_DATA_DIR)"
            )
        return StoreError(f"store file {where!r} failed: {text}")


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    # IMMEDIATE takes the write lock up front, so a second writer waits for the
    # busy timeout instead of failing halfway through its transaction.
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        with suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
