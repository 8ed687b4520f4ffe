"""Vault tools through the runner: hashes, AES-GCM, Ed25519, and secrets at rest."""

from __future__ import annotations

import base64
import hashlib
import stat
from pathlib import Path
from typing import Any

import pytest

from troupe.stores.vault import KEY_ENV, SecretStore, VaultError


async def test_crypto_hash_of_a_workspace_file_matches_hashlib(
    run_tool: Any, workspace: Path
) -> None:
    (workspace / "report.txt").write_bytes(b"quarterly numbers\n")
    result = (await run_tool("crypto_hash", {"path": "report.txt"})).response
    assert result["digest"] == hashlib.sha256(b"quarterly numbers\n").hexdigest()
    assert result["input"] == "file report.txt (18 bytes)"


async def test_crypto_hash_of_text_with_another_algorithm(run_tool: Any) -> None:
    result = (await run_tool("crypto_hash", {"text": "abc", "algorithm": "SHA-512"})).response
    assert result["algorithm"] == "sha512"
    assert result["digest"] == hashlib.sha512(b"abc").hexdigest()


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        ({"path": "../../etc/passwd"}, "outside the workspace"),
        ({"text": "abc", "algorithm": "crc32"}, "unknown algorithm"),
        ({}, "neither text nor path"),
        ({"path": "missing.bin"}, "is not a file"),
    ],
)
async def test_crypto_hash_refusals(run_tool: Any, args: dict[str, Any], complaint: str) -> None:
    result = (await run_tool("crypto_hash", args)).response
    assert complaint in result["error"]


async def test_encrypt_then_decrypt_with_the_vault_key_round_trips(run_tool: Any) -> None:
    sealed = (await run_tool("crypto_encrypt", {"text": "meet at noon"})).response
    assert "meet at noon" not in sealed["ciphertext"]
    opened = (await run_tool("crypto_decrypt", {"ciphertext": sealed["ciphertext"]})).response
    assert opened["text"] == "meet at noon"


async def test_encrypt_with_a_stored_secret_as_key_needs_that_secret_to_decrypt(
    run_tool: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHARED_PASSPHRASE", "correct horse battery staple")
    await run_tool("secrets_set", {"name": "SHARED", "from_env": "SHARED_PASSPHRASE"})
    key = "{{secret:SHARED}}"

    sealed = (await run_tool("crypto_encrypt", {"text": "the plan", "key": key})).response
    with_secret = (
        await run_tool("crypto_decrypt", {"ciphertext": sealed["ciphertext"], "key": key})
    ).response
    with_vault_key = (
        await run_tool("crypto_decrypt", {"ciphertext": sealed["ciphertext"]})
    ).response

    assert with_secret["text"] == "the plan"
    assert "decryption failed" in with_vault_key["error"]


@pytest.mark.parametrize(
    ("ciphertext", "complaint"),
    [
        ("not base64 at all!", "not valid base64"),
        (base64.b64encode(b"short").decode(), "too short"),
        (base64.b64encode(b"x" * 40).decode(), "decryption failed"),
    ],
)
async def test_decrypt_refuses_bad_ciphertext(
    run_tool: Any, ciphertext: str, complaint: str
) -> None:
    result = (await run_tool("crypto_decrypt", {"ciphertext": ciphertext})).response
    assert complaint in result["error"]


async def test_sign_then_verify_and_a_tampered_text_fails(run_tool: Any) -> None:
    signed = (await run_tool("crypto_sign", {"text": "release 1.2.0"})).response
    good = (
        await run_tool("crypto_verify", {"text": "release 1.2.0", "signature": signed["signature"]})
    ).response
    tampered = (
        await run_tool(
            "crypto_verify",
            {
                "text": "release 1.2.1",
                "signature": signed["signature"],
                "public_key": signed["public_key"],
            },
        )
    ).response

    assert signed["algorithm"] == "Ed25519" and signed["key_name"] == "default"
    assert good["valid"] is True and good["checked_against"] == "vault key 'default'"
    assert tampered["valid"] is False


async def test_verify_with_an_unknown_key_name_says_which_keys_to_use(run_tool: Any) -> None:
    signature = base64.b64encode(b"\0" * 64).decode()
    result = (
        await run_tool(
            "crypto_verify", {"text": "x", "signature": signature, "key_name": "release"}
        )
    ).response
    assert "no signing key named 'release'" in result["error"]


async def test_signing_keys_survive_a_restart(run_tool: Any, data_dir: Path) -> None:
    first = (await run_tool("crypto_sign", {"text": "v1"})).response
    pair = SecretStore(data_dir).signing_key("default", create=False)
    assert pair is not None
    assert base64.b64encode(pair[1]).decode() == first["public_key"]


async def test_secrets_are_listed_used_and_deleted_by_name_only(
    run_tool: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GH_TOKEN_FOR_TEST", "ghp_exampletokenvalue123")

    stored = (
        await run_tool("secrets_set", {"name": "GITHUB", "from_env": "GH_TOKEN_FOR_TEST"})
    ).response
    listed = (await run_tool("secrets_list")).response
    used = (await run_tool("secrets_use", {"name": "GITHUB"})).response
    deleted = (await run_tool("secrets_delete", {"name": "GITHUB"})).response
    gone = (await run_tool("secrets_use", {"name": "GITHUB"})).response

    assert stored["reference"] == "{{secret:GITHUB}}" and stored["source"] == "from_env"
    assert [s["name"] for s in listed["secrets"]] == ["GITHUB"]
    assert used["reference"] == "{{secret:GITHUB}}"
    assert deleted["deleted"] is True
    assert "no secret named 'GITHUB'" in gone["error"]
    for result in (stored, listed, used, deleted):
        assert "ghp_exampletokenvalue123" not in repr(result)


async def test_a_secret_from_a_workspace_file(run_tool: Any, workspace: Path) -> None:
    (workspace / ".token").write_text("file-secret-value\n")
    stored = (await run_tool("secrets_set", {"name": "FROM_FILE", "from_file": ".token"})).response
    result = (
        await run_tool(
            "exec_shell",
            {
                "command": 'test "$V" = file-secret-value && echo same',
                "env": {"V": "{{secret:FROM_FILE}}"},
            },
        )
    ).response
    assert stored["stored"] is True
    assert result["stdout"] == "same\n"


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        ({"name": "has space", "value": "x"}, "is not allowed"),
        ({"name": "OK"}, "0 sources were given"),
        ({"name": "OK", "value": "x", "from_env": "HOME"}, "2 sources were given"),
        ({"name": "OK", "from_env": "TEST_UNSET_VARIABLE"}, "is not set"),
        ({"name": "OK", "from_env": "TROUPE_SECRET_KEY"}, "TROUPE_* variables"),
        ({"name": "OK", "from_env": "OPENAI_API_KEY"}, "model provider's key"),
        ({"name": "OK", "from_env": "PATH"}, "not listed in the config's vault.import_env"),
        ({"name": "OK", "from_file": "../outside"}, "outside the workspace"),
    ],
)
async def test_secrets_set_refusals(run_tool: Any, args: dict[str, Any], complaint: str) -> None:
    result = (await run_tool("secrets_set", args)).response
    assert complaint in result["error"]


def test_secrets_are_encrypted_at_rest_and_survive_a_restart(data_dir: Path) -> None:
    SecretStore(data_dir).set("DB_PASSWORD", "hunter2-but-longer")

    raw = b"".join(p.read_bytes() for p in data_dir.iterdir() if p.name.startswith("vault.db"))
    assert b"hunter2-but-longer" not in raw
    assert SecretStore(data_dir).get("DB_PASSWORD") == "hunter2-but-longer"


def test_the_key_file_is_created_readable_by_its_owner_only(data_dir: Path) -> None:
    SecretStore(data_dir).set("A", "value-a")
    mode = stat.S_IMODE((data_dir / "secret.key").stat().st_mode)
    assert mode == 0o600


def test_a_key_file_others_can_read_is_refused_with_the_fix(data_dir: Path) -> None:
    SecretStore(data_dir).set("A", "value-a")
    (data_dir / "secret.key").chmod(0o644)
    with pytest.raises(VaultError, match="chmod 600"):
        SecretStore(data_dir).get("A")


def test_a_lost_key_file_is_reported_instead_of_replaced(data_dir: Path) -> None:
    SecretStore(data_dir).set("A", "value-a")
    (data_dir / "secret.key").unlink()
    with pytest.raises(VaultError, match=r"key file .* is missing"):
        SecretStore(data_dir).get("A")
    assert not (data_dir / "secret.key").exists()


def test_the_key_can_come_from_the_environment(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "11" * 32)
    SecretStore(data_dir).set("A", "value-a")
    assert not (data_dir / "secret.key").exists()
    assert SecretStore(data_dir).get("A") == "value-a"


def test_a_different_key_is_refused_naming_the_vault_file(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "11" * 32)
    SecretStore(data_dir).set("A", "value-a")
    monkeypatch.setenv(KEY_ENV, "22" * 32)
    with pytest.raises(VaultError, match="does not match") as caught:
        SecretStore(data_dir).get("A")
    assert str(data_dir / "vault.db") in str(caught.value)


async def test_a_malformed_key_in_the_environment_is_a_clear_tool_error(
    run_tool: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "too-short")
    result = (await run_tool("secrets_set", {"name": "A", "value": "x"})).response
    assert "TROUPE_SECRET_KEY" in result["error"] and "64 hex characters" in result["error"]
