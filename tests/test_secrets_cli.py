"""``troupe secrets``: values go in without reaching a model, and never come back out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fakes.cli import unwrapped
from troupe.cli.app import app
from troupe.stores.vault import SecretStore


def test_set_from_stdin_stores_the_value_encrypted(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(
        app, ["secrets", "set", "GH_TOKEN", "--data-dir", str(tmp_path)], input="s3cr3t-value\n"
    )
    assert result.exit_code == 0, result.output
    assert "{{secret:GH_TOKEN}}" in result.output
    assert SecretStore(tmp_path).get("GH_TOKEN") == "s3cr3t-value"
    assert all(b"s3cr3t-value" not in p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    listed = runner.invoke(app, ["secrets", "list", "--data-dir", str(tmp_path)])
    assert "GH_TOKEN" in listed.output
    assert "s3cr3t-value" not in listed.output


def test_set_from_env_and_bad_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_VALUE", "abc")
    runner = CliRunner()
    ok = runner.invoke(
        app, ["secrets", "set", "API", "--from-env", "MY_VALUE", "--data-dir", str(tmp_path)]
    )
    assert ok.exit_code == 0, ok.output
    bad = runner.invoke(app, ["secrets", "set", "no spaces", "--data-dir", str(tmp_path)])
    assert bad.exit_code == 2
    assert "'no spaces' is not allowed" in bad.output
    unset = runner.invoke(
        app, ["secrets", "set", "X", "--from-env", "NOT_SET_ANYWHERE", "--data-dir", str(tmp_path)]
    )
    assert unset.exit_code == 2
    assert "NOT_SET_ANYWHERE" in unset.output


def test_delete_asks_first(tmp_path: Path) -> None:
    SecretStore(tmp_path).set("OLD", "v")
    runner = CliRunner()
    kept = runner.invoke(
        app, ["secrets", "delete", "OLD", "--data-dir", str(tmp_path)], input="n\n"
    )
    assert kept.exit_code == 1
    assert SecretStore(tmp_path).exists("OLD")
    gone = runner.invoke(app, ["secrets", "delete", "OLD", "--yes", "--data-dir", str(tmp_path)])
    assert gone.exit_code == 0
    assert not SecretStore(tmp_path).exists("OLD")


def test_deleting_a_secret_that_does_not_exist_names_the_stored_ones_without_asking(
    tmp_path: Path,
) -> None:
    SecretStore(tmp_path).set("KEPT", "v")

    result = CliRunner().invoke(app, ["secrets", "delete", "NOPE", "--data-dir", str(tmp_path)])

    text = unwrapped(result.output)
    assert result.exit_code == 2
    assert "no secret named 'NOPE'" in text and "KEPT" in text
    assert "Delete secret" not in text
    assert SecretStore(tmp_path).exists("KEPT")


def test_secrets_list_json_gives_names_and_references_never_values(tmp_path: Path) -> None:
    runner = CliRunner()
    runner.invoke(app, ["secrets", "set", "GH_TOKEN", "--data-dir", str(tmp_path)], input="v4lue\n")

    listed = runner.invoke(app, ["secrets", "list", "--json", "--data-dir", str(tmp_path)])

    assert listed.exit_code == 0, listed.output
    [row] = json.loads(listed.output)
    assert row["name"] == "GH_TOKEN" and row["reference"] == "{{secret:GH_TOKEN}}"
    assert "v4lue" not in listed.output
