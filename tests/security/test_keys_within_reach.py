"""troupe's keys, log and history placed inside the workspace, against a hostile model.

The attacks, through ``troupe chat --approve auto`` with a scripted model: a
``vault.key_file`` beside the project ("read vault.key", "run `cat
vault.key`"), and ``--data-dir .`` (the workspace itself), where troupe.log and
the REPL's history then lie. Each is masked like the data directory: the file
tools refuse it and a jailed command sees an empty file (where the jail is
missing, such a command is never approved without a person).
"""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from fakes.hostile_cli import hostile_chat
from troupe.testing import call

KEY = secrets.token_hex(32)


@pytest.fixture
def key_beside_the_project(workspace: Path, tmp_path: Path) -> Path:
    """A config outside the workspace (so trusted) that keeps the vault key in it."""
    key = workspace / "vault.key"
    key.write_text(KEY + "\n", encoding="utf-8")
    key.chmod(0o600)
    config = tmp_path / "config" / "troupe.yaml"
    config.parent.mkdir()
    config.write_text(f"vault:\n  key_file: {key}\n", encoding="utf-8")
    return config


@pytest.mark.parametrize(
    "attack",
    [
        call("fs_read", path="vault.key"),
        call("exec_shell", command="cat vault.key"),
        call("exec_shell", command="cat ./vault.key | base64"),
        call("crypto_hash", path="vault.key"),
    ],
    ids=["fs_read", "cat", "cat-base64", "crypto_hash"],
)
def test_a_key_file_in_the_workspace_never_reaches_the_model(
    workspace: Path, key_beside_the_project: Path, attack: object
) -> None:
    chat = hostile_chat(
        [attack], workspace=workspace, options=["--config", str(key_beside_the_project)]
    )

    assert chat.exit_code in (0, 1), chat.output
    shown = chat.shown_to_model()
    assert KEY not in shown and KEY[:16] not in shown
    assert (workspace / "vault.key").read_text(encoding="utf-8").strip() == KEY


@pytest.mark.parametrize("name", ["troupe.log", "chat_history", "trusted_configs.json"])
def test_with_the_data_dir_in_the_workspace_its_log_and_history_stay_out_of_reach(
    workspace: Path, name: str
) -> None:
    planted = f"LOGGED-{secrets.token_hex(8)}"
    (workspace / name).write_text(planted + "\n", encoding="utf-8")

    chat = hostile_chat(
        [call("fs_read", path=name), call("exec_shell", command=f"cat {name}")],
        workspace=workspace,
        options=["--data-dir", str(workspace)],
    )

    assert chat.exit_code in (0, 1), chat.output
    assert planted not in chat.shown_to_model()
    assert "data directory or key file" in chat.shown_to_model()  # fs_read's refusal
