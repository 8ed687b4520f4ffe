"""The stores follow --data-dir, then TROUPE_DATA_DIR, then the config file's data_dir."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from troupe.settings import load_settings


async def test_data_dir_option_places_the_stores(tmp_path: Path, run_with: Any) -> None:
    settings = load_settings(workspace=tmp_path, data_dir=tmp_path / "chosen")
    await run_with(settings.config.tools, "save_knowledge", {"text": "kept here"})
    assert settings.data_dir == tmp_path / "chosen"
    assert (tmp_path / "chosen" / "knowledge.db").exists()


async def test_a_config_files_data_dir_is_relative_to_the_file(
    tmp_path: Path, run_with: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TROUPE_DATA_DIR")  # the environment would win over the file
    config = tmp_path / "conf" / "troupe.yaml"
    config.parent.mkdir()
    config.write_text("data_dir: store-here\n")
    workspace = tmp_path / "ws"  # a config in the workspace could not set data_dir
    workspace.mkdir()
    settings = load_settings(config_path=config, workspace=workspace)
    await run_with(settings.config.tools, "memory_store", {"text": "kept here"})
    assert (tmp_path / "conf" / "store-here" / "memory.db").exists()


async def test_without_options_the_stores_use_troupe_data_dir(
    tmp_path: Path, run_with: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TROUPE_DATA_DIR", str(tmp_path / "from-env"))
    settings = load_settings(workspace=tmp_path)
    await run_with(settings.config.tools, "observe_event", {"event": "started"})
    assert (tmp_path / "from-env" / "memory.db").exists()
