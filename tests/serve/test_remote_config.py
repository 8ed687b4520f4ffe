"""``remote_agents`` in the config file become routed RemoteA2aAgent sub-agents."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest
from google.adk.a2a.agent import RemoteA2aAgent as _RemoteA2aAgent
from google.adk.agents import BaseAgent

from troupe import ConfigError, build_agent_tree
from troupe.settings import load_settings

# ADK exports RemoteA2aAgent through a module __getattr__ annotated as returning
# object, so type checkers lose the class; it is a BaseAgent subclass.
RemoteA2aAgent = cast("type[BaseAgent]", _RemoteA2aAgent)

CARD = "http://127.0.0.1:8001/a2a/.well-known/agent-card.json"


def _config(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "troupe.yaml"
    path.write_text(body, encoding="utf-8")
    return path


def test_a_remote_agent_joins_the_tree_with_its_description_and_keywords(
    tmp_path: Path, workspace: Path
) -> None:
    config = _config(
        tmp_path,
        "remote_agents:\n"
        "  - name: build_box\n"
        f"    agent_card: {CARD}\n"
        "    description: Runs the release build on the build machine.\n"
        "    keywords: [release build, build machine]\n",
    )
    root = build_agent_tree(load_settings(config_path=config, workspace=workspace).config)
    remote = root.sub_agents[-1]
    assert isinstance(remote, RemoteA2aAgent)
    assert remote.name == "build_box"
    instruction = str(root.instruction)
    block = instruction[instruction.index("### build_box") :]
    assert "Runs the release build on the build machine." in block
    assert "- Keywords: release build, build machine" in block


def test_a_remote_agent_without_a_description_gets_one_naming_it(tmp_path: Path) -> None:
    config = _config(tmp_path, f"remote_agents:\n  - name: box\n    agent_card: {CARD}\n")
    root = build_agent_tree(load_settings(config_path=config).config)
    assert "box" in root.sub_agents[-1].description


@pytest.mark.parametrize(
    ("entry", "field", "hint"),
    [
        (f"name: 'bad name'\n    agent_card: {CARD}", "remote_agents.0.name", "underscores"),
        ("name: box\n    agent_card: ftp://host/card.json", "remote_agents.0.agent_card", "http"),
        (f"name: box\n    agent_card: {CARD}\n    colour: red", "remote_agents.0.colour", ""),
    ],
)
def test_a_bad_remote_agent_entry_names_the_file_and_the_field(
    tmp_path: Path, entry: str, field: str, hint: str
) -> None:
    config = _config(tmp_path, f"remote_agents:\n  - {entry}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(config_path=config)
    message = str(caught.value)
    assert str(config) in message and field in message and hint in message


def test_two_remote_agents_with_one_name_are_refused(tmp_path: Path) -> None:
    entry = f"  - name: box\n    agent_card: {CARD}\n"
    config = _config(tmp_path, "remote_agents:\n" + entry + entry)
    with pytest.raises(ConfigError, match="'box' twice"):
        load_settings(config_path=config)


def test_a_token_variable_that_is_not_set_is_reported_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BOX_TOKEN", raising=False)
    config = _config(
        tmp_path,
        f"remote_agents:\n  - name: box\n    agent_card: {CARD}\n    auth_token_env: BOX_TOKEN\n",
    )
    with pytest.raises(ConfigError, match="'BOX_TOKEN' is not set"):
        load_settings(config_path=config)
