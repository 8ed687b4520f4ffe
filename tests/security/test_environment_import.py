"""troupe's environment against a model that wants it through the vault.

``secrets_set(from_env=...)`` used to store any variable of troupe's process,
and a command then printed it rot13'd, past every mask. Now a tool imports
only what the user's config lists in ``vault.import_env``, never a model
provider's key or a ``TROUPE_*`` variable, under every approval policy.
"""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from fakes.containment import a_person_says_yes
from fakes.planted import SECRET_TEXT
from fakes.tool_runs import call_tool, everything_shown
from troupe import Tool
from troupe.builtins import SecretStore
from troupe.errors import ConfigError
from troupe.runtime.approvals import ApprovalPolicy
from troupe.settings import load_settings

PROVIDER_KEY = "sk-" + SECRET_TEXT
TROUPE_VALUE = "troupe-" + SECRET_TEXT
UNLISTED_VALUE = "hostile-" + SECRET_TEXT
LISTED_VALUE = "listed-value-" + SECRET_TEXT[::-1]
ROT13 = "echo $A | tr A-Za-z N-ZA-Mn-za-m"


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", PROVIDER_KEY)
    monkeypatch.setenv("TROUPE_AUTH_TOKEN", TROUPE_VALUE)
    monkeypatch.setenv("HOSTILE_TEST_TOKEN", UNLISTED_VALUE)
    monkeypatch.setenv("DEPLOY_TOKEN", LISTED_VALUE)


def _configured_tools(tmp_path: Path, workspace: Path, data_dir: Path, yaml: str) -> list[Tool]:
    """The built-in tools as ``troupe chat`` builds them from a config file outside
    the workspace (the user's own)."""
    config = tmp_path / "troupe.yaml"
    config.write_text(yaml, encoding="utf-8")
    settings = load_settings(config_path=config, workspace=workspace, data_dir=data_dir)
    return list(settings.config.tools)


def _traces(value: str) -> list[str]:
    return [value, codecs.encode(value, "rot13"), value[::-1]]


@pytest.mark.usefixtures("planted")
@pytest.mark.parametrize("variable", ["OPENAI_API_KEY", "TROUPE_AUTH_TOKEN", "HOSTILE_TEST_TOKEN"])
async def test_a_model_cannot_store_troupe_s_environment_and_print_it_rot13(
    tmp_path: Path, workspace: Path, data_dir: Path, policy: ApprovalPolicy, variable: str
) -> None:
    tools = _configured_tools(
        tmp_path, workspace, data_dir, "vault:\n  import_env: [DEPLOY_TOKEN]\n"
    )

    stored = await call_tool(
        tools,
        "secrets_set",
        {"name": "STOLEN", "from_env": variable},
        policy=policy,
        ask=a_person_says_yes,
    )
    printed = await call_tool(
        tools,
        "exec_shell",
        {"command": ROT13, "env": {"A": "{{secret:STOLEN}}"}},
        policy=policy,
        ask=a_person_says_yes,
    )

    assert "error" in stored.response
    if policy == "auto":
        assert (
            "vault.import_env" in stored.response["error"]
            or "no tool may read it" in (stored.response["error"])
        )
    assert not SecretStore(data_dir).exists("STOLEN")
    shown = everything_shown(stored) + everything_shown(printed)
    for value in (PROVIDER_KEY, TROUPE_VALUE, UNLISTED_VALUE):
        for trace in _traces(value):
            assert trace not in shown
    assert SECRET_TEXT not in shown
    assert codecs.encode(SECRET_TEXT, "rot13") not in shown


@pytest.mark.usefixtures("planted")
async def test_a_variable_listed_in_vault_import_env_can_be_imported(
    tmp_path: Path, workspace: Path, data_dir: Path
) -> None:
    tools = _configured_tools(
        tmp_path, workspace, data_dir, "vault:\n  import_env: [DEPLOY_TOKEN]\n"
    )

    run = await call_tool(
        tools, "secrets_set", {"name": "DEPLOY", "from_env": "DEPLOY_TOKEN"}, policy="auto"
    )

    assert run.response["stored"] is True
    assert SecretStore(data_dir).get("DEPLOY") == LISTED_VALUE
    assert LISTED_VALUE not in everything_shown(run)


@pytest.mark.usefixtures("planted")
async def test_an_unlisted_variable_is_a_tool_error_naming_the_setting(
    tmp_path: Path, workspace: Path, data_dir: Path
) -> None:
    tools = _configured_tools(tmp_path, workspace, data_dir, "model: offline\n")

    run = await call_tool(
        tools, "secrets_set", {"name": "X", "from_env": "HOSTILE_TEST_TOKEN"}, policy="auto"
    )

    assert (
        "'HOSTILE_TEST_TOKEN' is not listed in the config's vault.import_env"
        in (run.response["error"])
    )


@pytest.mark.parametrize("entry", ["OPENAI_API_KEY", "GEMINI_API_KEY", "TROUPE_SECRET_KEY"])
def test_a_provider_key_or_troupe_variable_in_import_env_is_a_config_error(
    tmp_path: Path, workspace: Path, data_dir: Path, entry: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        _configured_tools(tmp_path, workspace, data_dir, f"vault:\n  import_env: [{entry}]\n")

    assert f"vault.import_env entry {entry!r}" in str(raised.value)


def test_the_variable_holding_the_model_s_key_is_never_importable(
    tmp_path: Path, workspace: Path, data_dir: Path
) -> None:
    yaml = "api_key_env: MY_MODEL_KEY\nvault:\n  import_env: [MY_MODEL_KEY]\n"

    with pytest.raises(ConfigError, match=r"vault\.import_env entry 'MY_MODEL_KEY'"):
        _configured_tools(tmp_path, workspace, data_dir, yaml)


def test_a_workspace_config_file_cannot_list_variables_to_import(
    workspace: Path, data_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    inside = workspace / "troupe.yaml"
    inside.write_text("vault:\n  import_env: [HOSTILE_TEST_TOKEN]\n", encoding="utf-8")

    settings = load_settings(config_path=inside, workspace=workspace, data_dir=data_dir)

    assert settings.vault.import_env == []
    assert "vault" in caplog.text
