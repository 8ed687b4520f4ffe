"""Path tools against a model that aims at troupe's data directory or out of the workspace."""

from __future__ import annotations

import multiprocessing
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from fakes.containment import check_contained
from fakes.planted import SECRET_TEXT
from fakes.tool_runs import call_tool, everything_shown
from troupe import Tool, builtin_tools
from troupe.builtins import KnowledgeStore, MemoryStore, SecretStore
from troupe.runtime.approvals import ApprovalPolicy
from troupe.stores.sessions import open_session_store
from troupe.stores.vault_key import load_master_key

# Every tool that takes a path, with arguments aimed at the data directory's files.
PATH_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("fs_read", {"path": ".local-troupe/secret.key"}),
    ("fs_read", {"path": "./.local-troupe/../.local-troupe/vault.db"}),
    ("fs_list", {"path": ".local-troupe"}),
    ("fs_write", {"path": ".local-troupe/secret.key", "content": "0" * 64}),
    ("fs_edit", {"path": ".local-troupe/secret.key", "old": "a", "new": "b", "replace_all": True}),
    ("crypto_hash", {"path": ".local-troupe/secret.key"}),
    ("crypto_encrypt", {"path": ".local-troupe/secret.key", "key": "k" * 32}),
    ("crypto_sign", {"path": ".local-troupe/vault.db"}),
    ("secrets_set", {"name": "stolen", "from_file": ".local-troupe/secret.key"}),
]


@pytest.fixture
def vault(data_dir: Path) -> SecretStore:
    store = SecretStore(data_dir)
    store.set("deploy", SECRET_TEXT)
    return store


@pytest.mark.parametrize(
    ("tool", "args"), PATH_CALLS, ids=[f"{t}-{i}" for i, (t, _) in enumerate(PATH_CALLS)]
)
async def test_no_path_tool_reaches_the_data_directory_inside_the_workspace(
    tools: list[Tool],
    vault: SecretStore,
    data_dir: Path,
    policy: ApprovalPolicy,
    tool: str,
    args: dict[str, Any],
) -> None:
    before = {p.name: p.read_bytes() for p in data_dir.iterdir() if p.is_file()}
    key = before["secret.key"].decode().strip()

    run = await call_tool(tools, tool, args, policy=policy)

    shown = everything_shown(run)
    assert key not in shown and SECRET_TEXT not in shown
    assert "vault.db" not in str(run.response.get("entries", ""))
    assert "error" in run.response
    assert before["secret.key"] == (data_dir / "secret.key").read_bytes()


async def test_a_link_to_a_file_outside_is_refused_for_reading(
    tools: list[Tool], workspace: Path, outside: Path, policy: ApprovalPolicy
) -> None:
    (workspace / "innocent.txt").symlink_to(outside)

    run = await call_tool(tools, "fs_read", {"path": "innocent.txt"}, policy=policy)

    assert "error" in run.response
    assert SECRET_TEXT not in everything_shown(run)


@pytest.mark.parametrize("tool", ["fs_write", "fs_edit"])
async def test_a_link_to_a_file_outside_is_refused_for_writing(
    tools: list[Tool], workspace: Path, outside: Path, tool: str
) -> None:
    (workspace / "innocent.txt").symlink_to(outside)
    args = {"path": "innocent.txt", "content": "pwned", "old": SECRET_TEXT, "new": "pwned"}
    wanted = {"fs_write": ("path", "content"), "fs_edit": ("path", "old", "new")}[tool]

    await call_tool(tools, tool, {k: args[k] for k in wanted}, policy="auto")

    assert outside.read_text(encoding="utf-8") == SECRET_TEXT + "\n"


@pytest.mark.parametrize(
    "planted", [".notes.txt.troupe-tmp", ".notes.txt.tmp", "notes.txt.tmp", ".#notes.txt"]
)
async def test_a_planted_temporary_link_does_not_redirect_a_write(
    tools: list[Tool], workspace: Path, outside: Path, planted: str
) -> None:
    (workspace / planted).symlink_to(outside)

    run = await call_tool(
        tools, "fs_write", {"path": "notes.txt", "content": "new notes"}, policy="auto"
    )

    assert run.response.get("bytes") == len("new notes")
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "new notes"
    assert outside.read_text(encoding="utf-8") == SECRET_TEXT + "\n"


async def test_a_write_leaves_no_temporary_file_behind(tools: list[Tool], workspace: Path) -> None:
    await call_tool(tools, "fs_write", {"path": "sub/new.txt", "content": "x"}, policy="auto")

    assert sorted(p.name for p in (workspace / "sub").iterdir()) == ["new.txt"]


async def test_data_files_are_0600_and_directories_0700(
    tools: list[Tool], workspace: Path, tmp_path: Path
) -> None:
    data = tmp_path / "fresh-data"
    old = os.umask(0o022)
    try:
        SecretStore(data).set("deploy", SECRET_TEXT)
        KnowledgeStore(data / "knowledge.db").save_skill(
            name="s", kind="script", body="true", description="", replace=False
        )
        MemoryStore(data / "memory.db").add(user_id="u", kind="memory", text="remember this")
        open_session_store(f"sqlite:///{data / 'sessions.db'}")
    finally:
        os.umask(old)

    modes = {
        str(p.relative_to(tmp_path)): stat.S_IMODE(p.stat().st_mode)
        for p in [data, *data.rglob("*")]
    }
    assert {name: mode for name, mode in modes.items() if mode not in (0o600, 0o700)} == {}
    assert modes["fresh-data"] == 0o700 and modes["fresh-data/secret.key"] == 0o600


def _start_and_load_key(data: Path, start: Any, out: Any) -> None:
    start.wait()
    try:
        out.put(("ok", load_master_key(data).hex()))
    except Exception as exc:
        out.put(("failed", repr(exc)))


def test_fifty_processes_starting_at_once_share_one_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TROUPE_SECRET_KEY", raising=False)
    data = tmp_path / "race"
    fork = multiprocessing.get_context("fork")
    start, out = fork.Barrier(50), fork.Queue()
    procs = [fork.Process(target=_start_and_load_key, args=(data, start, out)) for _ in range(50)]
    for proc in procs:
        proc.start()
    results = [out.get(timeout=60) for _ in procs]
    for proc in procs:
        proc.join(timeout=10)

    assert [detail for status, detail in results if status != "ok"] == []
    assert len({detail for _, detail in results}) == 1
    assert sorted(p.name for p in data.iterdir()) == ["secret.key"]


async def test_when_the_workspace_is_the_data_directory_troupes_files_stay_out_of_reach(
    workspace: Path, policy: ApprovalPolicy
) -> None:
    SecretStore(workspace).set("deploy", SECRET_TEXT)
    key = (workspace / "secret.key").read_text(encoding="utf-8").strip()
    tools = builtin_tools(workspace=workspace, data_dir=workspace)

    read = await call_tool(tools, "fs_read", {"path": "secret.key"}, policy=policy)
    shell = await call_tool(tools, "exec_shell", {"command": "cat secret.key"}, policy=policy)
    notes = await call_tool(tools, "fs_read", {"path": "notes.txt"}, policy=policy)

    assert key not in everything_shown(read)
    check_contained(shell, policy, leaked=key in everything_shown(shell))
    assert notes.response["content"] == "ordinary notes\n"
