"""Settings: one model, layered CLI > environment > file > defaults, one data directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import troupe
from fakes.trust import trust_every_config
from troupe.cli.app import app
from troupe.settings import Settings, load_settings


@pytest.fixture(autouse=True)
def trusted_config_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests' troupe.yaml lies in the workspace: they trust it (see fakes.trust)."""
    trust_every_config(monkeypatch)


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "troupe.yaml"
    path.write_text(text)
    return path


def test_a_data_dir_set_only_in_the_file_is_used_by_secrets_chat_and_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TROUPE_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "default-home"))
    monkeypatch.setenv("MY_VALUE", "abc123")
    monkeypatch.chdir(tmp_path)
    config = str(_file(tmp_path, "data_dir: chosen\nmodel: offline\n"))
    runner = CliRunner()

    stored = runner.invoke(app, ["secrets", "set", "API", "--from-env", "MY_VALUE", "-c", config])
    listed = runner.invoke(app, ["secrets", "list", "--config", config])
    chat = runner.invoke(app, ["chat", "list my secrets", "--config", config])
    traces = runner.invoke(app, ["trace", "list", "--json", "--config", config])

    assert stored.exit_code == 0, stored.output
    assert "API" in listed.output
    assert "{{secret:API}}" in chat.output  # chat reads the vault secrets set wrote
    assert "vault" in json.loads(traces.output)[0]["path"]  # the turn chat traced
    assert {p.name for p in (tmp_path / "chosen").iterdir()} >= {"vault.db", "traces.db"}
    assert not (tmp_path / "default-home").exists()


def test_the_command_line_beats_the_environment_which_beats_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _file(tmp_path, "max_model_calls: 7\nmodel_retries: 2\nguards: false\n")
    monkeypatch.setenv("TROUPE_MODEL_RETRIES", "1")
    monkeypatch.setenv("TROUPE_GUARDS", "true")

    settings = load_settings(config_path=path, guards=False)

    assert settings.max_model_calls == 7  # file over the default of 24
    assert settings.model_retries == 1  # environment over the file
    assert settings.guards is False  # option over the environment


def test_defaults_are_those_the_model_declares(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TROUPE_MODEL")

    settings = load_settings()

    for name in ("max_model_calls", "model_retries", "turn_timeout_s", "multi_agent"):
        assert getattr(settings, name) == Settings.model_fields[name].default
        assert getattr(settings.config, name) == Settings.model_fields[name].default


def test_a_value_that_would_hurt_is_refused_naming_the_field_and_its_source(
    tmp_path: Path,
) -> None:
    path = _file(tmp_path, "turn_timeout_s: 1e23\n")

    with pytest.raises(troupe.ConfigError) as caught:
        load_settings(config_path=path)

    message = str(caught.value)
    assert "'turn_timeout_s'" in message and "86400 or less" in message and str(path) in message


def test_a_bad_environment_variable_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TROUPE_MAX_MODEL_CALLS", "lots")

    with pytest.raises(troupe.ConfigError, match="TROUPE_MAX_MODEL_CALLS"):
        load_settings()


def test_a_library_config_refuses_the_same_bounds_as_the_file() -> None:
    with pytest.raises(troupe.ConfigError, match="max_model_calls must be 1000 or less"):
        troupe.Config(max_model_calls=10**6)


@pytest.mark.parametrize(
    "command",
    [
        ["secrets", "set", "X"],
        ["secrets", "list"],
        ["secrets", "delete", "X"],
        ["trace", "list"],
        ["trace", "show", "X"],
        ["chat"],
        ["tree"],
        ["routing"],
        ["sessions", "list"],
        ["serve"],
    ],
)
def test_every_command_that_reads_settings_takes_config(command: list[str]) -> None:
    result = CliRunner().invoke(app, [*command, "--help"])

    assert result.exit_code == 0
    assert "--config" in result.output
