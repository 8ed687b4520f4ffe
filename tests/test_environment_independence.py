"""A Config builds the same tree in any environment; only Settings reads it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import BaseAgent, LlmAgent

import troupe
from troupe.settings import Settings, load_settings

SOURCE = Path(troupe.__file__).parent
PROVIDER_VARIABLES = (
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GROQ_API_KEY",
    "OPENAI_API_BASE",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
)


def troupe_variables() -> set[str]:
    """Every TROUPE_* name troupe's code spells out, and TROUPE_<FIELD> of every setting."""
    spelled = {
        name
        for path in SOURCE.rglob("*.py")
        for name in re.findall(r"\bTROUPE_[A-Z][A-Z0-9_]*", path.read_text(encoding="utf-8"))
    }
    return spelled | {f"TROUPE_{field.upper()}" for field in Settings.model_fields}


def a_tool(name: str) -> troupe.Tool:
    def run(request: str = "") -> dict[str, str]:
        return {"tool": name, "request": request}

    run.__name__ = name
    return troupe.Tool(name=name, description=f"Performs {name.replace('_', ' ')}.", func=run)


def shape(agent: BaseAgent) -> dict[str, Any]:
    """What a tree is: its agents, their instructions, models and declared tools."""
    tools = []
    for tool in getattr(agent, "tools", None) or []:
        declaration = tool._get_declaration()  # what the model is shown
        tools.append(declaration.model_dump(exclude_none=True) if declaration else tool.name)
    return {
        "name": agent.name,
        "description": agent.description,
        "instruction": str(getattr(agent, "instruction", "")),
        "model": troupe.models.resolve.model_label(agent.model)
        if isinstance(agent, LlmAgent)
        else None,
        "tools": tools,
        "plugins": sorted(type(p).__name__ for p in getattr(agent, "troupe_plugins", []) or []),
        "sub_agents": [shape(sub) for sub in agent.sub_agents],
    }


def tree_shape(workspace: Path, data_dir: Path) -> dict[str, Any]:
    tools = [
        *troupe.builtin_tools(workspace=workspace, data_dir=data_dir),
        a_tool("search_web"),
        a_tool("deploy_service"),
    ]
    return shape(troupe.build_agent_tree(troupe.Config(tools=tools)))


def hostile(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in sorted(troupe_variables()):
        monkeypatch.setenv(name, f"nonsense-{name.lower()}")
    for name in PROVIDER_VARIABLES:
        monkeypatch.setenv(name, f"nonsense-{name.lower()}")


def empty(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*troupe_variables(), *PROVIDER_VARIABLES):
        monkeypatch.delenv(name, raising=False)


def test_the_code_knows_the_variables_the_hostile_environment_sets() -> None:
    known = troupe_variables()

    assert {"TROUPE_MODEL", "TROUPE_ROUTER", "TROUPE_DATA_DIR", "TROUPE_CHROMIUM"} <= known
    assert {"TROUPE_SECRET_KEY", "TROUPE_CONFIG", "TROUPE_TRUST_WORKSPACE_CONFIG"} <= known


def test_a_config_builds_the_same_tree_in_a_hostile_environment_as_in_an_empty_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace, data_dir = tmp_path / "workspace", tmp_path / "data"
    workspace.mkdir()

    with monkeypatch.context() as patch:
        empty(patch)
        calm = tree_shape(workspace, data_dir)
    with monkeypatch.context() as patch:
        hostile(patch)
        stormy = tree_shape(workspace, data_dir)

    assert stormy == calm
    assert calm["model"].startswith("offline")
    assert any(sub["name"] == "navigator" for sub in calm["sub_agents"]) == (
        troupe.builtins.browser_unavailable_reason() is None
    )


def test_only_the_settings_read_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as patch:
        empty(patch)
        calm = load_settings()
    with monkeypatch.context() as patch:
        hostile(patch)
        with pytest.raises(troupe.ConfigError, match="nonsense"):
            load_settings()
    with monkeypatch.context() as patch:
        empty(patch)
        patch.setenv("GOOGLE_API_KEY", "nonsense")
        patch.setenv("TROUPE_CHROMIUM", "/nowhere/chromium")
        keyed = load_settings()

    assert calm.config.model == "offline"
    assert keyed.config.model == "gemini-2.5-flash"
    assert keyed.chromium == "/nowhere/chromium" and calm.chromium is None
    assert troupe.Config().model is None  # and a Config resolves None to offline, always


def test_settings_hold_the_environment_they_read_and_not_what_came_later(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DEPLOY_TOKEN", "before")
    settings = load_settings()
    monkeypatch.setenv("DEPLOY_TOKEN", "after")

    assert settings.environ["DEPLOY_TOKEN"] == "before"
    assert Settings().environ == {}
