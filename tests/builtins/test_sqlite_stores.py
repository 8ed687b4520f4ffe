"""The SQLite layer under every built-in store: WAL, transactions, clear failures."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from troupe.stores.sqlite import Store, StoreError

SCHEMA = ["CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY, value TEXT NOT NULL)"]


def _values(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [row[0] for row in conn.execute("SELECT value FROM items ORDER BY id")]


def test_a_store_file_is_in_wal_mode(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db", schema=SCHEMA)
    with store.write() as conn:
        conn.execute("INSERT INTO items(value) VALUES ('a')")
    with sqlite3.connect(tmp_path / "s.db") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_write_that_fails_halfway_keeps_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db", schema=SCHEMA)
    with store.write() as conn:
        conn.execute("INSERT INTO items(value) VALUES ('kept')")
    with pytest.raises(RuntimeError), store.write() as conn:
        conn.execute("INSERT INTO items(value) VALUES ('half')")
        raise RuntimeError("crash in the middle")
    assert _values(tmp_path / "s.db") == ["kept"]


def test_a_locked_store_names_the_file_and_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with Store(path, schema=SCHEMA).read():  # creates the file and its table
        pass
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with (
            pytest.raises(StoreError) as caught,
            Store(path, schema=SCHEMA, busy_timeout_s=0.1).write() as conn,
        ):
            conn.execute("INSERT INTO items(value) VALUES ('x')")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert str(path) in str(caught.value)
    assert "locked by another process" in str(caught.value)


def test_a_file_that_is_not_sqlite_names_the_file_and_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    path.write_bytes(os.urandom(4096))
    with pytest.raises(StoreError) as caught, Store(path, schema=SCHEMA).read():
        pass
    assert str(path) in str(caught.value) and "move it aside" in str(caught.value)


def test_an_unwritable_data_directory_is_named(tmp_path: Path) -> None:
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    with (
        pytest.raises(StoreError, match="choose a writable data directory"),
        Store(blocker / "s.db", schema=SCHEMA).read(),
    ):
        pass


_WRITER = textwrap.dedent(
    """
    import sys, time
    from troupe.stores.sqlite import Store
    store = Store(sys.argv[1], schema=[sys.argv[2]])
    with store.write() as conn:
        conn.execute("INSERT INTO items(value) VALUES ('committed')")
    with store.write() as conn:
        for i in range(500):
            conn.execute("INSERT INTO items(value) VALUES ('in flight')")
        print("writing", flush=True)
        time.sleep(60)
    """
)


def test_killing_a_process_mid_write_loses_nothing_committed(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    child = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path), SCHEMA[0]],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "writing"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=30)
        if child.stdout is not None:
            child.stdout.close()

    reopened = Store(path, schema=SCHEMA)
    with reopened.read() as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert _values(path) == ["committed"]
    with reopened.write() as conn:  # and the file takes new writes
        conn.execute("INSERT INTO items(value) VALUES ('after')")
    assert _values(path) == ["committed", "after"]


async def test_a_locked_memory_store_reaches_the_model_as_a_clear_error(
    run_with: Any, tmp_path: Path
) -> None:
    from troupe.builtins.chronicler import chronicler_tools
    from troupe.stores.memory import MemoryStore

    path = tmp_path / "memory.db"
    store = MemoryStore(path)
    store.count(user_id="u", kind="memory")  # create the file
    store.store.busy_timeout_s = 0.1
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        result = (await run_with(chronicler_tools(store), "memory_store", {"text": "x"})).response
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert str(path) in result["error"] and "locked" in result["error"]
