"""fs_edit, skill_run and exec_shell's env through the runner, and their refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from troupe import Tool


async def test_fs_edit_replaces_text_that_occurs_once(run_tool: Any, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("colour: red\nsize: big\n")

    result = (
        await run_tool("fs_edit", {"path": "notes.txt", "old": "red", "new": "blue"})
    ).response

    assert result == {"path": "notes.txt", "replacements": 1}
    assert (workspace / "notes.txt").read_text() == "colour: blue\nsize: big\n"


async def test_fs_edit_refuses_ambiguous_text_unless_told_to_replace_all(
    run_tool: Any, workspace: Path
) -> None:
    (workspace / "list.txt").write_text("a\na\nb\n")

    refused = (await run_tool("fs_edit", {"path": "list.txt", "old": "a", "new": "z"})).response
    unchanged = (workspace / "list.txt").read_text()
    done = (
        await run_tool("fs_edit", {"path": "list.txt", "old": "a", "new": "z", "replace_all": True})
    ).response

    assert "occurs 2 times" in refused["error"] and "replace_all" in refused["accepted"]
    assert unchanged == "a\na\nb\n"
    assert done["replacements"] == 2
    assert (workspace / "list.txt").read_text() == "z\nz\nb\n"


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        ({"path": "notes.txt", "old": "absent", "new": "x"}, "does not occur"),
        ({"path": "notes.txt", "old": "", "new": "x"}, "old is empty"),
        ({"path": "missing.txt", "old": "a", "new": "x"}, "is not a file"),
        ({"path": "../outside.txt", "old": "a", "new": "x"}, "outside the workspace"),
    ],
)
async def test_fs_edit_refusals_say_what_is_wrong(
    run_tool: Any, workspace: Path, args: dict[str, Any], complaint: str
) -> None:
    (workspace / "notes.txt").write_text("hello\n")
    (workspace.parent / "outside.txt").write_text("a\n")

    result = (await run_tool("fs_edit", args)).response

    assert complaint in result["error"]
    assert (workspace.parent / "outside.txt").read_text() == "a\n"


async def test_file_tools_refuse_troupes_data_directory_inside_the_workspace(
    workspace: Path, run_with: Any
) -> None:
    from troupe import builtin_tools

    data = workspace / ".troupe-data"
    tools = builtin_tools(workspace=workspace, data_dir=data)
    await run_with(tools, "secrets_list")  # creates the vault's files
    assert (data / "vault.db").exists()

    read = (await run_with(tools, "fs_read", {"path": ".troupe-data/vault.db"})).response
    write = (
        await run_with(tools, "fs_write", {"path": ".troupe-data/secret.key", "content": "x"})
    ).response

    assert "troupe's data directory" in read["error"]
    assert "troupe's data directory" in write["error"]


async def test_skill_run_runs_a_script_skill_with_arguments(run_tool: Any, workspace: Path) -> None:
    (workspace / "poem.txt").write_text("one\ntwo\nthree\n")
    await run_tool("create_skill", {"name": "count-lines", "script": 'wc -l < "$1"'})

    result = (await run_tool("skill_run", {"name": "count-lines", "args": ["poem.txt"]})).response

    assert result["exit_code"] == 0
    assert result["stdout"].strip() == "3"
    assert result["skill"] == "count-lines" and result["args"] == ["poem.txt"]


async def test_skill_run_returns_an_instruction_skills_steps(run_tool: Any) -> None:
    await run_tool(
        "create_skill", {"name": "weekly-report", "instruction": "1. list changes 2. summarize"}
    )
    result = (await run_tool("skill_run", {"name": "weekly-report"})).response
    assert result["kind"] == "instruction"
    assert result["instruction"] == "1. list changes 2. summarize"


async def test_skill_run_of_an_unknown_skill_lists_the_known_ones(run_tool: Any) -> None:
    await run_tool("create_skill", {"name": "known", "instruction": "do it"})
    result = (await run_tool("skill_run", {"name": "unknown"})).response
    assert "no skill named 'unknown'" in result["error"]
    assert "known" in result["accepted"]


async def test_skill_run_refuses_a_deny_listed_script(run_tool: Any) -> None:
    await run_tool("create_skill", {"name": "wipe", "script": "rm -rf /"})
    result = (await run_tool("skill_run", {"name": "wipe"})).response
    assert "deny-listed" in result["error"]


async def test_skills_saved_by_one_process_run_in_the_next(
    run_with: Any, workspace: Path, data_dir: Path
) -> None:
    from troupe import builtin_tools

    first = builtin_tools(workspace=workspace, data_dir=data_dir)
    await run_with(first, "create_skill", {"name": "hello", "script": "echo hello from a skill"})

    later = builtin_tools(workspace=workspace, data_dir=data_dir)
    result = (await run_with(later, "skill_run", {"name": "hello"})).response

    assert result["stdout"] == "hello from a skill\n"


async def test_exec_shell_passes_env_to_the_command(run_tool: Any) -> None:
    result = (
        await run_tool("exec_shell", {"command": 'echo "$GREETING"', "env": {"GREETING": "hi"}})
    ).response
    assert result["stdout"] == "hi\n"


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        ({"command": "echo hi", "env": {"BAD-NAME": "x"}}, "not allowed"),
        ({"command": "echo hi", "env": {"TROUPE_SECRET_KEY": "x"}}, "reserved"),
        ({"command": "echo {{secret:TOKEN}}"}, "not substituted in the command"),
        ({"command": "echo $T", "env": {"T": "{{secret:MISSING}}"}}, "no secret named"),
    ],
)
async def test_exec_shell_env_refusals_say_what_is_wrong(
    run_tool: Any, args: dict[str, Any], complaint: str
) -> None:
    result = (await run_tool("exec_shell", args)).response
    assert complaint in result["error"]


async def test_exec_shell_children_do_not_inherit_the_vault_key(
    run_tool: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TROUPE_SECRET_KEY", "ab" * 32)
    result = (await run_tool("exec_shell", {"command": 'echo "[$TROUPE_SECRET_KEY]"'})).response
    assert result["stdout"] == "[]\n"


def test_the_dangerous_tools_are_exactly_the_ones_that_change_things_or_use_secrets(
    tools: list[Tool],
) -> None:
    ours = [t for t in tools if not t.name.startswith("browser_")]  # the navigator's own
    always = {t.name for t in ours if t.dangerous is True}
    sometimes = {t.name for t in ours if callable(t.dangerous)}
    assert always == {"fs_write", "fs_edit", "skill_run", "secrets_set", "secrets_delete"}
    assert sometimes == {"exec_shell", "crypto_encrypt", "crypto_decrypt"}
