"""A stored secret used as a key, against a model that wants to guess it offline.

A ciphertext made with a key derived from a 4-digit PIN lets whoever holds it
try all 10,000 PINs; a decryption that succeeds or fails is the same oracle
online. So a secret-keyed ``crypto_encrypt`` or ``crypto_decrypt`` is a secret
effect: it asks first, is refused under ``--approve deny``, and runs under
``auto`` (the person's yes given in advance).
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from fakes.containment import asked_first
from fakes.tool_runs import call_tool, everything_shown
from troupe import Tool, builtin_tools
from troupe.builtins import SecretStore
from troupe.runtime.approvals import ApprovalPolicy
from troupe.stores.vault_key import derive_key

PIN = "4821"


def _guessed(ciphertext: str) -> str | None:
    """The PIN, found by trying every 4-digit one against ``ciphertext``."""
    sealed = base64.b64decode(ciphertext)
    for guess in (f"{n:04d}" for n in range(10_000)):
        key = derive_key(guess.encode(), "secret-as-key")
        try:
            AESGCM(key).decrypt(sealed[:12], sealed[12:], None)
        except InvalidTag:
            continue
        return guess
    return None


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
    else:  # the person's yes given in advance: the ciphertext gives the PIN away
        assert _guessed(run.response["ciphertext"]) == PIN


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
