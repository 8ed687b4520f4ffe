"""troupe's own files are owner-only, and a tool's internal failure reads as one clear error.

The data directory holds sessions, the vault, traces and logs: on a shared
machine no other user may read any of it, whatever the umask troupe was
started with. The test starts from nothing, drives the real CLI through a
few turns with a umask of 022, keeps each SQLite database open (so its
``-wal`` and ``-shm`` files exist) and walks everything created.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from fakes.containment import a_person_says_yes, asked_first
from fakes.tool_runs import call_tool
from troupe import Tool, builtin_tools


def _troupe(args: list[str], *, cwd: Path, env: dict[str, str], stdin: str = "") -> str:
    done = subprocess.run(
        [sys.executable, "-m", "troupe", *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        umask=0o022,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


@contextlib.contextmanager
def _databases_open(folder: Path) -> Iterator[None]:
    """Every database in ``folder`` opened for writing, so its -wal and -shm exist."""
    with contextlib.ExitStack() as stack:
        for file in sorted(folder.rglob("*.db")):
            conn = stack.enter_context(contextlib.closing(sqlite3.connect(file)))
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("CREATE TABLE IF NOT EXISTS probe (x)")
            conn.execute("INSERT INTO probe VALUES (1)")
            conn.commit()
        yield


def test_every_file_and_folder_troupe_creates_is_owner_only(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    data = tmp_path / "home" / "share" / "troupe"
    env = {
        **os.environ,
        "TROUPE_DATA_DIR": str(data),
        "XDG_DATA_HOME": str(tmp_path / "home" / "share"),
        "TROUPE_MODEL": "offline",
    }
    _troupe(["chat", "-s", "s1", "run `uname -a`"], cwd=workspace, env=env)
    _troupe(["chat", "-s", "s1", "remember that the review is on friday"], cwd=workspace, env=env)
    _troupe(["chat", "save knowledge: the build uses make"], cwd=workspace, env=env)
    _troupe(["secrets", "set", "TOKEN"], cwd=workspace, env=env, stdin="hunter2\n")
    _troupe(["trace", "list"], cwd=workspace, env=env)

    with _databases_open(data):
        created = [data, *data.rglob("*")]
        names = {p.name for p in created}
        assert {"troupe.log", "sessions.db", "sessions.db-wal", "vault.db"} <= names
        assert any(p.name.endswith(".turns") for p in created)
        open_to_others = [
            f"{p.relative_to(tmp_path)} {p.lstat().st_mode & 0o777:o}"
            for p in created
            if p.lstat().st_mode & 0o077
        ]
    assert open_to_others == []
    assert (tmp_path / "home").stat().st_mode & 0o077 == 0  # created by troupe, too


async def test_a_home_folder_python_cannot_expand_is_left_to_the_shell(
    workspace: Path, data_dir: Path
) -> None:
    tools = builtin_tools(workspace=workspace, data_dir=data_dir)

    refused = await call_tool(tools, "exec_shell", {"command": "cat ~nosuchuser"}, policy="deny")
    ran = await call_tool(
        tools, "exec_shell", {"command": "cat ~nosuchuser"}, policy="auto", ask=a_person_says_yes
    )

    assert asked_first(refused)
    assert refused.response.get("declined") is True
    assert "home directory" not in str(refused.response)
    assert ran.response["exit_code"] != 0
    assert "~nosuchuser" in ran.response["stderr"]


def _fails(path: str) -> dict[str, str]:
    """A tool of the user's with a bug."""
    raise RuntimeError("Could not determine home directory.")


def _checks_badly(path: str = "") -> bool:
    raise KeyError(path)


async def test_a_tool_that_raises_answers_one_clear_error_without_its_class(
    workspace: Path, data_dir: Path
) -> None:
    buggy = Tool.from_function(_fails, name="fs_buggy")

    run = await call_tool([buggy], "fs_buggy", {"path": "x"})

    error = run.response["error"]
    assert "Could not determine home directory" in error
    assert "RuntimeError" not in error
    assert "fs_buggy" not in error  # whoever shows the error names the tool, once
    answer = " ".join(str(part) for part in run.model.requests[-1].contents)
    assert "failed: fs_buggy failed" not in answer


async def test_an_approval_check_that_raises_asks_first(workspace: Path, data_dir: Path) -> None:
    checked = Tool.from_function(
        _fails, name="fs_checked", dangerous=_checks_badly, effect=lambda **_: {"summary": "x"}
    )

    run = await call_tool([checked], "fs_checked", {"path": "x"}, policy="deny")

    assert asked_first(run)
    assert run.response.get("declined") is True
