"""With the built-ins registered, every role gets its tools and none is left unmatched."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from troupe import builtin_tools, partition_tools
from troupe.cli.app import app

ROLE_TOOLS = {
    "operator": ["fs_read", "fs_list", "fs_write", "fs_edit", "exec_shell", "skill_run"],
    "vault": [
        "crypto_hash",
        "crypto_encrypt",
        "crypto_decrypt",
        "crypto_sign",
        "crypto_verify",
        "secrets_set",
        "secrets_list",
        "secrets_delete",
        "secrets_use",
    ],
    "librarian": [
        "save_knowledge",
        "search_knowledge",
        "rag_query",
        "graph_add_fact",
        "graph_traverse",
        "save_learning",
        "create_skill",
        "list_skills",
    ],
    "chronicler": ["memory_store", "memory_recall", "observe_event", "reflect_summary"],
}


def test_every_builtin_tool_is_owned_by_its_role(tmp_path: Path) -> None:
    split = partition_tools(builtin_tools(workspace=tmp_path, data_dir=tmp_path / "data"))
    assert split.unmatched == []
    for role, names in ROLE_TOOLS.items():
        assert [t.name for t in split.by_agent[role]] == names


async def test_building_the_tools_and_using_the_operator_creates_no_store_files(
    tmp_path: Path, run_with: Any
) -> None:
    tools = builtin_tools(workspace=tmp_path, data_dir=tmp_path / "data")
    (tmp_path / "a.txt").write_text("hi")
    await run_with(tools, "fs_read", {"path": "a.txt"})
    await run_with(tools, "exec_shell", {"command": "ls"})
    assert not (tmp_path / "data").exists()


def test_troupe_tree_shows_each_role_with_its_tools_and_nothing_unmatched(
    tmp_path: Path,
) -> None:
    result = CliRunner().invoke(app, ["tree", "--workspace", str(tmp_path)])

    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    heads = {
        m.group(1): i for i, line in enumerate(lines) if (m := re.match(r"^[├└]── (\w+)", line))
    }
    for role in ["operator", "vault", "librarian", "planner", "chronicler"]:
        assert role in heads, f"{role} is missing from:\n{result.output}"
    assert "no tools (reasoning only)" in lines[heads["planner"]]
    ordered = [*sorted(heads.values()), len(lines)]
    for role, names in ROLE_TOOLS.items():
        start = heads[role]
        end = ordered[ordered.index(start) + 1]
        shown = [m.group(1) for line in lines[start:end] if (m := re.search(r"── (\w+)$", line))]
        assert shown == names, f"{role} shows {shown}"
    assert "unmatched" not in result.output
