"""What a command run by exec_shell inherits, and the ``shell`` section of troupe.yaml."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from troupe import ConfigError, builtin_tools, load_config
from troupe.sandbox import command_env
from troupe.settings import load_settings

PLAINTEXT = "sk-live-0123456789abcdef"


@pytest.mark.parametrize(
    "name",
    [
        "OPENAI_API_KEY",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "TROUPE_SECRET_KEY",
        "PYTHONPATH",
        "LD_PRELOAD",
        "TOKENIZERS_PARALLELISM",
    ],
)
def test_a_command_environment_starts_from_scratch(name: str) -> None:
    troupes_own = {name: PLAINTEXT, "LANG": "C.UTF-8"}

    assert name not in command_env(parent=troupes_own)


def test_a_command_environment_has_path_home_and_lang_of_its_own() -> None:
    env = command_env(parent={"HOME": "/root", "PATH": "/root/bin", "LANG": "en_GB.UTF-8"})

    assert set(env) == {"PATH", "HOME", "LANG"} and env["HOME"] == "/tmp"
    assert "/root" not in env["PATH"] and env["LANG"] == "en_GB.UTF-8"


def test_pass_env_lets_a_named_variable_through() -> None:
    env = command_env(pass_env={"GITHUB_TOKEN"}, parent={"GITHUB_TOKEN": PLAINTEXT})

    assert env["GITHUB_TOKEN"] == PLAINTEXT


async def test_exec_shell_cannot_print_the_model_key_troupe_runs_with(
    run_tool: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", PLAINTEXT)

    result = (await run_tool("exec_shell", {"command": "env"})).response

    assert result["exit_code"] == 0
    assert "PATH=" in result["stdout"]
    assert PLAINTEXT not in result["stdout"]
    assert "OPENAI_API_KEY" not in result["stdout"]


async def test_exec_shell_sees_a_credential_listed_in_pass_env(
    run_with: Any, workspace: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", PLAINTEXT)
    tools = builtin_tools(workspace=workspace, data_dir=data_dir, pass_env=["GITHUB_TOKEN"])

    # The output of troupe's own keys is masked, so the command reports a digest.
    command = 'printf %s "$GITHUB_TOKEN" | sha256sum'

    result = (await run_with(tools, "exec_shell", {"command": command})).response

    assert result["stdout"].split()[0] == hashlib.sha256(PLAINTEXT.encode()).hexdigest()


def _config(tmp_path: Path, shell: str) -> Path:
    path = tmp_path / "troupe.yaml"
    path.write_text(f"data_dir: data\nshell:\n{shell}", encoding="utf-8")
    return path


async def test_deny_commands_in_the_config_file_add_to_the_built_in_list(
    run_with: Any, tmp_path: Path, workspace: Path
) -> None:
    config = load_config(
        _config(tmp_path, "  deny_commands: ['^curl(\\s|$)']\n"), workspace=workspace
    )

    curl = (await run_with(config.tools, "exec_shell", {"command": "curl http://x"})).response
    mkfs = (await run_with(config.tools, "exec_shell", {"command": "mkfs.ext4 /dev/sdz"})).response

    assert "refused" in curl["error"] and "^curl" in curl["error"]
    assert "refused" in mkfs["error"]


async def test_shell_timeout_in_the_config_file_stops_a_slow_command(
    run_with: Any, tmp_path: Path, workspace: Path
) -> None:
    config = load_config(_config(tmp_path, "  timeout_s: 0.5\n"), workspace=workspace)

    result = (await run_with(config.tools, "exec_shell", {"command": "sleep 5"})).response

    assert "timed out after 0.5 s" in result["error"]


@pytest.mark.parametrize(
    ("shell", "field", "complaint"),
    [
        ("  deny_commands: ['(']\n", "shell.deny_commands", "'(' is not a regular expression RE2"),
        ("  pass_env: ['not a name']\n", "shell.pass_env", "'not a name' is not an environment"),
        ("  pass_env: [TROUPE_SECRET_KEY]\n", "shell.pass_env", "vault key"),
        ("  timeout_s: 0\n", "shell.timeout_s", "greater than 0"),
        ("  sandbox: true\n", "shell.sandbox", "Extra inputs"),
    ],
)
def test_a_bad_shell_section_names_the_file_and_the_field(
    tmp_path: Path, shell: str, field: str, complaint: str
) -> None:
    path = _config(tmp_path, shell)

    with pytest.raises(ConfigError) as caught:
        load_config(path)

    message = str(caught.value)
    assert str(path) in message and f"'{field}" in message and complaint in message


async def test_a_command_gets_pass_env_from_the_environment_the_settings_read(
    run_with: Any, tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "changed-after-the-settings-were-read")
    settings = load_settings(
        config_path=_config(tmp_path, "  pass_env: [GITHUB_TOKEN]\n"),
        workspace=workspace,
        environ={"GITHUB_TOKEN": PLAINTEXT, "OPENAI_API_KEY": "sk-not-passed-0123"},
    )
    command = 'printf %s "$GITHUB_TOKEN" | sha256sum; printf %s "${OPENAI_API_KEY:-none}"'

    result = (await run_with(settings.config.tools, "exec_shell", {"command": command})).response

    digest, unpassed = result["stdout"].split()[0], result["stdout"].split()[-1]
    assert digest == hashlib.sha256(PLAINTEXT.encode()).hexdigest()
    assert unpassed == "none"
