"""The built-in toolsets are classes whose tools are bound methods listed in ``specs``."""

from __future__ import annotations

import copy
from pathlib import Path

from troupe.builtins import KnowledgeStore, OperatorTools, Workspace


def test_a_toolsets_tools_follow_its_specs_in_order(tmp_path: Path) -> None:
    toolset = OperatorTools(Workspace(tmp_path), skills=KnowledgeStore(tmp_path / "k.db"))

    names = [tool.name for tool in toolset.tools()]

    assert names == [spec.method for spec in OperatorTools.specs]


def test_a_tool_whose_store_is_missing_is_left_out(tmp_path: Path) -> None:
    names = [tool.name for tool in OperatorTools(Workspace(tmp_path)).tools()]

    assert "skill_run" not in names and "exec_shell" in names


def test_a_deep_copy_of_a_tool_shares_the_toolsets_state(tmp_path: Path) -> None:
    toolset = OperatorTools(Workspace(tmp_path))
    fs_read = toolset.tools()[0].func

    copied = copy.deepcopy({"fs_read": fs_read})["fs_read"]

    assert getattr(copied, "__self__", None) is toolset
