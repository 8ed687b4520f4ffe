"""A stored secret used as a key, against a model that wants to guess it offline.

A ciphertext made with a key derived from a 4-digit PIN alone lets whoever
holds it try all 10,000 PINs; a decryption that succeeds or fails is the same
oracle online. So the key is stretched with scrypt under a salt only the vault
has (derived from its master key): under ``--approve auto`` the model gets a
ciphertext no PIN list opens. A secret-keyed ``crypto_encrypt`` or
``crypto_decrypt`` still asks first and is refused under ``--approve deny``.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from pathlib import Path

import pytest
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from fakes.containment import asked_first
from fakes.tool_runs import call_tool, everything_shown
from troupe import Tool, builtin_tools
from troupe.builtins import SecretStore
from troupe.runtime.approvals import ApprovalPolicy
from troupe.stores.vault import SECRET_KEY_SCRYPT_N
from troupe.stores.vault_key import derive_key

PIN = "4821"


def _opened_by(ciphertext: str, keys: Iterable[tuple[str, bytes]]) -> str | None:
    """The guess whose key opens ``ciphertext``, of the (guess, key) pairs given."""
    sealed = base64.b64decode(ciphertext)
    for guess, key in keys:
        try:
            AESGCM(key).decrypt(sealed[:12], sealed[12:], None)
        except InvalidTag:
            continue
        return guess
    return None


def _guessed(ciphertext: str) -> str | None:
    """The PIN, found by trying every 4-digit one against ``ciphertext``, with
    the derivation an attacker can compute without the vault's master key."""
    pins = (f"{n:04d}" for n in range(10_000))
    return _opened_by(ciphertext, ((p, derive_key(p.encode(), "secret-as-key")) for p in pins))


def _guessed_with_scrypt(ciphertext: str, salts: list[bytes]) -> str | None:
    """The PIN, tried with scrypt as troupe stretches it, under the given salts."""
    pins = [f"{n:04d}" for n in range(0, 10_000, 97)]  # a sample: each guess is slow
    return _opened_by(
        ciphertext,
        (
            (p, Scrypt(salt=salt, length=32, n=SECRET_KEY_SCRYPT_N, r=8, p=1).derive(p.encode()))
            for salt in salts
            for p in pins
        ),
    )


def _tools(workspace: Path, data_dir: Path) -> list[Tool]:
    SecretStore(data_dir).set("PIN", PIN)
    return builtin_tools(workspace=workspace, data_dir=data_dir)


@pytest.mark.parametrize("policy", ["deny", "auto"])
async def test_a_secret_keyed_encryption_asks_first_and_deny_withholds_the_ciphertext(
    workspace: Path, data_dir: Path, policy: ApprovalPolicy
) -> None:
    tools = _tools(workspace, data_dir)

    run = await call_tool(
        tools, "crypto_encrypt", {"text": "a", "key": "{{secret:PIN}}"}, policy=policy
    )

    assert asked_first(run)
    assert PIN not in everything_shown(run)
    if policy == "deny":
        assert "error" in run.response
        assert "ciphertext" not in run.response
    else:  # the person's yes given in advance: a ciphertext no PIN list opens
        assert _guessed(run.response["ciphertext"]) is None


async def test_a_secret_keyed_ciphertext_opens_only_in_its_own_vault(
    workspace: Path, data_dir: Path, tmp_path: Path
) -> None:
    tools = _tools(workspace, data_dir)
    other = _tools(workspace, tmp_path / "other-vault")  # the same PIN, another vault
    key = {"key": "{{secret:PIN}}"}

    sealed = await call_tool(tools, "crypto_encrypt", {"text": "hello", **key})
    ciphertext = sealed.response["ciphertext"]
    opened = await call_tool(tools, "crypto_decrypt", {"ciphertext": ciphertext, **key})
    elsewhere = await call_tool(other, "crypto_decrypt", {"ciphertext": ciphertext, **key})

    assert opened.response["text"] == "hello"
    assert "error" in elsewhere.response
    # Without the vault's salt, scrypt over every likely salt opens nothing either.
    assert _guessed_with_scrypt(ciphertext, [b"", b"troupe", PIN.encode()]) is None


async def test_a_secret_keyed_decryption_is_no_oracle_under_deny(
    workspace: Path, data_dir: Path
) -> None:
    tools = _tools(workspace, data_dir)
    guess_key = derive_key(PIN.encode(), "secret-as-key")
    nonce = b"\0" * 12
    forged = base64.b64encode(nonce + AESGCM(guess_key).encrypt(nonce, b"hit", None)).decode()

    run = await call_tool(
        tools, "crypto_decrypt", {"ciphertext": forged, "key": "{{secret:PIN}}"}, policy="deny"
    )

    assert asked_first(run)
    assert "text" not in run.response
    assert "hit" not in str(run.response)


async def test_a_secret_reference_in_hashed_text_is_hashed_as_written(
    workspace: Path, data_dir: Path
) -> None:
    tools = _tools(workspace, data_dir)

    run = await call_tool(tools, "crypto_hash", {"text": "{{secret:PIN}}"}, policy="deny")

    assert run.response["digest"] == hashlib.sha256(b"{{secret:PIN}}").hexdigest()
    assert run.response["digest"] != hashlib.sha256(PIN.encode()).hexdigest()
