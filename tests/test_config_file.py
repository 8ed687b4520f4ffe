"""Config files: the spec's agent.* keys and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import troupe
from fakes.cli import unwrapped
from fakes.trust import trust_every_config
from troupe.cli.app import app
from troupe.settings import load_settings


@pytest.fixture(autouse=True)
def trusted_config_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests' troupe.yaml lies in the workspace: they trust it (see fakes.trust)."""
    trust_every_config(monkeypatch)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "troupe.yaml"
    path.write_text(text)
    return path


def test_spec_keys_set_multi_agent_and_rounds(tmp_path: Path) -> None:
    path = _write(tmp_path, "agent:\n  multiAgent: false\n  maxDelegationRounds: 3\n")
    config = troupe.load_config(path, workspace=tmp_path)
    assert config.multi_agent is False
    assert config.max_delegation_rounds == 3


def test_snake_case_keys_work_too(tmp_path: Path) -> None:
    path = _write(tmp_path, "multi_agent: true\nmax_delegation_rounds: 2\nmodel: offline\n")
    config = troupe.load_config(path, workspace=tmp_path)
    assert config.multi_agent is True
    assert config.max_delegation_rounds == 2
    assert config.model == "offline"


def test_delegation_rounds_from_file_reach_the_instruction(tmp_path: Path) -> None:
    path = _write(tmp_path, "agent:\n  maxDelegationRounds: 7\n")
    root = troupe.build_agent_tree(troupe.load_config(path, workspace=tmp_path))
    assert "at most 7 delegation rounds" in str(root.instruction)


def test_unknown_key_names_the_file_and_the_field(tmp_path: Path) -> None:
    path = _write(tmp_path, "modle: offline\n")
    with pytest.raises(troupe.ConfigError) as info:
        troupe.load_config(path)
    assert str(path) in str(info.value)
    assert "modle" in str(info.value)


def test_non_mapping_file_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "- just\n- a list\n")
    with pytest.raises(troupe.ConfigError, match="must be a mapping"):
        troupe.load_config(path)


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(troupe.ConfigError, match="Cannot read config file"):
        troupe.load_config(tmp_path / "nope.yaml")


def test_resilience_and_guard_options_come_from_the_file(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "fallback_model: offline\nmodel_retries: 1\nturn_timeout_s: 12.5\n"
        "transfer_repair: false\nguards: false\n",
    )
    config = troupe.load_config(path, workspace=tmp_path)
    assert config.fallback_model == "offline"
    assert config.model_retries == 1
    assert config.turn_timeout_s == 12.5
    assert config.transfer_repair is False
    assert config.guards is False


def test_bad_timeout_is_refused_with_the_field_named(tmp_path: Path) -> None:
    path = _write(tmp_path, "turn_timeout_s: 0\n")
    with pytest.raises(troupe.ConfigError, match="turn_timeout_s"):
        troupe.load_config(path)


def test_a_missing_workspace_fails_troupe_chat_with_the_path_and_the_fix(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"

    result = CliRunner().invoke(app, ["chat", "--workspace", str(missing), "hello"])

    text = unwrapped(result.output)
    assert result.exit_code == 2
    assert "nowhere' does not exist" in text and "--workspace" in text
    assert "Traceback" not in text


def test_an_unusable_data_directory_fails_troupe_chat_before_the_turn_runs(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory", encoding="utf-8")

    result = CliRunner().invoke(app, ["chat", "--data-dir", str(blocker / "data"), "hello"])

    text = unwrapped(result.output)
    assert result.exit_code == 2
    assert "choose a writable data directory" in text
    assert "Hello" not in text  # the turn never ran
    assert "Traceback" not in text


def test_an_empty_message_fails_troupe_chat_with_a_clear_error() -> None:
    result = CliRunner().invoke(app, ["chat", "  "])

    assert result.exit_code == 2
    assert "The message is empty" in result.output
    assert "Traceback" not in result.output


def test_an_mcp_script_path_is_read_from_beside_the_config_file(tmp_path: Path) -> None:
    team = tmp_path / "team"
    (team / "servers").mkdir(parents=True)
    (team / "servers" / "orders.py").write_text("print('a server')\n")
    path = team / "troupe.yaml"
    path.write_text(
        "mcp_servers:\n"
        "- name: orders\n  command: python\n  args: [-u, servers/orders.py, --port, '8']\n"
        "  prefix: fs_\n"
        "- name: elsewhere\n  command: ./missing/run.sh\n  args: [not/here.py]\n  prefix: fs_\n"
    )
    work = tmp_path / "work"
    work.mkdir()

    settings = load_settings(config_path=path, workspace=work)

    orders, elsewhere = settings.mcp_servers
    # A file beside the config is found from any folder; anything else stays as written.
    assert orders.command == "python"
    assert orders.args == ["-u", str(team / "servers" / "orders.py"), "--port", "8"]
    assert (elsewhere.command, elsewhere.args) == ("./missing/run.sh", ["not/here.py"])
